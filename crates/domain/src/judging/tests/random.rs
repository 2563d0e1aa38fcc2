//! Random rankings, truths and label streams: properties every order must keep, `depth`
//! against the naive pool, and rebuilding a selector from its labels.

use super::super::{evidence_at, replay, Order, Selector};
use super::{naive_pool, random_rankings, selector, STRATEGIES};
use crate::pool::{Pair, Strategy};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

/// Every order, on random rankings with labels known up front and labels arriving for
/// pairs it did not propose: a proposal is in the rankings, unlabelled and never proposed
/// before; when nothing is left every pair of the rankings was proposed or labelled; and a
/// selector rebuilt from the labels so far proposes the same pair.
#[test]
fn every_order_proposes_each_unjudged_pair_once_and_rebuilds_the_same() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut proposals_checked = 0;
    for round in 0..120 {
        let strategy = STRATEGIES[round % 2];
        let (systems, claims, docs) = (
            rng.gen_range(1..=4),
            rng.gen_range(1..=4),
            rng.gen_range(1..=7),
        );
        let coverage = rng.gen_range(0.2..1.0);
        let rankings = random_rankings(&mut rng, strategy, systems, claims, docs, coverage);
        let union: BTreeSet<Pair<u32, u32>> = rankings.iter().flatten().copied().collect();
        let truth: BTreeSet<Pair<u32, u32>> = union
            .iter()
            .filter(|_| rng.gen_bool(0.3))
            .copied()
            .collect();
        for order in Order::ALL {
            let seed = rng.gen();
            // Some labels known up front (a pair outside the rankings among them).
            let mut labels: BTreeMap<Pair<u32, u32>, bool> = union
                .iter()
                .filter(|_| rng.gen_bool(0.15))
                .map(|&pair| (pair, truth.contains(&pair)))
                .collect();
            labels.insert(Pair::new(99, 99), true);
            let mut live = selector(strategy, &rankings, order, seed)
                .with_labels(labels.clone())
                .unwrap();
            let mut proposed = BTreeSet::new();
            while let Some(pair) = live.next_pair() {
                assert!(union.contains(&pair), "{order} proposed {pair:?}");
                assert!(
                    !labels.contains_key(&pair),
                    "{order} proposed judged {pair:?}"
                );
                assert!(proposed.insert(pair), "{order} proposed {pair:?} twice");
                // The server's view: a selector rebuilt from the labels so far.
                let mut rebuilt = selector(strategy, &rankings, order, seed)
                    .with_labels(labels.clone())
                    .unwrap();
                assert_eq!(rebuilt.next_pair(), Some(pair), "{order} {strategy:?}");
                proposals_checked += 1;
                // Sometimes another annotator judges some other unlabelled pair first.
                if rng.gen_bool(0.2) {
                    let open: Vec<Pair<u32, u32>> = union
                        .iter()
                        .filter(|q| !labels.contains_key(q) && **q != pair)
                        .copied()
                        .collect();
                    if let Some(&other) = open.choose(&mut rng) {
                        let evidence = truth.contains(&other);
                        live.record(other, evidence).unwrap();
                        labels.insert(other, evidence);
                    }
                }
                let evidence = truth.contains(&pair);
                live.record(pair, evidence).unwrap();
                labels.insert(pair, evidence);
            }
            let judged: BTreeSet<Pair<u32, u32>> = labels
                .keys()
                .filter(|pair| union.contains(pair))
                .copied()
                .collect();
            assert_eq!(judged, union, "{order} {strategy:?}");
            assert_eq!(live.used(), union.len());
        }
    }
    assert!(proposals_checked > 3_000, "{proposals_checked}");
}

/// `depth` judges exactly the depth-`d` pool (an independent naive union of every ranking's
/// top `d`) after `pool_size(d)` judgments, at every depth, globally and per claim.
#[test]
fn depth_replay_judges_the_depth_pool_first() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for round in 0..150 {
        let strategy = STRATEGIES[round % 2];
        let (systems, claims, docs) = (
            rng.gen_range(1..=4),
            rng.gen_range(1..=5),
            rng.gen_range(1..=8),
        );
        let coverage = rng.gen_range(0.2..1.0);
        let rankings = random_rankings(&mut rng, strategy, systems, claims, docs, coverage);
        let longest = rankings.iter().map(Vec::len).max().unwrap_or(0);
        let mut depth = selector(strategy, &rankings, Order::Depth, 0);
        let mut judged = BTreeSet::new();
        for d in 0..=longest {
            let pool = naive_pool(&rankings, strategy, d);
            while judged.len() < pool.len() {
                let pair = depth.next_pair().unwrap();
                depth.record(pair, false).unwrap();
                judged.insert(pair);
            }
            assert_eq!(judged, pool, "depth {d} {strategy:?}");
        }
        assert_eq!(depth.next_pair(), None);
    }
}

