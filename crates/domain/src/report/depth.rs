//! The depth curve (SciFact-Open §5, Zobel 1998): evidence discovered and every system's scores
//! as the pool deepens, in steps up to the current depth.

use super::by_name::ByName;
use super::csv::{num, opt, CsvTable};
use super::engine::Engine;
use super::prepared::{Key, Prepared};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::num::NonZeroU32;

/// One depth of the curve.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct DepthPoint {
    /// The pool depth.
    pub depth: u32,
    /// Pairs in the pool at this depth.
    pub pool_size: usize,
    /// Pairs of that pool with a label (citation evidence or a final label).
    pub judged: usize,
    /// Evidence discovered: pooled pairs with a SUPPORT/CONTRADICT final label that are not
    /// citation evidence.
    pub evidence: u64,
    /// Every system's scores against citation evidence plus the evidence discovered here.
    pub systems: ByName<DepthScores>,
}

/// A system's scores at one depth.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct DepthScores {
    /// Correct evidence pairs / predicted evidence pairs.
    pub precision: f64,
    /// Correct evidence pairs / gold evidence pairs.
    pub recall: f64,
    /// Harmonic mean of precision and recall.
    pub f1: f64,
    /// Average precision over the system's confidence ranking.
    pub average_precision: f64,
    /// |F1 here − F1 at the previous depth| as a percentage of the previous F1: `None` at the
    /// first depth, and when the previous F1 is 0 but this one is not (0 when both are 0).
    pub f1_change_pct: Option<f64>,
    /// The same for the average precision.
    pub average_precision_change_pct: Option<f64>,
}

/// The depth curve, shallowest depth first.
#[derive(Clone, PartialEq, Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DepthCurve(pub Vec<DepthPoint>);

/// The depths of the curve: `step`, `2·step`, ... up to `current`, and `current` itself when
/// it is not a multiple of `step`. None when `current` is 0.
pub fn curve_depths(step: NonZeroU32, current: u32) -> Vec<u32> {
    let step = step.get();
    let mut depths: Vec<u32> = (1..=current / step).map(|i| i * step).collect();
    if !current.is_multiple_of(step) {
        depths.push(current);
    }
    depths
}

/// The fewest depths [`auto_step`] aims for: a curve of fewer points hides its shape.
pub const AUTO_STEP_POINTS: u32 = 6;

/// A depth step that draws the curve of a pool at `depth` with at least [`AUTO_STEP_POINTS`]
/// depths: the largest of 1, 2, 5, 10, 20, 50, 100, ... that does (1 for shallow pools). A pool
/// at depth 30 gets 5 (depths 5 to 30), at 100 gets 10, at 250 gets 20 (12 depths + 250).
pub fn auto_step(depth: u32) -> NonZeroU32 {
    let mut best = 1u32;
    let mut decade = 1u32;
    'search: loop {
        for factor in [1u32, 2, 5] {
            let Some(step) = decade.checked_mul(factor) else {
                break 'search;
            };
            if depth / step < AUTO_STEP_POINTS {
                break 'search;
            }
            best = step;
        }
        match decade.checked_mul(10) {
            Some(next) => decade = next,
            None => break,
        }
    }
    NonZeroU32::new(best).unwrap_or(NonZeroU32::MIN)
}

/// The absolute change from `previous` to `current` in percent of `previous`.
pub fn absolute_change_pct(previous: f64, current: f64) -> Option<f64> {
    if previous == 0.0 {
        (current == 0.0).then_some(0.0)
    } else {
        Some(100.0 * (current - previous).abs() / previous)
    }
}

pub(super) fn depth_curve(
    prepared: &Prepared<'_>,
    engine: &Engine,
    step: NonZeroU32,
) -> DepthCurve {
    let depths = curve_depths(step, prepared.depth);
    let judged: HashSet<Key> = engine.tracked.iter().map(|t| t.key).collect();
    let sizes = engine.ranking.preview(&depths, &judged);
    let entry = engine.full_entry();
    let mut previous: Option<Vec<DepthScores>> = None;
    let mut points = Vec::with_capacity(depths.len());
    for (&depth, size) in depths.iter().zip(&sizes) {
        let discovered = engine.discovered(&entry, depth);
        let scores: Vec<DepthScores> = (0..engine.system_count())
            .map(|s| {
                let m = engine.metrics(s, &discovered);
                let before = previous.as_ref().and_then(|p| p.get(s));
                DepthScores {
                    precision: m.precision,
                    recall: m.recall,
                    f1: m.f1,
                    average_precision: m.average_precision,
                    f1_change_pct: before.and_then(|b| absolute_change_pct(b.f1, m.f1)),
                    average_precision_change_pct: before.and_then(|b| {
                        absolute_change_pct(b.average_precision, m.average_precision)
                    }),
                }
            })
            .collect();
        points.push(DepthPoint {
            depth,
            pool_size: size.pool_size,
            judged: size.pool_size - size.to_annotate,
            evidence: discovered.count,
            systems: prepared
                .systems
                .iter()
                .map(|s| s.name.to_owned())
                .zip(scores.iter().copied())
                .collect(),
        });
        previous = Some(scores);
    }
    DepthCurve(points)
}

impl DepthCurve {
    /// One row per depth and system.
    pub fn csv_table(&self) -> CsvTable {
        let mut table = CsvTable::new(
            "depth_curve",
            &[
                "depth",
                "pool_size",
                "judged",
                "evidence",
                "system",
                "precision",
                "recall",
                "f1",
                "average_precision",
                "f1_change_pct",
                "average_precision_change_pct",
            ],
        );
        for point in &self.0 {
            for (system, s) in point.systems.iter() {
                table.push(vec![
                    point.depth.to_string(),
                    point.pool_size.to_string(),
                    point.judged.to_string(),
                    point.evidence.to_string(),
                    system.to_owned(),
                    num(s.precision),
                    num(s.recall),
                    num(s.f1),
                    num(s.average_precision),
                    opt(s.f1_change_pct),
                    opt(s.average_precision_change_pct),
                ]);
            }
        }
        table
    }

    /// [`DepthCurve::csv_table`] as CSV text.
    pub fn to_csv(&self) -> String {
        self.csv_table().to_csv()
    }
}

#[cfg(test)]
mod auto_step_tests {
    use super::*;

    /// The plain definition: the largest step of the 1-2-5 series with at least
    /// AUTO_STEP_POINTS multiples up to `depth`, else 1.
    fn naive(depth: u32) -> u32 {
        let series = (0..9).flat_map(|k| [1u64, 2, 5].map(|f| f * 10u64.pow(k)));
        series
            .filter(|&s| u64::from(depth) / s >= u64::from(AUTO_STEP_POINTS))
            .max()
            .map_or(1, |s| u32::try_from(s).unwrap())
    }

    #[test]
    fn steps_give_enough_depths() {
        assert_eq!(auto_step(0).get(), 1);
        assert_eq!(auto_step(5).get(), 1);
        assert_eq!(auto_step(30).get(), 5);
        assert_eq!(auto_step(100).get(), 10);
        assert_eq!(auto_step(250).get(), 20);
        assert_eq!(auto_step(1_000).get(), 100);
        for depth in (0..5_000).chain([u32::MAX / 3, u32::MAX]) {
            let step = auto_step(depth);
            assert_eq!(step.get(), naive(depth), "depth {depth}");
            if depth >= AUTO_STEP_POINTS {
                assert!(curve_depths(step, depth).len() >= AUTO_STEP_POINTS as usize);
            }
        }
    }
}
