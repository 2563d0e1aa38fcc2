//! The `cal` order with a stopping rule: the order judges (beside the searcher, if any) until
//! it has gone a set number of judgments in a row without evidence, or has nothing left; then a
//! simple random sample of the candidates still unjudged is judged one pair at a time, and tested
//! with the hypergeometric test of [`RecallTarget`] at growing sizes (look j at level α/2^j,
//! [`RecallTarget::look`], so that all the looks together keep the level α), until a look lets
//! judging stop or every candidate is judged.
//!
//! The test's guarantee needs only that the sample is a simple random sample of the pairs
//! unjudged when it begins, and that the point where it begins is settled before any of it is
//! seen: any rule for switching keeps it. Recall here is of the candidates' evidence, the
//! population the sample is drawn from; evidence no candidate holds is out of every order's
//! reach and out of the test's.

use super::cal::{judge_in_turn, CalCandidates};
use super::error::JudgingError;
use super::sample::shuffle_from_front;
use super::stopping::{RecallTarget, StoppingSample};
use crate::pool::{Key, Pair, PairSet};
use serde::Serialize;

/// Where judging stopped.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CalStop {
    /// Judgments spent in all: the order's (and the searcher's), then the sample's.
    pub judgments: usize,
    /// Evidence found in all.
    pub evidence: usize,
    /// Judgments before the sample began.
    pub prioritised: usize,
    /// Pairs of the sample judged.
    pub sampled: usize,
    /// The p-value of the last look at the sample, and the level it was tested at.
    pub p_value: f64,
    pub level: f64,
    /// The test let judging stop; false when every candidate was judged first.
    pub stopped_by_test: bool,
    /// The evidence among all the candidates (the truth; unknown to the rule).
    pub candidates_evidence: usize,
    /// The first judgment after which the evidence found reached the target share of
    /// `candidates_evidence` (the truth; unknown to the rule).
    pub target_reached_at: Option<usize>,
}

impl CalStop {
    /// The share of the candidates' evidence found (1 when they hold none).
    pub fn recall(&self) -> f64 {
        if self.candidates_evidence == 0 {
            return 1.0;
        }
        // Counts stay far below 2^53: the conversions are exact.
        self.evidence as f64 / self.candidates_evidence as f64
    }

    /// Judgments spent after the target was first reached (None: it was not reached).
    pub fn past_target(&self) -> Option<usize> {
        self.target_reached_at
            .map(|at| self.judgments.saturating_sub(at))
    }
}

/// Judges the candidates against `truth` as the module documentation says: the `cal` order
/// (seeded) beside the searcher's pairs `searched` until `switch_after` judgments in a row find
/// no evidence (0: no prioritised judging at all), then the stopping sample (seeded too) until
/// `target` lets judging stop.
pub fn replay_cal_stopping<C: Key, D: Key>(
    candidates: &CalCandidates<C, D>,
    truth: &impl PairSet<C, D>,
    target: RecallTarget,
    switch_after: usize,
    seed: u64,
    searched: &[Pair<C, D>],
) -> Result<CalStop, JudgingError> {
    let mut misses = 0;
    let (mut judged, labels) = if switch_after == 0 {
        (Vec::new(), vec![None; candidates.len()])
    } else {
        judge_in_turn(candidates, truth, seed, searched, |judged, labels| {
            let last = judged.last().and_then(|&row| labels[row]);
            misses = if last == Some(true) { 0 } else { misses + 1 };
            misses >= switch_after
        })
    };
    let prioritised = judged.len();
    let found = judged
        .iter()
        .filter(|&&row| labels[row] == Some(true))
        .count();

    // The sample: the unjudged candidates in a seeded random order, judged in turn.
    let mut unjudged: Vec<usize> = (0..candidates.len())
        .filter(|&row| labels[row].is_none())
        .collect();
    shuffle_from_front(&mut unjudged, seed ^ 0x5354_4f50_5341_4d50);
    let evidence_of = |row: usize| truth.contains_pair(&candidates.pairs()[row]);
    let sample = |drawn: usize, drawn_evidence: usize| StoppingSample {
        found: found as u64,
        unjudged: unjudged.len() as u64,
        drawn: drawn as u64,
        drawn_evidence: drawn_evidence as u64,
    };
    // Looks at growing sizes, look j at level α/2^j ([`RecallTarget::look`]): the first where
    // a sample without evidence could stop, each later one twice the size, the last at the
    // whole of it.
    let mut look = 1;
    let first = target.look(look);
    let mut size = first.draws_to_stop(found as u64, unjudged.len() as u64) as usize;
    let mut level = first.alpha();
    let mut decision = first.test(sample(0, 0))?;
    let mut drawn_evidence = 0;
    for (drawn, &row) in unjudged.iter().enumerate() {
        if decision.stop {
            break;
        }
        drawn_evidence += usize::from(evidence_of(row));
        judged.push(row);
        let drawn = drawn + 1;
        if drawn >= size || drawn == unjudged.len() {
            let at = target.look(look);
            level = at.alpha();
            decision = at.test(sample(drawn, drawn_evidence))?;
            look += 1;
            size = (2 * drawn).min(unjudged.len());
        }
    }

    // What the rule did not know: the candidates' evidence, and when the target was reached.
    let candidates_evidence = (0..candidates.len())
        .filter(|&row| evidence_of(row))
        .count();
    let needed = target.recall() * candidates_evidence as f64;
    let mut evidence = 0;
    let mut target_reached_at = (candidates_evidence == 0).then_some(0);
    for (n, &row) in judged.iter().enumerate() {
        evidence += usize::from(evidence_of(row));
        if target_reached_at.is_none() && evidence as f64 >= needed {
            target_reached_at = Some(n + 1);
        }
    }
    Ok(CalStop {
        judgments: judged.len(),
        evidence,
        prioritised,
        sampled: judged.len() - prioritised,
        p_value: decision.p_value,
        level,
        stopped_by_test: decision.stop,
        candidates_evidence,
        target_reached_at,
    })
}
