//! What a pool's stratified sample says beyond the judged depth (issue 15): Horvitz–Thompson
//! estimates of the total evidence and of each system's precision, recall and F1, the
//! evidence not yet found, the stopping test for a target recall, and the budget planner.
//! Every figure is computed by `domain::judging` ([`Estimator`], [`RecallTarget`],
//! [`plan_evidence`]); this module only lays out its inputs from the stored sample and reads
//! its outputs.
//!
//! # The universe
//!
//! A sample drawn beyond depth `d` with reach `r` (`d·2^K` for `K` rank bands) covers the
//! pairs the pooled systems rank within `r` (best rank, within the claim under `per-claim`).
//! Of those, the *certain* pairs are the depth-`d` pool and the pairs beyond `d` already judged
//! when the sample was drawn (stored with the sample, inclusion probability 1); the rest are
//! the strata's populations. The estimates need every certain and every drawn pair judged;
//! until then [`Survey::waiting`] says how many are not. A pair is evidence when its final
//! label is SUPPORT or CONTRADICT (citation evidence included); a system *retrieves* the pairs
//! it predicts as evidence (SUPPORT or CONTRADICT, or any pair of a run without labels), and
//! its estimates count a retrieved evidence pair as a hit whatever the label (evidence
//! retrieval), over its retrieved pairs in the universe ([`SystemSurvey::outside`] counts the
//! others).
//!
//! # Stopping
//!
//! The hypergeometric test ([`RecallTarget::test`]) needs a simple random sample of the pairs
//! unjudged when it was drawn: a one-stratum sample (`--strata 1`) is one. With several strata
//! the test is not made ([`Stopping::Stratified`]).
//!
//! # Planning
//!
//! The discovery curve beyond the sample's depth: the strata's undrawn pairs judged band after
//! band, each yielding its stratum's sampled evidence rate. Hours = judgments × the median
//! seconds per judgment.

use crate::judging::{
    median_seconds, plan_evidence, rank_band, Budget, Curve, CurvePoint, Estimate, Estimator,
    JudgingError, RecallTarget, Sample, StopDecision, StoppingSample, SystemEstimate,
};
pub use crate::model::survey::{
    BudgetView, DepthPlan, EstimateView, Estimates, Plan, RecallPlan, SampleSummary, StopVerdict,
    Stopping, StoppingCounts, StratumRow, Survey, SystemEstimateView, SystemSurvey,
};
use crate::pool::{FxHashMap, Key, Pair};
use std::collections::{HashMap, HashSet};

/// A sample read back from the store.
#[derive(Clone, Debug)]
pub struct StoredSample<C, D> {
    /// The pool depth it was drawn beyond.
    pub depth: u32,
    /// The largest best rank it covers.
    pub reach: u32,
    pub sample: Sample<C, D>,
    /// Pairs beyond `depth` within `reach` judged when it was drawn (certain).
    pub judged_beyond: Vec<Pair<C, D>>,
}

/// What a survey is computed from.
pub struct SurveyInput<'a, C, D> {
    /// The pool's current depth.
    pub depth: u32,
    /// The latest sample, if any.
    pub sample: Option<StoredSample<C, D>>,
    /// Every pair the pooled systems rank within `max(reach, 2·depth)`, with its best rank.
    pub ranked: &'a [(Pair<C, D>, u32)],
    /// Final labels: whether each labelled pair is evidence.
    pub labels: &'a HashMap<Pair<C, D>, bool>,
    /// Each system's name and the pairs it predicts as evidence.
    pub systems: Vec<(String, Vec<Pair<C, D>>)>,
    /// Seconds spent on each judgment.
    pub seconds: Vec<f64>,
    pub target: RecallTarget,
}

impl From<Estimate> for EstimateView {
    fn from(e: Estimate) -> EstimateView {
        EstimateView {
            value: e.value,
            standard_error: e.standard_error,
            low: e.low,
            high: e.high,
        }
    }
}

impl From<SystemEstimate> for SystemEstimateView {
    fn from(s: SystemEstimate) -> SystemEstimateView {
        SystemEstimateView {
            retrieved: s.retrieved,
            evidence: s.evidence.into(),
            precision: s.precision.map(Into::into),
            recall: s.recall.map(Into::into),
            f1: s.f1.map(Into::into),
        }
    }
}

