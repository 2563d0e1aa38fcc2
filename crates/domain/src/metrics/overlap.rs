//! Overlap of two sets (of pairs, or of anything else).

use std::collections::HashSet;
use std::hash::{BuildHasher, Hash};

/// Jaccard index |A ∩ B| / |A ∪ B|. Two empty sets are identical, so their index is 1.
pub fn jaccard<T: Eq + Hash, S: BuildHasher>(a: &HashSet<T, S>, b: &HashSet<T, S>) -> f64 {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let shared = small.iter().filter(|x| large.contains(x)).count();
    let union = a.len() + b.len() - shared;
    if union == 0 {
        1.0
    } else {
        shared as f64 / union as f64
    }
}
