//! Horvitz–Thompson estimates from a judged pool plus a judged stratified sample: the total
//! evidence and each system's precision, recall and F1, with 95% confidence intervals.
//!
//! # The universe
//!
//! The pairs being estimated are the *certain* pairs (judged, so inclusion probability 1: the
//! judged depth-`d` pool and any other pair judged before the sample was drawn) plus the
//! populations of the sample's strata (the unjudged pairs beyond the depth, see
//! [`super::sample`]). A system's *retrieved set* is the set of its pairs within that universe,
//! as the caller lists them: a pair listed that is neither certain nor drawn is taken to be an
//! undrawn member of a stratum (a pair outside the universe would bias its precision).
//!
//! # Estimators
//!
//! With `y` = 1 for evidence, stratum `h` of `N_h` pairs of which `n_h` were drawn:
//!
//! - total evidence `Ŷ = Σ_certain y + Σ_h (N_h / n_h) Σ_{drawn in h} y` (Horvitz–Thompson:
//!   each drawn pair weighted by 1/π = N_h/n_h), variance by stratified simple random sampling
//!   without replacement, `V = Σ_h N_h² (1 − n_h/N_h) s_h² / n_h` with `s_h²` the sample
//!   variance of `y` in `h`. **Unbiased** (`Ŷ` exactly; `V` for `Var(Ŷ)` whenever `n_h ≥ 2`).
//! - a system's evidence `Ŷ_s`: the same with `y_s = y·[pair retrieved by s]`; **unbiased**.
//! - precision `Ŷ_s / |R_s|` (the retrieved-set size is known exactly): **unbiased**, SE =
//!   SE(Ŷ_s)/|R_s|.
//! - recall `Ŷ_s / Ŷ` and F1 `2·Ŷ_s / (|R_s| + Ŷ)` (F1 = 2PR/(P+R) rewritten): ratios of
//!   unbiased totals, **only approximately unbiased** (bias O(1/n)); their variance is the
//!   linearised (delta-method, Taylor) variance: the stratified variance formula applied to
//!   `z = (y_s − R̂·y)/Ŷ` for recall and `z = (2·y_s − F̂·y)/(|R_s| + Ŷ)` for F1, which carries
//!   the within-stratum covariance of `y_s` and `y`.
//!
//! The standard errors are those above (unchanged by the interval method). The 95% intervals
//! are Wilson score intervals with Korn & Graubard's effective sample size on the scale of the
//! proportion each estimate's sampled part estimates ([`interval`], where the methods compared
//! are described): asymmetric, within what that proportion allows, and at the nominal 95% in
//! simulation where the strata's draws hold only 1–5 evidence pairs each (normal intervals,
//! estimate ± 1.96·SE, covered only 78–95% there). Each end is then cut to what is possible
//! (a total between the evidence seen and the evidence seen plus every unseen undrawn pair;
//! ratios within [0, 1]), which never lowers coverage. A stratum with a single draw has no
//! sample variance: it contributes the largest variance a variable of its range can have
//! (`range²/4 · N/(N−1)`), a conservative bound. A stratum with pairs but no draw is refused:
//! nothing can estimate it. Point estimates do not depend on the interval method.

mod interval;

use super::error::{pair_text, JudgingError};
use super::sample::{Sample, StratumDesign};
use crate::pool::{FxHashMap, Key, Pair};
use interval::Spread;
use serde::{Deserialize, Serialize};

pub(crate) use interval::Method;

/// The normal quantile of a two-sided 95% interval.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// An estimate with its standard error and 95% confidence interval `[low, high]`.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct Estimate {
    pub value: f64,
    pub standard_error: f64,
    pub low: f64,
    pub high: f64,
}

impl Estimate {
    /// `spread`'s value and standard error with its interval by `method`, each end cut to
    /// `[floor, ceiling]` (the value itself is left as is: a Horvitz–Thompson precision may
    /// exceed 1, and cutting it would bias it).
    fn new(spread: Spread, method: Method, floor: f64, ceiling: f64) -> Estimate {
        let (low, high) = spread.interval(method);
        let cut = |x: f64| x.max(floor).min(ceiling);
        Estimate {
            value: spread.value,
            standard_error: spread.variance.max(0.0).sqrt(),
            low: cut(low),
            high: cut(high),
        }
    }

