//! Claim/document pairs, the unit that is pooled and judged, and sets of them.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Debug;
use std::hash::{BuildHasher, Hash};

/// What a claim or document key must offer: a total order (the last tie-breaks), hashing, cheap
/// copies and a printable form for error messages.
///
/// The database layer passes `u32` keys whose order equals the order of the external ids.
pub trait Key: Ord + Copy + Hash + Debug {}

impl<T: Ord + Copy + Hash + Debug> Key for T {}

/// A claim/document pair. Ordered by claim, then document.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct Pair<C, D> {
    pub claim: C,
    pub doc: D,
}

impl<C, D> Pair<C, D> {
    /// The pair of `claim` and `doc`.
    pub fn new(claim: C, doc: D) -> Self {
        Pair { claim, doc }
    }
}

/// A set of pairs that can be asked about membership: judged pairs, prior evidence.
///
/// Implemented for hash and B-tree sets of pairs and for maps keyed by pairs (so a map
/// pair → label serves as the set of judged pairs).
pub trait PairSet<C, D> {
    /// Whether `pair` is in the set.
    fn contains_pair(&self, pair: &Pair<C, D>) -> bool;

    /// Number of pairs in the set.
    fn pair_count(&self) -> usize;
}

impl<C: Key, D: Key, S: BuildHasher> PairSet<C, D> for HashSet<Pair<C, D>, S> {
    fn contains_pair(&self, pair: &Pair<C, D>) -> bool {
        self.contains(pair)
    }

    fn pair_count(&self) -> usize {
        self.len()
    }
}

impl<C: Key, D: Key, V, S: BuildHasher> PairSet<C, D> for HashMap<Pair<C, D>, V, S> {
    fn contains_pair(&self, pair: &Pair<C, D>) -> bool {
        self.contains_key(pair)
    }

    fn pair_count(&self) -> usize {
        self.len()
    }
}

impl<C: Key, D: Key> PairSet<C, D> for BTreeSet<Pair<C, D>> {
    fn contains_pair(&self, pair: &Pair<C, D>) -> bool {
        self.contains(pair)
    }

    fn pair_count(&self) -> usize {
        self.len()
    }
}

impl<C: Key, D: Key, V> PairSet<C, D> for BTreeMap<Pair<C, D>, V> {
    fn contains_pair(&self, pair: &Pair<C, D>) -> bool {
        self.contains_key(pair)
    }

    fn pair_count(&self) -> usize {
        self.len()
    }
}
