//! Each order on small rankings, step by step, against sequences worked out by hand.

use super::super::{replay, JudgingError, Order, Selector};
use super::{lists, p, run_out, selector};
use crate::pool::{Pair, Ranking, Role, Score, ScoredPair, Strategy, SystemRun};
use std::collections::BTreeSet;

/// Three systems ranking across claims (global, `Confidence`):
///
/// ```text
/// rank   A      B      C
///  1    (0,1)  (1,1)  (0,4)
///  2    (0,2)  (0,3)  (0,2)
///  3    (1,1)  (0,1)
///  4    (1,2)  (1,3)
/// ```
fn global() -> Vec<Vec<Pair<u32, u32>>> {
    lists(&[
        &[(0, 1), (0, 2), (1, 1), (1, 2)],
        &[(1, 1), (0, 3), (0, 1), (1, 3)],
        &[(0, 4), (0, 2)],
    ])
}

/// The same systems per claim (`PerClaim`: ranks restart at each claim):
///
/// ```text
/// claim 0  A: (0,1) (0,2)   B: (0,3) (0,1)   C: (0,4) (0,2)
/// claim 1  A: (1,1) (1,2)   B: (1,1) (1,3)   C: -
/// ```
fn per_claim() -> Vec<Vec<Pair<u32, u32>>> {
    lists(&[
        &[(0, 1), (0, 2), (1, 1), (1, 2)],
        &[(0, 3), (0, 1), (1, 1), (1, 3)],
        &[(0, 4), (0, 2)],
    ])
}

/// Evidence: (0,1), (1,1), (0,4).
fn truth() -> BTreeSet<Pair<u32, u32>> {
    [p(0, 1), p(1, 1), p(0, 4)].into_iter().collect()
}

#[test]
fn depth_judges_by_entry_depth_then_claim_then_doc() {
    // Entry depths (global): (0,1) 1 [A1], (1,1) 1 [B1], (0,4) 1 [C1], (0,2) 2, (0,3) 2,
    // (1,2) 4, (1,3) 4.
    let mut global = selector(Strategy::Confidence, &global(), Order::Depth, 0);
    assert_eq!(
        run_out(&mut global, &truth()),
        [(0, 1), (0, 4), (1, 1), (0, 2), (0, 3), (1, 2), (1, 3)]
    );
    // Per claim: (0,1) 1 [A1], (0,3) 1 [B1], (0,4) 1 [C1], (1,1) 1 [A1, B1]; (0,2) 2,
    // (1,2) 2, (1,3) 2: every claim's depth-1 pairs before any depth-2 pair.
    let mut per_claim = selector(Strategy::PerClaim, &per_claim(), Order::Depth, 0);
    assert_eq!(
        run_out(&mut per_claim, &truth()),
        [(0, 1), (0, 3), (0, 4), (1, 1), (0, 2), (1, 2), (1, 3)]
    );
}

#[test]
fn mtf_stays_with_a_system_while_its_pairs_are_evidence() {
    // Priorities A B C = 0 0 0.
    // 1 A (tie, lowest index): (0,1) evidence, stay.   2 A: (0,2) no: A -1.
    // 3 B: (1,1) evidence, stay.                        4 B: (0,3) no: B -1.
    // 5 C: (0,4) evidence, stay; C's (0,2) is used, C is done.
    // 6 A (-1, tie with B): (1,1) used, skip; (1,2) no: A -2.   7 B: (0,1) used; (1,3).
    let mut global = selector(Strategy::Confidence, &global(), Order::Mtf, 0);
    assert_eq!(
        run_out(&mut global, &truth()),
        [(0, 1), (0, 2), (1, 1), (0, 3), (0, 4), (1, 2), (1, 3)]
    );
    // Per claim, turns alternate claim 0, claim 1 (each claim its own priorities):
    // c0 A (0,1) yes | c1 A (1,1) yes | c0 A (0,2) no | c1 A (1,2) no | c0 B (0,3) no |
    // c1 B: (1,1) used, (1,3) no; claim 1 done | c0 C (0,4) yes; claim 0 done.
    let mut per_claim = selector(Strategy::PerClaim, &per_claim(), Order::Mtf, 0);
    assert_eq!(
        run_out(&mut per_claim, &truth()),
        [(0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3), (0, 4)]
    );
}

