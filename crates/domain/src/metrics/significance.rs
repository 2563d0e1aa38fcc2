//! Paired significance tests between two systems judged against the same gold, on the
//! headline F1 and average precision (both computed over all claims at once, so the tests
//! recompute the figures, never average per-claim values):
//!
//! - the **paired randomization test** (Fisher's, as Smucker, Allan & Carterette 2007 use it
//!   for IR): under the null hypothesis the two systems are exchangeable on each claim, so each
//!   permutation swaps the two systems' outputs (all their pairs) on every claim with
//!   probability 1/2, recomputes both systems' F1 and AP, and the two-sided p-value is the share
//!   of permutations whose absolute difference is at least the observed one;
//! - the **paired bootstrap** over claims: the same claim resamples for both systems
//!   ([`ClaimResampler`]); it gives the 95% percentile interval of the difference, and the
//!   p-value of the shift method (Sakai 2006): the share of resamples whose difference departs
//!   from the observed one by at least the observed difference;
//! - the **Holm** (1979) step-down correction of several p-values.
//!
//! Each test is fixed by its seed (ChaCha8, rand 0.8).

use super::bootstrap::ClaimResampler;
use super::error::MetricsError;
use super::judged::JudgedRun;
use super::scores::{AveragePrecision, PrecisionRecall};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Relative slack when comparing a resampled difference with the observed one, so that a
/// permutation that reproduces the observed difference up to rounding counts as "as extreme".
const SLACK: f64 = 1e-12;

/// The two figures the tests compare.
#[derive(Clone, Copy, PartialEq, Debug, Default, Serialize, Deserialize)]
pub struct F1Ap {
    pub f1: f64,
    pub average_precision: f64,
}

/// Two-sided p-values of the paired randomization test, for the F1 and AP differences.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct RandomizationTest {
    pub permutations: u32,
    pub seed: u64,
    pub f1_p: f64,
    pub average_precision_p: f64,
}

/// A bootstrap interval of a difference, and its p-value.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct DifferenceInterval {
    /// 2.5th and 97.5th percentiles of the resampled differences.
    pub low: f64,
    pub high: f64,
    pub p: f64,
}

/// The paired bootstrap of the F1 and AP differences.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct PairedBootstrap {
    pub samples: u32,
    pub seed: u64,
    pub f1: DifferenceInterval,
    pub average_precision: DifferenceInterval,
}

/// The paired randomization test of `a` against `b` with `permutations` permutations.
/// Fails when the runs were judged against different golds.
pub fn randomization_test(
    a: &JudgedRun,
    b: &JudgedRun,
    permutations: u32,
    seed: u64,
) -> Result<RandomizationTest, MetricsError> {
    if !a.same_gold(b) {
        return Err(MetricsError::DifferentGold { index: 1 });
    }
    let merged = Merged::new(a, b);
    let observed = merged.difference(&vec![false; a.claim_count()]);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut swap = vec![false; a.claim_count()];
    let (mut f1_extreme, mut ap_extreme) = (0u32, 0u32);
    for _ in 0..permutations {
        for s in swap.iter_mut() {
            *s = rng.gen::<bool>();
        }
        let d = merged.difference(&swap);
        f1_extreme += u32::from(at_least(d.f1, observed.f1));
        ap_extreme += u32::from(at_least(d.average_precision, observed.average_precision));
    }
    let share = |count: u32| {
        if permutations == 0 {
            1.0
        } else {
            f64::from(count) / f64::from(permutations)
        }
    };
    Ok(RandomizationTest {
        permutations,
        seed,
        f1_p: share(f1_extreme),
        average_precision_p: share(ap_extreme),
    })
}

/// Whether |resampled| >= |observed|, up to rounding.
fn at_least(resampled: f64, observed: f64) -> bool {
    resampled.abs() >= observed.abs() * (1.0 - SLACK) - f64::EPSILON
}

/// The paired bootstrap of `a` minus `b` over `samples` claim resamples. Fails when the runs
/// were judged against different golds.
pub fn paired_bootstrap(
    a: &JudgedRun,
    b: &JudgedRun,
    samples: u32,
    seed: u64,
) -> Result<PairedBootstrap, MetricsError> {
    if !a.same_gold(b) {
        return Err(MetricsError::DifferentGold { index: 1 });
    }
    let (ma, mb) = (a.metrics(), b.metrics());
    let observed = F1Ap {
        f1: ma.f1 - mb.f1,
        average_precision: ma.average_precision - mb.average_precision,
    };
    let mut resampler = ClaimResampler::new(a.claim_count(), seed);
    let mut f1 = Vec::with_capacity(samples as usize);
    let mut ap = Vec::with_capacity(samples as usize);
    for _ in 0..samples {
        let weights = resampler.next_weights();
        let (ra, rb) = (a.evaluate_weighted(weights), b.evaluate_weighted(weights));
        f1.push(ra.f1 - rb.f1);
        ap.push(ra.average_precision - rb.average_precision);
    }
    Ok(PairedBootstrap {
        samples,
        seed,
        f1: interval(f1, observed.f1),
        average_precision: interval(ap, observed.average_precision),
    })
}

