//! The headline figures and the ratio conventions they share.

use serde::{Deserialize, Serialize};

/// Abstract-level, label-only precision, recall and F1, and the average precision over the
/// run's precision/recall curve. Every value is in [0, 1]; a 0/0 ratio is 0.
#[derive(Clone, Copy, PartialEq, Debug, Default, Serialize, Deserialize)]
pub struct Metrics {
    /// Correct pairs / pairs the run predicts as evidence (0 when it predicts none).
    pub precision: f64,
    /// Correct pairs / gold evidence pairs (0 when there is no gold evidence).
    pub recall: f64,
    /// Harmonic mean of precision and recall (0 when both are 0).
    pub f1: f64,
    /// Sum over confidence thresholds of (R_i - R_{i-1}) * P_i (0 when there is no gold evidence).
    pub average_precision: f64,
}

/// Precision, recall and F1 from counts.
pub(crate) struct PrecisionRecall {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

impl PrecisionRecall {
    /// `correct` of the `predicted` pairs are right, out of `gold` evidence pairs.
    pub fn from_counts(correct: u64, predicted: u64, gold: u64) -> Self {
        let precision = ratio(correct, predicted);
        let recall = ratio(correct, gold);
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        PrecisionRecall {
            precision,
            recall,
            f1,
        }
    }
}

/// `num / den`, and 0 when `den` is 0.
pub(crate) fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}
