//! 95% confidence intervals around a Horvitz–Thompson estimate, drawn on the scale of the
//! proportion its sampled part estimates.
//!
//! Every estimate of [`super::Estimator`] is affine in one unknown proportion `q ∈ [0, 1]`:
//! `θ = known + scale·q`. `known` is what is judged for certain (and strata drawn whole),
//! `q` the share of a *domain* of undrawn-universe units that counts (evidence among the pairs
//! of the strata drawn in part; a system's evidence among its retrieved pairs there; for recall
//! and F1, the system's share of the evidence estimated there), and `scale` converts `q` to the
//! measure. `q̂ = (θ̂ − known)/scale` and `V(q̂) = V(θ̂)/scale²`.
//!
//! Methods (all measured by `tests::estimate::interval_methods_compared`):
//!
//! - [`Method::Wald`]: `θ̂ ± z·SE`, symmetric; undercovers when the strata's draws hold few
//!   evidence pairs (the variance is estimated at `q̂`, and a stratum whose draw holds one
//!   category only contributes none).
//! - [`Method::Logit`]: `expit(logit q̂ ± z·SE(q̂)/(q̂(1 − q̂)))`, the delta method on the logit
//!   scale (Wald when `q̂` is 0 or 1 or the variance 0).
//! - [`Method::Wilson`]: Wilson's (1927) score interval for `q` with Korn & Graubard's (1998)
//!   effective sample size `n* = q̂(1 − q̂)/V(q̂)` (the design-based "modified Wilson" limits
//!   of Kott & Carr 1997, compared by Franco, Little, Louis & Slud 2019 and offered by SAS
//!   PROC SURVEYFREQ): the variance is taken at the hypothesised `q`, not at `q̂`. When `n*` is
//!   undefined (`q̂` 0 or 1, or no variance) it is the number of domain units drawn, as Korn &
//!   Graubard do.
//! - [`Method::WilsonTruncated`]: the same with `n*` at most the domain units drawn (Korn &
//!   Graubard's truncation: stratification cannot buy more than the draws).
//! - [`Method::AgrestiCoull`]: Agresti & Coull's (1998) adjusted Wald interval with `n*`.
//!
//! Invariant: each method's interval for `q` lies in `[0, 1]` except Wald's, and every interval
//! contains `θ̂` when `q̂ ∈ [0, 1]`; a `scale` of 0 (nothing left to sample) gives `[θ̂, θ̂]`.

use super::Z_95;

/// How a 95% interval is drawn around an estimate (see the module documentation). The product
/// uses [`Method::CHOSEN`]; the others are kept for the simulation that compares them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Method {
    Wald,
    Logit,
    Wilson,
    WilsonTruncated,
    AgrestiCoull,
}

impl Method {
    /// The method [`super::Estimator`]'s public estimates use: the one that covers at the
    /// nominal rate in both the dense and the sparse designs of the simulation.
    pub(crate) const CHOSEN: Method = Method::Wilson;

    /// Every method, for comparisons.
    #[cfg(test)]
    pub(crate) const ALL: [Method; 5] = [
        Method::Wald,
        Method::Logit,
        Method::Wilson,
        Method::WilsonTruncated,
        Method::AgrestiCoull,
    ];
}

/// An estimate `value` with its `variance`, written as `known + scale·q` for a proportion `q`
/// estimated from `drawn` units of its domain (see the module documentation).
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) struct Spread {
    pub value: f64,
    pub variance: f64,
    pub known: f64,
    /// Non-negative; 0 when nothing of the estimate is sampled.
    pub scale: f64,
    /// Domain units drawn (counts stay far below 2^53).
    pub drawn: f64,
}

