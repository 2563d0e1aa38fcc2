//! When to stop judging: the hypergeometric test of Callaghan & Müller-Hansen (2020) that
//! the pool has found at least a target share of the evidence, and how many random draws
//! without evidence would let it stop.
//!
//! # The test
//!
//! Prioritised judging (any [`super::Order`]) has found `K` evidence pairs; then a simple
//! random sample is drawn without replacement from the `N` pairs still unjudged at that
//! moment ([`super::shuffled`]: prefixes of one random order), and its first `n` draws hold
//! `k` evidence pairs. Judging would stop with `K + k` evidence pairs found.
//!
//! H0: recall is below the target τ, i.e. the total evidence `R` has `(K + k) / R < τ`. The
//! smallest such total is `R_tar = ⌊(K + k)/τ⌋ + 1` (the least integer `R` with `R·τ > K + k`,
//! computed so), so under H0 the `N` pairs unjudged at the start of sampling held at least
//! `K_tar = R_tar − K` evidence pairs (the paper's `K_tar = ⌊r_seen/τ − r_AL + 1⌋` with
//! `r_seen = K + k`, `r_AL = K`: `k` counts as found). The chance of seeing `k` or fewer in
//! `n` draws falls as the number held rises, so the worst case of H0 is `K_tar` and
//!
//! `p = P(X ≤ k)`, `X ~ Hypergeometric(N, K_tar, n)`,
//!
//! and judging may stop when `p < α`. If `K_tar > N` H0 is impossible (`p = 0`). The test may
//! be repeated as the sample grows (the paper tests after every draw); the simulation in this
//! module's tests measures how often recall then reaches τ when it stops.
//!
//! `τ = 1` is allowed (H0: some evidence remains unjudged).

use super::error::JudgingError;
use serde::{Deserialize, Serialize};

/// A target recall τ in (0, 1] and a significance level α in (0, 1): "with confidence 1 − α
/// the pool has found at least τ of the evidence".
#[derive(Clone, Copy, PartialEq, Debug, Serialize)]
pub struct RecallTarget {
    recall: f64,
    alpha: f64,
}

/// The counts of a stopping sample (see the module documentation for their meaning).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct StoppingSample {
    /// `K`: evidence found by the prioritised judging, before the random sample.
    pub found: u64,
    /// `N`: pairs unjudged when the random sample began (it is drawn from these).
    pub unjudged: u64,
    /// `n`: pairs drawn so far.
    pub drawn: u64,
    /// `k`: evidence among the drawn pairs.
    pub drawn_evidence: u64,
}

/// The test's outcome.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct StopDecision {
    /// `P(X ≤ k)` under the worst case of H0.
    pub p_value: f64,
    /// `p < α`: recall τ is reached with confidence 1 − α.
    pub stop: bool,
    /// `K_tar`: the least evidence the unjudged pairs held at the start of sampling were
    /// recall below τ.
    pub null_remaining: u64,
}