impl From<StoppingSample> for StoppingCounts {
    fn from(s: StoppingSample) -> StoppingCounts {
        StoppingCounts {
            found: s.found,
            unjudged: s.unjudged,
            drawn: s.drawn,
            drawn_evidence: s.drawn_evidence,
        }
    }
}

impl From<StopDecision> for StopVerdict {
    fn from(d: StopDecision) -> StopVerdict {
        StopVerdict {
            p_value: d.p_value,
            stop: d.stop,
            null_remaining: d.null_remaining,
        }
    }
}

impl From<Budget> for BudgetView {
    fn from(b: Budget) -> BudgetView {
        BudgetView {
            judgments: b.judgments,
            evidence: b.evidence,
            hours: b.hours,
        }
    }
}

/// Why a survey cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SurveyError {
    #[error(transparent)]
    Judging(#[from] JudgingError),
    /// The pooled systems' rankings no longer give the sample's universe.
    #[error("the pool's rankings changed since the sample was drawn ({0}): draw a new sample")]
    Changed(String),
}

/// The best-rank band (`low`, `high`] of stratum `h` beyond `depth`.
fn band_edges(stratum: u32, depth: u32) -> (u32, u32) {
    let d = u64::from(depth.max(1));
    let low = d << stratum;
    let high = d << (stratum + 1);
    (
        u32::try_from(low).unwrap_or(u32::MAX),
        u32::try_from(high).unwrap_or(u32::MAX),
    )
}

/// Computes the survey. Fails if the rankings no longer give the sample's universe (its
/// strata's populations or drawn pairs) or on an inconsistent sample.
pub fn survey<C: Key, D: Key>(input: SurveyInput<'_, C, D>) -> Result<Survey, SurveyError> {
    let median = median_seconds(input.seconds.iter().copied());
    let next = next_depth(&input, median);
    let Some(stored) = &input.sample else {
        return Ok(Survey {
            sample: None,
            waiting: Some(
                "no sample beyond the depth yet: draw one with `claimpool pool build --sample N`"
                    .into(),
            ),
            estimates: None,
            stopping: Stopping::NoSample,
            plan: Plan {
                median_seconds: median,
                next_depth: next,
                recall: None,
                discovery: Vec::new(),
            },
        });
    };
    let best: FxHashMap<Pair<C, D>, u32> = input.ranked.iter().copied().collect();
    let (certain, summary) = universe(stored, &input, &best)?;
    let pending =
        (summary.certain - summary.certain_judged) + (summary.drawn - summary.drawn_judged);
    let mut survey = Survey {
        sample: Some(summary.clone()),
        waiting: None,
        estimates: None,
        stopping: Stopping::Waiting,
        plan: Plan {
            median_seconds: median,
            next_depth: next,
            recall: None,
            discovery: Vec::new(),
        },
    };
    if pending > 0 {
        survey.waiting = Some(format!(
            "{} of the {} certain pairs and {} of the {} sampled pairs lack a final label",
            summary.certain - summary.certain_judged,
            summary.certain,
            summary.drawn - summary.drawn_judged,
            summary.drawn
        ));
        if stored.sample.strata().len() > 1 {
            survey.stopping = Stopping::Stratified {
                strata: stored.sample.strata().len(),
            };
        }
        return Ok(survey);
    }
    let labels = input.labels;
    let estimator = Estimator::new(
        certain
            .iter()
            .map(|p| (*p, labels.get(p).copied().unwrap_or(false))),
        &stored.sample,
        |p| labels.get(p).copied(),
    )?;
    let total = estimator.total_evidence();
    let certain_evidence = certain
        .iter()
        .filter(|p| labels.get(*p).copied().unwrap_or(false))
        .count();
    let drawn_evidence: usize = summary.strata.iter().map(|s| s.evidence).sum();
    let found = certain_evidence + drawn_evidence;
    // Counts stay far below 2^53: the conversions are exact.
    let found_f = found as f64;
    let not_found = EstimateView {
        value: total.value - found_f,
        standard_error: total.standard_error,
        low: (total.low - found_f).max(0.0),
        high: (total.high - found_f).max(0.0),
    };
    let in_universe = |p: &Pair<C, D>| {
        certain.contains(p) || best.get(p).is_some_and(|&rank| rank <= stored.reach)
    };
    let mut systems = Vec::with_capacity(input.systems.len());
    for (name, predicted) in &input.systems {
        let inside: Vec<Pair<C, D>> = predicted.iter().copied().filter(in_universe).collect();
        let outside = predicted.len() - inside.len();
        systems.push(SystemSurvey {
            system: name.clone(),
            estimate: estimator.system(inside)?.into(),
            outside,
        });
    }
    survey.stopping = stopping(stored, &input.target, certain_evidence, &summary)?;
    survey.plan.discovery = knots(&summary.strata, found);
    survey.plan.recall = median
        .map(|seconds| recall_plan(&summary, &input.target, &total, found, seconds))
        .transpose()?;
    if let (Some(plan), true) = (survey.plan.next_depth.as_mut(), stored.depth == input.depth) {
        plan.estimated_evidence = Some(next_depth_evidence(
            &certain, labels, &best, plan.depth, &summary,
        ));
    }
    survey.estimates = Some(Estimates {
        universe: estimator.universe(),
        total_evidence: total.into(),
        found,
        not_found,
        systems,
    });
    Ok(survey)
}

