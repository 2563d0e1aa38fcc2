//! Pairwise significance of the differences between a project's systems in the lead report
//! (issue 17): the paired randomization test over claims on F1 and AP, with Holm's correction
//! over all pairs of systems, measure by measure. Computed by `domain::report` with
//! `domain::metrics::{randomization_test, holm}` (server only); plain data here, for the
//! browser too.

use serde::{Deserialize, Serialize};

/// The significance level the marks use.
pub const SIGNIFICANCE_ALPHA: f64 = 0.05;

/// Every pair of systems compared, and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Significance {
    /// Permutations of the randomization test (per pair of systems).
    pub permutations: u32,
    /// The seed of the first pair's test; the k-th pair (from 0) uses `seed + k`.
    pub seed: u64,
    /// A difference is marked significant when its Holm-adjusted p-value is below `alpha`.
    pub alpha: f64,
    /// Each pair of systems, in report order (the first with each later one, then the second...).
    pub pairs: Vec<SystemComparison>,
}

/// Two systems: `a` minus `b`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SystemComparison {
    pub a: String,
    pub b: String,
    pub f1_difference: f64,
    pub average_precision_difference: f64,
    /// Two-sided p-values of the paired randomization test.
    pub f1_p: f64,
    pub average_precision_p: f64,
    /// The same after Holm's correction over every pair (F1 and AP corrected separately).
    pub f1_p_holm: f64,
    pub average_precision_p_holm: f64,
    /// `f1_p_holm < alpha`.
    pub f1_significant: bool,
    /// `average_precision_p_holm < alpha`.
    pub average_precision_significant: bool,
}

impl Significance {
    /// The comparison of `x` with `y` in either order, and whether it is stored as `x - y`.
    pub fn between(&self, x: &str, y: &str) -> Option<(&SystemComparison, bool)> {
        self.pairs.iter().find_map(|p| {
            if p.a == x && p.b == y {
                Some((p, true))
            } else if p.a == y && p.b == x {
                Some((p, false))
            } else {
                None
            }
        })
    }

    /// The legend the report prints under its pairwise table.
    pub fn legend(&self) -> String {
        format!(
            "* the difference is significant at α = {} after Holm's correction over the {} pairs of systems \
             (paired randomization test over claims, two-sided, {} permutations, seed {}; F1 and AP corrected separately)",
            self.alpha,
            self.pairs.len(),
            self.permutations,
            self.seed
        )
    }
}