impl RecallTarget {
    /// Checks `recall` ∈ (0, 1] and `alpha` ∈ (0, 1).
    pub fn new(recall: f64, alpha: f64) -> Result<Self, JudgingError> {
        if !(recall > 0.0 && recall <= 1.0) {
            return Err(JudgingError::TargetRecall(recall));
        }
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(JudgingError::Alpha(alpha));
        }
        Ok(RecallTarget { recall, alpha })
    }

    /// The target of look `look` (from 1) of a sample tested at several sizes: the same τ at
    /// level α/2^look. Over all looks the levels sum below α, so the chance that some look
    /// stops judging while recall is below τ stays below α whatever the looks' dependence (a
    /// union bound); testing at α after every draw does not keep that bound (measured in
    /// `replay_cal_stopping`'s test: recall reached τ in 94.6% of 1,000 stops at α = 0.05).
    pub fn look(&self, look: u32) -> RecallTarget {
        RecallTarget {
            recall: self.recall,
            alpha: self.alpha / 2f64.powi(look.min(1_000) as i32),
        }
    }

    /// τ.
    pub fn recall(&self) -> f64 {
        self.recall
    }

    /// α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// `K_tar` for `found` (= `K + k`) evidence pairs found in all, `K` of them before the
    /// sample: the least evidence the unjudged pairs held under H0.
    fn null_remaining(&self, found_before: u64, found_in_all: u64) -> u64 {
        // The least integer R with R·τ > found_in_all, from the floor and then checked in the
        // same floating-point product the definition uses.
        // Counts stay far below 2^53: the conversions are exact.
        let found = found_in_all as f64;
        let mut total = (found / self.recall).floor() as u64;
        while (total as f64) * self.recall <= found {
            total += 1;
        }
        while total > 0 && ((total - 1) as f64) * self.recall > found {
            total -= 1;
        }
        total.saturating_sub(found_before)
    }

    /// Tests whether judging may stop. Fails if more pairs were drawn than were unjudged or
    /// more evidence drawn than pairs.
    pub fn test(&self, sample: StoppingSample) -> Result<StopDecision, JudgingError> {
        if sample.drawn > sample.unjudged {
            return Err(JudgingError::SampleExceedsUnjudged {
                sampled: sample.drawn,
                unjudged: sample.unjudged,
            });
        }
        if sample.drawn_evidence > sample.drawn {
            return Err(JudgingError::EvidenceExceedsSample {
                evidence: sample.drawn_evidence,
                sampled: sample.drawn,
            });
        }
        let null_remaining =
            self.null_remaining(sample.found, sample.found + sample.drawn_evidence);
        let p_value = if null_remaining > sample.unjudged {
            0.0
        } else {
            hypergeometric_cdf(
                sample.drawn_evidence,
                sample.unjudged,
                null_remaining,
                sample.drawn,
            )
        };
        Ok(StopDecision {
            p_value,
            stop: p_value < self.alpha,
            null_remaining,
        })
    }

    /// The fewest random draws from `unjudged` pairs that, finding no evidence, let judging
    /// stop after `found` evidence pairs (0 if it may stop already).
    pub fn draws_to_stop(&self, found: u64, unjudged: u64) -> u64 {
        let remaining = self.null_remaining(found, found);
        if remaining > unjudged {
            return 0;
        }
        // P(no evidence in n draws) = Π_{i<n} (N − K_tar − i) / (N − i), falling with n and 0
        // at n = N − K_tar + 1.
        let mut p = 1.0;
        for n in 1..=unjudged {
            let i = n - 1;
            // Counts stay far below 2^53: the conversions are exact.
            p *= (unjudged - remaining).saturating_sub(i) as f64 / (unjudged - i) as f64;
            if p < self.alpha {
                return n;
            }
        }
        unjudged
    }
}

/// `ln(n!)`: exact sums below 20, Stirling's series (to `n^-7`, error below 1e-15) above.
fn ln_factorial(n: u64) -> f64 {
    if n < 20 {
        return (2..=n).map(|i| (i as f64).ln()).sum();
    }
    let x = n as f64;
    let x2 = x * x;
    x * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI * x).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x * x2)
        + 1.0 / (1260.0 * x * x2 * x2)
        - 1.0 / (1680.0 * x * x2 * x2 * x2)
}

/// `ln C(n, k)` for `k <= n`.
fn ln_choose(n: u64, k: u64) -> f64 {
    ln_factorial(n) - ln_factorial(k) - ln_factorial(n - k)
}

/// `P(X ≤ k)` for `X ~ Hypergeometric(population, successes, draws)` (draws without
/// replacement from `population` items of which `successes` count). Requires
/// `successes <= population` and `draws <= population`; returns 1 beyond the support.
pub fn hypergeometric_cdf(k: u64, population: u64, successes: u64, draws: u64) -> f64 {
    if successes > population || draws > population {
        return f64::NAN;
    }
    let low = draws.saturating_sub(population - successes);
    let high = draws.min(successes);
    if k < low {
        return 0.0;
    }
    if k >= high {
        return 1.0;
    }
    // ln pmf(low), then pmf(x + 1)/pmf(x) = (K − x)(n − x) / ((x + 1)(N − K − n + x + 1)),
    // kept in logs so a tiny first term cannot underflow the sum.
    let mut ln_pmf = ln_choose(successes, low) + ln_choose(population - successes, draws - low)
        - ln_choose(population, draws);
    let mut total = 0.0;
    let mut x = low;
    loop {
        total += ln_pmf.exp();
        if x >= k {
            break;
        }
        // Counts stay far below 2^53: the conversions are exact.
        let num = (successes - x) as f64 * (draws - x) as f64;
        let den = (x + 1) as f64 * (population - successes + x + 1 - draws) as f64;
        ln_pmf += num.ln() - den.ln();
        x += 1;
    }
    total.min(1.0)
}
