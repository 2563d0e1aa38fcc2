//! Table 2b, per-system contributions and Table 2c, against hand counts and the naive pool.

use super::super::{
    Pair, PoolStats, PriorEvidenceBySystem, PriorEvidenceStats, Ranking, Role, Score, ScoredPair,
    Strategy, SystemContribution, SystemCountRow, SystemRun,
};
use super::naive;
use super::{random_systems, to_ranking, Shape, STRATEGIES};
use crate::label::Label;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet};

fn run(name: &str, role: Role, pairs: &[(u32, u32, f64, Option<u32>)]) -> SystemRun<u32, u32> {
    let pairs = pairs
        .iter()
        .map(|&(c, d, s, r)| ScoredPair::new(c, d, Score::new(s).unwrap(), r))
        .collect();
    SystemRun::new(name, role, pairs).unwrap()
}

/// Ranks at depth 2 (worked out by hand):
/// A: (1,1) 1, (1,2) 2, (2,1) 3, (2,2) 4.   B: (1,1) 1, (2,1) 2, (1,3) 3, (1,2) 4.
/// C: (3,1) 1, (1,1) 2, (2,2) 3, (1,2) 4.   E (evaluation only): (3,3) 1, (1,1) 2.
/// Pool: (1,1) found by 3; (1,2) by A only; (2,1) by B only; (3,1) by C only.
fn example() -> Ranking<u32, u32> {
    Ranking::from_runs(
        Strategy::Confidence,
        [
            run(
                "A",
                Role::Pooled,
                &[
                    (2, 2, 0.1, Some(1)),
                    (1, 1, 0.9, None),
                    (1, 2, 0.8, Some(5)),
                    (2, 1, 0.7, None),
                ],
            ),
            run(
                "B",
                Role::Pooled,
                &[
                    (1, 1, 0.95, None),
                    (2, 1, 0.9, None),
                    (1, 3, 0.5, None),
                    (1, 2, 0.4, None),
                ],
            ),
            run(
                "C",
                Role::Pooled,
                &[
                    (3, 1, 0.99, None),
                    (1, 1, 0.3, None),
                    (2, 2, 0.2, Some(2)),
                    (1, 2, 0.1, Some(3)),
                ],
            ),
            run(
                "E",
                Role::EvaluationOnly,
                &[(3, 3, 1.0, Some(1)), (1, 1, 0.9, None)],
            ),
        ],
    )
    .unwrap()
}

fn labels() -> HashMap<Pair<u32, u32>, Label> {
    [
        ((1, 1), Label::Support),
        ((1, 2), Label::Nei),
        ((3, 1), Label::Contradict),
        ((2, 2), Label::Support), // not pooled: ignored
    ]
    .into_iter()
    .map(|((c, d), l)| (Pair::new(c, d), l))
    .collect()
}

fn row(
    systems: u32,
    pooled: usize,
    judged: usize,
    evidence: usize,
    pct: Option<f64>,
) -> SystemCountRow {
    SystemCountRow {
        systems,
        pooled,
        judged,
        evidence,
        percent_evidence: pct,
    }
}

fn contribution(system: &str, pooled: usize, unique: usize) -> SystemContribution {
    SystemContribution {
        system: system.into(),
        pooled,
        unique,
    }
}

#[test]
fn table_2b_matches_a_hand_count() {
    let stats = example().pool(2).stats(&labels());
    assert_eq!(
        stats,
        PoolStats {
            depth: 2,
            pool_size: 4,
            judged: 3,
            evidence: 2,
            by_system_count: vec![
                row(1, 3, 2, 1, Some(50.0)),
                row(2, 0, 0, 0, None),
                row(3, 1, 1, 1, Some(100.0)),
            ],
            per_system: vec![
                contribution("A", 2, 1),
                contribution("B", 2, 1),
                contribution("C", 2, 1),
            ],
        }
    );
    let json = serde_json::to_value(&stats).unwrap();
    assert_eq!(json["pool_size"], 4);
    assert_eq!(
        json["by_system_count"][0],
        serde_json::json!({"systems": 1, "pooled": 3, "judged": 2, "evidence": 1, "percent_evidence": 50.0})
    );
    assert_eq!(
        json["per_system"][2],
        serde_json::json!({"system": "C", "pooled": 2, "unique": 1})
    );
}

#[test]
fn judged_split_of_the_example() {
    let pool = example().pool(2);
    let split = pool.split_judged(&labels());
    let to_annotate: Vec<Pair<u32, u32>> = split.to_annotate.iter().map(|p| p.pair).collect();
    let judged: Vec<Pair<u32, u32>> = split.already_judged.iter().map(|p| p.pair).collect();
    assert_eq!(to_annotate, [Pair::new(2, 1)]);
    assert_eq!(judged, [Pair::new(1, 1), Pair::new(1, 2), Pair::new(3, 1)]);
}

