//! Evaluation of systems against a collection's gold labels, as SciFact-Open defines it
//! (Wadden et al. 2022, Table 5), and agreement figures between annotation passes.
//!
//! The flow: build the [`Gold`] (every claim of the collection, with its SUPPORT/CONTRADICT pairs;
//! every other pair is NEI) and a [`Run`] (a system's predicted pairs), then judge the run once
//! with [`JudgedRun::new`]. The judged run holds per-claim counts and the pairs pre-sorted by
//! confidence, so [`JudgedRun::metrics`], [`JudgedRun::by_claim`] and the bootstrap
//! ([`JudgedRun::bootstrap`], [`bootstrap`] for several systems on the same resamples) never
//! look at identifiers or re-sort again. It and [`incomplete`] read the run as an [`IndexedRun`]
//! (claims as gold claim indices, doc ids borrowed), which a reader that knows the gold can
//! build without a [`Run`] ([`JudgedRun::from_indexed`], [`incomplete_indexed`]).
//!
//! Incomplete judgments ([`incomplete`]: Judged@k, bpref, condensed lists) and paired
//! significance tests between systems ([`randomization_test`], [`paired_bootstrap`], [`holm`])
//! build on the same judged runs.
//!
//! Conventions, shared by every figure here:
//! - a ratio whose denominator is 0 is 0 (precision of a run that predicts no evidence, recall
//!   of a claim with no evidence, F1 when precision and recall are both 0, AP with no gold
//!   evidence);
//! - the predicted label of a pair is the run's stated label; a pair without one (TREC-style,
//!   label-less run) claims "evidence" and is judged label-agnostically: it is correct when the
//!   pair is gold evidence, whatever the gold label.

mod agreement;
// The benchmark's generated runs and timing (crates/benchdata), for the test that checks them
// (which reads the timing's results, not its durations).
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../../benchdata/src/metrics.rs"]
mod bench;
mod bootstrap;
mod by_claim;
mod confusion;
mod error;
mod gold;
mod incomplete;
mod indexed;
mod judged;
mod overlap;
mod run;
mod scores;
mod significance;

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_incomplete;
#[cfg(test)]
mod tests_real_data;

pub use agreement::{kappa, nominal_alpha, sentence_decisions, sentence_f1, Agreement};
pub use bootstrap::{
    bootstrap, BootstrapSamples, BootstrapSamplesError, ClaimResampler, MetricsWithSd,
};
pub use by_claim::ClaimMetrics;
pub use confusion::{label_confusion, ConfusionMatrix};
pub use error::MetricsError;
pub use gold::Gold;
pub use incomplete::{
    incomplete, incomplete_indexed, ClaimIncomplete, IncompleteMetrics, JudgedAt, Judgments,
    JUDGED_CUTOFFS,
};
pub use indexed::{repeats_outside_gold, IndexedPair, IndexedRun};
pub use judged::JudgedRun;
pub use overlap::jaccard;
pub use run::{Confidence, ConfidenceError, Prediction, Run, RunPair};
pub use scores::{AveragePrecision, Metrics, PrecisionRecall};
pub use significance::{
    holm, paired_bootstrap, percentile, randomization_test, DifferenceInterval, F1Ap,
    PairedBootstrap, RandomizationTest,
};
