//! Live judging: a project's judging settings, what its labels so far say to an order, and the
//! first pass to serve next when an annotator asks for one.
//!
//! # The labels so far
//!
//! An order reads one bit per pair, evidence or not ([`label_so_far`]): a final label (from
//! "clearly no evidence", agreement, adjudication or an import) counts as what it says, so
//! "clearly no evidence" and a final NEI count as NEI; a first pass that read the abstract
//! counts as its label (SUPPORT or CONTRADICT: evidence) until a second pass says otherwise,
//! and then, until adjudication, the second pass's label counts.
//!
//! # Serving
//!
//! [`LiveSelector`] keeps a [`Selector`] in step with the labels so far ([`LiveSelector::sync`]):
//! new labels are recorded, and a label that changed or went away (an adjudication overturned
//! the first pass, an undo) rebuilds the selector from the unlabelled one. By the selector's
//! model its proposals are then exactly those of a selector given the same set of labels at
//! once. [`LiveSelector::apply`] does the same given only the pairs whose labels changed.
//! [`LiveSelector::next_untaken`] is the order's next pair nobody holds: a pair another
//! annotator holds (its first pass given out, not yet submitted) counts, for the choice only,
//! as evidence — the way a first-pass label would count until a second pass disagrees — so the
//! order looks past it; the live selector itself never records it.

use super::error::JudgingError;
use super::order::{JudgingOrder, Order};
use super::selector::Selector;
use crate::annotation::PairState;
use crate::pool::{FxHashMap, Key, Pair};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::BuildHasher;

/// How a project serves first passes: its order, the seed of `mab-thompson` and `cal`, the
/// most first passes it serves (`None`: no limit), and how many corpus retrievals per claim
/// `cal` adds to the runs' pairs.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct JudgingSettings {
    pub order: JudgingOrder,
    pub seed: u64,
    pub budget: Option<u64>,
    #[serde(default = "default_candidates")]
    pub candidates: u32,
}

/// The corpus retrievals per claim `cal` adds when the lead sets none (the K).
pub const DEFAULT_CAL_CANDIDATES: u32 = 100;

fn default_candidates() -> u32 {
    DEFAULT_CAL_CANDIDATES
}

impl Default for JudgingSettings {
    /// `depth`, seed 0, no budget: first passes pre-assigned shallowest first.
    fn default() -> Self {
        JudgingSettings {
            order: JudgingOrder::Runs(Order::Depth),
            seed: 0,
            budget: None,
            candidates: DEFAULT_CAL_CANDIDATES,
        }
    }
}

/// Where first passes come from under a project's settings.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FirstPasses {
    /// Given out, balanced and shallowest first, when the pool is built or grows, or when an
    /// annotator joins (`depth` without a budget).
    Preassigned,
    /// Chosen one at a time, when an annotator asks for one, by the order.
    Live(LivePlan),
}

/// The live plan: the order and its seed, and the budget.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LivePlan {
    pub order: JudgingOrder,
    pub seed: u64,
    pub budget: Option<u64>,
}

impl LivePlan {
    /// Whether one more first pass may be given out when `spent` first passes were submitted
    /// and `held` are given out and not yet submitted.
    pub fn may_serve(&self, spent: u64, held: u64) -> bool {
        self.budget
            .is_none_or(|budget| spent.saturating_add(held) < budget)
    }
}

impl JudgingSettings {
    /// `depth` without a budget pre-assigns (as before live orders existed); anything else is
    /// served live.
    pub fn first_passes(&self) -> FirstPasses {
        match (self.order, self.budget) {
            (JudgingOrder::Runs(Order::Depth), None) => FirstPasses::Preassigned,
            (order, budget) => FirstPasses::Live(LivePlan {
                order,
                seed: self.seed,
                budget,
            }),
        }
    }
}

/// What the order reads of a pair in `state`: `None` until its first pass is in; see the module
/// documentation.
pub fn label_so_far(state: &PairState) -> Option<bool> {
    match state {
        PairState::NeedsFirst => None,
        PairState::NeedsSecond { first } => Some(first.label.is_evidence()),
        PairState::NeedsAdjudication { second, .. } => Some(second.label.is_evidence()),
        PairState::Final(done) => Some(done.label.is_evidence()),
    }
}

