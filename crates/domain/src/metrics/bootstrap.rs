//! Bootstrap standard deviations over claims: resample the gold claims with replacement, each
//! drawn claim bringing all its gold and predicted pairs.

use super::error::MetricsError;
use super::judged::JudgedRun;
use super::scores::Metrics;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::borrow::Borrow;

/// How many bootstrap resamples to draw: at least 2, since the standard deviation of one value
/// is undefined.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub struct BootstrapSamples(u32);

/// A bootstrap sample count below 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the bootstrap needs at least 2 samples, got {0}")]
pub struct BootstrapSamplesError(pub u32);

impl BootstrapSamples {
    pub fn new(samples: u32) -> Result<BootstrapSamples, BootstrapSamplesError> {
        if samples >= 2 {
            Ok(BootstrapSamples(samples))
        } else {
            Err(BootstrapSamplesError(samples))
        }
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

impl TryFrom<u32> for BootstrapSamples {
    type Error = BootstrapSamplesError;
    fn try_from(samples: u32) -> Result<BootstrapSamples, BootstrapSamplesError> {
        BootstrapSamples::new(samples)
    }
}

impl From<BootstrapSamples> for u32 {
    fn from(samples: BootstrapSamples) -> u32 {
        samples.0
    }
}

/// The metrics on the full claim set, with the standard deviation of each over the bootstrap
/// resamples. The deviations are sample standard deviations (denominator `samples - 1`), the
/// bootstrap standard error of Efron & Tibshirani (1993, eq. 6.6).
#[derive(Clone, Copy, PartialEq, Debug, Default, Serialize, Deserialize)]
pub struct MetricsWithSd {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub average_precision: f64,
    pub precision_sd: f64,
    pub recall_sd: f64,
    pub f1_sd: f64,
    pub average_precision_sd: f64,
    /// Number of resamples.
    pub samples: u32,
    /// Seed of the ChaCha8 generator that drew them.
    pub seed: u64,
}

/// Draws claim resamples: each resample draws as many claims as there are, uniformly with
/// replacement, and gives each claim its multiplicity (0, 1, 2, ...). The sequence is fixed by
/// the seed (ChaCha8, `gen_range` over `u32` claim indices, rand 0.8), on every platform.
#[derive(Clone, Debug)]
pub struct ClaimResampler {
    rng: ChaCha8Rng,
    weights: Vec<u32>,
}

impl ClaimResampler {
    /// A resampler over `claims` claims (indices in [`super::Gold::claims`] order).
    pub fn new(claims: usize, seed: u64) -> ClaimResampler {
        ClaimResampler {
            rng: ChaCha8Rng::seed_from_u64(seed),
            weights: vec![0; claims],
        }
    }

    /// The next resample: per claim index, how many times it was drawn.
    pub fn next_weights(&mut self) -> &[u32] {
        self.weights.fill(0);
        let n = self.weights.len();
        // Gold::new refuses more than u32::MAX claims; an empty claim set draws nothing.
        if let Ok(bound) = u32::try_from(n) {
            for _ in 0..n {
                let drawn = self.rng.gen_range(0..bound) as usize;
                self.weights[drawn] += 1;
            }
        }
        &self.weights
    }
}

/// Bootstraps several runs judged against the same gold on the same resamples (a paired
/// bootstrap: the k-th resample draws the same claims for every run), so that differences
/// between systems are not blurred by different draws. Each result equals
/// [`JudgedRun::bootstrap`] of that run alone with the same seed. Fails when the runs were
/// judged against different golds.
pub fn bootstrap(
    runs: &[&JudgedRun],
    samples: BootstrapSamples,
    seed: u64,
) -> Result<Vec<MetricsWithSd>, MetricsError> {
    if let Some(first) = runs.first() {
        if let Some(index) = runs.iter().position(|run| !run.same_gold(first)) {
            return Err(MetricsError::DifferentGold { index });
        }
    }
    Ok(bootstrap_judged(runs, samples, seed))
}

/// [`bootstrap`] without the gold check.
pub(crate) fn bootstrap_judged<R: Borrow<JudgedRun>>(
    runs: &[R],
    samples: BootstrapSamples,
    seed: u64,
) -> Vec<MetricsWithSd> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let mut resampler = ClaimResampler::new(first.borrow().claim_count(), seed);
    let mut spreads = vec![Spread::default(); runs.len()];
    for _ in 0..samples.get() {
        let weights = resampler.next_weights();
        for (run, spread) in runs.iter().zip(&mut spreads) {
            spread.add(&run.borrow().evaluate_weighted(weights));
        }
    }
    runs.iter()
        .zip(&spreads)
        .map(|(run, spread)| {
            let point = run.borrow().metrics();
            MetricsWithSd {
                precision: point.precision,
                recall: point.recall,
                f1: point.f1,
                average_precision: point.average_precision,
                precision_sd: spread.precision.sd(),
                recall_sd: spread.recall.sd(),
                f1_sd: spread.f1.sd(),
                average_precision_sd: spread.average_precision.sd(),
                samples: samples.get(),
                seed,
            }
        })
        .collect()
}

/// Running standard deviations of the four metrics.
#[derive(Clone, Copy, Debug, Default)]
struct Spread {
    precision: Welford,
    recall: Welford,
    f1: Welford,
    average_precision: Welford,
}

impl Spread {
    fn add(&mut self, m: &Metrics) {
        self.precision.add(m.precision);
        self.recall.add(m.recall);
        self.f1.add(m.f1);
        self.average_precision.add(m.average_precision);
    }
}

/// Welford's online mean and sum of squared deviations.
#[derive(Clone, Copy, Debug, Default)]
struct Welford {
    count: u64,
    mean: f64,
    squares: f64,
}

impl Welford {
    fn add(&mut self, x: f64) {
        self.count += 1;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.squares += delta * (x - self.mean);
    }

    /// Sample standard deviation (denominator count - 1); 0 for fewer than 2 values.
    fn sd(&self) -> f64 {
        if self.count < 2 {
            0.0
        } else {
            (self.squares / (self.count - 1) as f64).max(0.0).sqrt()
        }
    }
}
