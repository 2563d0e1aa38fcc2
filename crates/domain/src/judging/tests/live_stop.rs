//! The live stopping sample: drawn from the unjudged candidates as a simple random sample of
//! the size the test needs, served before the order's proposals, and tested against an
//! independent computation of the hypergeometric tail.

use super::cal::collection;
use crate::judging::{CalCandidates, LiveCal, RecallTarget, StopSample, StopStatus};
use crate::pool::Pair;
use std::collections::HashSet;
use std::sync::Arc;

type P = Pair<u32, u32>;

/// `ln C(n, k)` as a sum of logarithms of exact ratios.
fn ln_choose(n: u64, k: u64) -> f64 {
    (0..k).map(|i| ((n - i) as f64 / (k - i) as f64).ln()).sum()
}

/// `P(X ≤ k)`, `X ~ Hypergeometric(n_pop, succ, draws)`, term by term from sums of logarithms
/// (not the code's Stirling series): the test's independent reference.
fn tail(k: u64, n_pop: u64, succ: u64, draws: u64) -> f64 {
    let pmf = |x: u64| -> f64 {
        if x > succ || draws - x > n_pop - succ {
            return 0.0;
        }
        (ln_choose(succ, x) + ln_choose(n_pop - succ, draws - x) - ln_choose(n_pop, draws)).exp()
    };
    (0..=k.min(draws)).map(pmf).sum()
}

/// The fewest draws whose all-negative outcome has `P < alpha` when `k_tar` evidence pairs
/// remain among `n_pop`, by brute force.
fn needed(n_pop: u64, k_tar: u64, alpha: f64) -> u64 {
    (1..=n_pop)
        .find(|&n| tail(0, n_pop, k_tar, n) < alpha)
        .unwrap_or(n_pop)
}

fn live(seed: u64) -> (LiveCal<u32, u32>, HashSet<P>) {
    let (rankings, retrieved, truth) = collection(seed);
    let cands = Arc::new(CalCandidates::new(&rankings, &retrieved).unwrap());
    (LiveCal::new(cands, 4), truth)
}

/// Serves and judges `n` of the order's pairs against `truth`.
fn judge(live: &mut LiveCal<u32, u32>, truth: &HashSet<P>, n: usize) -> Vec<P> {
    let mut served = Vec::new();
    for _ in 0..n {
        let pick = live.next_untaken(|_| false).unwrap();
        live.apply([(pick.pair, Some(truth.contains(&pick.pair)))]);
        served.push(pick.pair);
    }
    served
}

#[test]
fn the_sample_is_the_size_the_test_needs_drawn_from_the_unjudged() {
    let (mut live, truth) = live(21);
    let judged = judge(&mut live, &truth, 150);
    let target = RecallTarget::new(0.9, 0.05).unwrap();
    let (found, unjudged) = live.unjudged();
    assert_eq!(
        found,
        judged.iter().filter(|p| truth.contains(p)).count() as u64
    );
    assert_eq!(unjudged.len(), live.candidates().len() - 150);
    let sample = StopSample::draw(target, found, unjudged.clone(), None, 9)
        .unwrap()
        .unwrap();
    // K_tar = the least R with 0.9·R > found, less found.
    let r_tar = (0..).find(|&r| 0.9 * r as f64 > found as f64).unwrap();
    let n = needed(unjudged.len() as u64, r_tar - found, 0.05);
    assert_eq!(sample.pairs.len() as u64, n);
    assert_eq!(sample.unjudged, unjudged.len() as u64);
    let drawn: HashSet<P> = sample.pairs.iter().copied().collect();
    assert_eq!(drawn.len(), sample.pairs.len(), "without replacement");
    assert!(drawn.iter().all(|p| !judged.contains(p)));
    // The same seed draws the same pairs whatever the order given; another seed, others.
    let mut reversed = unjudged.clone();
    reversed.reverse();
    let again = StopSample::draw(target, found, reversed, None, 9)
        .unwrap()
        .unwrap();
    assert_eq!(again.pairs, sample.pairs);
    let other = StopSample::draw(target, found, unjudged.clone(), None, 10)
        .unwrap()
        .unwrap();
    assert_ne!(other.pairs, sample.pairs);
    // A size of the lead's own; none, or more than there are, refused.
    let five = StopSample::draw(target, found, unjudged.clone(), Some(5), 9)
        .unwrap()
        .unwrap();
    assert_eq!(five.pairs, sample.pairs[..5]);
    assert!(StopSample::draw(target, found, unjudged.clone(), Some(0), 9).is_err());
    let too_many = Some(unjudged.len() as u64 + 1);
    assert!(StopSample::draw(target, found, unjudged, too_many, 9).is_err());
}

#[test]
fn no_sample_is_needed_when_the_unjudged_cannot_hold_enough() {
    let target = RecallTarget::new(0.5, 0.05).unwrap();
    // 10 found, 3 unjudged: recall is at least 10/13 > 0.5 whatever they hold.
    let unjudged = vec![Pair::new(1u32, 1u32), Pair::new(1, 2), Pair::new(2, 1)];
    assert_eq!(
        StopSample::draw(target, 10, unjudged, None, 0).unwrap(),
        None
    );
}

#[test]
fn the_sample_is_served_first_then_tested_as_an_independent_tail_says() {
    let (mut live, truth) = live(22);
    judge(&mut live, &truth, 200);
    let target = RecallTarget::new(0.8, 0.1).unwrap();
    let (found, unjudged) = live.unjudged();
    let sample = StopSample::draw(target, found, unjudged, None, 3)
        .unwrap()
        .unwrap();
    live.set_sample(&sample.pairs);
    let status = |live: &LiveCal<u32, u32>| {
        let (now_found, now_unjudged) = live.unjudged();
        sample
            .status(|p| live.label(p), now_found, now_unjudged.len() as u64)
            .unwrap()
    };
    assert_eq!(
        status(&live),
        StopStatus::Waiting {
            judged: 0,
            size: sample.pairs.len() as u64
        }
    );
    // Held pairs are passed over, in draw order; the order's proposal waits.
    let first_free = live.next_untaken(|p| *p == sample.pairs[0]).unwrap();
    assert!(first_free.sampled);
    assert_eq!(first_free.pair, sample.pairs[1]);
    let served = judge(&mut live, &truth, sample.pairs.len());
    assert_eq!(served, sample.pairs);
    let next = live.next_untaken(|_| false).unwrap();
    assert!(!next.sampled);
    let StopStatus::Tested {
        sample: counts,
        decision,
        next_draws,
    } = status(&live)
    else {
        panic!("judged whole");
    };
    let k = sample.pairs.iter().filter(|p| truth.contains(p)).count() as u64;
    assert_eq!(counts.drawn_evidence, k);
    assert_eq!(counts.found, found);
    let r_tar = (0..)
        .find(|&r| 0.8 * r as f64 > (found + k) as f64)
        .unwrap();
    let expected = tail(k, counts.unjudged, r_tar - found, counts.drawn);
    assert!(
        (decision.p_value - expected).abs() < 1e-9,
        "{} against {expected}",
        decision.p_value
    );
    assert_eq!(decision.stop, expected < 0.1);
    if decision.stop {
        assert_eq!(next_draws, 0);
    } else {
        let (now_found, now_unjudged) = live.unjudged();
        let r_now = (0..).find(|&r| 0.8 * r as f64 > now_found as f64).unwrap();
        assert_eq!(
            next_draws,
            needed(now_unjudged.len() as u64, r_now - now_found, 0.1)
        );
    }
}