#[test]
fn mtf_uses_known_labels_for_free() {
    // (0,2) is known not to be evidence. 1 A: (0,1) proposed, yes. A's next, (0,2), is known:
    // used for free, A -1. 2 B (0): (1,1) yes. 3 B: (0,3) no, B -1. 4 C: (0,4) yes; C done.
    // 5 A (-1): (1,2) no. 6 B: (1,3).
    let mut mtf = selector(Strategy::Confidence, &global(), Order::Mtf, 0)
        .with_labels([(p(0, 2), false)])
        .unwrap();
    assert_eq!(
        run_out(&mut mtf, &truth()),
        [(0, 1), (1, 1), (0, 3), (0, 4), (1, 2), (1, 3)]
    );
    assert_eq!(mtf.used(), 7);
}

#[test]
fn maxmean_picks_the_highest_posterior_mean() {
    // Means (e+1)/(n+2), all 1/2 at first.
    // 1 A (tie): (0,1) yes -> A 2/3.     2 A: (0,2) no -> 2/4.
    // 3 A (tie 1/2, lowest): (1,1) yes -> 3/5.   4 A: (1,2) no -> 3/6; A done.
    // 5 B (tie with C): (0,3) no -> 1/3. 6 C (1/2): (0,4) yes; C done ((0,2) used).
    // 7 B: (0,1) used; (1,3).
    let mut global = selector(Strategy::Confidence, &global(), Order::MabMaxMean, 0);
    assert_eq!(
        run_out(&mut global, &truth()),
        [(0, 1), (0, 2), (1, 1), (1, 2), (0, 3), (0, 4), (1, 3)]
    );
    // Per claim: c0 A (0,1) yes | c1 A (1,1) yes | c0 A (0,2) no (A 1/2) | c1 A (1,2) no |
    // c0 B (tie with C; A done in c0): (0,3) no | c1 B: (1,3); claim 1 done | c0 C (0,4).
    let mut per_claim = selector(Strategy::PerClaim, &per_claim(), Order::MabMaxMean, 0);
    assert_eq!(
        run_out(&mut per_claim, &truth()),
        [(0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3), (0, 4)]
    );
}

