//! The `cal` judging order's candidates: every pair a pooled run ranked, and each claim's top
//! retrievals over the whole corpus, as rows of features for the CAL learner ([`cal`]).
//!
//! The runs' orders (depth, mtf, mab, hedge) can only propose what a run ranked. CAL's
//! candidates reach beyond: a pair BM25 retrieved for its claim from the whole corpus is a
//! candidate whether or not any run ranked it, and [`CalReplay::outside_runs`] counts the
//! evidence found among such pairs.
//!
//! Features of a candidate, every column larger = more likely evidence (absent = 0):
//! - per pooled system: the reciprocal of its rank within the claim, and its position in the
//!   system's whole ranking as a fraction from 1 (its first pair) down towards 0 (its last);
//! - the corpus retrieval: the reciprocal of the BM25 rank within the claim, and the BM25
//!   score as a share of the claim's ceiling (the score of an abstract matching every term);
//! - the share of pooled systems that ranked the pair.

use super::error::JudgingError;
use super::replay::{Curve, CurvePoint};
use crate::pool::{Key, Pair, PairSet};
use std::collections::HashMap;

/// One pair a corpus retrieval returned for its claim.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Retrieved<C, D> {
    pub pair: Pair<C, D>,
    /// 1-based rank within the claim's retrieval.
    pub rank: u32,
    /// The BM25 score over the claim's ceiling, in [0, 1].
    pub share: f64,
}

/// The candidates of a `cal` order and their features.
#[derive(Clone, Debug)]
pub struct CalCandidates<C, D> {
    pairs: Vec<Pair<C, D>>,
    in_runs: Vec<bool>,
    features: cal::Features,
}

/// Columns per pooled system.
const SYSTEM_COLUMNS: usize = 2;
/// Columns of the corpus retrieval, then the share of systems.
const OTHER_COLUMNS: usize = 3;

impl<C: Key, D: Key> CalCandidates<C, D> {
    /// The candidates of the pooled systems' `rankings` (each best first, as
    /// [`super::Selector::new`] takes them) and of the corpus `retrieved`, each pair once, in
    /// pair order. Fails if a ranking lists a pair twice.
    pub fn new(
        rankings: &[Vec<Pair<C, D>>],
        retrieved: &[Retrieved<C, D>],
    ) -> Result<Self, JudgingError> {
        let systems = rankings.len();
        let columns = SYSTEM_COLUMNS * systems + OTHER_COLUMNS;
        let mut rows: HashMap<Pair<C, D>, Vec<f64>> = HashMap::new();
        for (s, ranking) in rankings.iter().enumerate() {
            let mut in_claim: HashMap<C, u32> = HashMap::new();
            let len = ranking.len() as f64;
            for (position, pair) in ranking.iter().enumerate() {
                let rank = in_claim.entry(pair.claim).or_insert(0);
                *rank += 1;
                let row = rows.entry(*pair).or_insert_with(|| vec![0.0; columns]);
                if row[SYSTEM_COLUMNS * s] != 0.0 {
                    return Err(JudgingError::DuplicateRankedPair {
                        system: s,
                        claim: format!("{:?}", pair.claim),
                        doc: format!("{:?}", pair.doc),
                    });
                }
                row[SYSTEM_COLUMNS * s] = 1.0 / f64::from(*rank);
                row[SYSTEM_COLUMNS * s + 1] = 1.0 - position as f64 / len;
                row[columns - 1] += 1.0 / systems as f64;
            }
        }
        let in_runs: std::collections::HashSet<Pair<C, D>> = rows.keys().copied().collect();
        let bm25 = SYSTEM_COLUMNS * systems;
        for hit in retrieved {
            let row = rows.entry(hit.pair).or_insert_with(|| vec![0.0; columns]);
            row[bm25] = row[bm25].max(1.0 / f64::from(hit.rank.max(1)));
            let share = if hit.share.is_finite() {
                hit.share.clamp(0.0, 1.0)
            } else {
                0.0
            };
            row[bm25 + 1] = row[bm25 + 1].max(share);
        }
        let mut pairs: Vec<Pair<C, D>> = rows.keys().copied().collect();
        pairs.sort_unstable();
        let mut values = Vec::with_capacity(pairs.len() * columns);
        for pair in &pairs {
            values.extend_from_slice(&rows[pair]);
        }
        let features = cal::Features::new(columns, values).map_err(JudgingError::Features)?;
        let in_runs = pairs.iter().map(|p| in_runs.contains(p)).collect();
        Ok(CalCandidates {
            pairs,
            in_runs,
            features,
        })
    }

    /// Candidates, in pair order (a row of the features each).
    pub fn pairs(&self) -> &[Pair<C, D>] {
        &self.pairs
    }

