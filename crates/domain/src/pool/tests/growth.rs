//! Growth (deeper pools, added systems), the preview, and the judged split.

use super::super::{Pair, PoolError, Ranking, Strategy};
use super::{random_systems, to_ranking, to_run, Shape, STRATEGIES};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeSet, HashSet};

/// Shapes where depths 50 and 100 both cut into the lists.
fn deep_shape(strategy: Strategy, rng: &mut ChaCha8Rng) -> Shape {
    match strategy {
        Strategy::Confidence => Shape {
            systems: rng.gen_range(2..=4),
            claims: 25,
            docs: 10,
            coverage: 0.6,
        },
        Strategy::PerClaim => Shape {
            systems: rng.gen_range(2..=4),
            claims: 4,
            docs: 200,
            coverage: 0.6,
        },
    }
}

fn deep_systems(rng: &mut ChaCha8Rng, strategy: Strategy) -> Vec<super::naive::NaiveSystem> {
    let shape = deep_shape(strategy, rng);
    random_systems(rng, shape)
}

fn keys(pool: &super::super::Pool<u32, u32>) -> BTreeSet<Pair<u32, u32>> {
    pool.pairs().iter().map(|p| p.pair).collect()
}

#[test]
fn growing_from_50_to_100_gives_the_pool_at_100() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for (strategy, _) in STRATEGIES {
        for _ in 0..20 {
            let systems = deep_systems(&mut rng, strategy);
            let ranking = to_ranking(&systems, strategy);
            let (at_50, at_100) = (ranking.pool(50), ranking.pool(100));
            let existing = keys(&at_50);
            let added = at_100.added_since(existing.iter().copied()).unwrap();
            let mut grown = existing.clone();
            for p in &added {
                assert!(grown.insert(p.pair), "added a pair already pooled");
                assert!((51..=100).contains(&p.entry_depth), "{p:?}");
            }
            assert_eq!(grown, keys(&at_100));
            assert!(existing.is_subset(&keys(&at_100)));
            if added.is_empty() {
                continue;
            }
            // The other way round is no growth.
            match at_50.added_since(keys(&at_100)) {
                Err(PoolError::Shrinks { depth, missing, .. }) => {
                    assert_eq!((depth, missing), (50, added.len()));
                }
                other => panic!("expected Shrinks, got {other:?}"),
            }
        }
    }
}

#[test]
fn adding_a_system_later_equals_building_with_it() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for (strategy, _) in STRATEGIES {
        for _ in 0..20 {
            let systems = deep_systems(&mut rng, strategy);
            let split = rng.gen_range(1..systems.len());
            let depth = rng.gen_range(1..=80);
            let mut ranking = to_ranking(&systems[..split], strategy);
            let before = ranking.pool(depth);
            for system in &systems[split..] {
                ranking.add(to_run(system)).unwrap();
            }
            let after = ranking.pool(depth);
            let from_start = to_ranking(&systems, strategy).pool(depth);
            assert_eq!(after, from_start);
            let added = after.added_since(keys(&before)).unwrap();
            assert_eq!(added.len(), after.len() - before.len());
        }
    }
}

#[test]
fn deeper_pools_contain_shallower_ones() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for (strategy, _) in STRATEGIES {
        for _ in 0..50 {
            let shape = Shape {
                systems: rng.gen_range(1..=4),
                claims: rng.gen_range(1..=5),
                docs: rng.gen_range(1..=8),
                coverage: 0.7,
            };
            let ranking = to_ranking(&random_systems(&mut rng, shape), strategy);
            for depth in 0..10 {
                assert!(keys(&ranking.pool(depth)).is_subset(&keys(&ranking.pool(depth + 1))));
            }
        }
    }
}