/// A selector kept in step with a project's labels so far.
#[derive(Clone, Debug)]
pub struct LiveSelector<C, D> {
    /// The selector before any label: what a rebuild starts from.
    base: Selector<C, D>,
    current: Selector<C, D>,
    /// The labels `current` was given.
    recorded: FxHashMap<Pair<C, D>, bool>,
    rebuilds: u64,
}

impl<C: Key, D: Key> LiveSelector<C, D> {
    /// A live selector over `base`, which must hold no label yet.
    pub fn new(base: Selector<C, D>) -> Self {
        LiveSelector {
            current: base.clone(),
            base,
            recorded: FxHashMap::default(),
            rebuilds: 0,
        }
    }

    /// Brings the selector to `labels` (every label so far, pairs outside the rankings
    /// included or not): records the new ones, or rebuilds if a recorded label changed or is
    /// gone.
    pub fn sync<S: BuildHasher>(
        &mut self,
        labels: &HashMap<Pair<C, D>, bool, S>,
    ) -> Result<(), JudgingError> {
        let kept = self
            .recorded
            .iter()
            .all(|(pair, was)| labels.get(pair) == Some(was));
        if !kept {
            self.current = self.base.clone();
            self.recorded.clear();
            self.rebuilds += 1;
        }
        // Recorded in key order: the state depends only on the set, but an error names the
        // same pair every time.
        let mut fresh: Vec<(Pair<C, D>, bool)> = labels
            .iter()
            .filter(|(pair, _)| !self.recorded.contains_key(pair))
            .map(|(pair, evidence)| (*pair, *evidence))
            .collect();
        fresh.sort_unstable();
        for (pair, evidence) in fresh {
            self.current.record(pair, evidence)?;
            self.recorded.insert(pair, evidence);
        }
        Ok(())
    }

    /// Brings the selector to the labels so far when only `changes` differ from the labels it
    /// holds: each pair's label now (`None`: it has none any more). New labels are recorded; a
    /// label that changed or went away rebuilds the selector from the labels it holds with the
    /// changes applied. Equivalent to [`LiveSelector::sync`] with the whole new set of labels,
    /// in the time of the changes (a rebuild aside).
    pub fn apply(
        &mut self,
        changes: impl IntoIterator<Item = (Pair<C, D>, Option<bool>)>,
    ) -> Result<(), JudgingError> {
        // The last word on a pair counts.
        let changes: FxHashMap<Pair<C, D>, Option<bool>> = changes.into_iter().collect();
        let rebuild = changes.iter().any(|(pair, now)| {
            self.recorded
                .get(pair)
                .is_some_and(|was| *now != Some(*was))
        });
        let mut fresh: Vec<(Pair<C, D>, bool)> = if rebuild {
            let mut labels = std::mem::take(&mut self.recorded);
            for (pair, now) in changes {
                match now {
                    Some(evidence) => labels.insert(pair, evidence),
                    None => labels.remove(&pair),
                };
            }
            self.current = self.base.clone();
            self.rebuilds += 1;
            labels.into_iter().collect()
        } else {
            changes
                .into_iter()
                .filter(|(pair, _)| !self.recorded.contains_key(pair))
                .filter_map(|(pair, now)| now.map(|evidence| (pair, evidence)))
                .collect()
        };
        // In key order, as in `sync`.
        fresh.sort_unstable();
        for (pair, evidence) in fresh {
            self.current.record(pair, evidence)?;
            self.recorded.insert(pair, evidence);
        }
        Ok(())
    }

    /// The order's next pair for which `held(pair)` is false (see the module documentation);
    /// `None` when every pair of the rankings is labelled or held.
    pub fn next_untaken(&mut self, held: impl Fn(&Pair<C, D>) -> bool) -> Option<Pair<C, D>> {
        let proposal = self.current.next_pair()?;
        if !held(&proposal) {
            return Some(proposal);
        }
        let mut probe = self.current.clone();
        let mut pair = proposal;
        loop {
            // A proposal is unlabelled, so recording it cannot fail; stop if it ever did.
            probe.record(pair, true).ok()?;
            pair = probe.next_pair()?;
            if !held(&pair) {
                return Some(pair);
            }
        }
    }

    /// The order played.
    pub fn order(&self) -> Order {
        self.current.order()
    }

    /// Labels the selector holds.
    pub fn labels(&self) -> usize {
        self.recorded.len()
    }

    /// Times [`LiveSelector::sync`] rebuilt the selector (a label changed or went away).
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds
    }
}
