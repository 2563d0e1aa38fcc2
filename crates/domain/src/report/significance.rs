//! Which differences between the project's systems are significant (issue 17): every pair of
//! systems at the current depth, in snapshot order, compared with the paired randomization test
//! over claims on F1 and AP ([`randomization_test`]; the k-th pair from 0 is seeded with
//! `seed + k`, as `claimpool eval` seeds its comparisons), the p-values corrected with Holm's
//! method over all pairs ([`holm`]), F1 and AP separately, and a difference marked significant
//! when its corrected p-value is below [`SIGNIFICANCE_ALPHA`].
//!
//! The pairs are independent, so they are tested on up to as many threads as the machine has
//! cores; the result does not depend on how many.

use super::error::ReportError;
use crate::metrics::{holm, randomization_test, JudgedRun, RandomizationTest};
pub use crate::model::significance::{Significance, SystemComparison, SIGNIFICANCE_ALPHA};

/// Permutations of the randomization test per pair of systems in the report. Measured with
/// `cargo bench -p server --bench report -- --permutations N` (300 claims, 5 systems of 10,200
/// predictions: 10 pairs, 2 cores): 0 permutations 235 ms, 1,000 566 ms, 2,000 871 ms (its
/// slowest run 1.05 s), 10,000 3.3 s, against the 1 s target. The smallest p-value 1,000 can
/// give is 0 (no permutation as extreme), so even 10 pairs' Holm factor leaves clear
/// differences significant.
pub const DEFAULT_PERMUTATIONS: u32 = 1_000;

/// Compares every pair of `systems` (name and judged run, all against the same gold).
pub(super) fn significance(
    systems: &[(&str, &JudgedRun)],
    permutations: u32,
    seed: u64,
) -> Result<Significance, ReportError> {
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for i in 0..systems.len() {
        for j in i + 1..systems.len() {
            pairs.push((i, j));
        }
    }
    let test = |k: usize| {
        let (i, j) = pairs[k];
        randomization_test(
            systems[i].1,
            systems[j].1,
            permutations,
            seed.wrapping_add(k as u64),
        )
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(pairs.len())
        .max(1);
    let mut tests: Vec<Option<RandomizationTest>> = vec![None; pairs.len()];
    let results: Vec<Vec<(usize, Result<RandomizationTest, _>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let test = &test;
                let count = pairs.len();
                scope.spawn(move || {
                    (t..count)
                        .step_by(threads)
                        .map(|k| (k, test(k)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    for (k, result) in results.into_iter().flatten() {
        tests[k] = Some(result?);
    }
    let tests: Vec<RandomizationTest> = tests.into_iter().flatten().collect();
    if tests.len() != pairs.len() {
        return Err(ReportError::SignificanceStopped);
    }
    let f1_holm = holm(&tests.iter().map(|t| t.f1_p).collect::<Vec<_>>());
    let ap_holm = holm(
        &tests
            .iter()
            .map(|t| t.average_precision_p)
            .collect::<Vec<_>>(),
    );
    let comparisons = pairs
        .iter()
        .zip(&tests)
        .zip(f1_holm.into_iter().zip(ap_holm))
        .map(|((&(i, j), t), (f1_p_holm, ap_p_holm))| {
            let (a, b) = (systems[i].1.metrics(), systems[j].1.metrics());
            SystemComparison {
                a: systems[i].0.to_owned(),
                b: systems[j].0.to_owned(),
                f1_difference: a.f1 - b.f1,
                average_precision_difference: a.average_precision - b.average_precision,
                f1_p: t.f1_p,
                average_precision_p: t.average_precision_p,
                f1_p_holm,
                average_precision_p_holm: ap_p_holm,
                f1_significant: f1_p_holm < SIGNIFICANCE_ALPHA,
                average_precision_significant: ap_p_holm < SIGNIFICANCE_ALPHA,
            }
        })
        .collect();
    Ok(Significance {
        permutations,
        seed,
        alpha: SIGNIFICANCE_ALPHA,
        pairs: comparisons,
    })
}
