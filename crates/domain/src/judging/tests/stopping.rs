//! The stopping test: its hypergeometric tail against exact counts, its null at hand-worked
//! values, and its coverage over 1,000 simulated pools with known truth.

use super::super::{hypergeometric_cdf, JudgingError, RecallTarget, StoppingSample};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// C(n, k) exactly.
fn choose(n: u64, k: u64) -> u128 {
    if k > n {
        return 0;
    }
    (0..k).fold(1_u128, |acc, i| acc * u128::from(n - i) / u128::from(i + 1))
}

#[test]
fn hypergeometric_cdf_matches_exact_counts() {
    for population in 0..=40_u64 {
        for successes in (0..=population).step_by(3) {
            for draws in (0..=population).step_by(4) {
                let all = choose(population, draws) as f64;
                let mut cumulative = 0.0;
                for k in 0..=draws {
                    cumulative += (choose(successes, k) * choose(population - successes, draws - k))
                        as f64
                        / all;
                    let fast = hypergeometric_cdf(k, population, successes, draws);
                    assert!(
                        (fast - cumulative.min(1.0)).abs() < 1e-12,
                        "N {population} K {successes} n {draws} k {k}: {fast} vs {cumulative}"
                    );
                }
            }
        }
    }
    // Large arguments: the lower tail of X ~ HG(10^6, 5·10^5, 10^5) at its mean is ~1/2.
    let half = hypergeometric_cdf(50_000, 1_000_000, 500_000, 100_000);
    assert!((half - 0.5).abs() < 0.01, "{half}");
    // One draw from 10^6 with 10 successes: P(X = 0) = 1 − 10^-5 (log-factorials of 10^6
    // lose about 1e-9 to cancellation).
    let p0 = hypergeometric_cdf(0, 1_000_000, 10, 1);
    assert!((p0 - (1.0 - 1e-5)).abs() < 1e-8, "{p0}");
}

#[test]
fn the_null_is_the_least_evidence_left_for_recall_below_target() {
    let target = RecallTarget::new(0.9, 0.05).unwrap();
    let test = |found, unjudged, drawn, drawn_evidence| {
        target
            .test(StoppingSample {
                found,
                unjudged,
                drawn,
                drawn_evidence,
            })
            .unwrap()
    };
    // K = 9, k = 0: recall below 0.9 needs R > 10, so R ≥ 11 and 2 left unjudged.
    assert_eq!(test(9, 100, 0, 0).null_remaining, 2);
    // K = 90, k = 0: R ≥ 101, 11 left. K = 90, k = 3: 93 found, R ≥ 104, 14 left in the N.
    assert_eq!(test(90, 1000, 10, 0).null_remaining, 11);
    assert_eq!(test(90, 1000, 10, 3).null_remaining, 14);
    // K = 0: at least one left.
    assert_eq!(test(0, 50, 0, 0).null_remaining, 1);
    // With 2 left among 100, no evidence in n draws has probability C(98, n)/C(100, n):
    // 50 draws give 0.2475, 78 give 0.0477 < 0.05.
    let p50 = test(9, 100, 50, 0);
    assert!((p50.p_value - 49.0 * 50.0 / (100.0 * 99.0)).abs() < 1e-12);
    assert!(!p50.stop);
    assert!(test(9, 100, 78, 0).stop);
    assert!(!test(9, 100, 77, 0).stop);
    assert_eq!(target.draws_to_stop(9, 100), 78);
    // More than the null's evidence cannot hide in too few pairs: stop at once.
    assert_eq!(test(90, 5, 0, 0).p_value, 0.0);
    assert_eq!(target.draws_to_stop(90, 5), 0);
    // Errors.
    assert_eq!(
        RecallTarget::new(0.0, 0.05),
        Err(JudgingError::TargetRecall(0.0))
    );
    assert_eq!(
        RecallTarget::new(1.2, 0.05),
        Err(JudgingError::TargetRecall(1.2))
    );
    assert_eq!(RecallTarget::new(0.9, 1.0), Err(JudgingError::Alpha(1.0)));
    assert!(RecallTarget::new(1.0, 0.05).is_ok());
    assert_eq!(
        target.test(StoppingSample {
            found: 1,
            unjudged: 5,
            drawn: 6,
            drawn_evidence: 0
        }),
        Err(JudgingError::SampleExceedsUnjudged {
            sampled: 6,
            unjudged: 5
        })
    );
    assert_eq!(
        target.test(StoppingSample {
            found: 1,
            unjudged: 5,
            drawn: 2,
            drawn_evidence: 3
        }),
        Err(JudgingError::EvidenceExceedsSample {
            evidence: 3,
            sampled: 2
        })
    );
}

