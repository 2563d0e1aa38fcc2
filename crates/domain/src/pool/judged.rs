//! Keeping judged pairs (prior citation evidence, earlier labels) out of the annotation queue.

use super::build::{Pool, PooledPair};
use super::pair::{Key, PairSet};
use serde::Serialize;

/// Pooled pairs split by whether they are judged already. Each keeps the input order.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct JudgedSplit<'a, C, D> {
    /// Pairs to queue for annotation.
    pub to_annotate: Vec<&'a PooledPair<C, D>>,
    /// Pairs never to queue again.
    pub already_judged: Vec<&'a PooledPair<C, D>>,
}

/// Splits `pairs` (a pool's, or those [`Pool::added_since`] returns) into to-annotate and
/// already-judged.
pub fn split_judged<'a, C: Key + 'a, D: Key + 'a>(
    pairs: impl IntoIterator<Item = &'a PooledPair<C, D>>,
    judged: &impl PairSet<C, D>,
) -> JudgedSplit<'a, C, D> {
    let (already_judged, to_annotate) = pairs
        .into_iter()
        .partition(|p| judged.contains_pair(&p.pair));
    JudgedSplit {
        to_annotate,
        already_judged,
    }
}

impl<C: Key, D: Key> Pool<C, D> {
    /// Splits the whole pool into to-annotate and already-judged.
    pub fn split_judged(&self, judged: &impl PairSet<C, D>) -> JudgedSplit<'_, C, D> {
        split_judged(self.pairs(), judged)
    }
}
