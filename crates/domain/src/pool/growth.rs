//! Growing a pool (deeper, or with a system added) and previewing what deeper pools cost.

use super::build::{Pool, PooledPair};
use super::error::PoolError;
use super::fast_hash::FxHashSet;
use super::pair::{Key, Pair, PairSet};
use super::ranking::Ranking;
use serde::{Deserialize, Serialize};

/// One candidate depth of a preview.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct DepthStep {
    pub depth: u32,
    /// Pairs in the pool at this depth.
    pub pool_size: usize,
    /// Pairs this step adds: in [`Ranking::preview`], to the previous (shallower) step (the first
    /// step: its pool size); in [`Ranking::preview_growth`], to the pool as it is.
    pub added: usize,
    /// Pairs not yet judged: in [`Ranking::preview`], of the pool at this depth; in
    /// [`Ranking::preview_growth`], of the pairs this step adds.
    pub to_annotate: usize,
}

impl<C: Key, D: Key> Pool<C, D> {
    /// The pairs of this pool missing from `existing` (by claim, then doc).
    ///
    /// Fails with [`PoolError::Shrinks`] if `existing` holds a pair this pool lacks: growing
    /// (deeper, or an added pooled system) never removes a pair, so such a pool is no growth
    /// of `existing`.
    pub fn added_since(
        &self,
        existing: impl IntoIterator<Item = Pair<C, D>>,
    ) -> Result<Vec<&PooledPair<C, D>>, PoolError> {
        let existing: FxHashSet<Pair<C, D>> = existing.into_iter().collect();
        let missing: Vec<&Pair<C, D>> = existing
            .iter()
            .filter(|pair| !self.contains_pair(pair))
            .collect();
        if let Some(first) = missing.iter().min() {
            return Err(PoolError::Shrinks {
                depth: self.depth(),
                missing: missing.len(),
                claim: format!("{:?}", first.claim),
                doc: format!("{:?}", first.doc),
            });
        }
        Ok(self
            .pairs()
            .iter()
            .filter(|p| !existing.contains(&p.pair))
            .collect())
    }
}

impl<C: Key, D: Key> Ranking<C, D> {
    /// Pool size, pairs added and pairs left to annotate at each of `depths` (sorted, repeats
    /// dropped), from one pass over each pooled system's top pairs at the deepest depth.
    pub fn preview(&self, depths: &[u32], judged: &impl PairSet<C, D>) -> Vec<DepthStep> {
        let mut depths = depths.to_vec();
        depths.sort_unstable();
        depths.dedup();
        let Some(&deepest) = depths.last() else {
            return Vec::new();
        };
        let pairs = self.collect_top(deepest).pairs;
        let mut entries: Vec<u32> = pairs.iter().map(|p| p.entry_depth).collect();
        let mut unjudged: Vec<u32> = pairs
            .iter()
            .filter(|p| !judged.contains_pair(&p.pair))
            .map(|p| p.entry_depth)
            .collect();
        entries.sort_unstable();
        unjudged.sort_unstable();
        let mut previous = 0;
        depths
            .into_iter()
            .map(|depth| {
                let pool_size = entries.partition_point(|&e| e <= depth);
                let step = DepthStep {
                    depth,
                    pool_size,
                    added: pool_size - previous,
                    to_annotate: unjudged.partition_point(|&e| e <= depth),
                };
                previous = pool_size;
                step
            })
            .collect()
    }

    /// What a build at each of `depths` (sorted, repeats dropped) would do to the pool as it is,
    /// `current` (its pairs; `current_size` in all, a pair found by search or a sample perhaps
    /// outside these rankings): the pool's size after the build, the pairs it adds, and how
    /// many of those are not `judged` and go to annotators — the figures the build then
    /// reports. A depth the pool already covers adds nothing.
    pub fn preview_growth(
        &self,
        depths: &[u32],
        judged: &impl PairSet<C, D>,
        current: &impl PairSet<C, D>,
        current_size: usize,
    ) -> Vec<DepthStep> {
        let mut depths = depths.to_vec();
        depths.sort_unstable();
        depths.dedup();
        let Some(&deepest) = depths.last() else {
            return Vec::new();
        };
        let mut added: Vec<u32> = Vec::new();
        let mut to_annotate: Vec<u32> = Vec::new();
        for pair in self
            .collect_top(deepest)
            .pairs
            .iter()
            .filter(|p| !current.contains_pair(&p.pair))
        {
            added.push(pair.entry_depth);
            if !judged.contains_pair(&pair.pair) {
                to_annotate.push(pair.entry_depth);
            }
        }
        added.sort_unstable();
        to_annotate.sort_unstable();
        depths
            .into_iter()
            .map(|depth| {
                let added = added.partition_point(|&e| e <= depth);
                DepthStep {
                    depth,
                    pool_size: current_size + added,
                    added,
                    to_annotate: to_annotate.partition_point(|&e| e <= depth),
                }
            })
            .collect()
    }
}