    /// Whether `truth` lies in the interval.
    pub fn covers(&self, truth: f64) -> bool {
        self.low <= truth && truth <= self.high
    }
}

/// One system's estimates over its retrieved set.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct SystemEstimate {
    /// Pairs in the retrieved set.
    pub retrieved: usize,
    /// Evidence among them.
    pub evidence: Estimate,
    /// `None` for an empty retrieved set.
    pub precision: Option<Estimate>,
    /// `None` when the estimated total evidence is 0.
    pub recall: Option<Estimate>,
    /// `None` when both the retrieved set and the estimated total evidence are empty.
    pub f1: Option<Estimate>,
}

/// A judged universe: the certain pairs and the judged sample. Built once, then asked for the
/// total and for each system.
#[derive(Clone, Debug)]
pub struct Estimator<C, D> {
    certain: FxHashMap<Pair<C, D>, bool>,
    certain_evidence: usize,
    strata: Vec<StratumDesign>,
    /// Per stratum (as `strata`), the drawn pairs' labels.
    drawn: Vec<Vec<bool>>,
    /// Each drawn pair's (stratum position, draw position).
    sampled: FxHashMap<Pair<C, D>, (usize, usize)>,
}

impl<C: Key, D: Key> Estimator<C, D> {
    /// The universe of `certain` pairs (pair, is evidence) and `sample`, whose drawn pairs'
    /// labels `label` gives (`Some(is evidence)`). Fails on a certain pair listed twice or also
    /// drawn, an unjudged drawn pair, or a stratum with pairs but no draw.
    pub fn new(
        certain: impl IntoIterator<Item = (Pair<C, D>, bool)>,
        sample: &Sample<C, D>,
        label: impl Fn(&Pair<C, D>) -> Option<bool>,
    ) -> Result<Self, JudgingError> {
        let mut known: FxHashMap<Pair<C, D>, bool> = FxHashMap::default();
        for (pair, evidence) in certain {
            if known.insert(pair, evidence).is_some() {
                let (claim, doc) = pair_text(&pair);
                return Err(JudgingError::DuplicatePair { claim, doc });
            }
        }
        let strata = sample.strata().to_vec();
        if let Some(s) = strata.iter().find(|s| s.population > 0 && s.sampled == 0) {
            return Err(JudgingError::UnsampledStratum {
                stratum: s.stratum,
                population: s.population,
            });
        }
        let mut drawn: Vec<Vec<bool>> = vec![Vec::new(); strata.len()];
        let mut sampled = FxHashMap::default();
        for unit in sample.pairs() {
            if known.contains_key(&unit.pair) {
                let (claim, doc) = pair_text(&unit.pair);
                return Err(JudgingError::CertainAndSampled { claim, doc });
            }
            let Some(evidence) = label(&unit.pair) else {
                let (claim, doc) = pair_text(&unit.pair);
                return Err(JudgingError::UnjudgedSample { claim, doc });
            };
            // `Sample` guarantees the stratum is in its design.
            let h = strata
                .binary_search_by_key(&unit.stratum, |s| s.stratum)
                .map_err(|_| {
                    JudgingError::InconsistentSample(format!("unknown stratum {}", unit.stratum))
                })?;
            if let Some(units) = drawn.get_mut(h) {
                sampled.insert(unit.pair, (h, units.len()));
                units.push(evidence);
            }
        }
        Ok(Estimator {
            certain_evidence: known.values().filter(|&&e| e).count(),
            certain: known,
            strata,
            drawn,
            sampled,
        })
    }

    /// Pairs in the universe: certain pairs plus the strata's populations.
    pub fn universe(&self) -> usize {
        self.certain.len() + self.strata.iter().map(|s| s.population).sum::<usize>()
    }

