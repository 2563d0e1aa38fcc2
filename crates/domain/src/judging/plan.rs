//! The budget planner: annotator-hours to reach a number of judgments, of evidence pairs or a
//! target recall of the estimated total, from a discovery curve and the median time per item.

use super::error::JudgingError;
use super::replay::{evidence_at, Curve};
use serde::{Deserialize, Serialize};

/// Judgments, the evidence they find and the annotator-hours they take.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct Budget {
    pub judgments: usize,
    pub evidence: usize,
    pub hours: f64,
}

/// The median of the finite, non-negative `seconds` (the mean of the middle two for an even
/// count); `None` when there is none. Other values (NaN, negative) are skipped.
pub fn median_seconds(seconds: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut values: Vec<f64> = seconds
        .into_iter()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .collect();
    values.sort_unstable_by(f64::total_cmp);
    let mid = values.len() / 2;
    match values.len() {
        0 => None,
        n if n % 2 == 1 => values.get(mid).copied(),
        _ => Some((values.get(mid - 1)? + values.get(mid)?) / 2.0),
    }
}

fn check_seconds(seconds_per_item: f64) -> Result<(), JudgingError> {
    if seconds_per_item.is_finite() && seconds_per_item >= 0.0 {
        Ok(())
    } else {
        Err(JudgingError::SecondsPerItem(seconds_per_item))
    }
}

/// Annotator-hours for `judgments` items at `seconds_per_item` each.
pub fn hours(judgments: usize, seconds_per_item: f64) -> Result<f64, JudgingError> {
    check_seconds(seconds_per_item)?;
    // Counts stay far below 2^53: the conversion is exact.
    Ok(judgments as f64 * seconds_per_item / 3600.0)
}

/// The budget of `judgments` judgments along `curve` (its evidence at that point, or at its
/// end if shorter).
pub fn plan_judgments(
    curve: &Curve,
    judgments: usize,
    seconds_per_item: f64,
) -> Result<Budget, JudgingError> {
    Ok(Budget {
        judgments,
        evidence: evidence_at(curve, judgments),
        hours: hours(judgments, seconds_per_item)?,
    })
}

/// The budget to find `evidence` evidence pairs along `curve`; `None` if the curve never
/// finds that many.
pub fn plan_evidence(
    curve: &Curve,
    evidence: usize,
    seconds_per_item: f64,
) -> Result<Option<Budget>, JudgingError> {
    check_seconds(seconds_per_item)?;
    curve
        .judgments_to_reach(evidence)
        .map(|judgments| plan_judgments(curve, judgments, seconds_per_item))
        .transpose()
}

/// The budget to reach `target_recall` ∈ (0, 1] of `estimated_total` evidence pairs (e.g.
/// [`super::Estimator::total_evidence`]'s value, or its interval's upper end to be safe):
/// `⌈τ · total⌉` evidence pairs along `curve`; `None` if the curve never finds that many.
pub fn plan_recall(
    curve: &Curve,
    estimated_total: f64,
    target_recall: f64,
    seconds_per_item: f64,
) -> Result<Option<Budget>, JudgingError> {
    if !(target_recall > 0.0 && target_recall <= 1.0) {
        return Err(JudgingError::TargetRecall(target_recall));
    }
    if !(estimated_total.is_finite() && estimated_total >= 0.0) {
        return Err(JudgingError::EstimatedTotal(estimated_total));
    }
    // A hair below the product so that 0.9 × 10 asks for 9, not 10 after rounding.
    let target = (target_recall * estimated_total - 1e-9).ceil().max(0.0);
    // Totals stay far below 2^53: the conversion is exact.
    plan_evidence(curve, target as usize, seconds_per_item)
}