/// The percentile interval and shift-method p-value of resampled differences.
fn interval(mut diffs: Vec<f64>, observed: f64) -> DifferenceInterval {
    if diffs.is_empty() {
        return DifferenceInterval {
            low: observed,
            high: observed,
            p: 1.0,
        };
    }
    let extreme = diffs
        .iter()
        .filter(|&&d| at_least(d - observed, observed))
        .count();
    diffs.sort_by(f64::total_cmp);
    DifferenceInterval {
        low: percentile(&diffs, 0.025),
        high: percentile(&diffs, 0.975),
        p: extreme as f64 / diffs.len() as f64,
    }
}

/// The `q` quantile of sorted values, by linear interpolation between order statistics
/// (type 7, numpy's default).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n => {
            let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
            let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
            sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
        }
    }
}

/// Holm's step-down adjustment: with the m p-values sorted ascending, the i-th (from 1) becomes
/// max over j <= i of min(1, (m - j + 1) p_(j)). Returned in the input order.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&x, &y| p_values[x].total_cmp(&p_values[y]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0f64;
    for (rank, &index) in order.iter().enumerate() {
        let scaled = ((m - rank) as f64 * p_values[index]).min(1.0);
        running = running.max(scaled);
        adjusted[index] = running;
    }
    adjusted
}

/// Both runs' pairs in one confidence ranking, for recomputing AP under claim swaps.
struct Merged {
    /// Per claim index: (correct, predicted) of run a and of run b, and gold evidence.
    counts: Vec<[u64; 5]>,
    /// Per merged pair: claim index, from run b, hit, closes its confidence group.
    pairs: Vec<(u32, bool, bool, bool)>,
    gold: u64,
}

impl Merged {
    fn new(a: &JudgedRun, b: &JudgedRun) -> Merged {
        let counts: Vec<[u64; 5]> = (0..a.claim_count())
            .map(|c| {
                let (ca, pa, g) = a.claim_counts(c);
                let (cb, pb, _) = b.claim_counts(c);
                [ca, pa, cb, pb, g]
            })
            .collect();
        let mut all: Vec<(f64, u32, bool, bool)> = a
            .ranked()
            .map(|(c, conf, hit)| (conf, c, false, hit))
            .chain(b.ranked().map(|(c, conf, hit)| (conf, c, true, hit)))
            .collect();
        all.sort_by(|x, y| y.0.total_cmp(&x.0));
        let pairs = all
            .iter()
            .enumerate()
            .map(|(i, &(conf, claim, from_b, hit))| {
                let last = all.get(i + 1).is_none_or(|next| next.0 != conf);
                (claim, from_b, hit, last)
            })
            .collect();
        Merged {
            gold: counts.iter().map(|c| c[4]).sum(),
            counts,
            pairs,
        }
    }

    /// F1 and AP of pseudo-system a minus pseudo-system b, where pseudo-system a takes run b's
    /// pairs on the claims with `swap` set and run a's elsewhere.
    fn difference(&self, swap: &[bool]) -> F1Ap {
        let (mut c0, mut p0, mut c1, mut p1) = (0u64, 0u64, 0u64, 0u64);
        for (counts, &s) in self.counts.iter().zip(swap) {
            let (mine, theirs) = if s {
                ((counts[2], counts[3]), (counts[0], counts[1]))
            } else {
                ((counts[0], counts[1]), (counts[2], counts[3]))
            };
            c0 += mine.0;
            p0 += mine.1;
            c1 += theirs.0;
            p1 += theirs.1;
        }
        let f1 = PrecisionRecall::from_counts(c0, p0, self.gold).f1
            - PrecisionRecall::from_counts(c1, p1, self.gold).f1;
        let mut ap = [AveragePrecision::new(self.gold); 2];
        let mut retrieved = [0u64; 2];
        let mut hits = [0u64; 2];
        for &(claim, from_b, hit, last) in &self.pairs {
            // Pseudo-system 0 holds run a's pair unless the claim is swapped.
            let side = usize::from(from_b != swap[claim as usize]);
            retrieved[side] += 1;
            hits[side] += u64::from(hit);
            if last {
                ap[0].close_threshold(hits[0], retrieved[0]);
                ap[1].close_threshold(hits[1], retrieved[1]);
            }
        }
        F1Ap {
            f1,
            average_precision: ap[0].value() - ap[1].value(),
        }
    }
}
