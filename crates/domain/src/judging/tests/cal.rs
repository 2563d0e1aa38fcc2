//! The `cal` order's candidates and replay: features worked by hand, and a generated collection
//! where evidence hides beyond the runs, against naive recounts.

use super::{lists, p};
use crate::judging::{
    evidence_at, replay, replay_cal, replay_cal_stopping, replay_cal_with_search, CalCandidates,
    Order, RecallTarget, Retrieved, Selector,
};
use crate::pool::{Pair, Strategy};
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

fn hit(claim: u32, doc: u32, rank: u32, share: f64) -> Retrieved<u32, u32> {
    Retrieved {
        pair: p(claim, doc),
        rank,
        share,
    }
}

#[test]
fn features_worked_by_hand() {
    // Two systems over claims 1 and 2; the retrieval adds (2, 9), which no system ranked.
    let rankings = lists(&[&[(1, 1), (2, 5), (1, 2)], &[(1, 2)]]);
    let retrieved = [hit(1, 2, 1, 0.5), hit(2, 9, 2, 0.25), hit(2, 5, 1, 2.0)];
    let cands = CalCandidates::new(&rankings, &retrieved).unwrap();
    assert_eq!(cands.pairs(), &[p(1, 1), p(1, 2), p(2, 5), p(2, 9)]);
    assert_eq!(cands.outside_runs(), 1);
    assert!(!cands.in_runs(3) && cands.in_runs(0));
    let f = cands.features();
    assert_eq!(f.columns(), 2 * 2 + 3);
    // (1, 1): system 0's first of claim 1, first of 3 overall; system 1 absent; not retrieved.
    assert_eq!(f.row(0), &[1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.5]);
    // (1, 2): system 0's second of claim 1 and third overall; system 1's first; BM25 first.
    assert_eq!(f.row(1), &[0.5, 1.0 - 2.0 / 3.0, 1.0, 1.0, 1.0, 0.5, 1.0]);
    // (2, 5): a share above 1 is clamped.
    assert_eq!(f.row(2), &[1.0, 1.0 - 1.0 / 3.0, 0.0, 0.0, 1.0, 1.0, 0.5]);
    // (2, 9): the retrieval only.
    assert_eq!(f.row(3), &[0.0, 0.0, 0.0, 0.0, 0.5, 0.25, 0.0]);
    assert!(CalCandidates::new(&lists(&[&[(1, 1), (1, 1)]]), &[]).is_err());
}

/// A generated collection: the pooled runs, the corpus retrievals, the truth.
pub(super) type Collection = (
    Vec<Vec<Pair<u32, u32>>>,
    Vec<Retrieved<u32, u32>>,
    HashSet<Pair<u32, u32>>,
);

/// Claims each with a few evidence docs; a run that ranks evidence well but misses some of it
/// entirely, and a corpus retrieval that ranks every evidence doc somewhere in its top 30.
pub(super) fn collection(seed: u64) -> Collection {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut run, mut retrieved, mut truth) = (Vec::new(), Vec::new(), HashSet::new());
    for claim in 0..60u32 {
        let evidence: Vec<u32> = (0..rng.gen_range(1..4))
            .map(|k| claim * 1_000 + k)
            .collect();
        truth.extend(evidence.iter().map(|&d| p(claim, d)));
        // The run: 20 docs, the evidence it knows near the top; it misses the last evidence doc
        // of claims with more than one.
        let known = if evidence.len() > 1 {
            &evidence[..evidence.len() - 1]
        } else {
            &evidence[..]
        };
        let mut docs: Vec<u32> = (100..118).map(|k| claim * 1_000 + k).collect();
        for &d in known {
            docs.insert(rng.gen_range(0..3).min(docs.len()), d);
        }
        run.extend(docs.iter().map(|&d| p(claim, d)));
        // The retrieval: 30 docs with every evidence doc in the top 10.
        let mut found: Vec<u32> = (200..230 - evidence.len() as u32)
            .map(|k| claim * 1_000 + k)
            .collect();
        for &d in &evidence {
            found.insert(rng.gen_range(0..10), d);
        }
        for (i, &d) in found.iter().enumerate() {
            let rank = i as u32 + 1;
            retrieved.push(hit(claim, d, rank, 1.0 / f64::from(rank)));
        }
    }
    (vec![run], retrieved, truth)
}

#[test]
fn cal_finds_evidence_no_run_ranked_and_its_counts_are_recounted() {
    let (rankings, retrieved, truth) = collection(7);
    let cands = CalCandidates::new(&rankings, &retrieved).unwrap();
    let out = replay_cal(&cands, &truth, 600, 3);
    assert_eq!(out.curve.judgments(), 600);
    // Each candidate at most once; the curve and the outside count recounted from the judged.
    let distinct: HashSet<usize> = out.judged.iter().copied().collect();
    assert_eq!(distinct.len(), out.judged.len());
    let found: Vec<&Pair<u32, u32>> = out
        .judged
        .iter()
        .map(|&i| &cands.pairs()[i])
        .filter(|pair| truth.contains(*pair))
        .collect();
    assert_eq!(out.curve.evidence(), found.len());
    let ranked: HashSet<Pair<u32, u32>> = rankings.iter().flatten().copied().collect();
    let outside = found.iter().filter(|pair| !ranked.contains(**pair)).count();
    assert_eq!(out.outside_runs, outside);
    assert!(outside > 0, "no evidence found beyond the run");
    // The run's own orders cannot reach that evidence: at any budget, depth finds at most
    // what the run ranks.
    let mut depth = Selector::new(Strategy::PerClaim, rankings.clone(), Order::Depth, 0).unwrap();
    let depth_curve = replay(&mut depth, &truth, 600);
    let reachable = truth.iter().filter(|pair| ranked.contains(pair)).count();
    assert!(depth_curve.evidence() <= reachable);
    assert!(
        evidence_at(&out.curve, 600) > reachable,
        "cal {} vs the run's {reachable}",
        out.curve.evidence()
    );
    // Deterministic for a seed.
    assert_eq!(replay_cal(&cands, &truth, 600, 3), out);
}

