//! A second, deliberately simple pooling: each pair's rank is 1 + the number of pairs of the
//! same system (and, per claim, the same claim) that beat it, by a tie-break written out here
//! again. Quadratic; for small random inputs only.

use std::collections::BTreeMap;

/// A system as plain data.
#[derive(Clone, Debug)]
pub struct NaiveSystem {
    pub name: String,
    pub pooled: bool,
    /// (claim, doc, score, retrieval rank)
    pub pairs: Vec<(u32, u32, f64, Option<u32>)>,
}

/// Whether `a` ranks before `b`: higher score; then a present retrieval rank before a missing
/// one and a lower before a higher; then lower claim; then lower doc.
pub fn beats(a: &(u32, u32, f64, Option<u32>), b: &(u32, u32, f64, Option<u32>)) -> bool {
    // `==` on f64 treats -0.0 and 0.0 as equal, as the pooling must.
    if a.2 != b.2 {
        return a.2 > b.2;
    }
    match (a.3, b.3) {
        (Some(x), Some(y)) if x != y => return x < y,
        (Some(_), None) => return true,
        (None, Some(_)) => return false,
        _ => {}
    }
    if a.0 != b.0 {
        return a.0 < b.0;
    }
    a.1 < b.1
}

/// Rank of every pair of `system`, in input order.
pub fn ranks(system: &NaiveSystem, per_claim: bool) -> Vec<u32> {
    system
        .pairs
        .iter()
        .map(|p| {
            let better = system
                .pairs
                .iter()
                .filter(|q| (!per_claim || q.0 == p.0) && beats(q, p))
                .count();
            better as u32 + 1
        })
        .collect()
}

/// A pooled pair: (entry depth, found by, [(system index, rank)] by system index).
pub type NaiveEntry = (u32, u32, Vec<(usize, u32)>);

/// The pool at `depth`, keyed by (claim, doc).
pub fn pool(
    systems: &[NaiveSystem],
    per_claim: bool,
    depth: u32,
) -> BTreeMap<(u32, u32), NaiveEntry> {
    let all_ranks: Vec<Vec<u32>> = systems.iter().map(|s| ranks(s, per_claim)).collect();
    pool_with_ranks(systems, &all_ranks, depth)
}

/// The pool at `depth`, given every system's [`ranks`].
pub fn pool_with_ranks(
    systems: &[NaiveSystem],
    all_ranks: &[Vec<u32>],
    depth: u32,
) -> BTreeMap<(u32, u32), NaiveEntry> {
    let mut pooled: BTreeMap<(u32, u32), NaiveEntry> = BTreeMap::new();
    for (s, system) in systems.iter().enumerate().filter(|(_, s)| s.pooled) {
        for (p, &rank) in system.pairs.iter().zip(&all_ranks[s]) {
            if rank <= depth {
                pooled.insert((p.0, p.1), (0, 0, Vec::new()));
            }
        }
    }
    for (key, entry) in pooled.iter_mut() {
        for (s, system) in systems.iter().enumerate().filter(|(_, s)| s.pooled) {
            if let Some(i) = system.pairs.iter().position(|p| (p.0, p.1) == *key) {
                entry.2.push((s, all_ranks[s][i]));
            }
        }
        entry.0 = entry.2.iter().map(|m| m.1).min().unwrap();
        entry.1 = entry.2.iter().filter(|m| m.1 <= depth).count() as u32;
    }
    pooled
}
