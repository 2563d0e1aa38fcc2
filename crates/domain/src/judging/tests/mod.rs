//! Tests of judging: orders worked by hand, `depth` against a naive pool, random properties
//! of every order (including rebuilding from labels), and simulations of the estimators and
//! the stopping test against known truth.

mod cal;
mod estimate;
mod hand;
mod leave_one_out;
mod live;
mod live_cal;
mod live_stop;
mod plan;
mod random;
mod stopping;

use super::{Order, Selector};
use crate::pool::{Pair, Strategy};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

/// `(claim, doc)` as a pair.
fn p(claim: u32, doc: u32) -> Pair<u32, u32> {
    Pair::new(claim, doc)
}

/// Rankings from `(claim, doc)` lists.
fn lists(rankings: &[&[(u32, u32)]]) -> Vec<Vec<Pair<u32, u32>>> {
    rankings
        .iter()
        .map(|list| list.iter().map(|&(c, d)| p(c, d)).collect())
        .collect()
}

/// Judges every proposal against `truth` until none is left; returns the proposals.
fn run_out(selector: &mut Selector<u32, u32>, truth: &BTreeSet<Pair<u32, u32>>) -> Vec<(u32, u32)> {
    let mut proposed = Vec::new();
    while let Some(pair) = selector.next_pair() {
        proposed.push((pair.claim, pair.doc));
        selector.record(pair, truth.contains(&pair)).unwrap();
    }
    proposed
}

/// Random rankings: `systems` lists over a `claims` × `docs` grid, each pair kept with
/// probability `coverage`; under `PerClaim` grouped by claim (claims in key order), each
/// claim's pairs shuffled; under `Confidence` the whole list shuffled.
fn random_rankings(
    rng: &mut ChaCha8Rng,
    strategy: Strategy,
    systems: usize,
    claims: u32,
    docs: u32,
    coverage: f64,
) -> Vec<Vec<Pair<u32, u32>>> {
    (0..systems)
        .map(|_| {
            let mut by_claim: BTreeMap<u32, Vec<Pair<u32, u32>>> = BTreeMap::new();
            for claim in 0..claims {
                for doc in 0..docs {
                    if rng.gen_bool(coverage) {
                        by_claim.entry(claim).or_default().push(p(claim, doc));
                    }
                }
            }
            match strategy {
                Strategy::PerClaim => by_claim
                    .into_values()
                    .flat_map(|mut pairs| {
                        pairs.shuffle(rng);
                        pairs
                    })
                    .collect(),
                Strategy::Confidence => {
                    let mut all: Vec<Pair<u32, u32>> = by_claim.into_values().flatten().collect();
                    all.shuffle(rng);
                    all
                }
            }
        })
        .collect()
}

/// The naive pool at `depth`: every pair some ranking puts at rank ≤ `depth` (rank = position
/// in the list under `Confidence`, within the claim under `PerClaim`).
fn naive_pool(
    rankings: &[Vec<Pair<u32, u32>>],
    strategy: Strategy,
    depth: usize,
) -> BTreeSet<Pair<u32, u32>> {
    let mut pool = BTreeSet::new();
    for list in rankings {
        for (i, pair) in list.iter().enumerate() {
            let rank = match strategy {
                Strategy::Confidence => i + 1,
                Strategy::PerClaim => list[..=i].iter().filter(|q| q.claim == pair.claim).count(),
            };
            if rank <= depth {
                pool.insert(*pair);
            }
        }
    }
    pool
}

const STRATEGIES: [Strategy; 2] = [Strategy::Confidence, Strategy::PerClaim];

fn selector(
    strategy: Strategy,
    rankings: &[Vec<Pair<u32, u32>>],
    order: Order,
    seed: u64,
) -> Selector<u32, u32> {
    Selector::new(strategy, rankings.to_vec(), order, seed).unwrap()
}
