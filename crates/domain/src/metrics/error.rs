//! Why a gold set, a run or an evaluation request is refused.

use crate::ids::{ClaimId, DocId};
use crate::label::Label;

/// An input the metrics refuse, with the claim, document and position involved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetricsError {
    /// The gold claim list names a claim twice.
    #[error("gold claims: claim {claim} is listed twice")]
    DuplicateGoldClaim { claim: ClaimId },
    /// The gold claim list is too long to index claims with `u32`.
    #[error("gold claims: {count} claims, more than the {max} supported", max = u32::MAX)]
    TooManyClaims { count: usize },
    /// A gold label is given for a claim outside the gold claim list.
    #[error("gold label for ({claim}, {doc}): claim {claim} is not in the gold claim list")]
    GoldLabelForUnknownClaim { claim: ClaimId, doc: DocId },
    /// The same pair is given two different gold labels.
    #[error("gold label for ({claim}, {doc}): given both {first} and {second}")]
    ConflictingGoldLabels {
        claim: ClaimId,
        doc: DocId,
        first: Label,
        second: Label,
    },
    /// A run lists the same (claim, doc) pair twice (`index` counts the run's pairs from 0).
    #[error("run pair {index} ({claim}, {doc}) repeats run pair {first_index}")]
    DuplicateRunPair {
        index: usize,
        first_index: usize,
        claim: ClaimId,
        doc: DocId,
    },
    /// A run pair's claim is outside the gold claim list, so it cannot be judged.
    #[error("run pair {index} ({claim}, {doc}): claim {claim} is not in the gold claim list")]
    RunClaimNotInGold {
        index: usize,
        claim: ClaimId,
        doc: DocId,
    },
    /// A pair of an indexed run that no gold can judge: its claim index is outside the gold, or
    /// (with a repeat to report) its doc text is not a doc id.
    #[error("run pair {index}: {reason}")]
    BadIndexedPair { index: usize, reason: String },
    /// A pair asked about (confusion matrix) has a claim outside the gold claim list.
    #[error("pair ({claim}, {doc}): claim {claim} is not in the gold claim list")]
    PairClaimNotInGold { claim: ClaimId, doc: DocId },
    /// A label-less prediction has no place in a label confusion matrix.
    #[error(
        "run pair ({claim}, {doc}) has no predicted label, so it has no cell in a confusion matrix"
    )]
    UnlabelledPrediction { claim: ClaimId, doc: DocId },
    /// Per-claim weights must give one weight per gold claim.
    #[error("claim weights: {got} weights for {expected} gold claims")]
    WeightCount { expected: usize, got: usize },
    /// Runs bootstrapped together must be judged against the same gold.
    #[error("bootstrap: run {index} was judged against a different gold than run 0")]
    DifferentGold { index: usize },
}