    /// The Horvitz–Thompson total of the drawn values `z` (by stratum and draw) and its
    /// stratified variance; `range` bounds `z`'s spread for strata with one draw.
    fn stratified(&self, z: impl Fn(usize, usize) -> f64, range: f64) -> (f64, f64) {
        let mut total = 0.0;
        let mut variance = 0.0;
        for (h, (design, units)) in self.strata.iter().zip(&self.drawn).enumerate() {
            let n = units.len();
            if n == 0 {
                continue;
            }
            // Counts stay far below 2^53: the conversions are exact.
            let (big_n, small_n) = (design.population as f64, n as f64);
            let values: Vec<f64> = (0..n).map(|i| z(h, i)).collect();
            let sum: f64 = values.iter().sum();
            total += big_n / small_n * sum;
            if n < design.population {
                let s2 = if n >= 2 {
                    let mean = sum / small_n;
                    values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (small_n - 1.0)
                } else {
                    range * range / 4.0 * big_n / (big_n - 1.0)
                };
                variance += big_n * big_n * (1.0 - small_n / big_n) * s2 / small_n;
            }
        }
        (total, variance)
    }

    fn label(&self, h: usize, i: usize) -> bool {
        self.drawn
            .get(h)
            .and_then(|units| units.get(i))
            .copied()
            .unwrap_or(false)
    }

    /// Whether stratum `h` was drawn whole (a census: its pairs are known for certain).
    fn is_census(&self, h: usize) -> bool {
        match (self.strata.get(h), self.drawn.get(h)) {
            (Some(design), Some(units)) => units.len() >= design.population,
            _ => true,
        }
    }

    /// The evidence known for certain and what the strata drawn in part hold.
    fn split(&self) -> Split {
        let mut split = Split {
            known: self.certain_evidence,
            ..Split::default()
        };
        for (h, (design, units)) in self.strata.iter().zip(&self.drawn).enumerate() {
            let evidence = units.iter().filter(|&&e| e).count();
            if self.is_census(h) {
                split.known += evidence;
            } else {
                split.pairs += design.population;
                split.drawn += units.len();
                split.drawn_evidence += evidence;
            }
        }
        split
    }

    /// The total evidence in the universe.
    pub fn total_evidence(&self) -> Estimate {
        self.total_evidence_by(Method::CHOSEN)
    }

    /// [`Self::total_evidence`] with its interval by `method`.
    pub(crate) fn total_evidence_by(&self, method: Method) -> Estimate {
        let (sampled, variance) =
            self.stratified(|h, i| f64::from(u8::from(self.label(h, i))), 1.0);
        let (seen, unseen_possible) = self.feasible();
        let split = self.split();
        // Counts stay far below 2^53: the conversions are exact.
        let spread = Spread {
            value: self.certain_evidence as f64 + sampled,
            variance,
            known: split.known as f64,
            scale: split.pairs as f64,
            drawn: split.drawn as f64,
        };
        Estimate::new(spread, method, seen as f64, (seen + unseen_possible) as f64)
    }

    /// Evidence seen (certain and drawn) and the undrawn pairs that could be evidence.
    fn feasible(&self) -> (usize, usize) {
        let drawn_evidence: usize = self.drawn.iter().flatten().filter(|&&e| e).count();
        let undrawn: usize = self
            .strata
            .iter()
            .map(|s| s.population - s.sampled.min(s.population))
            .sum();
        (self.certain_evidence + drawn_evidence, undrawn)
    }

    /// Estimates for a system whose retrieved set (its pairs in the universe) is `retrieved`.
    /// Fails on a pair listed twice.
    pub fn system(
        &self,
        retrieved: impl IntoIterator<Item = Pair<C, D>>,
    ) -> Result<SystemEstimate, JudgingError> {
        self.system_by(retrieved, Method::CHOSEN)
    }