impl Spread {
    /// The 95% interval `(low, high)` by `method`, not yet cut to what is possible.
    pub(crate) fn interval(&self, method: Method) -> (f64, f64) {
        let se = self.variance.max(0.0).sqrt();
        let wald = (self.value - Z_95 * se, self.value + Z_95 * se);
        if method == Method::Wald {
            return wald;
        }
        if self.scale <= 0.0 {
            return (self.value, self.value);
        }
        // q̂ may leave [0, 1] by rounding, or (a domain's Horvitz–Thompson share) exceed 1.
        let q = ((self.value - self.known) / self.scale).clamp(0.0, 1.0);
        let variance_q = self.variance.max(0.0) / (self.scale * self.scale);
        let defined = variance_q > 0.0 && q > 0.0 && q < 1.0;
        let effective = if defined {
            q * (1.0 - q) / variance_q
        } else {
            self.drawn
        };
        let (low, high) = match method {
            Method::Wald => return wald,
            Method::Logit if !defined => return wald,
            Method::Logit => {
                let centre = (q / (1.0 - q)).ln();
                let half = Z_95 * variance_q.sqrt() / (q * (1.0 - q));
                (expit(centre - half), expit(centre + half))
            }
            Method::Wilson => wilson(q, effective),
            Method::WilsonTruncated => wilson(q, effective.min(self.drawn)),
            Method::AgrestiCoull => agresti_coull(q, effective),
        };
        (
            self.known + self.scale * low,
            self.known + self.scale * high,
        )
    }
}

fn expit(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Wilson's score interval for a proportion `q` observed on `n` units (`[0, 1]` for `n` ≤ 0:
/// nothing drawn says nothing).
fn wilson(q: f64, n: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n;
    let centre = (q + z2 / (2.0 * n)) / denominator;
    let half = Z_95 / denominator * (q * (1.0 - q) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Agresti & Coull's interval: Wald's around `(n·q + z²/2)/(n + z²)` with `n + z²` units.
fn agresti_coull(q: f64, n: f64) -> (f64, f64) {
    let z2 = Z_95 * Z_95;
    let units = n.max(0.0) + z2;
    let centre = (n.max(0.0) * q + z2 / 2.0) / units;
    let half = Z_95 * (centre * (1.0 - centre) / units).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(value: f64, variance: f64, known: f64, scale: f64, drawn: f64) -> Spread {
        Spread {
            value,
            variance,
            known,
            scale,
            drawn,
        }
    }

    /// Wilson's interval for 0 of 10 is [0, z²/(10 + z²)]; for 5 of 10, symmetric about 1/2.
    #[test]
    fn wilson_matches_the_textbook_values() {
        let (low, high) = wilson(0.0, 10.0);
        assert_eq!(low, 0.0);
        assert!((high - Z_95 * Z_95 / (10.0 + Z_95 * Z_95)).abs() < 1e-12);
        let (low, high) = wilson(0.5, 10.0);
        assert!((low + high - 1.0).abs() < 1e-12);
        // 5 of 10: [0.2366, 0.7634].
        assert!((low - 0.2366).abs() < 1e-4, "{low}");
        assert_eq!(wilson(0.3, 0.0), (0.0, 1.0));
    }

    /// With the binomial variance `q(1 − q)/n`, the effective size is `n` and the interval is
    /// Wilson's, mapped through `known + scale·q`; a zero scale is exact; no variance at
    /// `q̂ = 0` falls back to the draws.
    #[test]
    fn spreads_map_the_proportions_interval() {
        let n = 40.0;
        let q: f64 = 0.25;
        let s = spread(
            10.0 + 100.0 * q,
            100.0 * 100.0 * q * (1.0 - q) / n,
            10.0,
            100.0,
            n,
        );
        let (low, high) = s.interval(Method::Wilson);
        let (ql, qh) = wilson(q, n);
        assert!((low - (10.0 + 100.0 * ql)).abs() < 1e-9);
        assert!((high - (10.0 + 100.0 * qh)).abs() < 1e-9);
        assert!(low < s.value && s.value < high);
        assert_eq!(
            spread(7.0, 0.0, 7.0, 0.0, 0.0).interval(Method::Wilson),
            (7.0, 7.0)
        );
        let (low, high) = spread(7.0, 0.0, 7.0, 50.0, 25.0).interval(Method::Wilson);
        assert!((low - 7.0).abs() < 1e-12);
        assert!((high - (7.0 + 50.0 * wilson(0.0, 25.0).1)).abs() < 1e-9);
        // Wald ignores the proportion: ±1.96·SE.
        let (low, high) = s.interval(Method::Wald);
        assert!((high - low - 2.0 * Z_95 * s.variance.sqrt()).abs() < 1e-9);
    }
}
