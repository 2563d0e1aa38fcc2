//! Leaving one pooled system out: the others' pool against a pool built of the others alone,
//! and `cal`'s judgments against a replay over candidates built by hand.

use super::p;
use crate::judging::{cal_pool, leave_one_out, pool_of, replay_cal, CalCandidates, Retrieved};
use crate::pool::{Pair, Ranking, Role, Score, ScoredPair, Strategy, SystemRun};
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

/// Three pooled systems over 30 claims, each scoring 40 random docs per claim, and one
/// evaluation-only system that must be ignored.
fn runs(seed: u64) -> Vec<SystemRun<u32, u32>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut runs = Vec::new();
    for (name, role) in [
        ("a", Role::Pooled),
        ("b", Role::Pooled),
        ("eval", Role::EvaluationOnly),
        ("c", Role::Pooled),
    ] {
        let mut pairs = Vec::new();
        for claim in 0..30u32 {
            let mut docs = HashSet::new();
            while docs.len() < 40 {
                docs.insert(rng.gen_range(0..200u32));
            }
            for doc in docs {
                let score = Score::new(rng.gen_range(0.0..1.0)).unwrap();
                pairs.push(ScoredPair::new(claim, doc, score, None));
            }
        }
        runs.push(SystemRun::new(name, role, pairs).unwrap());
    }
    runs
}

#[test]
fn the_others_pool_is_the_pool_of_the_others_alone() {
    for strategy in [Strategy::PerClaim, Strategy::Confidence] {
        let all = runs(1);
        let ranking = Ranking::from_runs(strategy, all.clone()).unwrap();
        let depth = if strategy == Strategy::PerClaim {
            5
        } else {
            150
        };
        let mut whole: Vec<Pair<u32, u32>> =
            ranking.pool(depth).pairs().iter().map(|p| p.pair).collect();
        whole.sort_unstable();
        assert_eq!(pool_of(&ranking, 0..3, depth), whole);

        let truth: HashSet<Pair<u32, u32>> = (0..30).map(|c| p(c, c)).collect();
        let retrieved: Vec<Retrieved<u32, u32>> = (0..30)
            .map(|c| Retrieved {
                pair: p(c, c),
                rank: 1,
                share: 0.9,
            })
            .collect();
        let left = leave_one_out(&ranking, depth, &retrieved, &truth, 7).unwrap();
        // cal over every pooled system: the replay over all their candidates.
        let every: Vec<Vec<Pair<u32, u32>>> = ranking
            .pooled()
            .map(|(_, run)| run.top(u32::MAX).map(|(_, s)| s.pair).collect())
            .collect();
        let candidates = CalCandidates::new(&every, &retrieved).unwrap();
        let replay = replay_cal(&candidates, &truth, whole.len(), 7);
        let (judged, outside) =
            cal_pool(&ranking, 0..3, &retrieved, &truth, whole.len(), 7).unwrap();
        let expected: Vec<Pair<u32, u32>> = replay
            .judged
            .iter()
            .map(|&row| candidates.pairs()[row])
            .collect();
        assert_eq!(judged, expected);
        assert_eq!(outside, replay.outside_runs);
        let names: Vec<&str> = left.iter().map(|l| l.system.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        for out in &left {
            // Independently: a ranking of the other pooled runs only, pooled to the depth.
            let others: Vec<SystemRun<u32, u32>> = all
                .iter()
                .filter(|r| r.role() == Role::Pooled && r.name() != out.system)
                .cloned()
                .collect();
            let alone = Ranking::from_runs(strategy, others.clone()).unwrap();
            let mut expected: Vec<Pair<u32, u32>> =
                alone.pool(depth).pairs().iter().map(|p| p.pair).collect();
            expected.sort_unstable();
            assert_eq!(out.depth_pool, expected, "{} ({strategy:?})", out.system);

            // cal: the same number of judgments over the others' candidates.
            let rankings: Vec<Vec<Pair<u32, u32>>> = alone
                .pooled()
                .map(|(_, run)| run.top(u32::MAX).map(|(_, s)| s.pair).collect())
                .collect();
            let candidates = CalCandidates::new(&rankings, &retrieved).unwrap();
            let replay = replay_cal(&candidates, &truth, expected.len(), 7);
            let judged: Vec<Pair<u32, u32>> = replay
                .judged
                .iter()
                .map(|&row| candidates.pairs()[row])
                .collect();
            assert_eq!(out.cal, judged);
            assert_eq!(out.cal.len(), expected.len());
            assert_eq!(out.cal_outside_runs, replay.outside_runs);
            // The retrieval's evidence is none of the runs' (docs (c, c) may be, by chance):
            // whatever cal found outside the runs is evidence no other system ranked.
            let ranked: HashSet<Pair<u32, u32>> = rankings.iter().flatten().copied().collect();
            let outside = out
                .cal
                .iter()
                .filter(|pair| truth.contains(*pair) && !ranked.contains(*pair))
                .count();
            assert_eq!(out.cal_outside_runs, outside);
        }
    }
}