    /// [`Self::system`] with its intervals by `method`.
    pub(crate) fn system_by(
        &self,
        retrieved: impl IntoIterator<Item = Pair<C, D>>,
        method: Method,
    ) -> Result<SystemEstimate, JudgingError> {
        let mut pairs: Vec<Pair<C, D>> = retrieved.into_iter().collect();
        pairs.sort_unstable();
        if let Some(w) = pairs.windows(2).find(|w| w[0] == w[1]) {
            let (claim, doc) = pair_text(&w[0]);
            return Err(JudgingError::DuplicatePair { claim, doc });
        }
        let size = pairs.len();
        let mut member: Vec<Vec<bool>> = self.drawn.iter().map(|u| vec![false; u.len()]).collect();
        // Evidence among the retrieved certain and drawn pairs, and retrieved pairs undrawn.
        let (mut certain_hits, mut drawn_hits, mut undrawn) = (0_usize, 0_usize, 0_usize);
        // Of the drawn: evidence in strata drawn whole, pairs in strata drawn in part.
        let (mut census_hits, mut partly_drawn) = (0_usize, 0_usize);
        for pair in &pairs {
            if let Some(&evidence) = self.certain.get(pair) {
                certain_hits += usize::from(evidence);
            } else if let Some(&(h, i)) = self.sampled.get(pair) {
                if let Some(slot) = member.get_mut(h).and_then(|m| m.get_mut(i)) {
                    *slot = true;
                    let hit = usize::from(self.label(h, i));
                    drawn_hits += hit;
                    if self.is_census(h) {
                        census_hits += hit;
                    } else {
                        partly_drawn += 1;
                    }
                }
            } else {
                undrawn += 1;
            }
        }
        let is_member = |h: usize, i: usize| {
            member
                .get(h)
                .and_then(|m| m.get(i))
                .copied()
                .unwrap_or(false)
        };
        let y = |h: usize, i: usize| f64::from(u8::from(self.label(h, i)));
        let y_s = |h: usize, i: usize| if is_member(h, i) { y(h, i) } else { 0.0 };

        // Counts stay far below 2^53: the conversions are exact.
        let (sampled_s, variance_s) = self.stratified(y_s, 1.0);
        let value_s = certain_hits as f64 + sampled_s;
        let seen_s = (certain_hits + drawn_hits) as f64;
        // The system's evidence is `known_s + scale_s·q`, q its evidence rate among its pairs
        // in the strata drawn in part.
        let spread_s = Spread {
            value: value_s,
            variance: variance_s,
            known: (certain_hits + census_hits) as f64,
            scale: (undrawn + partly_drawn) as f64,
            drawn: partly_drawn as f64,
        };
        let evidence = Estimate::new(spread_s, method, seen_s, seen_s + undrawn as f64);
        let size_f = size as f64;
        let precision = (size > 0).then(|| {
            let spread = Spread {
                value: value_s / size_f,
                variance: variance_s / (size_f * size_f),
                known: spread_s.known / size_f,
                scale: spread_s.scale / size_f,
                drawn: spread_s.drawn,
            };
            Estimate::new(spread, method, 0.0, 1.0)
        });
        let total = self.total_evidence_by(method).value;
        // Recall is affine in the system's share of the evidence estimated in the strata drawn
        // in part (`total − known` of it), given the estimated total: its linearised variable
        // is that share's (retrieved evidence 1 − R, missed evidence −R, per total).
        let split = self.split();
        let recall = (total > 0.0).then(|| {
            let ratio = value_s / total;
            let z = |h: usize, i: usize| (y_s(h, i) - ratio * y(h, i)) / total;
            let (_, variance) = self.stratified(z, 1.0 / total);
            let spread = Spread {
                value: ratio,
                variance,
                known: spread_s.known / total,
                scale: (total - split.known as f64) / total,
                drawn: split.drawn_evidence as f64,
            };
            Estimate::new(spread, method, 0.0, 1.0)
        });
        // F1's linearised variable weighs the system's evidence by 2 − F ≥ 1 and the evidence
        // it misses by F ≤ 1: it follows its numerator, so it is written, as precision is, in
        // the system's evidence rate among its pairs in the strata drawn in part.
        let denominator = size_f + total;
        let f1 = (denominator > 0.0).then(|| {
            let f = 2.0 * value_s / denominator;
            let z = |h: usize, i: usize| (2.0 * y_s(h, i) - f * y(h, i)) / denominator;
            let (_, variance) = self.stratified(z, 2.0 / denominator);
            let spread = Spread {
                value: f,
                variance,
                known: 2.0 * spread_s.known / denominator,
                scale: 2.0 * spread_s.scale / denominator,
                drawn: spread_s.drawn,
            };
            Estimate::new(spread, method, 0.0, 1.0)
        });
        Ok(SystemEstimate {
            retrieved: size,
            evidence,
            precision,
            recall,
            f1,
        })
    }
}

/// The evidence known for certain (certain pairs and strata drawn whole) and, over the strata
/// drawn in part, their pairs, the pairs drawn there and the evidence among those.
#[derive(Clone, Copy, Default, Debug)]
struct Split {
    known: usize,
    pairs: usize,
    drawn: usize,
    drawn_evidence: usize,
}
