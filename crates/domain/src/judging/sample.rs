//! Stratified random samples of the pairs beyond the judged depth, with each pair's inclusion
//! probability, and seeded random orders for the stopping test's simple random sample.
//!
//! Strata ([`rank_band`]): a pair's best rank over the pooled systems (within its claim under
//! `PerClaim`) beyond the current depth `d`, in bands that double: (d, 2d], (2d, 4d],
//! (4d, 8d], ... (with `d` taken as 1 when it is 0). Within a stratum the draw is simple
//! random sampling without replacement, so each pair of stratum `h` is drawn with probability
//! `n_h / N_h`; strata are drawn independently.
//!
//! Every draw is deterministic for a seed and independent of the order candidates come in
//! (each stratum's candidates are sorted by claim then doc, strata taken by id, one
//! `ChaCha8Rng` seeded with the seed).

use super::error::{pair_text, JudgingError};
use crate::pool::{FxHashMap, Key, Pair, PairSet, Ranking};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BTreeMap;

/// A pair that may be drawn, and its stratum.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
pub struct Candidate<C, D> {
    pub pair: Pair<C, D>,
    pub stratum: u32,
}

/// How many pairs to draw from each stratum.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Allocation {
    /// `total` draws spread in proportion to the strata's sizes (largest remainders), with at
    /// least 2 per non-empty stratum when `total` allows (2 is the fewest from which a
    /// stratum's variance can be estimated), else at least 1. Fails if `total` is below the
    /// number of non-empty strata or above the number of candidates.
    Proportional { total: usize },
    /// The number of draws for each stratum id; strata not named get none. Fails if a stratum
    /// is asked for more than it holds.
    PerStratum(BTreeMap<u32, usize>),
}

/// One stratum of a design: `population` pairs, `sampled` of them drawn.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
pub struct StratumDesign {
    pub stratum: u32,
    pub population: usize,
    pub sampled: usize,
}

impl StratumDesign {
    /// `sampled / population`, each pair's probability of being drawn (0 for an empty
    /// stratum).
    pub fn inclusion_probability(&self) -> f64 {
        if self.population == 0 {
            0.0
        } else {
            // Counts stay far below 2^53: the conversions are exact.
            self.sampled as f64 / self.population as f64
        }
    }
}

/// A drawn pair, its stratum and its probability of being drawn.
#[derive(Clone, Copy, PartialEq, Debug, Serialize)]
pub struct Sampled<C, D> {
    pub pair: Pair<C, D>,
    pub stratum: u32,
    pub inclusion_probability: f64,
}

/// A stratified sample: the design (strata by id) and the drawn pairs (by stratum, then in
/// draw order). Consistent by construction: each stratum's draws number its `sampled`.
#[derive(Clone, PartialEq, Debug, Serialize)]
pub struct Sample<C, D> {
    strata: Vec<StratumDesign>,
    pairs: Vec<Sampled<C, D>>,
}

impl<C: Key, D: Key> Sample<C, D> {
    /// A stored sample read back: its design and its drawn pairs with their strata. Fails if a
    /// stratum id repeats, draws more than it holds, or its draws do not number its
    /// `sampled`, if a drawn pair names an unknown stratum, or if a pair is drawn twice.
    pub fn from_parts(
        mut strata: Vec<StratumDesign>,
        drawn: Vec<(Pair<C, D>, u32)>,
    ) -> Result<Self, JudgingError> {
        strata.sort_unstable_by_key(|s| s.stratum);
        if let Some(w) = strata.windows(2).find(|w| w[0].stratum == w[1].stratum) {
            return Err(JudgingError::InconsistentSample(format!(
                "stratum {} is listed twice",
                w[0].stratum
            )));
        }
        if let Some(s) = strata.iter().find(|s| s.sampled > s.population) {
            return Err(JudgingError::SampleExceedsStratum {
                stratum: s.stratum,
                sample: s.sampled,
                population: s.population,
            });
        }
        check_distinct(drawn.iter().map(|(pair, _)| *pair))?;
        let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
        let mut pairs = Vec::with_capacity(drawn.len());
        for (pair, stratum) in drawn {
            let Some(design) = strata
                .binary_search_by_key(&stratum, |s| s.stratum)
                .ok()
                .and_then(|i| strata.get(i))
            else {
                return Err(JudgingError::InconsistentSample(format!(
                    "a drawn pair names stratum {stratum}, which the design lacks"
                )));
            };
            *counts.entry(stratum).or_default() += 1;
            pairs.push(Sampled {
                pair,
                stratum,
                inclusion_probability: design.inclusion_probability(),
            });
        }
        for s in &strata {
            let drawn = counts.get(&s.stratum).copied().unwrap_or(0);
            if drawn != s.sampled {
                return Err(JudgingError::InconsistentSample(format!(
                    "stratum {} should have {} draw(s) but has {drawn}",
                    s.stratum, s.sampled
                )));
            }
        }
        pairs.sort_by_key(|p| p.stratum);
        Ok(Sample { strata, pairs })
    }