#[test]
fn hedge_follows_the_weighted_rank_values() {
    // N = 4 (longest list), v(r) = ln(5/r)/ln 5: v1 = 1, v2 = 0.5693, v3 = 0.3174,
    // v4 = 0.1386. Rank-value vectors (A, B, C):
    // (0,1) (1, v3, 0)  (0,2) (v2, 0, v2)  (0,3) (0, v2, 0)  (0,4) (0, 0, 1)
    // (1,1) (v3, 1, 0)  (1,2) (v4, 0, 0)   (1,3) (0, v4, 0)
    // 1 equal weights: (0,1) and (1,1) tie at 1.3174; the lower pair, (0,1): yes. Losses
    //   A 0, B (1-v3)/2 = 0.3413, C 0.5; weights 1, 0.4557, 0.3162.
    // 2 (1,1) 0.3174 + 0.4557 = 0.7731 beats (0,2) 0.5693 + 0.1800 = 0.7494: yes. Losses
    //   A 0.3413, B 0.3413, C 1.0; weights 1, 1, 0.2194.
    // 3 (0,2) 0.5693 + 0.1250 = 0.6943 beats (0,3) 0.5693: no. Losses A 1.1260, B 0.8413,
    //   C 1.7847; weights 0.5192, 1, 0.1139.
    // 4 (0,3) 0.5693 beats (1,3) 0.1386, (0,4) 0.1139, (1,2) 0.0719: no. Weights ~1, ~1,
    //   0.2194.
    // 5 (0,4) 0.2194 beats (1,2), (1,3) at ~0.1386: yes. Then (1,2) and (1,3), A and B
    //   having (nearly) equal losses.
    let mut global = selector(Strategy::Confidence, &global(), Order::Hedge, 0);
    let order = run_out(&mut global, &truth());
    assert_eq!(order[..5], [(0, 1), (1, 1), (0, 2), (0, 3), (0, 4)]);
    let last: BTreeSet<(u32, u32)> = order[5..].iter().copied().collect();
    assert_eq!(last, [(1, 2), (1, 3)].into_iter().collect());

    // Per claim, claim 0 alone first: N = 2, v1 = 1, v2 = ln(3/2)/ln 3 = 0.3691.
    // (0,1) (1, v2, 0) 1.3691, (0,2) (v2, 0, v2) 0.7381, (0,3) (0, 1, 0), (0,4) (0, 0, 1).
    // c0: (0,1) yes (losses A 0, B 0.3155, C 0.5; weights 1, 0.4837, 0.3162).
    // c1 (N = 2): (1,1) (1, 1, 0) 2 beats (1,2) (v2, 0, 0) and (1,3) (0, v2, 0): yes.
    // c0: (0,2) 0.3691 + 0.1167 = 0.4858, (0,3) 0.4837, (0,4) 0.3162: (0,2) no (losses A
    //   0.6845, B 0.8155, C 1.1845; weights 1, 0.7397, 0.3162).
    // c1: losses A 0, B 0, C 0.5 after (1,1): (1,2) and (1,3) tie at v2: (1,2) no.
    // c0: (0,3) 0.7397 beats (0,4) 0.3162: no.   c1: (1,3).   c0: (0,4).
    let mut per_claim = selector(Strategy::PerClaim, &per_claim(), Order::Hedge, 0);
    assert_eq!(
        run_out(&mut per_claim, &truth()),
        [(0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3), (0, 4)]
    );
}

#[test]
fn thompson_is_deterministic_for_a_seed_and_seeds_differ() {
    let rankings = lists(&[
        &[(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6)],
        &[(0, 7), (0, 8), (0, 9), (0, 10), (0, 11), (0, 12)],
        &[(0, 13), (0, 14), (0, 15), (0, 16), (0, 17), (0, 18)],
    ]);
    let truth: BTreeSet<Pair<u32, u32>> =
        [p(0, 1), p(0, 2), p(0, 9), p(0, 13)].into_iter().collect();
    let sequence = |seed| {
        run_out(
            &mut selector(Strategy::Confidence, &rankings, Order::MabThompson, seed),
            &truth,
        )
    };
    for seed in 0..5 {
        assert_eq!(sequence(seed), sequence(seed));
    }
    let distinct: BTreeSet<Vec<(u32, u32)>> = (0..20).map(sequence).collect();
    assert!(distinct.len() > 1, "20 seeds gave one sequence");
    // The other orders ignore the seed.
    for order in [Order::Depth, Order::Mtf, Order::MabMaxMean, Order::Hedge] {
        let a = run_out(
            &mut selector(Strategy::Confidence, &rankings, order, 1),
            &truth,
        );
        let b = run_out(
            &mut selector(Strategy::Confidence, &rankings, order, 2),
            &truth,
        );
        assert_eq!(a, b, "{order}");
    }
}

#[test]
fn the_proposal_stays_until_judged_and_labels_are_write_once() {
    let mut mtf = selector(Strategy::Confidence, &global(), Order::Mtf, 0);
    assert_eq!(mtf.next_pair(), Some(p(0, 1)));
    assert_eq!(mtf.next_pair(), Some(p(0, 1)));
    // A label for another pair does not move the proposal.
    mtf.record(p(1, 2), false).unwrap();
    assert_eq!(mtf.next_pair(), Some(p(0, 1)));
    // A pair outside the rankings is ignored.
    mtf.record(p(9, 9), true).unwrap();
    // Until used, a label may change.
    mtf.record(p(0, 1), false).unwrap();
    mtf.record(p(0, 1), true).unwrap();
    assert_eq!(mtf.next_pair(), Some(p(0, 2)));
    mtf.record(p(0, 1), true).unwrap();
    assert_eq!(
        mtf.record(p(0, 1), false),
        Err(JudgingError::LabelChanged {
            claim: "0".into(),
            doc: "1".into(),
            was: "evidence"
        })
    );
}