/// The replay curve: one point per judgment, evidence never falling, ending when budget or
/// pairs run out, and its total evidence equal to the truth's when every pair is judged.
#[test]
fn replay_curves_count_one_point_per_judgment() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for round in 0..60 {
        let strategy = STRATEGIES[round % 2];
        let rankings = random_rankings(&mut rng, strategy, 3, 3, 6, 0.6);
        let union: BTreeSet<Pair<u32, u32>> = rankings.iter().flatten().copied().collect();
        let truth: BTreeSet<Pair<u32, u32>> = union
            .iter()
            .filter(|_| rng.gen_bool(0.3))
            .copied()
            .collect();
        for order in Order::ALL {
            let budget = rng.gen_range(0..=union.len() + 3);
            let curve = replay(&mut selector(strategy, &rankings, order, 7), &truth, budget);
            assert_eq!(curve.judgments(), budget.min(union.len()));
            for (i, point) in curve.points().iter().enumerate() {
                assert_eq!(point.judgments, i + 1);
                assert!(point.evidence <= point.judgments);
            }
            assert!(curve
                .points()
                .windows(2)
                .all(|w| w[0].evidence <= w[1].evidence));
            let full = replay(
                &mut selector(strategy, &rankings, order, 7),
                &truth,
                usize::MAX,
            );
            assert_eq!(full.evidence(), truth.len());
            assert_eq!(evidence_at(&full, budget), curve.evidence());
            assert_eq!(evidence_at(&full, 0), 0);
            assert_eq!(evidence_at(&full, usize::MAX), truth.len());
        }
    }
}

/// The adaptive orders find evidence faster than `depth` when one system is much better: on
/// 40 random collections (one good system of four), MTF, both bandits and Hedge each find more
/// evidence than `depth` within a budget of a quarter of the pairs, on average.
#[test]
fn adaptive_orders_beat_depth_when_one_system_is_good() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut found: BTreeMap<&str, usize> = BTreeMap::new();
    for _ in 0..40 {
        // 200 pairs over 4 claims, 20% evidence; system 0 ranks evidence first (noisily),
        // the others at random.
        let pairs: Vec<Pair<u32, u32>> = (0..4)
            .flat_map(|c| (0..50).map(move |d| Pair::new(c, d)))
            .collect();
        let truth: BTreeSet<Pair<u32, u32>> = pairs
            .iter()
            .filter(|_| rng.gen_bool(0.2))
            .copied()
            .collect();
        let mut rankings = Vec::new();
        for system in 0..4 {
            let mut scored: Vec<(f64, Pair<u32, u32>)> = pairs
                .iter()
                .map(|pair| {
                    let boost = if system == 0 && truth.contains(pair) {
                        2.0
                    } else {
                        0.0
                    };
                    (boost + rng.gen::<f64>(), *pair)
                })
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0));
            rankings.push(scored.into_iter().map(|(_, pair)| pair).collect::<Vec<_>>());
        }
        for order in Order::ALL {
            let curve = replay(
                &mut selector(Strategy::Confidence, &rankings, order, 1),
                &truth,
                50,
            );
            *found.entry(order.as_str()).or_default() += curve.evidence();
        }
    }
    eprintln!("evidence found in 50 judgments, summed over 40 collections: {found:?}");
    let depth = found["depth"];
    for order in ["mtf", "mab-maxmean", "mab-thompson", "hedge"] {
        assert!(found[order] > depth, "{order}: {found:?}");
    }
}

/// A rebuild from 2,000 labels over 4 systems × 20,000 pairs proposes what the live selector
/// does; the time it takes is printed (of this unoptimised test build, so only a rough guide;
/// release figures are in the selector's documentation).
#[test]
fn rebuilding_from_thousands_of_labels_gives_the_live_proposal() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let pairs: Vec<Pair<u32, u32>> = (0..200)
        .flat_map(|c| (0..100).map(move |d| Pair::new(c, d)))
        .collect();
    let rankings: Vec<Vec<Pair<u32, u32>>> = (0..4)
        .map(|_| {
            let mut list = pairs.clone();
            list.shuffle(&mut rng);
            list
        })
        .collect();
    for order in Order::ALL {
        let mut live = selector(Strategy::Confidence, &rankings, order, 9);
        let mut labels = Vec::new();
        for _ in 0..2_000 {
            let pair = live.next_pair().unwrap();
            let evidence = rng.gen_bool(0.1);
            live.record(pair, evidence).unwrap();
            labels.push((pair, evidence));
        }
        let next = live.next_pair();
        let start = std::time::Instant::now();
        let mut rebuilt = Selector::new(Strategy::Confidence, rankings.clone(), order, 9)
            .unwrap()
            .with_labels(labels)
            .unwrap();
        assert_eq!(rebuilt.next_pair(), next);
        eprintln!(
            "{order}: rebuilt from 2,000 labels over 80,000 entries in {:?}",
            start.elapsed()
        );
    }
}