    /// The design, by stratum id.
    pub fn strata(&self) -> &[StratumDesign] {
        &self.strata
    }

    /// The drawn pairs, by stratum then draw order.
    pub fn pairs(&self) -> &[Sampled<C, D>] {
        &self.pairs
    }

    /// Pairs drawn.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether nothing was drawn.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

/// Fails on the first pair listed twice.
fn check_distinct<C: Key, D: Key>(
    pairs: impl Iterator<Item = Pair<C, D>>,
) -> Result<(), JudgingError> {
    let mut all: Vec<Pair<C, D>> = pairs.collect();
    all.sort_unstable();
    match all.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => {
            let (claim, doc) = pair_text(&w[0]);
            Err(JudgingError::DuplicatePair { claim, doc })
        }
        None => Ok(()),
    }
}

/// The band of `best_rank` beyond `depth`: 0 for (d, 2d], 1 for (2d, 4d], 2 for (4d, 8d], ...
/// with `d = max(depth, 1)`; `None` for a rank within the depth.
pub fn rank_band(best_rank: u32, depth: u32) -> Option<u32> {
    if best_rank <= depth {
        return None;
    }
    let mut upper = 2 * u64::from(depth.max(1));
    let mut band = 0;
    while u64::from(best_rank) > upper {
        upper *= 2;
        band += 1;
    }
    Some(band)
}

/// The unjudged pairs whose best rank over `ranking`'s pooled systems is in
/// (`depth`, `max_rank`], each in its [`rank_band`]; by claim then doc.
pub fn beyond_depth<C: Key, D: Key>(
    ranking: &Ranking<C, D>,
    depth: u32,
    max_rank: u32,
    judged: &impl PairSet<C, D>,
) -> Vec<Candidate<C, D>> {
    let mut best: FxHashMap<Pair<C, D>, u32> = FxHashMap::default();
    for (_, run) in ranking.pooled() {
        for (rank, scored) in run.top(max_rank) {
            let entry = best.entry(scored.pair).or_insert(rank);
            *entry = (*entry).min(rank);
        }
    }
    let mut candidates: Vec<Candidate<C, D>> = best
        .into_iter()
        .filter(|(pair, _)| !judged.contains_pair(pair))
        .filter_map(|(pair, rank)| {
            rank_band(rank, depth).map(|stratum| Candidate { pair, stratum })
        })
        .collect();
    candidates.sort_unstable_by_key(|c| c.pair);
    candidates
}

/// Draws a stratified sample of `candidates` under `allocation`, deterministic for `seed`.
/// Fails on a candidate listed twice or an allocation the strata cannot meet.
pub fn stratified_sample<C: Key, D: Key>(
    candidates: Vec<Candidate<C, D>>,
    allocation: &Allocation,
    seed: u64,
) -> Result<Sample<C, D>, JudgingError> {
    check_distinct(candidates.iter().map(|c| c.pair))?;
    let mut by_stratum: BTreeMap<u32, Vec<Pair<C, D>>> = BTreeMap::new();
    for c in candidates {
        by_stratum.entry(c.stratum).or_default().push(c.pair);
    }
    let sizes: Vec<(u32, usize)> = by_stratum.iter().map(|(&h, v)| (h, v.len())).collect();
    let sizes_to_draw = allocate(&sizes, allocation)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut strata = Vec::with_capacity(sizes.len());
    let mut pairs = Vec::new();
    for ((stratum, mut members), &draw) in by_stratum.into_iter().zip(&sizes_to_draw) {
        members.sort_unstable();
        let design = StratumDesign {
            stratum,
            population: members.len(),
            sampled: draw,
        };
        let (drawn, _) = members.partial_shuffle(&mut rng, draw);
        for pair in drawn.iter() {
            pairs.push(Sampled {
                pair: *pair,
                stratum,
                inclusion_probability: design.inclusion_probability(),
            });
        }
        strata.push(design);
    }
    Ok(Sample { strata, pairs })
}

