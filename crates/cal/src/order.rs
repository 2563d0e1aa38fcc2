//! The CAL order: autoTAR's rounds, resumable, replayed from the labels known.

use crate::features::Features;
use crate::logistic::{self, Model};
use crate::schedule::next_batch;
use rand::seq::index::sample;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::sync::Arc;

/// How many unlabelled candidates each round presumes non-evidence (autoTAR's 100 random
/// documents), drawn afresh each round from the candidates not yet taken.
pub const PRESUMED_NEGATIVES: usize = 100;

/// What the order does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Judge this candidate (a row of the features) next.
    Proposal(usize),
    /// Every candidate has been taken.
    Exhausted,
}

/// autoTAR over a fixed set of candidates (see the crate documentation). The state advances
/// only through labels: [`CalOrder::next`] consumes the current round's batch while the labels
/// of its candidates are known and stops at the first that is not, so an order fed labels one at
/// a time and an order rebuilt from the same set of labels propose the same candidate.
#[derive(Clone, Debug)]
pub struct CalOrder {
    /// Shared, so that a clone (a server's probe past the pairs others hold) copies only the
    /// order's state.
    features: Arc<Features>,
    /// The synthetic evidence example: each standardised feature at its best value.
    synthetic: Vec<f64>,
    seed: u64,
    taken: Vec<bool>,
    untaken: usize,
    /// Candidates used so far, with their labels, in the order the rounds took them.
    used: Vec<(usize, bool)>,
    /// The current round's batch, best first, not yet used.
    batch: VecDeque<usize>,
    /// The size of the next round's batch.
    next_size: usize,
    round: u64,
    /// The last round's model's score of each candidate it scored (the untaken ones then);
    /// `NEG_INFINITY` for the others and before the first round.
    scores: Vec<f64>,
}

impl CalOrder {
    /// An order over `features` (one row per candidate, every column oriented so that larger
    /// means more likely evidence), deterministic for `seed`.
    pub fn new(features: &Features, seed: u64) -> CalOrder {
        let features = features.standardised();
        let synthetic = features.best();
        let rows = features.rows();
        CalOrder {
            features: Arc::new(features),
            synthetic,
            seed,
            taken: vec![false; rows],
            untaken: rows,
            used: Vec::new(),
            batch: VecDeque::new(),
            next_size: 1,
            round: 0,
            scores: vec![f64::NEG_INFINITY; rows],
        }
    }

    /// The candidates used so far (judged, or known already when the order reached them), with
    /// their labels, in order.
    pub fn used(&self) -> &[(usize, bool)] {
        &self.used
    }

    /// Whether candidate `row` has been used: a round took it and its label was read. Only a
    /// used candidate's label is part of the order's state; a label that changes on any other
    /// candidate changes nothing until a round reaches it.
    pub fn is_used(&self, row: usize) -> bool {
        self.taken.get(row).copied().unwrap_or(false) && !self.batch.contains(&row)
    }

    /// The candidates.
    pub fn rows(&self) -> usize {
        self.taken.len()
    }

    /// The current round's batch not yet used, best first.
    pub fn batch(&self) -> impl Iterator<Item = usize> + '_ {
        self.batch.iter().copied()
    }

    /// The candidate no round has taken yet that the last round's model scores best among
    /// those `skip` does not exclude (ties: the lower row): where a server looks once the
    /// batch is all held by others, without training a round of its own.
    pub fn best_untaken(&self, skip: impl Fn(usize) -> bool) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for (row, (&taken, &score)) in self.taken.iter().zip(&self.scores).enumerate() {
            if taken || skip(row) {
                continue;
            }
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, row));
            }
        }
        best.map(|(_, row)| row)
    }

    /// The rounds trained so far.
    pub fn rounds(&self) -> u64 {
        self.round
    }

    /// Advances over the candidates whose `label` is known and returns the first that is not.
    /// Calling it again with no new label returns the same proposal.
    pub fn next(&mut self, label: impl Fn(usize) -> Option<bool>) -> Step {
        loop {
            while let Some(&candidate) = self.batch.front() {
                match label(candidate) {
                    Some(evidence) => {
                        self.batch.pop_front();
                        self.used.push((candidate, evidence));
                    }
                    None => return Step::Proposal(candidate),
                }
            }
            if self.untaken == 0 {
                return Step::Exhausted;
            }
            self.start_round();
        }
    }

    /// Trains on the labels used so far and takes the next batch of the best-scored candidates
    /// not yet taken (ties: the lower row first).
    fn start_round(&mut self) {
        let model = self.train();
        let mut scored: Vec<(f64, usize)> = (0..self.taken.len())
            .filter(|&i| !self.taken[i])
            .map(|i| (model.score(self.features.row(i)), i))
            .collect();
        self.scores.fill(f64::NEG_INFINITY);
        for &(score, i) in &scored {
            self.scores[i] = score;
        }
        let size = self.next_size.min(scored.len());
        let better = |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if size < scored.len() {
            scored.select_nth_unstable_by(size, better);
            scored.truncate(size);
        }
        scored.sort_by(better);
        for &(_, i) in &scored {
            self.taken[i] = true;
        }
        self.untaken -= scored.len();
        self.batch = scored.into_iter().map(|(_, i)| i).collect();
        self.next_size = next_batch(self.next_size);
        self.round += 1;
    }

    /// The round's model: the used labels, the synthetic evidence example, and
    /// [`PRESUMED_NEGATIVES`] untaken candidates drawn with the round's own generator, presumed
    /// non-evidence.
    fn train(&self) -> Model {
        let mut rng =
            ChaCha8Rng::seed_from_u64(self.seed ^ self.round.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let untaken: Vec<usize> = (0..self.taken.len()).filter(|&i| !self.taken[i]).collect();
        let presumed = sample(
            &mut rng,
            untaken.len(),
            PRESUMED_NEGATIVES.min(untaken.len()),
        );
        let mut examples: Vec<(&[f64], bool)> =
            Vec::with_capacity(self.used.len() + 1 + presumed.len());
        examples.push((&self.synthetic, true));
        examples.extend(self.used.iter().map(|&(i, y)| (self.features.row(i), y)));
        examples.extend(
            presumed
                .iter()
                .map(|k| (self.features.row(untaken[k]), false)),
        );
        logistic::fit(&examples, self.features.columns(), logistic::L2)
    }
}

