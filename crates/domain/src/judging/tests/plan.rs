//! The budget planner on a hand-made curve.

use super::super::{
    hours, median_seconds, plan_evidence, plan_judgments, plan_recall, Budget, Curve, CurvePoint,
    JudgingError,
};

/// Evidence after judgments 1..=6: 1, 1, 2, 3, 3, 4.
fn curve() -> Curve {
    Curve(
        [1, 1, 2, 3, 3, 4]
            .into_iter()
            .enumerate()
            .map(|(i, evidence)| CurvePoint {
                judgments: i + 1,
                evidence,
            })
            .collect(),
    )
}

#[test]
fn median_skips_what_is_not_a_duration() {
    assert_eq!(median_seconds([30.0, 10.0, 20.0]), Some(20.0));
    assert_eq!(median_seconds([40.0, 10.0, 20.0, 30.0]), Some(25.0));
    assert_eq!(median_seconds([f64::NAN, -1.0, 5.0]), Some(5.0));
    assert_eq!(median_seconds([]), None);
}

#[test]
fn plans_turn_judgments_into_hours() {
    assert_eq!(hours(120, 30.0), Ok(1.0));
    assert_eq!(hours(1, -1.0), Err(JudgingError::SecondsPerItem(-1.0)));
    let c = curve();
    assert_eq!(c.judgments_to_reach(0), Some(0));
    assert_eq!(c.judgments_to_reach(3), Some(4));
    assert_eq!(c.judgments_to_reach(5), None);
    assert_eq!(
        plan_judgments(&c, 5, 36.0),
        Ok(Budget {
            judgments: 5,
            evidence: 3,
            hours: 0.05
        })
    );
    // Past the curve's end: its last evidence.
    assert_eq!(plan_judgments(&c, 9, 0.0).map(|b| b.evidence), Ok(4));
    assert_eq!(
        plan_evidence(&c, 2, 3600.0),
        Ok(Some(Budget {
            judgments: 3,
            evidence: 2,
            hours: 3.0
        }))
    );
    assert_eq!(plan_evidence(&c, 7, 10.0), Ok(None));
    // 90% of an estimated 3.3 is 2.97: 3 evidence pairs, 4 judgments.
    assert_eq!(
        plan_recall(&c, 3.3, 0.9, 900.0),
        Ok(Some(Budget {
            judgments: 4,
            evidence: 3,
            hours: 1.0
        }))
    );
    // 90% of 10 is 9, not 10 after rounding; the curve never finds 9.
    assert_eq!(plan_recall(&c, 10.0, 0.9, 1.0), Ok(None));
    assert_eq!(
        plan_recall(&c, 4.0, 0.75, 1.0).map(|b| b.map(|b| b.evidence)),
        Ok(Some(3))
    );
    assert_eq!(
        plan_recall(&c, 4.0, 0.0, 1.0),
        Err(JudgingError::TargetRecall(0.0))
    );
    assert_eq!(
        plan_recall(&c, f64::INFINITY, 0.5, 1.0),
        Err(JudgingError::EstimatedTotal(f64::INFINITY))
    );
}
