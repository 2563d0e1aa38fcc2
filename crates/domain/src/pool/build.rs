//! The pool at a depth: the union of the pooled systems' top pairs, with every pooled
//! system's rank for each.

use super::fast_hash::FxHashMap;
use super::order::Strategy;
use super::pair::{Key, Pair, PairSet};
use super::ranking::Ranking;
use super::run::Role;
use serde::Serialize;

/// A system as a pool records it.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct SystemInfo {
    pub name: String,
    pub role: Role,
}

/// One pooled system's rank for a pair, in that system's full order (it may exceed the depth).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
pub struct ModelRank {
    /// Index into [`Pool::systems`] (and [`Ranking::runs`]).
    pub system: usize,
    pub rank: u32,
}

/// A pair of the pool.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct PooledPair<C, D> {
    #[serde(flatten)]
    pub pair: Pair<C, D>,
    /// The smallest rank any pooled system gives the pair: the shallowest depth that pools it.
    pub entry_depth: u32,
    /// How many pooled systems rank the pair within the pool's depth (at least 1).
    pub found_by: u32,
    /// Every pooled system that scored the pair, with its rank, by system index; ranks beyond
    /// the depth included, as in SciFact-Open's release.
    pub model_ranks: Vec<ModelRank>,
}

/// The pool at one depth. Pairs sorted by claim, then doc.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Pool<C, D> {
    depth: u32,
    strategy: Strategy,
    systems: Vec<SystemInfo>,
    pairs: Vec<PooledPair<C, D>>,
}

/// The pairs of a pool before their model ranks are read.
pub(crate) struct TopPairs<C, D> {
    /// In the order first met; `model_ranks` still empty.
    pub(crate) pairs: Vec<PooledPair<C, D>>,
    /// Each pair's position in `pairs`.
    pub(crate) slots: FxHashMap<Pair<C, D>, usize>,
}

impl<C: Key, D: Key> Ranking<C, D> {
    /// The pool at `depth`: every pair some pooled system ranks at most `depth` (depth 0 pools
    /// nothing), with `model_ranks`, `entry_depth` and `found_by`.
    ///
    /// One pass over each pooled system's top pairs, then one over its full order to read the
    /// ranks of pooled pairs beyond the depth.
    pub fn pool(&self, depth: u32) -> Pool<C, D> {
        let TopPairs { mut pairs, slots } = self.collect_top(depth);
        if !pairs.is_empty() {
            for (system, run) in self.pooled() {
                for (rank, scored) in run.ranked() {
                    if let Some(pooled) = slots.get(&scored.pair).and_then(|&i| pairs.get_mut(i)) {
                        pooled.model_ranks.push(ModelRank { system, rank });
                    }
                }
            }
        }
        pairs.sort_unstable_by_key(|p| p.pair);
        Pool {
            depth,
            strategy: self.strategy(),
            systems: self
                .runs()
                .iter()
                .map(|run| SystemInfo {
                    name: run.name().to_owned(),
                    role: run.role(),
                })
                .collect(),
            pairs,
        }
    }

    /// The pairs pooled at `depth`, with `entry_depth` and `found_by` set.
    pub(crate) fn collect_top(&self, depth: u32) -> TopPairs<C, D> {
        let mut pairs: Vec<PooledPair<C, D>> = Vec::new();
        let mut slots: FxHashMap<Pair<C, D>, usize> = FxHashMap::default();
        for (_, run) in self.pooled() {
            for (rank, scored) in run.top(depth) {
                let slot = *slots.entry(scored.pair).or_insert_with(|| {
                    pairs.push(PooledPair {
                        pair: scored.pair,
                        entry_depth: rank,
                        found_by: 0,
                        model_ranks: Vec::new(),
                    });
                    pairs.len() - 1
                });
                if let Some(pooled) = pairs.get_mut(slot) {
                    pooled.entry_depth = pooled.entry_depth.min(rank);
                    pooled.found_by += 1;
                }
            }
        }
        TopPairs { pairs, slots }
    }
}

impl<C: Key, D: Key> Pool<C, D> {
    /// The depth the pool was built at.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The strategy of the ranking it came from.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Every system of the ranking (pooled or not), by system index.
    pub fn systems(&self) -> &[SystemInfo] {
        &self.systems
    }

    /// The pooled pairs, by claim then doc.
    pub fn pairs(&self) -> &[PooledPair<C, D>] {
        &self.pairs
    }

    /// Number of pooled pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether the pool is empty.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The pooled pair `pair`, if pooled.
    pub fn get(&self, pair: &Pair<C, D>) -> Option<&PooledPair<C, D>> {
        self.pairs
            .binary_search_by(|p| p.pair.cmp(pair))
            .ok()
            .and_then(|i| self.pairs.get(i))
    }
}

impl<C: Key, D: Key> PairSet<C, D> for Pool<C, D> {
    fn contains_pair(&self, pair: &Pair<C, D>) -> bool {
        self.get(pair).is_some()
    }

    fn pair_count(&self) -> usize {
        self.len()
    }
}
