//! The `cal` order, live: a [`cal::CalOrder`] over a project's [`CalCandidates`] kept in step
//! with the labels so far, and the candidate to serve next to an annotator who asks.
//!
//! The order's state is a function of the labels of the candidates it has *used* (a round took
//! them and read their labels). So a label that arrives, changes or goes away on a candidate
//! not used yet is recorded and changes nothing else; only a change to a used candidate's
//! label (an adjudication overturned it, an undo) rebuilds the order from the start, which
//! replays its rounds against the labels held.
//!
//! [`LiveCal::next_untaken`] serves the order's proposal unless another annotator holds it; if
//! they do, the next free candidate of the current batch, and past the batch the free
//! candidate the last round's model scores best. No round is trained for that choice (training
//! rounds ahead for every held pair cost a submission several milliseconds with 50 annotators):
//! the order itself advances only through labels.

use super::cal::CalCandidates;
use crate::pool::{Key, Pair};
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Arc;

/// A `cal` order kept in step with a project's labels so far.
#[derive(Clone, Debug)]
pub struct LiveCal<C, D> {
    candidates: Arc<CalCandidates<C, D>>,
    /// The order before any label: what a rebuild starts from.
    base: cal::CalOrder,
    current: cal::CalOrder,
    /// Each candidate's label so far.
    labels: Vec<Option<bool>>,
    rebuilds: u64,
    /// The rows of the open stopping sample, in its draw order ([`LiveCal::set_sample`]).
    sample: Vec<usize>,
}

/// What [`LiveCal::next_untaken`] serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CalPick<C, D> {
    pub pair: Pair<C, D>,
    /// Whether some pooled run ranked the pair (else only the corpus retrieval found it).
    pub in_runs: bool,
    /// The rounds the order had trained when it chose the pair.
    pub round: u64,
    /// Whether the pair is one of the stopping sample's (else the order chose it).
    pub sampled: bool,
}

impl<C: Key, D: Key> LiveCal<C, D> {
    /// A live order over `candidates`, deterministic for `seed`, with no label yet.
    pub fn new(candidates: Arc<CalCandidates<C, D>>, seed: u64) -> Self {
        let base = cal::CalOrder::new(candidates.features(), seed);
        LiveCal {
            labels: vec![None; candidates.len()],
            current: base.clone(),
            base,
            candidates,
            rebuilds: 0,
            sample: Vec::new(),
        }
    }

    /// The candidates.
    pub fn candidates(&self) -> &CalCandidates<C, D> {
        &self.candidates
    }

    fn row(&self, pair: &Pair<C, D>) -> Option<usize> {
        self.candidates.pairs().binary_search(pair).ok()
    }

    /// Sets candidate `row`'s label; says whether the order must be rebuilt (it had used a
    /// different label of it).
    fn set(&mut self, row: usize, now: Option<bool>) -> bool {
        let was = std::mem::replace(&mut self.labels[row], now);
        was != now && self.current.is_used(row)
    }

    fn rebuild(&mut self) {
        self.current = self.base.clone();
        self.rebuilds += 1;
    }

    /// Brings the order to `labels`, every label so far (pairs that are no candidate are
    /// ignored).
    pub fn sync<S: BuildHasher>(&mut self, labels: &HashMap<Pair<C, D>, bool, S>) {
        let mut rebuild = false;
        for row in 0..self.labels.len() {
            let now = labels.get(&self.candidates.pairs()[row]).copied();
            rebuild |= self.set(row, now);
        }
        if rebuild {
            self.rebuild();
        }
    }

    /// Brings the order to the labels so far when only `changes` differ from those it holds:
    /// each pair's label now (`None`: it has none any more). Equivalent to [`LiveCal::sync`]
    /// with the whole new set.
    pub fn apply(&mut self, changes: impl IntoIterator<Item = (Pair<C, D>, Option<bool>)>) {
        let mut rebuild = false;
        for (pair, now) in changes {
            if let Some(row) = self.row(&pair) {
                rebuild |= self.set(row, now);
            }
        }
        if rebuild {
            self.rebuild();
        }
    }

    /// The order's next candidate for which `held(pair)` is false (see the module
    /// documentation); `None` when every candidate is labelled or held.
    pub fn next_untaken(&mut self, held: impl Fn(&Pair<C, D>) -> bool) -> Option<CalPick<C, D>> {
        let labels = &self.labels;
        let pick = |row: usize, round: u64, sampled: bool| CalPick {
            pair: self.candidates.pairs()[row],
            in_runs: self.candidates.in_runs(row),
            round,
            sampled,
        };
        let pairs = self.candidates.pairs();
        // The stopping sample's pairs come first, in their draw order.
        if let Some(&row) = self
            .sample
            .iter()
            .find(|&&row| labels[row].is_none() && !held(&pairs[row]))
        {
            return Some(pick(row, self.current.rounds(), true));
        }
        let cal::Step::Proposal(row) = self.current.next(|row| labels[row]) else {
            return None;
        };
        if !held(&pairs[row]) {
            return Some(pick(row, self.current.rounds(), false));
        }
        // Held by another: the rest of the batch in its order, then the best of the candidates
        // no round has taken by the last round's model (no round is trained for the choice).
        let free = |row: usize| labels[row].is_none() && !held(&pairs[row]);
        let round = self.current.rounds();
        self.current
            .batch()
            .find(|&row| free(row))
            .or_else(|| self.current.best_untaken(|row| !free(row)))
            .map(|row| pick(row, round, false))
    }

    /// Serves the unjudged pairs of `sample`, a stopping sample's pairs in their draw order,
    /// before the order's proposals (pairs that are no candidate are passed over; an empty
    /// sample serves none).
    pub fn set_sample(&mut self, sample: &[Pair<C, D>]) {
        self.sample = sample.iter().filter_map(|pair| self.row(pair)).collect();
    }

    /// The candidates' label so far of `pair` (None: unjudged, or no candidate).
    pub fn label(&self, pair: &Pair<C, D>) -> Option<bool> {
        self.row(pair).and_then(|row| self.labels[row])
    }

    /// What a stopping sample is drawn from: the evidence among the judged candidates and the
    /// candidates unjudged, in the candidates' order.
    pub fn unjudged(&self) -> (u64, Vec<Pair<C, D>>) {
        let found = self.labels.iter().filter(|l| **l == Some(true)).count() as u64;
        let unjudged = self
            .labels
            .iter()
            .zip(self.candidates.pairs())
            .filter(|(label, _)| label.is_none())
            .map(|(_, pair)| *pair)
            .collect();
        (found, unjudged)
    }

    /// Reads the labels the order has reached and trains the next round if its batch is all
    /// labelled: what [`LiveCal::next_untaken`] does first, done ahead (a server does it
    /// outside its write transaction). Changes no proposal.
    pub fn advance(&mut self) {
        let labels = &self.labels;
        self.current.next(|row| labels[row]);
    }

    /// Candidates with a label so far.
    pub fn labels(&self) -> usize {
        self.labels.iter().filter(|l| l.is_some()).count()
    }

    /// Times a label the order had used changed or went away, and it was rebuilt.
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// Candidates the order has used (judged or known when a round reached them).
    pub fn used(&self) -> usize {
        self.current.used().len()
    }
}