/// Draws per stratum (in the order of `sizes`, which is by stratum id).
fn allocate(sizes: &[(u32, usize)], allocation: &Allocation) -> Result<Vec<usize>, JudgingError> {
    match allocation {
        Allocation::PerStratum(asked) => {
            for (&stratum, &sample) in asked {
                let population = sizes
                    .iter()
                    .find(|(h, _)| *h == stratum)
                    .map_or(0, |(_, n)| *n);
                if sample > population {
                    return Err(JudgingError::SampleExceedsStratum {
                        stratum,
                        sample,
                        population,
                    });
                }
            }
            Ok(sizes
                .iter()
                .map(|(h, _)| asked.get(h).copied().unwrap_or(0))
                .collect())
        }
        Allocation::Proportional { total } => proportional(sizes, *total),
    }
}

/// Proportional allocation with a floor of 2 (or 1) per non-empty stratum; see
/// [`Allocation::Proportional`].
fn proportional(sizes: &[(u32, usize)], total: usize) -> Result<Vec<usize>, JudgingError> {
    let population: usize = sizes.iter().map(|(_, n)| n).sum();
    if total > population {
        return Err(JudgingError::SampleExceedsPopulation {
            sample: total,
            population,
        });
    }
    let nonempty = sizes.iter().filter(|(_, n)| *n > 0).count();
    if total < nonempty {
        return Err(JudgingError::SampleTooSmall {
            sample: total,
            strata: nonempty,
        });
    }
    let two_each: usize = sizes.iter().map(|(_, n)| (*n).min(2)).sum();
    let floor = |n: usize| {
        if total >= two_each {
            n.min(2)
        } else {
            n.min(1)
        }
    };
    // Counts stay far below 2^53: the conversions are exact.
    let targets: Vec<f64> = sizes
        .iter()
        .map(|(_, n)| total as f64 * *n as f64 / population.max(1) as f64)
        .collect();
    let mut draws: Vec<usize> = sizes
        .iter()
        .zip(&targets)
        .map(|((_, n), &t)| (t.floor() as usize).max(floor(*n)).min(*n))
        .collect();
    // Too many (floors raised some strata): take back from the strata most above target.
    while draws.iter().sum::<usize>() > total {
        let over = (0..draws.len())
            .filter(|&i| draws[i] > floor(sizes[i].1))
            .max_by(|&a, &b| {
                (draws[a] as f64 - targets[a])
                    .total_cmp(&(draws[b] as f64 - targets[b]))
                    .then(b.cmp(&a))
            });
        match over {
            Some(i) => draws[i] -= 1,
            None => break,
        }
    }
    // Too few: give to the strata most below target (largest remainders).
    while draws.iter().sum::<usize>() < total {
        let under = (0..draws.len())
            .filter(|&i| draws[i] < sizes[i].1)
            .max_by(|&a, &b| {
                (targets[a] - draws[a] as f64)
                    .total_cmp(&(targets[b] - draws[b] as f64))
                    .then(b.cmp(&a))
            });
        match under {
            Some(i) => draws[i] += 1,
            None => break,
        }
    }
    Ok(draws)
}

/// `pairs` in a random order, deterministic for `seed` and independent of the input order
/// (sorted first): any prefix is a simple random sample without replacement, so a stopping
/// sample can grow in increments by taking longer prefixes.
pub fn shuffled<C: Key, D: Key>(mut pairs: Vec<Pair<C, D>>, seed: u64) -> Vec<Pair<C, D>> {
    pairs.sort_unstable();
    shuffle_from_front(&mut pairs, seed);
    pairs
}

/// Puts `items` in a random order, deterministic for `seed`: Fisher–Yates from the front, so
/// that any prefix is a simple random sample without replacement, fixed once drawn.
pub fn shuffle_from_front<T>(items: &mut [T], seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in 0..items.len() {
        let j = rng.gen_range(i..items.len());
        items.swap(i, j);
    }
}
