//! Hand-made cases: every tie-break level, ranks beyond the depth, roles, errors, JSON.

use super::super::{Pair, PoolError, Ranking, Role, Score, ScoredPair, Strategy, SystemRun};
use super::as_naive;
use super::naive::NaiveEntry;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn scored(claim: u32, doc: u32, score: f64, rank: Option<u32>) -> ScoredPair<u32, u32> {
    ScoredPair::new(claim, doc, Score::new(score).unwrap(), rank)
}

fn run(name: &str, role: Role, pairs: &[(u32, u32, f64, Option<u32>)]) -> SystemRun<u32, u32> {
    let pairs = pairs
        .iter()
        .map(|&(c, d, s, r)| scored(c, d, s, r))
        .collect();
    SystemRun::new(name, role, pairs).unwrap()
}

/// One pair per tie-break level (comments give the expected place under `Confidence`).
const TIES: [(u32, u32, f64, Option<u32>); 11] = [
    (5, 5, 0.9, None),      // 1: highest score, whatever its claim and rank
    (0, 0, 0.5, Some(3)),   // 3: same score as the next, higher retrieval rank
    (0, 1, 0.5, Some(2)),   // 2: lower retrieval rank wins
    (0, 2, 0.5, None),      // 5: missing retrieval rank after any rank...
    (0, 3, 0.5, Some(100)), // 4: ...even 100
    (1, 0, 0.0, Some(1)),   // 7: score and rank tie with the next; claim 1 after claim 0
    (0, 9, -0.0, Some(1)),  // 6: -0.0 ties with 0.0
    (2, 4, 0.0, Some(1)),   // 9: same claim as the next: doc 4 after doc 3
    (2, 3, 0.0, Some(1)),   // 8
    (3, 0, -2.0, None),     // 11: both ranks missing: claim 3 after claim 2
    (2, 7, -2.0, None),     // 10
];

fn ranked_list(strategy: Strategy, seed: u64) -> Vec<(u32, u32, u32)> {
    let mut pairs = TIES.to_vec();
    pairs.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let ranking = Ranking::from_runs(strategy, [run("s", Role::Pooled, &pairs)]).unwrap();
    ranking.runs()[0]
        .ranked()
        .map(|(rank, p)| (p.pair.claim, p.pair.doc, rank))
        .collect()
}

#[test]
fn confidence_order_breaks_every_tie() {
    let expected = vec![
        (5, 5, 1),
        (0, 1, 2),
        (0, 0, 3),
        (0, 3, 4),
        (0, 2, 5),
        (0, 9, 6),
        (1, 0, 7),
        (2, 3, 8),
        (2, 4, 9),
        (2, 7, 10),
        (3, 0, 11),
    ];
    for seed in 0..5 {
        assert_eq!(ranked_list(Strategy::Confidence, seed), expected);
    }
}

#[test]
fn per_claim_order_ranks_within_each_claim() {
    let expected = vec![
        (0, 1, 1),
        (0, 0, 2),
        (0, 3, 3),
        (0, 2, 4),
        (0, 9, 5),
        (1, 0, 1),
        (2, 3, 1),
        (2, 4, 2),
        (2, 7, 3),
        (3, 0, 1),
        (5, 5, 1),
    ];
    for seed in 0..5 {
        assert_eq!(ranked_list(Strategy::PerClaim, seed), expected);
    }
}

#[test]
fn per_claim_pool_takes_each_claims_top() {
    let ranking = Ranking::from_runs(Strategy::PerClaim, [run("s", Role::Pooled, &TIES)]).unwrap();
    let pooled: Vec<(u32, u32)> = ranking
        .pool(1)
        .pairs()
        .iter()
        .map(|p| (p.pair.claim, p.pair.doc))
        .collect();
    assert_eq!(pooled, [(0, 1), (1, 0), (2, 3), (3, 0), (5, 5)]);
}

/// A and B pooled, E evaluation-only; x = (0,0), y = (0,1), z = (0,2), w = (1,1).
fn three_systems() -> Ranking<u32, u32> {
    Ranking::from_runs(
        Strategy::Confidence,
        [
            run(
                "A",
                Role::Pooled,
                &[(0, 0, 0.9, None), (0, 1, 0.8, None), (0, 2, 0.7, None)],
            ),
            run(
                "B",
                Role::Pooled,
                &[(0, 1, 0.9, None), (0, 2, 0.8, None), (0, 0, 0.7, None)],
            ),
            run(
                "E",
                Role::EvaluationOnly,
                &[(1, 1, 1.0, None), (0, 0, 0.5, None)],
            ),
        ],
    )
    .unwrap()
}