#[test]
fn preview_matches_full_builds() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    for (strategy, _) in STRATEGIES {
        for _ in 0..50 {
            let systems = deep_systems(&mut rng, strategy);
            let ranking = to_ranking(&systems, strategy);
            let judged: HashSet<Pair<u32, u32>> = systems
                .iter()
                .flat_map(|s| &s.pairs)
                .filter(|_| rng.gen_bool(0.3))
                .map(|p| Pair::new(p.0, p.1))
                .collect();
            let d = rng.gen_range(1..=40);
            let depths = [d + 50, d, d + 25, d, d + 75];
            let steps = ranking.preview(&depths, &judged);
            let got: Vec<u32> = steps.iter().map(|s| s.depth).collect();
            assert_eq!(got, [d, d + 25, d + 50, d + 75]);
            let mut previous = 0;
            for step in steps {
                let pool = ranking.pool(step.depth);
                assert_eq!(step.pool_size, pool.len());
                assert_eq!(step.added, pool.len() - previous);
                assert_eq!(
                    step.to_annotate,
                    pool.split_judged(&judged).to_annotate.len()
                );
                previous = pool.len();
            }
        }
    }
    assert!(Ranking::<u32, u32>::new(Strategy::Confidence)
        .preview(&[], &HashSet::new())
        .is_empty());
}

/// The growth preview from a built pool gives what growing it to each depth adds
/// ([`Pool::added_since`], an independent computation): its size, the pairs added, and those of
/// them not judged.
#[test]
fn growth_preview_matches_growing_the_pool() {
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    for (strategy, _) in STRATEGIES {
        for _ in 0..50 {
            let systems = deep_systems(&mut rng, strategy);
            let ranking = to_ranking(&systems, strategy);
            let judged: HashSet<Pair<u32, u32>> = systems
                .iter()
                .flat_map(|s| &s.pairs)
                .filter(|_| rng.gen_bool(0.3))
                .map(|p| Pair::new(p.0, p.1))
                .collect();
            let built = rng.gen_range(1..=40);
            let current: HashSet<Pair<u32, u32>> =
                ranking.pool(built).pairs().iter().map(|p| p.pair).collect();
            let depths = [
                built + 30,
                built.saturating_sub(1).max(1),
                built,
                built + 60,
            ];
            for step in ranking.preview_growth(&depths, &judged, &current, current.len()) {
                let pool = ranking.pool(step.depth.max(built));
                let added = pool.added_since(current.iter().copied()).unwrap();
                assert_eq!(step.added, added.len(), "depth {}", step.depth);
                assert_eq!(step.pool_size, current.len() + added.len());
                assert_eq!(
                    step.to_annotate,
                    added.iter().filter(|p| !judged.contains(&p.pair)).count()
                );
            }
        }
    }
}

#[test]
fn judged_pairs_are_never_queued() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let systems = deep_systems(&mut rng, Strategy::Confidence);
    let ranking = to_ranking(&systems, Strategy::Confidence);
    let (at_20, at_60) = (ranking.pool(20), ranking.pool(60));
    // Judge every third pair of the deeper pool.
    let judged: BTreeSet<Pair<u32, u32>> =
        at_60.pairs().iter().step_by(3).map(|p| p.pair).collect();
    let split = at_60.split_judged(&judged);
    assert_eq!(
        split.to_annotate.len() + split.already_judged.len(),
        at_60.len()
    );
    assert!(split.to_annotate.iter().all(|p| !judged.contains(&p.pair)));
    assert!(split
        .already_judged
        .iter()
        .all(|p| judged.contains(&p.pair)));
    // On the growth only.
    let added = at_60.added_since(keys(&at_20)).unwrap();
    let split = super::super::split_judged(added.iter().copied(), &judged);
    let expected: Vec<Pair<u32, u32>> = at_60
        .pairs()
        .iter()
        .map(|p| p.pair)
        .filter(|p| at_20.get(p).is_none() && !judged.contains(p))
        .collect();
    let got: Vec<Pair<u32, u32>> = split.to_annotate.iter().map(|p| p.pair).collect();
    assert_eq!(got, expected);
    assert!(!got.is_empty() && !split.already_judged.is_empty());
}