#[test]
fn draws_to_stop_is_the_first_sample_size_that_stops() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for _ in 0..200 {
        let target = RecallTarget::new(rng.gen_range(0.5..1.0), rng.gen_range(0.01..0.2)).unwrap();
        let found = rng.gen_range(0..50);
        let unjudged = rng.gen_range(0..400);
        let n = target.draws_to_stop(found, unjudged);
        let stops = |drawn| {
            target
                .test(StoppingSample {
                    found,
                    unjudged,
                    drawn,
                    drawn_evidence: 0,
                })
                .unwrap()
                .stop
        };
        assert!(stops(n), "{target:?} K {found} N {unjudged}: {n}");
        if n > 0 {
            assert!(!stops(n - 1), "{target:?} K {found} N {unjudged}: {n}");
        }
    }
}

/// 2,000 seeded pools with known truth: 500–2,000 pairs, 5–60 evidence, ranked by a noisy
/// score that puts evidence near the top; prioritised judging takes the top 2–50% of the
/// ranking, then a random sample of the rest grows in increments of 1–20 draws, the test
/// (τ = 0.9, α = 0.05) run after each, until it stops or all is judged. Whenever it stopped,
/// recall must have reached τ at least 95% of the time.
#[test]
fn stopping_reaches_the_target_recall_with_the_confidence_asked() {
    let target = RecallTarget::new(0.9, 0.05).unwrap();
    let pools = 2_000;
    let (mut stopped_early, mut met, mut met_early, mut below_at_start) = (0, 0, 0, 0);
    let mut drawn_total = 0_u64;
    for seed in 0..pools {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let size: usize = rng.gen_range(500..=2_000);
        let evidence: usize = rng.gen_range(5..=60);
        let bias: f64 = rng.gen_range(0.2..1.5);
        let mut ranked: Vec<(f64, bool)> = (0..size)
            .map(|i| {
                let y = i < evidence;
                (rng.gen::<f64>() + if y { bias } else { 0.0 }, y)
            })
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let prioritised = rng.gen_range(size / 50..=size / 2);
        let found = ranked[..prioritised].iter().filter(|(_, y)| *y).count() as u64;
        below_at_start += usize::from((found as f64) < 0.9 * evidence as f64);
        let mut rest: Vec<bool> = ranked[prioritised..].iter().map(|(_, y)| *y).collect();
        rest.shuffle(&mut rng);
        let unjudged = rest.len() as u64;
        let step = rng.gen_range(1..=20);
        let mut drawn = 0;
        let recall = loop {
            drawn = (drawn + step).min(rest.len());
            let drawn_evidence = rest[..drawn].iter().filter(|&&y| y).count() as u64;
            let decision = target
                .test(StoppingSample {
                    found,
                    unjudged,
                    drawn: drawn as u64,
                    drawn_evidence,
                })
                .unwrap();
            if decision.stop || drawn == rest.len() {
                stopped_early += usize::from(decision.stop && drawn < rest.len());
                break (found + drawn_evidence) as f64 / evidence as f64;
            }
        };
        drawn_total += drawn as u64;
        met += usize::from(recall >= 0.9);
        met_early += usize::from(recall >= 0.9 && drawn < rest.len());
    }
    let rate = met as f64 / pools as f64;
    eprintln!(
        "stopping (tau 0.9, alpha 0.05) over {pools} pools: recall >= tau at the stop in {rate:.4} \
         ({met}/{pools}); {stopped_early} stopped before judging everything, of which {:.4} met \
         the target; recall < tau when sampling began in {below_at_start}; mean draws {:.1}",
        met_early as f64 / stopped_early.max(1) as f64,
        drawn_total as f64 / pools as f64
    );
    assert!(rate >= 0.95, "{rate}");
    assert!(met_early as f64 / stopped_early as f64 >= 0.95);
    // The test was exercised: most pools stopped early, and many began below the target.
    assert!(stopped_early > pools as usize / 2, "{stopped_early}");
    assert!(below_at_start > pools as usize / 4, "{below_at_start}");
}
