//! The replay simulator: judge the pairs an order proposes against a known truth and record
//! how much evidence each judgment budget finds.

use super::selector::Selector;
use crate::pool::{Key, PairSet};
use serde::{Deserialize, Serialize};

/// After `judgments` judgments, `evidence` of them were evidence.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct CurvePoint {
    pub judgments: usize,
    pub evidence: usize,
}

/// A discovery curve: one point per judgment, `judgments` = 1, 2, 3, ... and `evidence`
/// never falling. Empty when nothing was judged.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Curve(pub Vec<CurvePoint>);

impl Curve {
    /// The points, one per judgment.
    pub fn points(&self) -> &[CurvePoint] {
        &self.0
    }

    /// Judgments the curve records.
    pub fn judgments(&self) -> usize {
        self.0.last().map_or(0, |p| p.judgments)
    }

    /// Evidence found by the end of the curve.
    pub fn evidence(&self) -> usize {
        self.0.last().map_or(0, |p| p.evidence)
    }

    /// The fewest judgments that found at least `evidence` evidence pairs (0 for 0); `None` if
    /// the curve never gets there.
    pub fn judgments_to_reach(&self, evidence: usize) -> Option<usize> {
        if evidence == 0 {
            return Some(0);
        }
        // Evidence never falls along the curve: binary search.
        let at = self.0.partition_point(|p| p.evidence < evidence);
        self.0.get(at).map(|p| p.judgments)
    }
}

/// Evidence found within `budget` judgments: the curve's point at `budget`, or its end if it
/// stops sooner (every pair judged).
pub fn evidence_at(curve: &Curve, budget: usize) -> usize {
    match budget.checked_sub(1) {
        None => 0,
        Some(index) => curve
            .0
            .get(index)
            .or(curve.0.last())
            .map_or(0, |p| p.evidence),
    }
}

/// Judges, against `truth` (the evidence pairs; any other pair is not evidence), the pairs
/// `selector` proposes, until `budget` judgments are spent or no pair is left. Returns one
/// point per judgment. Labels recorded in the selector beforehand are used by the order for
/// free and counted in neither judgments nor evidence.
pub fn replay<C: Key, D: Key>(
    selector: &mut Selector<C, D>,
    truth: &impl PairSet<C, D>,
    budget: usize,
) -> Curve {
    let mut points = Vec::with_capacity(budget.min(selector.len()));
    let mut evidence = 0;
    while points.len() < budget {
        let Some(pair) = selector.next_pair() else {
            break;
        };
        let is_evidence = truth.contains_pair(&pair);
        // A proposal is never used yet, so recording its first label cannot fail.
        if selector.record(pair, is_evidence).is_err() {
            break;
        }
        evidence += usize::from(is_evidence);
        points.push(CurvePoint {
            judgments: points.len() + 1,
            evidence,
        });
    }
    Curve(points)
}