#[test]
fn bad_rankings_are_refused() {
    let twice = lists(&[&[(0, 1)], &[(0, 2), (0, 1), (0, 2)]]);
    assert_eq!(
        Selector::new(Strategy::Confidence, twice, Order::Depth, 0).err(),
        Some(JudgingError::DuplicateRankedPair {
            system: 1,
            claim: "0".into(),
            doc: "2".into()
        })
    );
    // Fine globally, but per claim B splits claim 1.
    assert!(Selector::new(Strategy::Confidence, global(), Order::Mtf, 0).is_ok());
    assert_eq!(
        Selector::new(Strategy::PerClaim, global(), Order::Mtf, 0).err(),
        Some(JudgingError::ClaimsNotGrouped {
            system: 1,
            claim: "1".into()
        })
    );
    // No system, or empty rankings: nothing to propose.
    for rankings in [vec![], vec![vec![], vec![]]] {
        for order in Order::ALL {
            let mut empty: Selector<u32, u32> =
                Selector::new(Strategy::PerClaim, rankings.clone(), order, 0).unwrap();
            assert!(empty.is_empty());
            assert_eq!(empty.next_pair(), None);
        }
    }
}

#[test]
fn order_names_round_trip() {
    for order in Order::ALL {
        assert_eq!(Order::parse(order.as_str()), Ok(order));
        assert_eq!(order.to_string(), order.as_str());
        let json = serde_json::to_string(&order).unwrap();
        assert_eq!(json, format!("\"{}\"", order.as_str()));
        assert_eq!(serde_json::from_str::<Order>(&json).unwrap(), order);
    }
    assert_eq!(Order::parse("MAB"), Ok(Order::MabMaxMean));
    assert_eq!(Order::parse("mab_thompson"), Ok(Order::MabThompson));
    assert_eq!(
        serde_json::from_str::<Order>("\"mab\"").unwrap(),
        Order::MabMaxMean
    );
    assert_eq!(
        Order::parse("bandit"),
        Err(JudgingError::UnknownOrder("bandit".into()))
    );
}

#[test]
fn from_ranking_uses_pooled_systems_cut_at_the_rank() {
    let run = |name: &str, role, pairs: &[(u32, u32, f64)]| {
        let pairs = pairs
            .iter()
            .map(|&(c, d, s)| ScoredPair::new(c, d, Score::new(s).unwrap(), None))
            .collect();
        SystemRun::new(name, role, pairs).unwrap()
    };
    let ranking = Ranking::from_runs(
        Strategy::Confidence,
        [
            run("a", Role::Pooled, &[(0, 1, 0.9), (0, 2, 0.8), (0, 3, 0.1)]),
            run("eval", Role::EvaluationOnly, &[(5, 5, 1.0)]),
            run("b", Role::Pooled, &[(1, 1, 0.7), (0, 2, 0.95)]),
        ],
    )
    .unwrap();
    let mut depth = Selector::from_ranking(&ranking, 2, Order::Depth, 0).unwrap();
    // a: (0,1) (0,2) | b: (0,2) (1,1); (0,3) is beyond rank 2, (5,5) not pooled.
    assert_eq!(depth.len(), 3);
    let truth = BTreeSet::from([p(0, 2)]);
    let curve = replay(&mut depth, &truth, 10);
    // Entry depths: (0,1) 1, (0,2) 1, (1,1) 2.
    assert_eq!(curve.points().len(), 3);
    assert_eq!(curve.evidence(), 1);
    assert_eq!(curve.judgments_to_reach(1), Some(2));
}