/// The certain pairs and the sample's summary; checks the rankings still give the sample's
/// universe.
fn universe<C: Key, D: Key>(
    stored: &StoredSample<C, D>,
    input: &SurveyInput<'_, C, D>,
    best: &FxHashMap<Pair<C, D>, u32>,
) -> Result<(HashSet<Pair<C, D>>, SampleSummary), SurveyError> {
    let mut certain: HashSet<Pair<C, D>> = input
        .ranked
        .iter()
        .filter(|(_, rank)| *rank <= stored.depth)
        .map(|(p, _)| *p)
        .collect();
    certain.extend(stored.judged_beyond.iter().copied());
    let beyond = input
        .ranked
        .iter()
        .filter(|(p, rank)| *rank > stored.depth && *rank <= stored.reach && !certain.contains(p))
        .count();
    let population: usize = stored.sample.strata().iter().map(|s| s.population).sum();
    if beyond != population {
        return Err(SurveyError::Changed(format!(
            "{beyond} unjudged pairs beyond depth {} within rank {}, the sample's strata hold {population}",
            stored.depth, stored.reach
        )));
    }
    let mut strata: Vec<StratumRow> = stored
        .sample
        .strata()
        .iter()
        .map(|s| {
            let (low_rank, high_rank) = band_edges(s.stratum, stored.depth);
            StratumRow {
                stratum: s.stratum,
                low_rank,
                high_rank,
                population: s.population,
                sampled: s.sampled,
                inclusion_probability: s.inclusion_probability(),
                judged: 0,
                evidence: 0,
            }
        })
        .collect();
    for unit in stored.sample.pairs() {
        let band = best
            .get(&unit.pair)
            .and_then(|&r| rank_band(r, stored.depth));
        if certain.contains(&unit.pair) || best.get(&unit.pair).is_none_or(|&r| r > stored.reach) {
            return Err(SurveyError::Changed(
                "a sampled pair is no longer beyond the depth within reach".into(),
            ));
        }
        if band != Some(unit.stratum) {
            return Err(SurveyError::Changed(
                "a sampled pair's best rank left its stratum's band".into(),
            ));
        }
        if let Some(row) = strata.iter_mut().find(|s| s.stratum == unit.stratum) {
            if let Some(&evidence) = input.labels.get(&unit.pair) {
                row.judged += 1;
                row.evidence += usize::from(evidence);
            }
        }
    }
    let certain_judged = certain
        .iter()
        .filter(|p| input.labels.contains_key(*p))
        .count();
    let summary = SampleSummary {
        depth: stored.depth,
        reach: stored.reach,
        certain: certain.len(),
        certain_judged,
        drawn: stored.sample.len(),
        drawn_judged: strata.iter().map(|s| s.judged).sum(),
        strata,
    };
    Ok((certain, summary))
}

