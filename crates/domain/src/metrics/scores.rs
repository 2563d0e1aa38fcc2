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

/// Precision, recall and F1 from counts, with the ratio conventions above: every figure of
/// claimpool that is a precision, a recall or an F1 is computed here.
#[derive(Clone, Copy, PartialEq, Debug, Default)]
pub struct PrecisionRecall {
    /// Correct / predicted (0 when nothing is predicted).
    pub precision: f64,
    /// Correct / gold (0 when there is no gold evidence).
    pub recall: f64,
    /// Harmonic mean of the two (0 when both are 0).
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

/// The average precision, summed threshold by threshold down a confidence ranking:
/// AP = sum over thresholds of (R_i - R_{i-1}) * P_i, where a threshold takes in every pair of
/// one confidence. Only thresholds that raise recall contribute. Every average precision of
/// claimpool is summed here, so that the report's figures are bit-identical to the release's.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct AveragePrecision {
    gold: u64,
    hits_before: u64,
    sum: f64,
}

impl AveragePrecision {
    /// A sum over a ranking judged against `gold` (weighted) gold evidence pairs; it stays 0
    /// when `gold` is 0.
    pub fn new(gold: u64) -> AveragePrecision {
        AveragePrecision {
            gold,
            hits_before: 0,
            sum: 0.0,
        }
    }

    /// Closes a threshold: down to it, `retrieved` pairs are ranked, `hits` of them hits
    /// (cumulative counts, never decreasing).
    pub fn close_threshold(&mut self, hits: u64, retrieved: u64) {
        if self.gold > 0 && hits > self.hits_before {
            // hits > 0 implies retrieved > 0.
            self.sum += (hits - self.hits_before) as f64 / self.gold as f64
                * (hits as f64 / retrieved as f64);
            self.hits_before = hits;
        }
    }

    /// The sum so far.
    pub fn value(self) -> f64 {
        self.sum
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