#[test]
fn a_searcher_beside_cal_shares_the_budget_and_the_labels() {
    let (rankings, retrieved, truth) = collection(11);
    let cands = CalCandidates::new(&rankings, &retrieved).unwrap();
    // The searcher judges each claim's top 3 retrievals, claim by claim, plus a pair that is no
    // candidate (passed over).
    let mut searched: Vec<Pair<u32, u32>> = retrieved
        .iter()
        .filter(|hit| hit.rank <= 3)
        .map(|hit| hit.pair)
        .collect();
    searched.insert(5, p(9_999, 1));
    let out = replay_cal_with_search(&cands, &truth, 400, 2, &searched);
    assert_eq!(out.curve.judgments(), 400);
    let distinct: HashSet<usize> = out.judged.iter().copied().collect();
    assert_eq!(distinct.len(), 400);
    // Turns alternate while both have pairs: the searcher's 180 pairs are all judged within
    // 2 × 180 judgments, each at most once, in the searcher's order.
    let searched_rows: Vec<usize> = searched
        .iter()
        .filter_map(|pair| cands.pairs().binary_search(pair).ok())
        .collect();
    assert_eq!(searched_rows.len(), 180);
    let positions: Vec<usize> = searched_rows
        .iter()
        .filter_map(|row| out.judged.iter().position(|r| r == row))
        .collect();
    assert_eq!(positions.len(), 180);
    assert!(positions.iter().all(|&at| at < 360));
    // Recounted evidence, and the same replay again for the same seed.
    let found = out
        .judged
        .iter()
        .filter(|&&i| truth.contains(&cands.pairs()[i]))
        .count();
    assert_eq!(out.curve.evidence(), found);
    assert_eq!(
        replay_cal_with_search(&cands, &truth, 400, 2, &searched),
        out
    );
    // Without a searcher, it is replay_cal.
    assert_eq!(
        replay_cal_with_search(&cands, &truth, 300, 2, &[]),
        replay_cal(&cands, &truth, 300, 2)
    );
}

/// 1,000 seeded `cal` runs with the stopping rule (τ = 0.9, α = 0.05), each on its own generated
/// collection, switching to the random sample after 5 to 120 judgments in a row without
/// evidence (drawn per run: often before the order has reached the target, so the sample must
/// do the work). Whenever the test stopped judging, the candidates' evidence found must have
/// reached τ at least 95% of the time; each count is recounted from the replay's definition.
#[test]
fn cal_with_the_stopping_rule_reaches_the_target_recall_with_the_confidence_asked() {
    let target = RecallTarget::new(0.9, 0.05).unwrap();
    let runs = 1_000;
    let (mut stopped, mut met, mut below_at_switch) = (0, 0, 0);
    let (mut past_target, mut reached) = (0, 0);
    for seed in 0..runs {
        let (rankings, retrieved, truth) = collection(1_000 + seed);
        let cands = CalCandidates::new(&rankings, &retrieved).unwrap();
        let switch_after = ChaCha8Rng::seed_from_u64(seed).gen_range(5..=120);
        let stop = replay_cal_stopping(&cands, &truth, target, switch_after, seed, &[]).unwrap();
        // Recounts: the candidates' evidence, and the judgments' parts.
        let holds = cands
            .pairs()
            .iter()
            .filter(|pair| truth.contains(*pair))
            .count();
        assert_eq!(stop.candidates_evidence, holds);
        assert_eq!(stop.judgments, stop.prioritised + stop.sampled);
        assert!(stop.judgments <= cands.len() && stop.evidence <= holds);
        // The order's phase is what replay_cal judges with that budget.
        let order = replay_cal(&cands, &truth, stop.prioritised, seed);
        assert_eq!(order.curve.judgments(), stop.prioritised);
        below_at_switch += usize::from((order.curve.evidence() as f64) < 0.9 * holds as f64);
        if stop.stopped_by_test {
            stopped += 1;
            met += usize::from(stop.recall() >= 0.9);
            assert!(stop.p_value < stop.level && stop.level <= 0.025);
        } else {
            assert_eq!(
                stop.judgments,
                cands.len(),
                "only judging everything ends untested"
            );
        }
        if let Some(past) = stop.past_target() {
            reached += 1;
            past_target += past;
        }
        assert_eq!(
            replay_cal_stopping(&cands, &truth, target, switch_after, seed, &[]).unwrap(),
            stop,
            "deterministic for a seed"
        );
    }
    let rate = met as f64 / stopped as f64;
    eprintln!(
        "cal + stopping (tau 0.9, alpha 0.05) over {runs} runs: {stopped} stopped by the test, \
         recall >= tau in {rate:.4} of them; {below_at_switch} switched to the sample below tau; \
         mean judgments past the target {:.1} (over {reached} runs that reached it)",
        past_target as f64 / reached.max(1) as f64
    );
    assert!(rate >= 0.95, "{rate}");
    // The rule was exercised: the test stopped most runs, and many switched below the target.
    assert!(stopped > runs as usize / 2, "{stopped}");
    assert!(below_at_switch > runs as usize / 10, "{below_at_switch}");
}