fn summary(ranking: &Ranking<u32, u32>, depth: u32) -> Vec<((u32, u32), NaiveEntry)> {
    as_naive(&ranking.pool(depth)).into_iter().collect()
}

#[test]
fn model_ranks_go_beyond_the_depth_and_skip_evaluation_only_systems() {
    let ranking = three_systems();
    assert_eq!(
        summary(&ranking, 1),
        vec![
            ((0, 0), (1, 1, vec![(0, 1), (1, 3)])),
            ((0, 1), (1, 1, vec![(0, 2), (1, 1)])),
        ]
    );
    assert_eq!(
        summary(&ranking, 2),
        vec![
            ((0, 0), (1, 1, vec![(0, 1), (1, 3)])),
            ((0, 1), (1, 2, vec![(0, 2), (1, 1)])),
            ((0, 2), (2, 1, vec![(0, 3), (1, 2)])),
        ]
    );
    assert!(ranking.pool(0).is_empty());
    assert!(Ranking::<u32, u32>::new(Strategy::Confidence)
        .pool(5)
        .is_empty());
}

#[test]
fn pool_serializes_flat_pairs_with_model_ranks() {
    let json = serde_json::to_value(three_systems().pool(1)).unwrap();
    assert_eq!(json["depth"], 1);
    assert_eq!(json["strategy"], "confidence");
    assert_eq!(json["systems"][2]["name"], "E");
    assert_eq!(json["systems"][2]["role"], "evaluation_only");
    assert_eq!(
        json["pairs"][0],
        serde_json::json!({"claim": 0, "doc": 0, "entry_depth": 1, "found_by": 1,
            "model_ranks": [{"system": 0, "rank": 1}, {"system": 1, "rank": 3}]})
    );
}

#[test]
fn pool_lookup_finds_pooled_pairs_only() {
    let pool = three_systems().pool(1);
    assert_eq!(pool.get(&Pair::new(0, 1)).map(|p| p.entry_depth), Some(1));
    assert!(pool.get(&Pair::new(0, 2)).is_none());
    assert!(pool.get(&Pair::new(1, 1)).is_none());
}

#[test]
fn scores_are_finite_and_negative_zero_is_zero() {
    assert!(matches!(Score::new(f64::NAN), Err(PoolError::NonFiniteScore(v)) if v.is_nan()));
    assert!(Score::new(f64::INFINITY).is_err());
    assert!(Score::new(f64::NEG_INFINITY).is_err());
    assert!(Score::new(-0.0).unwrap().get().is_sign_positive());
    assert_eq!(Score::new(-3.5).unwrap().get(), -3.5);
    assert!(serde_json::from_str::<Score>("0.25").is_ok());
}

#[test]
fn runs_and_rankings_refuse_bad_input() {
    let pairs = vec![
        scored(1, 2, 0.5, None),
        scored(1, 3, 0.4, None),
        scored(1, 2, 0.1, Some(1)),
    ];
    match SystemRun::new("dup", Role::Pooled, pairs) {
        Err(e @ PoolError::DuplicatePair { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("\"dup\"") && text.contains("claim 1, doc 2"),
                "{text}"
            );
        }
        other => panic!("expected a duplicate pair, got {other:?}"),
    }
    assert_eq!(
        SystemRun::<u32, u32>::new("  ", Role::Pooled, Vec::new()).unwrap_err(),
        PoolError::EmptySystemName
    );
    let mut ranking = Ranking::new(Strategy::Confidence);
    assert_eq!(ranking.add(run("A", Role::Pooled, &[])), Ok(0));
    assert_eq!(ranking.add(run("B", Role::EvaluationOnly, &[])), Ok(1));
    assert_eq!(
        ranking.add(run("A", Role::EvaluationOnly, &[])),
        Err(PoolError::DuplicateSystem("A".into()))
    );
}

#[test]
fn a_role_reads_back_from_its_stored_spelling_and_nothing_else() {
    for role in [Role::Pooled, Role::EvaluationOnly] {
        assert_eq!(Role::parse(role.as_str()), Ok(role));
        assert_eq!(role.as_str().parse::<Role>(), Ok(role));
    }
    assert_eq!(Role::parse("pooled"), Ok(Role::Pooled));
    assert_eq!(Role::parse("evaluation-only"), Ok(Role::EvaluationOnly));
    for wrong in ["", "Pooled", "evaluation_only", "eval", " pooled"] {
        let err = Role::parse(wrong).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("unknown system role {wrong:?} (expected pooled or evaluation-only)")
        );
    }
}