#[test]
fn table_2c_matches_a_hand_count() {
    let prior: HashSet<Pair<u32, u32>> = [(1, 2), (2, 2), (3, 3), (9, 9)]
        .into_iter()
        .map(|(c, d)| Pair::new(c, d))
        .collect();
    let by = |system: &str, role, retrieved, in_top_k, in_top_depth| PriorEvidenceBySystem {
        system: system.into(),
        role,
        retrieved,
        in_top_k,
        in_top_depth,
    };
    assert_eq!(
        example().prior_evidence_stats(&prior, 2, 2),
        PriorEvidenceStats {
            depth: 2,
            top_k: 2,
            total: 4,
            in_pool: 1,
            per_system: vec![
                by("A", Role::Pooled, 2, 1, 1),
                by("B", Role::Pooled, 1, 0, 0),
                by("C", Role::Pooled, 2, 1, 0),
                by("E", Role::EvaluationOnly, 1, 1, 1),
            ],
        }
    );
}

#[test]
fn stats_match_counts_on_the_naive_pool() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for _ in 0..100 {
        let shape = Shape {
            systems: rng.gen_range(1..=4),
            claims: rng.gen_range(1..=5),
            docs: rng.gen_range(1..=8),
            coverage: 0.7,
        };
        let systems = random_systems(&mut rng, shape);
        let labels: HashMap<Pair<u32, u32>, Label> = systems
            .iter()
            .flat_map(|s| &s.pairs)
            .filter_map(|p| {
                let label = Label::ALL[rng.gen_range(0..3)];
                rng.gen_bool(0.5).then_some((Pair::new(p.0, p.1), label))
            })
            .collect();
        let prior: HashSet<Pair<u32, u32>> = (0..shape.claims)
            .flat_map(|c| (0..shape.docs + 1).map(move |d| Pair::new(c, d)))
            .filter(|_| rng.gen_bool(0.3))
            .collect();
        for (strategy, per_claim) in STRATEGIES {
            let ranking = to_ranking(&systems, strategy);
            let depth = rng.gen_range(1..=6);
            let top_k = rng.gen_range(1..=4);
            let stats = ranking.pool(depth).stats(&labels);
            let slow = naive::pool(&systems, per_claim, depth);
            let pooled_systems: Vec<usize> =
                (0..systems.len()).filter(|&s| systems[s].pooled).collect();

            assert_eq!(stats.pool_size, slow.len());
            assert_eq!(stats.by_system_count.len(), pooled_systems.len());
            for row in &stats.by_system_count {
                let found: Vec<(u32, u32)> = slow
                    .iter()
                    .filter(|(_, e)| e.1 == row.systems)
                    .map(|(k, _)| *k)
                    .collect();
                let label_of = |k: &(u32, u32)| labels.get(&Pair::new(k.0, k.1));
                let judged = found.iter().filter(|k| label_of(k).is_some()).count();
                let evidence = found
                    .iter()
                    .filter(|k| matches!(label_of(k), Some(Label::Support | Label::Contradict)))
                    .count();
                assert_eq!(
                    (row.pooled, row.judged, row.evidence),
                    (found.len(), judged, evidence)
                );
                let pct = (judged > 0).then(|| evidence as f64 * 100.0 / judged as f64);
                match (row.percent_evidence, pct) {
                    (Some(a), Some(b)) => assert!((a - b).abs() < 1e-9),
                    (a, b) => assert_eq!(a, b),
                }
            }
            for (contribution, &s) in stats.per_system.iter().zip(&pooled_systems) {
                let mine: Vec<&naive::NaiveEntry> = slow
                    .values()
                    .filter(|e| e.2.iter().any(|&(sys, rank)| sys == s && rank <= depth))
                    .collect();
                let unique = mine.iter().filter(|e| e.1 == 1).count();
                assert_eq!(contribution.system, systems[s].name);
                assert_eq!(
                    (contribution.pooled, contribution.unique),
                    (mine.len(), unique)
                );
            }

            let table_c = ranking.prior_evidence_stats(&prior, depth, top_k);
            assert_eq!(table_c.total, prior.len());
            let in_pool = slow
                .keys()
                .filter(|k| prior.contains(&Pair::new(k.0, k.1)))
                .count();
            assert_eq!(table_c.in_pool, in_pool);
            for (row, system) in table_c.per_system.iter().zip(&systems) {
                let ranks = naive::ranks(system, per_claim);
                let mut expected = (0, 0, 0);
                for (p, &rank) in system.pairs.iter().zip(&ranks) {
                    if prior.contains(&Pair::new(p.0, p.1)) {
                        expected.0 += 1;
                        expected.1 += usize::from(matches!(p.3, Some(r) if r <= top_k));
                        expected.2 += usize::from(rank <= depth);
                    }
                }
                assert_eq!((row.retrieved, row.in_top_k, row.in_top_depth), expected);
            }
        }
    }
}