    /// Candidate count.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether there is no candidate.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Whether some pooled run ranked candidate `row`.
    pub fn in_runs(&self, row: usize) -> bool {
        self.in_runs.get(row).copied().unwrap_or(false)
    }

    /// Candidates no pooled run ranked.
    pub fn outside_runs(&self) -> usize {
        self.in_runs.iter().filter(|r| !**r).count()
    }

    /// The feature matrix, one row per candidate.
    pub fn features(&self) -> &cal::Features {
        &self.features
    }
}

/// A `cal` order judged against a known truth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalReplay {
    /// One point per judgment, as the other orders' replays.
    pub curve: Curve,
    /// Evidence judged among pairs no pooled run ranked.
    pub outside_runs: usize,
    /// The candidates judged, in order (rows of the candidates).
    pub judged: Vec<usize>,
}

/// Judges, against `truth`, the candidates the `cal` order proposes (seeded), until `budget`
/// judgments are spent or every candidate is judged.
pub fn replay_cal<C: Key, D: Key>(
    candidates: &CalCandidates<C, D>,
    truth: &impl PairSet<C, D>,
    budget: usize,
    seed: u64,
) -> CalReplay {
    replay_cal_with_search(candidates, truth, budget, seed, &[])
}

/// [`replay_cal`] beside a searcher who judges the pairs of `searched` in turn (a person's
/// queries and the results they open, best first): judgments alternate between the searcher's
/// next pair and the order's proposal, and the order learns from every label so far, the
/// searcher's included. A pair one of them reaches after the other judged it costs nothing; a
/// searched pair that is no candidate is passed over. Ends when `budget` judgments are spent or
/// both have nothing left.
pub fn replay_cal_with_search<C: Key, D: Key>(
    candidates: &CalCandidates<C, D>,
    truth: &impl PairSet<C, D>,
    budget: usize,
    seed: u64,
    searched: &[Pair<C, D>],
) -> CalReplay {
    if budget == 0 {
        return CalReplay {
            curve: Curve(Vec::new()),
            outside_runs: 0,
            judged: Vec::new(),
        };
    }
    let (judged, labels) = judge_in_turn(candidates, truth, seed, searched, |judged, _| {
        judged.len() >= budget
    });
    replayed(candidates, judged, &labels)
}

/// The judging of [`replay_cal_with_search`]: the searcher's pairs and the order's proposals in
/// turn, until `enough(judged, labels)` says so after a judgment or both have nothing left.
/// Returns the candidates judged, in order, and every candidate's label (None: unjudged).
pub(super) fn judge_in_turn<C: Key, D: Key>(
    candidates: &CalCandidates<C, D>,
    truth: &impl PairSet<C, D>,
    seed: u64,
    searched: &[Pair<C, D>],
    mut enough: impl FnMut(&[usize], &[Option<bool>]) -> bool,
) -> (Vec<usize>, Vec<Option<bool>>) {
    let truth_of = |row: usize| truth.contains_pair(&candidates.pairs[row]);
    let mut labels: Vec<Option<bool>> = vec![None; candidates.len()];
    let mut search = searched
        .iter()
        .filter_map(|pair| candidates.pairs.binary_search(pair).ok());
    let mut order = cal::CalOrder::new(candidates.features(), seed);
    let mut judged = Vec::new();
    let mut order_done = false;
    loop {
        let searcher = search.by_ref().find(|&row| labels[row].is_none());
        if let Some(row) = searcher {
            labels[row] = Some(truth_of(row));
            judged.push(row);
            if enough(&judged, &labels) {
                break;
            }
        }
        if !order_done {
            match order.next(|row| labels[row]) {
                cal::Step::Proposal(row) => {
                    labels[row] = Some(truth_of(row));
                    judged.push(row);
                    if enough(&judged, &labels) {
                        break;
                    }
                    continue;
                }
                cal::Step::Exhausted => order_done = true,
            }
        }
        if searcher.is_none() {
            break;
        }
    }
    (judged, labels)
}

/// The replay of the candidates `judged`, in order, with their `labels`.
fn replayed<C: Key, D: Key>(
    candidates: &CalCandidates<C, D>,
    judged: Vec<usize>,
    labels: &[Option<bool>],
) -> CalReplay {
    let mut points = Vec::with_capacity(judged.len());
    let (mut evidence, mut outside_runs) = (0, 0);
    for (n, &row) in judged.iter().enumerate() {
        if labels[row] == Some(true) {
            evidence += 1;
            outside_runs += usize::from(!candidates.in_runs(row));
        }
        points.push(CurvePoint {
            judgments: n + 1,
            evidence,
        });
    }
    CalReplay {
        curve: Curve(points),
        outside_runs,
        judged,
    }
}
