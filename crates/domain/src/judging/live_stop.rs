//! The stopping test, live: when a lead asks whether the `cal` order has found enough, a simple
//! random sample of the candidates unjudged at that moment is drawn ([`StopSample::draw`]),
//! served to annotators before the order's next proposals ([`super::LiveCal::set_sample`]), and
//! once it is all judged tested with the hypergeometric test of [`RecallTarget`]
//! ([`StopSample::status`]).
//!
//! The sample is tested once, whole, at the level α the lead set: its size is fixed when it is
//! drawn (by default [`RecallTarget::draws_to_stop`], the fewest draws that let judging stop if
//! none of them is evidence), so no correction for repeated looks is needed. Labels that
//! arrive elsewhere meanwhile (the order goes on when the sample's pairs are all held) change
//! neither `K` (the evidence found before the sample) nor `N` (the pairs unjudged when it was
//! drawn): they only raise the true recall, so the test stays valid. Recall is of the
//! candidates' evidence, as in [`super::replay_cal_stopping`].

use super::error::JudgingError;
use super::sample::shuffle_from_front;
use super::stopping::{RecallTarget, StopDecision, StoppingSample};
use crate::pool::{Key, Pair};
use serde::{Deserialize, Serialize};

/// A stopping sample as drawn: the test's target, `K`, `N` and the pairs in their draw order.
#[derive(Clone, Debug, PartialEq)]
pub struct StopSample<C, D> {
    pub target: RecallTarget,
    /// `K`: evidence among the candidates judged when the sample was drawn.
    pub found: u64,
    /// `N`: candidates unjudged when it was drawn.
    pub unjudged: u64,
    pub pairs: Vec<Pair<C, D>>,
}

/// Where a stopping sample stands.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum StopStatus {
    /// `judged` of its `size` pairs have a label.
    Waiting { judged: u64, size: u64 },
    /// Every pair has a label: the test's counts and outcome; if it did not let judging stop,
    /// `next_draws` is the size of a new sample that would, finding no evidence, from the
    /// candidates unjudged now.
    Tested {
        sample: StoppingSample,
        decision: StopDecision,
        next_draws: u64,
    },
}

impl<C: Key, D: Key> StopSample<C, D> {
    /// Draws `size` (default: as many as the test needs, [`RecallTarget::draws_to_stop`]) of
    /// the `unjudged` candidates at random, deterministic for `seed` (the pairs are sorted
    /// first, so their order as given does not matter), `found` evidence pairs judged so far.
    /// Fails if `size` is 0 or more than the pairs unjudged; `Ok(None)` when no sample is
    /// needed: even were every unjudged pair evidence, recall would reach the target.
    pub fn draw(
        target: RecallTarget,
        found: u64,
        mut unjudged: Vec<Pair<C, D>>,
        size: Option<u64>,
        seed: u64,
    ) -> Result<Option<StopSample<C, D>>, JudgingError> {
        // Counts stay far below 2^64.
        let population = unjudged.len() as u64;
        let size = match size {
            Some(size) => size,
            None => match target.draws_to_stop(found, population) {
                0 => return Ok(None),
                needed => needed,
            },
        };
        if size == 0 || size > population {
            return Err(JudgingError::SampleExceedsUnjudged {
                sampled: size,
                unjudged: population,
            });
        }
        unjudged.sort_unstable();
        shuffle_from_front(&mut unjudged, seed);
        unjudged.truncate(usize::try_from(size).unwrap_or(usize::MAX));
        Ok(Some(StopSample {
            target,
            found,
            unjudged: population,
            pairs: unjudged,
        }))
    }

    /// The sample's status under `label` (each pair's label so far: evidence or not, None
    /// unjudged); `now_found` and `now_unjudged` are the candidates' evidence judged and
    /// pairs unjudged now, for the size of a next sample.
    pub fn status(
        &self,
        label: impl Fn(&Pair<C, D>) -> Option<bool>,
        now_found: u64,
        now_unjudged: u64,
    ) -> Result<StopStatus, JudgingError> {
        let labels: Vec<Option<bool>> = self.pairs.iter().map(label).collect();
        let size = labels.len() as u64;
        let judged = labels.iter().filter(|l| l.is_some()).count() as u64;
        if judged < size {
            return Ok(StopStatus::Waiting { judged, size });
        }
        let sample = StoppingSample {
            found: self.found,
            unjudged: self.unjudged,
            drawn: size,
            drawn_evidence: labels.iter().filter(|l| **l == Some(true)).count() as u64,
        };
        let decision = self.target.test(sample)?;
        let next_draws = if decision.stop {
            0
        } else {
            self.target.draws_to_stop(now_found, now_unjudged)
        };
        Ok(StopStatus::Tested {
            sample,
            decision,
            next_draws,
        })
    }
}