/// Judges up to `budget` candidates in CAL order against `truth` (one label per row), labels in
/// `known` used at no cost; returns the candidates judged, in order.
pub fn simulate(
    features: &Features,
    truth: &[bool],
    known: &[Option<bool>],
    seed: u64,
    budget: usize,
) -> Vec<usize> {
    let mut labels: Vec<Option<bool>> = known.to_vec();
    labels.resize(truth.len(), None);
    let mut order = CalOrder::new(features, seed);
    let mut judged = Vec::new();
    while judged.len() < budget {
        match order.next(|i| labels[i]) {
            Step::Proposal(i) => {
                labels[i] = Some(truth[i]);
                judged.push(i);
            }
            Step::Exhausted => break,
        }
    }
    judged
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// `n` candidates, about one in `rate` evidence; evidence has higher feature values on
    /// average in column 0 (strongly) and column 1 (weakly), column 2 is noise.
    fn candidates(n: usize, rate: u32, seed: u64) -> (Features, Vec<bool>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut values = Vec::with_capacity(n * 3);
        let mut truth = Vec::with_capacity(n);
        for _ in 0..n {
            let evidence = rng.gen_ratio(1, rate);
            let shift = if evidence { 1.0 } else { 0.0 };
            values.push(rng.gen_range(-1.0..1.0) + 1.5 * shift);
            values.push(rng.gen_range(-1.0..1.0) + 0.5 * shift);
            values.push(rng.gen_range(-1.0..1.0));
            truth.push(evidence);
        }
        (Features::new(3, values).unwrap(), truth)
    }

    #[test]
    fn fed_one_label_at_a_time_or_rebuilt_from_the_set_the_proposals_agree() {
        let (features, truth) = candidates(2_000, 20, 1);
        let judged = simulate(&features, &truth, &[], 5, 150);
        assert_eq!(judged.len(), 150);
        // Rebuilt at every point from the labels so far (the order they were given in does not
        // matter: a set), the order proposes the next candidate the incremental one judged.
        for cut in [0, 1, 2, 17, 64, 149] {
            let mut labels = vec![None; truth.len()];
            for &i in judged[..cut].iter().rev() {
                labels[i] = Some(truth[i]);
            }
            let mut rebuilt = CalOrder::new(&features, 5);
            assert_eq!(
                rebuilt.next(|i| labels[i]),
                Step::Proposal(judged[cut]),
                "cut {cut}"
            );
            assert_eq!(rebuilt.used().len(), cut);
        }
    }

    #[test]
    fn a_proposal_repeats_until_labelled_and_known_labels_cost_nothing() {
        let (features, truth) = candidates(500, 10, 2);
        let mut order = CalOrder::new(&features, 3);
        let Step::Proposal(first) = order.next(|_| None) else {
            panic!("no proposal")
        };
        assert_eq!(order.next(|_| None), Step::Proposal(first));
        // Every label known: the order uses them all without proposing anything.
        let mut all = CalOrder::new(&features, 3);
        assert_eq!(all.next(|i| Some(truth[i])), Step::Exhausted);
        assert_eq!(all.used().len(), 500);
        let mut rows: Vec<usize> = all.used().iter().map(|&(i, _)| i).collect();
        rows.sort_unstable();
        assert_eq!(rows, (0..500).collect::<Vec<_>>());
        assert!(simulate(&features, &truth, &vec![Some(false); 500], 3, 10).is_empty());
    }

    #[test]
    fn the_same_seed_gives_the_same_order_and_another_seed_may_not() {
        let (features, truth) = candidates(1_000, 10, 3);
        let a = simulate(&features, &truth, &[], 9, 200);
        assert_eq!(a, simulate(&features, &truth, &[], 9, 200));
        assert_ne!(a, simulate(&features, &truth, &[], 10, 200));
    }

    #[test]
    fn cal_finds_evidence_far_faster_than_judging_at_random() {
        let (features, truth) = candidates(5_000, 25, 4);
        let total = truth.iter().filter(|t| **t).count();
        let judged = simulate(&features, &truth, &[], 1, 500);
        let found = judged.iter().filter(|&&i| truth[i]).count();
        // Judging 500 of 5,000 at random finds about a tenth of the evidence; the model, which
        // must learn from the labels which columns matter, finds most of it.
        assert!(found * 10 >= total * 6, "found {found} of {total}");
        // An independent check of what it learned: the strong column outweighs the noise.
        let mut order = CalOrder::new(&features, 1);
        let labels: Vec<Option<bool>> = (0..truth.len())
            .map(|i| judged.contains(&i).then(|| truth[i]))
            .collect();
        order.next(|i| labels[i]);
        let model = order.train();
        assert!(model.weights[0] > 2.0 * model.weights[2].abs(), "{model:?}");
    }
}