/// The hypergeometric test on a one-stratum sample.
fn stopping<C: Key, D: Key>(
    stored: &StoredSample<C, D>,
    target: &RecallTarget,
    certain_evidence: usize,
    summary: &SampleSummary,
) -> Result<Stopping, SurveyError> {
    let [stratum] = summary.strata.as_slice() else {
        return Ok(Stopping::Stratified {
            strata: stored.sample.strata().len(),
        });
    };
    // Counts stay far below 2^64: the conversions are exact.
    let sample = StoppingSample {
        found: certain_evidence as u64,
        unjudged: stratum.population as u64,
        drawn: stratum.judged as u64,
        drawn_evidence: stratum.evidence as u64,
    };
    let decision = target.test(sample)?;
    let found = sample.found + sample.drawn_evidence;
    let draws_to_stop = if decision.stop {
        0
    } else {
        target.draws_to_stop(found, sample.unjudged - sample.drawn)
    };
    Ok(Stopping::Tested {
        target_recall: target.recall(),
        alpha: target.alpha(),
        sample: sample.into(),
        decision: decision.into(),
        draws_to_stop,
    })
}

/// The expected discovery curve beyond the sample: the strata's undrawn pairs judged band
/// after band, judgment `j` of stratum `h` adding `k_h / n_h` expected evidence; evidence
/// counted from 0 (what judging on adds), rounded down.
pub fn discovery_curve(strata: &[StratumRow]) -> Curve {
    let mut points = Vec::new();
    let mut expected = 0.0_f64;
    let mut judgments = 0;
    for s in strata {
        // Counts stay far below 2^53: the conversions are exact.
        let rate = if s.judged == 0 {
            0.0
        } else {
            s.evidence as f64 / s.judged as f64
        };
        for _ in 0..s.population.saturating_sub(s.sampled) {
            judgments += 1;
            expected += rate;
            points.push(CurvePoint {
                judgments,
                evidence: (expected + 1e-9).floor() as usize,
            });
        }
    }
    Curve(points)
}

/// The discovery curve's points at the strata's ends, from (0, `found`): each stratum's
/// undrawn pairs add their number times the stratum's sampled evidence rate.
fn knots(strata: &[StratumRow], found: usize) -> Vec<(usize, f64)> {
    // Counts stay far below 2^53: the conversions are exact.
    let mut at = (0, found as f64);
    let mut out = vec![at];
    for s in strata {
        let undrawn = s.population.saturating_sub(s.sampled);
        let rate = if s.judged == 0 {
            0.0
        } else {
            s.evidence as f64 / s.judged as f64
        };
        at = (at.0 + undrawn, at.1 + undrawn as f64 * rate);
        out.push(at);
    }
    out
}

/// `⌈τ·total⌉` (a hair below the product, as `plan_recall` does).
fn target_count(target_recall: f64, total: f64) -> usize {
    // Totals stay far below 2^53: the conversion is exact.
    (target_recall * total - 1e-9).ceil().max(0.0) as usize
}

fn recall_plan(
    summary: &SampleSummary,
    target: &RecallTarget,
    total: &Estimate,
    found: usize,
    seconds: f64,
) -> Result<RecallPlan, SurveyError> {
    let curve = discovery_curve(&summary.strata);
    let plan = |goal: usize| -> Result<Option<BudgetView>, SurveyError> {
        Ok(
            plan_evidence(&curve, goal.saturating_sub(found), seconds)?.map(|b| BudgetView {
                judgments: b.judgments,
                evidence: found + b.evidence,
                hours: b.hours,
            }),
        )
    };
    let target_evidence = target_count(target.recall(), total.value);
    let target_evidence_high = target_count(target.recall(), total.high);
    Ok(RecallPlan {
        target_recall: target.recall(),
        target_evidence,
        target_evidence_high,
        budget: plan(target_evidence)?,
        budget_high: plan(target_evidence_high)?,
    })
}

