//! Pool statistics as SciFact-Open reports them (Wadden et al. 2022, Table 2b and 2c).

use super::build::Pool;
use super::fast_hash::FxHashSet;
use super::pair::{Key, Pair, PairSet};
use super::ranking::Ranking;
use super::run::Role;
use crate::label::Label;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::BuildHasher;

/// Table 2b and the per-system contributions of a pool.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct PoolStats {
    pub depth: u32,
    pub pool_size: usize,
    /// Pooled pairs with a final label.
    pub judged: usize,
    /// Pooled pairs labelled SUPPORT or CONTRADICT.
    pub evidence: usize,
    /// One row per number of pooled systems (1, 2, ..., n) that found a pair within the depth.
    pub by_system_count: Vec<SystemCountRow>,
    /// One row per pooled system, by system index.
    pub per_system: Vec<SystemContribution>,
}

/// Pairs found by exactly `systems` pooled systems within the depth.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct SystemCountRow {
    pub systems: u32,
    pub pooled: usize,
    pub judged: usize,
    pub evidence: usize,
    /// 100 × evidence / judged; `None` when none is judged.
    pub percent_evidence: Option<f64>,
}

/// What one pooled system put into the pool.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct SystemContribution {
    pub system: String,
    /// Pairs it ranks within the depth.
    pub pooled: usize,
    /// Those no other pooled system ranks within the depth.
    pub unique: usize,
}

/// Table 2c: where the prior (citation) evidence pairs sit in each system's ranking.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct PriorEvidenceStats {
    pub depth: u32,
    /// The retrieval cut-off `k` of `in_top_k`.
    pub top_k: u32,
    /// Prior evidence pairs.
    pub total: usize,
    /// Prior evidence pairs in the pool at `depth`.
    pub in_pool: usize,
    /// One row per system, pooled or not, by system index.
    pub per_system: Vec<PriorEvidenceBySystem>,
}

/// Prior evidence pairs one system scored, retrieved within `k`, and ranked within the depth.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct PriorEvidenceBySystem {
    pub system: String,
    pub role: Role,
    /// Scored at all.
    pub retrieved: usize,
    /// With a retrieval rank of at most `top_k`.
    pub in_top_k: usize,
    /// Ranked within the depth: the system's contribution to the pool (for an evaluation-only
    /// system, what it would contribute were it pooled).
    pub in_top_depth: usize,
}

impl<C: Key, D: Key> Pool<C, D> {
    /// Table 2b and per-system contributions; `labels` gives the final label of judged pairs
    /// (pairs outside the pool are ignored).
    pub fn stats<S: BuildHasher>(&self, labels: &HashMap<Pair<C, D>, Label, S>) -> PoolStats {
        let pooled_count = self
            .systems()
            .iter()
            .filter(|s| s.role == Role::Pooled)
            .count();
        let mut rows: Vec<SystemCountRow> = (1..=pooled_count)
            .map(|n| SystemCountRow {
                systems: u32::try_from(n).unwrap_or(u32::MAX),
                pooled: 0,
                judged: 0,
                evidence: 0,
                percent_evidence: None,
            })
            .collect();
        // (pooled, unique) by system index.
        let mut contributions = vec![(0_usize, 0_usize); self.systems().len()];
        for pooled in self.pairs() {
            let label = labels.get(&pooled.pair);
            let row_index = usize::try_from(pooled.found_by).unwrap_or(usize::MAX);
            if let Some(row) = row_index.checked_sub(1).and_then(|i| rows.get_mut(i)) {
                row.pooled += 1;
                row.judged += usize::from(label.is_some());
                row.evidence += usize::from(label.is_some_and(|l| l.is_evidence()));
            }
            for model in pooled.model_ranks.iter().filter(|m| m.rank <= self.depth()) {
                if let Some((count, unique)) = contributions.get_mut(model.system) {
                    *count += 1;
                    *unique += usize::from(pooled.found_by == 1);
                }
            }
        }
        for row in &mut rows {
            row.percent_evidence = percent(row.evidence, row.judged);
        }
        let per_system = self
            .systems()
            .iter()
            .zip(contributions)
            .filter(|(system, _)| system.role == Role::Pooled)
            .map(|(system, (pooled, unique))| SystemContribution {
                system: system.name.clone(),
                pooled,
                unique,
            })
            .collect();
        PoolStats {
            depth: self.depth(),
            pool_size: self.len(),
            judged: rows.iter().map(|r| r.judged).sum(),
            evidence: rows.iter().map(|r| r.evidence).sum(),
            by_system_count: rows,
            per_system,
        }
    }
}

fn percent(part: usize, whole: usize) -> Option<f64> {
    // Counts stay far below 2^53, so the conversions are exact.
    (whole > 0).then(|| 100.0 * part as f64 / whole as f64)
}

impl<C: Key, D: Key> Ranking<C, D> {
    /// Table 2c for the pool at `depth`: for each system, how many `prior` evidence pairs it
    /// scored, retrieved within `top_k` (retrieval rank ≤ `top_k`) and ranked within `depth`;
    /// and how many are in the pool.
    pub fn prior_evidence_stats(
        &self,
        prior: &impl PairSet<C, D>,
        depth: u32,
        top_k: u32,
    ) -> PriorEvidenceStats {
        let mut pooled: FxHashSet<Pair<C, D>> = FxHashSet::default();
        let per_system = self
            .runs()
            .iter()
            .map(|run| {
                let mut row = PriorEvidenceBySystem {
                    system: run.name().to_owned(),
                    role: run.role(),
                    retrieved: 0,
                    in_top_k: 0,
                    in_top_depth: 0,
                };
                for (rank, scored) in run.ranked() {
                    if !prior.contains_pair(&scored.pair) {
                        continue;
                    }
                    row.retrieved += 1;
                    row.in_top_k += usize::from(scored.retrieval_rank.is_some_and(|r| r <= top_k));
                    if rank <= depth {
                        row.in_top_depth += 1;
                        if run.role() == Role::Pooled {
                            pooled.insert(scored.pair);
                        }
                    }
                }
                row
            })
            .collect();
        PriorEvidenceStats {
            depth,
            top_k,
            total: prior.pair_count(),
            in_pool: pooled.len(),
            per_system,
        }
    }
}
