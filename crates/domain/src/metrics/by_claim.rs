//! Per-claim figures, for `--by-claim` reports.

use super::scores::PrecisionRecall;
use crate::ids::ClaimId;
use serde::{Deserialize, Serialize};

/// One claim's counts and label-only precision, recall and F1 (0/0 ratios are 0, so a claim
/// without evidence has recall 0, and a claim with no predicted evidence has precision 0).
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct ClaimMetrics {
    pub claim: ClaimId,
    /// Gold evidence pairs of the claim.
    pub gold_evidence: u64,
    /// Pairs the run predicts as evidence for the claim.
    pub predicted: u64,
    /// Predicted pairs that are gold evidence with the same label.
    pub correct: u64,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

impl ClaimMetrics {
    pub(crate) fn from_counts(claim: ClaimId, correct: u64, predicted: u64, gold: u64) -> Self {
        let pr = PrecisionRecall::from_counts(correct, predicted, gold);
        ClaimMetrics {
            claim,
            gold_evidence: gold,
            predicted,
            correct,
            precision: pr.precision,
            recall: pr.recall,
            f1: pr.f1,
        }
    }
}
