//! Randomized small projects (ties, missing retrieval ranks, label-less runs, both strategies,
//! either second-pass mode): every number against the naive computation; the sampled
//! orderings against the same orderings replayed, and against the exact average.

use super::check::{check_all, check_count_curve, close};
use super::generated::{generate, GenShape};
use super::naive::Naive;
use super::options;
use crate::pool::Strategy;
use crate::report::{Report, SecondPassMode};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn small_shape(seed: u64) -> GenShape {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let candidates = rng.gen_range(3..10);
    GenShape {
        claims: rng.gen_range(1..8),
        candidates_per_claim: candidates,
        evidence_share: rng.gen_range(0.1..0.6),
        predictions_per_claim: rng.gen_range(1..=candidates),
        pooled: rng.gen_range(0..5),
        evaluation_only: rng.gen_range(0..3),
        label_less: rng.gen_bool(0.5),
        strategy: if rng.gen_bool(0.5) {
            Strategy::Confidence
        } else {
            Strategy::PerClaim
        },
        depth: rng.gen_range(0..14),
        // Few score levels: many ties, in pooling and in the precision/recall curve.
        score_steps: rng.gen_range(2..12),
        annotated_share: rng.gen_range(0.3..1.0),
        imports: rng.gen_range(0..4),
        second_pass_mode: if rng.gen_bool(0.5) {
            SecondPassMode::Confirm
        } else {
            SecondPassMode::Blind
        },
        seed,
    }
}

#[test]
fn random_projects_match_the_naive_computation() {
    // How often the cases exercise what could go wrong: evidence discovered, conflicting
    // evidence, pairs awaiting adjudication, label-less runs, exact agreement kappa.
    let mut seen = [0_u64; 5];
    for seed in 0..80 {
        let shape = small_shape(seed);
        let snap = generate(&shape).unwrap();
        let options = options(1 + (seed % 4) as u32, 20, seed);
        let report = Report::compute(&snap, &options).unwrap();
        check_all(&snap, &options, &report);
        seen[0] += report.evidence.discovered;
        seen[1] += report.evidence.conflicting_claims.len() as u64;
        seen[2] += report.agreement.awaiting_adjudication.count as u64;
        seen[3] += report
            .systems
            .by_system
            .iter()
            .filter(|(_, s)| s.confusion.is_none())
            .count() as u64;
        seen[4] += u64::from(
            report
                .agreement
                .first_vs_second
                .is_some_and(|a| a.agreement.kappa.is_some()),
        );
    }
    assert!(seen.iter().all(|&count| count >= 5), "{seen:?}");
}

#[test]
fn sampled_orderings_are_the_seeded_shuffles() {
    for seed in 100..106 {
        let shape = GenShape {
            pooled: 4,
            depth: 6,
            ..small_shape(seed)
        };
        let snap = generate(&shape).unwrap();
        let mut options = options(2, 10, seed);
        options.ordering_samples = std::num::NonZeroU32::new(30).unwrap();
        // Forced to sample, though 4 systems could be enumerated.
        let report = Report::compute_with(&snap, &options, 2).unwrap();
        // The documented procedure: per sample, shuffle the identity ordering with ChaCha8
        // seeded by the report's seed.
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = Naive::new(&snap);
        let pooled = n.pooled();
        let orderings: Vec<Vec<usize>> = (0..30)
            .map(|_| {
                let mut order: Vec<usize> = (0..pooled.len()).collect();
                order.shuffle(&mut rng);
                order.into_iter().map(|m| pooled[m]).collect()
            })
            .collect();
        check_count_curve(&n, &report, Some(orderings));
    }
}

#[test]
fn sampled_average_approaches_the_exact_one() {
    let shape = GenShape {
        claims: 8,
        candidates_per_claim: 9,
        predictions_per_claim: 6,
        pooled: 5,
        depth: 5,
        ..small_shape(7)
    };
    let snap = generate(&shape).unwrap();
    let mut options = options(5, 10, 11);
    options.ordering_samples = std::num::NonZeroU32::new(4_000).unwrap();
    let exact = Report::compute(&snap, &options).unwrap();
    let sampled = Report::compute_with(&snap, &options, 0).unwrap();
    let mut compared = 0;
    for (e, s) in exact
        .system_count_curve
        .0
        .iter()
        .zip(&sampled.system_count_curve.0)
    {
        assert!(e.exact && !s.exact);
        assert_eq!((e.orderings, s.orderings), (120, 4_000));
        // Standard error of a mean of 4,000 draws is sd / 63; allow 5 standard errors.
        let tolerance = |sd: f64| 5.0 * sd / 63.0 + 1e-12;
        assert!((e.evidence_mean - s.evidence_mean).abs() <= tolerance(e.evidence_sd));
        for ((_, ef), (_, sf)) in e.f1.iter().zip(s.f1.iter()) {
            assert!(
                (ef.mean - sf.mean).abs() <= tolerance(ef.sd),
                "{ef:?} {sf:?}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 5);
    // The last count is the whole pool in every ordering.
    let last = sampled.system_count_curve.0.last().unwrap();
    close(last.evidence_sd, 0.0, "sd of the full pool");
}

#[test]
fn more_than_eight_pooled_systems_are_sampled() {
    let shape = GenShape {
        claims: 3,
        candidates_per_claim: 5,
        predictions_per_claim: 3,
        pooled: 9,
        evaluation_only: 1,
        depth: 2,
        ..small_shape(3)
    };
    let snap = generate(&shape).unwrap();
    let mut options = options(1, 10, 5);
    options.ordering_samples = std::num::NonZeroU32::new(40).unwrap();
    let report = Report::compute(&snap, &options).unwrap();
    assert_eq!(report.system_count_curve.0.len(), 9);
    assert!(report
        .system_count_curve
        .0
        .iter()
        .all(|p| !p.exact && p.orderings == 40));
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let n = Naive::new(&snap);
    let pooled = n.pooled();
    let orderings: Vec<Vec<usize>> = (0..40)
        .map(|_| {
            let mut order: Vec<usize> = (0..pooled.len()).collect();
            order.shuffle(&mut rng);
            order.into_iter().map(|m| pooled[m]).collect()
        })
        .collect();
    check_count_curve(&n, &report, Some(orderings));
}

#[test]
fn scifact_open_sized_report_matches_the_naive_computation_at_its_depths() {
    // The benchmark's data, smaller: 40 claims, 5 pooled systems, depth 60 in steps of 20.
    let shape = GenShape {
        claims: 40,
        depth: 60,
        ..GenShape::SCIFACT_OPEN
    };
    let snap = generate(&shape).unwrap();
    let options = options(20, 30, 1);
    let report = Report::compute(&snap, &options).unwrap();
    assert!(report.evidence.discovered > 0);
    check_all(&snap, &options, &report);
}
