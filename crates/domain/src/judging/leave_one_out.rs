//! Pool bias, one pooled system left out at a time (SciFact-Open §5.2 and Table 6): what the
//! collection would have judged without the system, by depth pooling of the others and by the
//! `cal` order over the others' candidates and the corpus retrievals, at the same number of
//! judgments. The system's F1 against each set of judgments, beside its F1 with every system
//! pooled, says how much a collection built without it underrates it.
//!
//! This module says which pairs are judged; the caller scores the left-out system against the
//! truth restricted to them (the evaluation's own metrics).

use super::cal::{replay_cal, CalCandidates, Retrieved};
use super::error::JudgingError;
use crate::pool::{Key, Pair, PairSet, Ranking};
use std::collections::BTreeSet;

/// What is judged when one pooled system is left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut<C, D> {
    /// The left-out system: its position among the ranking's pooled runs.
    pub member: usize,
    /// The system's name.
    pub system: String,
    /// The depth-`depth` pool of the other pooled systems, in pair order: what depth pooling
    /// judges without the system.
    pub depth_pool: Vec<Pair<C, D>>,
    /// As many pairs (fewer only if the candidates run out), judged by the `cal` order over
    /// the other systems' full rankings and the corpus retrievals, in the order judged.
    pub cal: Vec<Pair<C, D>>,
    /// Evidence among `cal`'s judgments that no other pooled system ranked.
    pub cal_outside_runs: usize,
}

/// The depth-`depth` pool of the pooled runs of `ranking` at positions `members` (positions
/// among the pooled runs): every pair one of them ranks at most `depth`, in pair order.
pub fn pool_of<C: Key, D: Key>(
    ranking: &Ranking<C, D>,
    members: impl IntoIterator<Item = usize>,
    depth: u32,
) -> Vec<Pair<C, D>> {
    let pooled: Vec<_> = ranking.pooled().map(|(_, run)| run).collect();
    let mut pool = BTreeSet::new();
    for member in members {
        if let Some(run) = pooled.get(member) {
            pool.extend(run.top(depth).map(|(_, scored)| scored.pair));
        }
    }
    pool.into_iter().collect()
}

/// The pairs the `cal` order (seeded) judges, `budget` of them (fewer only if the candidates
/// run out), over the full rankings of the pooled runs at positions `members` and `retrieved`,
/// judged against `truth`; in the order judged, with the evidence among them no member ranked.
pub fn cal_pool<C: Key, D: Key>(
    ranking: &Ranking<C, D>,
    members: impl IntoIterator<Item = usize>,
    retrieved: &[Retrieved<C, D>],
    truth: &impl PairSet<C, D>,
    budget: usize,
    seed: u64,
) -> Result<(Vec<Pair<C, D>>, usize), JudgingError> {
    let pooled: Vec<_> = ranking.pooled().map(|(_, run)| run).collect();
    let rankings: Vec<Vec<Pair<C, D>>> = members
        .into_iter()
        .filter_map(|m| pooled.get(m))
        .map(|run| run.top(u32::MAX).map(|(_, scored)| scored.pair).collect())
        .collect();
    let candidates = CalCandidates::new(&rankings, retrieved)?;
    let replayed = replay_cal(&candidates, truth, budget, seed);
    let judged = replayed
        .judged
        .iter()
        .map(|&row| candidates.pairs()[row])
        .collect();
    Ok((judged, replayed.outside_runs))
}

/// Leaves each pooled system of `ranking` out in turn: the others' depth-`depth` pool, and as
/// many judgments of the `cal` order (seeded) over the others' full rankings and `retrieved`,
/// judged against `truth`.
pub fn leave_one_out<C: Key, D: Key>(
    ranking: &Ranking<C, D>,
    depth: u32,
    retrieved: &[Retrieved<C, D>],
    truth: &impl PairSet<C, D>,
    seed: u64,
) -> Result<Vec<LeftOut<C, D>>, JudgingError> {
    let pooled: Vec<_> = ranking.pooled().map(|(_, run)| run).collect();
    let mut left_out = Vec::with_capacity(pooled.len());
    for (member, run) in pooled.iter().enumerate() {
        let others = (0..pooled.len()).filter(|&m| m != member);
        let depth_pool = pool_of(ranking, others.clone(), depth);
        let (cal, cal_outside_runs) =
            cal_pool(ranking, others, retrieved, truth, depth_pool.len(), seed)?;
        left_out.push(LeftOut {
            member,
            system: run.name().to_owned(),
            depth_pool,
            cal,
            cal_outside_runs,
        });
    }
    Ok(left_out)
}