/// The next depth (twice the current one) and the pairs of its pool without a final label.
fn next_depth<C: Key, D: Key>(
    input: &SurveyInput<'_, C, D>,
    median: Option<f64>,
) -> Option<DepthPlan> {
    let depth = input.depth.checked_mul(2)?;
    let pairs_to_judge = input
        .ranked
        .iter()
        .filter(|(p, rank)| *rank <= depth && !input.labels.contains_key(p))
        .count();
    Some(DepthPlan {
        depth,
        pairs_to_judge,
        // Counts stay far below 2^53: the conversion is exact.
        hours: median.map(|s| pairs_to_judge as f64 * s / 3600.0),
        estimated_evidence: None,
    })
}

/// The estimated evidence within best rank `depth` (= twice the sample's depth: its first
/// band): the certain evidence there plus band 0's Horvitz–Thompson total.
fn next_depth_evidence<C: Key, D: Key>(
    certain: &HashSet<Pair<C, D>>,
    labels: &HashMap<Pair<C, D>, bool>,
    best: &FxHashMap<Pair<C, D>, u32>,
    depth: u32,
    summary: &SampleSummary,
) -> f64 {
    let certain_evidence = certain
        .iter()
        .filter(|p| best.get(*p).is_some_and(|&r| r <= depth))
        .filter(|p| labels.get(*p).copied().unwrap_or(false))
        .count();
    let band: f64 = summary
        .strata
        .iter()
        .filter(|s| s.high_rank <= depth && s.sampled > 0)
        // Counts stay far below 2^53: the conversions are exact.
        .map(|s| s.population as f64 / s.sampled as f64 * s.evidence as f64)
        .sum();
    certain_evidence as f64 + band
}

#[cfg(test)]
mod tests {
    //! A survey worked by hand: pairs `i` at best rank `i + 1`, depth 2, two bands to rank 8.

    use super::*;
    use crate::judging::StratumDesign;

    fn p(i: u32) -> Pair<u32, u32> {
        Pair::new(i, 0)
    }

