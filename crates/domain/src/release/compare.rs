//! Comparing systems evaluated against the same collection: for each pair of systems, the
//! difference in F1 and average precision, the paired randomization test and the paired
//! bootstrap over claims ([`crate::metrics::randomization_test`],
//! [`crate::metrics::paired_bootstrap`]), and the randomization p-values corrected for
//! the number of pairs with Holm's method, measure by measure.

use super::error::EvalError;
use crate::metrics::{
    holm, paired_bootstrap, randomization_test, Gold, JudgedRun, PairedBootstrap,
    RandomizationTest, Run,
};
use serde::Serialize;

/// How to compare: permutations of the randomization test, resamples of the bootstrap, and
/// the seed of both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CompareRequest {
    pub permutations: u32,
    pub bootstrap_samples: u32,
    pub seed: u64,
}

/// One pair of systems: `a` minus `b`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairComparison {
    pub a: String,
    pub b: String,
    pub f1_difference: f64,
    pub average_precision_difference: f64,
    pub randomization: RandomizationTest,
    pub bootstrap: PairedBootstrap,
    /// The randomization p-values after Holm's correction over all the pairs.
    pub f1_p_holm: f64,
    pub average_precision_p_holm: f64,
}

/// Compares every pair of `runs` (in the order given: the first with each later one, then the
/// second, ...). Each run must hold only pairs of gold claims (see [`super::restrict_to_gold`]).
/// Both tests of the k-th pair (from 0) use the seed `request.seed + k`.
pub fn compare(
    gold: &Gold,
    runs: &[(String, &Run)],
    request: CompareRequest,
) -> Result<Vec<PairComparison>, EvalError> {
    let judged: Vec<JudgedRun> = runs
        .iter()
        .map(|(_, run)| JudgedRun::new(gold, run))
        .collect::<Result<_, _>>()?;
    let mut pairs = Vec::new();
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            let (a, b) = (&judged[i], &judged[j]);
            let (ma, mb) = (a.metrics(), b.metrics());
            let seed = request.seed.wrapping_add(pairs.len() as u64);
            pairs.push(PairComparison {
                a: runs[i].0.clone(),
                b: runs[j].0.clone(),
                f1_difference: ma.f1 - mb.f1,
                average_precision_difference: ma.average_precision - mb.average_precision,
                randomization: randomization_test(a, b, request.permutations, seed)?,
                bootstrap: paired_bootstrap(a, b, request.bootstrap_samples, seed)?,
                f1_p_holm: 0.0,
                average_precision_p_holm: 0.0,
            });
        }
    }
    let f1 = holm(
        &pairs
            .iter()
            .map(|p| p.randomization.f1_p)
            .collect::<Vec<_>>(),
    );
    let ap = holm(
        &pairs
            .iter()
            .map(|p| p.randomization.average_precision_p)
            .collect::<Vec<_>>(),
    );
    for ((pair, f1), ap) in pairs.iter_mut().zip(f1).zip(ap) {
        pair.f1_p_holm = f1;
        pair.average_precision_p_holm = ap;
    }
    Ok(pairs)
}