    #[test]
    fn a_small_survey_equals_its_hand_computation() {
        // Ranks 1-2 (pairs 0, 1): the depth-2 pool. Pair 2 (rank 3) was judged before the
        // sample: certain. Band 0, ranks 3-4: pair 3 alone, drawn (a census). Band 1, ranks
        // 5-8: pairs 4-7, of which 4 and 5 drawn. Evidence: 0, 2, 3, 4; NEI: 1, 5; 6 and 7
        // unknown.
        let ranked: Vec<(Pair<u32, u32>, u32)> = (0..8).map(|i| (p(i), i + 1)).collect();
        let labels: HashMap<Pair<u32, u32>, bool> = [
            (0, true),
            (1, false),
            (2, true),
            (3, true),
            (4, true),
            (5, false),
        ]
        .into_iter()
        .map(|(i, e)| (p(i), e))
        .collect();
        let design = vec![
            StratumDesign {
                stratum: 0,
                population: 1,
                sampled: 1,
            },
            StratumDesign {
                stratum: 1,
                population: 4,
                sampled: 2,
            },
        ];
        let sample = Sample::from_parts(design, vec![(p(3), 0), (p(4), 1), (p(5), 1)]).unwrap();
        let survey = survey(SurveyInput {
            depth: 2,
            sample: Some(StoredSample {
                depth: 2,
                reach: 8,
                sample,
                judged_beyond: vec![p(2)],
            }),
            ranked: &ranked,
            labels: &labels,
            // Pair 9 is outside the universe.
            systems: vec![("a".into(), vec![p(0), p(3), p(4), p(6), p(9)])],
            seconds: vec![10.0, 30.0, 20.0, 40.0],
            target: RecallTarget::new(0.9, 0.05).unwrap(),
        })
        .unwrap();
        let e = survey.estimates.expect("estimates");
        // Ŷ = 2 certain + 1/1·1 + 4/2·1 = 5; V = 0 + 4²·(1 − 2/4)·s²/2 with s² = 0.5: 2.
        assert_eq!(e.universe, 8);
        assert_eq!(e.total_evidence.value, 5.0);
        assert!((e.total_evidence.standard_error - 2f64.sqrt()).abs() < 1e-12);
        // 5 ± 2.77 cut to what is possible: 4 seen, at most 2 more among pairs 6 and 7.
        assert_eq!((e.total_evidence.low, e.total_evidence.high), (4.0, 6.0));
        assert_eq!(e.found, 4);
        assert_eq!(
            (e.not_found.value, e.not_found.low, e.not_found.high),
            (1.0, 0.0, 2.0)
        );
        // System a: evidence 1 (pair 0) + 1 (pair 3, π = 1) + 2 (pair 4, π = 1/2) = 4 over 4
        // retrieved pairs in the universe (pair 9 outside).
        let a = &e.systems[0];
        assert_eq!((a.estimate.retrieved, a.outside), (4, 1));
        assert_eq!(a.estimate.evidence.value, 4.0);
        assert_eq!(a.estimate.precision.map(|x| x.value), Some(1.0));
        assert_eq!(a.estimate.recall.map(|x| x.value), Some(0.8));
        assert!((a.estimate.f1.map_or(0.0, |x| x.value) - 8.0 / 9.0).abs() < 1e-12);
        assert_eq!(survey.stopping, Stopping::Stratified { strata: 2 });
        // The planner: median 25 s; depth 4 all judged; its evidence 2 certain + 1 (band 0).
        let plan = survey.plan;
        assert_eq!(plan.median_seconds, Some(25.0));
        let next = plan.next_depth.unwrap();
        assert_eq!((next.depth, next.pairs_to_judge), (4, 0));
        assert_eq!(next.estimated_evidence, Some(3.0));
        assert_eq!(plan.discovery, vec![(0, 4.0), (0, 4.0), (2, 5.0)]);
        // 90% of 5 is 4.5: 5 pairs, one more than found; band 1's two undrawn pairs at rate
        // 1/2 find it after both. 90% of 6 (5.4 → 6) is beyond the sample's reach.
        let recall = plan.recall.unwrap();
        assert_eq!(
            (recall.target_evidence, recall.target_evidence_high),
            (5, 6)
        );
        assert_eq!(
            recall.budget,
            Some(BudgetView {
                judgments: 2,
                evidence: 5,
                hours: 2.0 * 25.0 / 3600.0
            })
        );
        assert_eq!(recall.budget_high, None);
    }

    #[test]
    fn a_one_stratum_sample_is_tested_and_a_changed_ranking_is_refused() {
        // Depth 1, one band (1, 2] to reach 2: pair 1 alone, drawn; pairs 2 and 3 beyond reach.
        let ranked: Vec<(Pair<u32, u32>, u32)> = (0..4).map(|i| (p(i), i + 1)).collect();
        let labels: HashMap<Pair<u32, u32>, bool> = [(0, true), (1, false)]
            .into_iter()
            .map(|(i, e)| (p(i), e))
            .collect();
        let one = |population| {
            Sample::from_parts(
                vec![StratumDesign {
                    stratum: 0,
                    population,
                    sampled: 1,
                }],
                vec![(p(1), 0)],
            )
            .unwrap()
        };
        let input = |sample, ranked| SurveyInput {
            depth: 1,
            sample: Some(StoredSample {
                depth: 1,
                reach: 2,
                sample,
                judged_beyond: vec![],
            }),
            ranked,
            labels: &labels,
            systems: vec![],
            seconds: vec![],
            target: RecallTarget::new(0.5, 0.05).unwrap(),
        };
        // K = 1 found, N = 1 unjudged, all drawn, none evidence: R_tar = ⌊1/0.5⌋ + 1 = 3,
        // K_tar = 2 > N: H0 impossible, p = 0.
        let tested = survey(input(one(1), &ranked)).unwrap();
        match tested.stopping {
            Stopping::Tested { decision, .. } => {
                assert_eq!((decision.p_value, decision.stop), (0.0, true));
                assert_eq!(decision.null_remaining, 2);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(tested.plan.median_seconds, None);
        assert_eq!(tested.plan.recall, None);
        // A design of 2 pairs in the band where the rankings have 1: refused.
        assert!(matches!(
            survey(input(one(2), &ranked)),
            Err(SurveyError::Changed(_))
        ));
    }
}
