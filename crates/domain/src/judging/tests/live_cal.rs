//! The live `cal` order against a fresh replay: rebuilt from the set of labels, fed one label
//! at a time, with labels changing under it, and serving past the pairs others hold.

use super::cal::collection;
use crate::judging::{replay_cal, CalCandidates, LiveCal};
use crate::pool::{FxHashMap, Pair};
use std::collections::HashSet;
use std::sync::Arc;

type P = Pair<u32, u32>;

fn candidates(seed: u64) -> (Arc<CalCandidates<u32, u32>>, HashSet<P>) {
    let (rankings, retrieved, truth) = collection(seed);
    (
        Arc::new(CalCandidates::new(&rankings, &retrieved).unwrap()),
        truth,
    )
}

/// Serves `n` first passes one at a time, nobody holding any, judging each against `truth`
/// at once; returns the pairs served.
fn serve(live: &mut LiveCal<u32, u32>, truth: &HashSet<P>, n: usize) -> Vec<P> {
    let mut served = Vec::new();
    for _ in 0..n {
        let Some(pick) = live.next_untaken(|_| false) else {
            break;
        };
        live.apply([(pick.pair, Some(truth.contains(&pick.pair)))]);
        served.push(pick.pair);
    }
    served
}

#[test]
fn served_one_at_a_time_it_judges_what_the_replay_judges() {
    let (cands, truth) = candidates(7);
    let mut live = LiveCal::new(Arc::clone(&cands), 11);
    let served = serve(&mut live, &truth, 300);
    let replayed: Vec<P> = replay_cal(&cands, &truth, 300, 11)
        .judged
        .iter()
        .map(|&row| cands.pairs()[row])
        .collect();
    assert_eq!(served, replayed);
    assert_eq!(live.labels(), 300);
    assert_eq!(live.rebuilds(), 0);
    // Picks outside the runs are said so, as the candidates say.
    let mut fresh = LiveCal::new(Arc::clone(&cands), 11);
    let first = fresh.next_untaken(|_| false).unwrap();
    let row = cands.pairs().binary_search(&first.pair).unwrap();
    assert_eq!(first.in_runs, cands.in_runs(row));
}

#[test]
fn rebuilt_from_the_set_of_labels_it_proposes_the_same_pair() {
    let (cands, truth) = candidates(8);
    let mut live = LiveCal::new(Arc::clone(&cands), 3);
    let served = serve(&mut live, &truth, 120);
    for cut in [0, 1, 5, 40, 119] {
        let labels: FxHashMap<P, bool> = served[..cut]
            .iter()
            .map(|pair| (*pair, truth.contains(pair)))
            .collect();
        let mut rebuilt = LiveCal::new(Arc::clone(&cands), 3);
        rebuilt.sync(&labels);
        assert_eq!(
            rebuilt.next_untaken(|_| false).map(|p| p.pair),
            Some(served[cut]),
            "cut {cut}"
        );
    }
}

#[test]
fn a_changed_label_rebuilds_only_if_the_order_used_it() {
    let (cands, truth) = candidates(9);
    let mut live = LiveCal::new(Arc::clone(&cands), 5);
    let served = serve(&mut live, &truth, 60);
    // A label on a candidate no round has reached: recorded, no rebuild.
    let untouched = *cands
        .pairs()
        .iter()
        .find(|pair| !served.contains(pair))
        .unwrap();
    live.apply([(untouched, Some(false))]);
    assert_eq!(live.rebuilds(), 0);
    live.apply([(untouched, None)]);
    // An adjudication overturns the 10th judgment: rebuilt, and it then proposes what a fresh
    // order given the changed set proposes.
    let overturned = served[9];
    let flipped = !truth.contains(&overturned);
    live.apply([(overturned, Some(flipped))]);
    assert_eq!(live.rebuilds(), 1);
    let mut labels: FxHashMap<P, bool> = served
        .iter()
        .map(|pair| (*pair, truth.contains(pair)))
        .collect();
    labels.insert(overturned, flipped);
    let mut fresh = LiveCal::new(Arc::clone(&cands), 5);
    fresh.sync(&labels);
    assert_eq!(live.next_untaken(|_| false), fresh.next_untaken(|_| false));
    // An undo of a used judgment rebuilds too; sync with the whole set agrees with apply.
    live.apply([(served[3], None)]);
    assert_eq!(live.rebuilds(), 2);
    labels.remove(&served[3]);
    let mut synced = LiveCal::new(Arc::clone(&cands), 5);
    synced.sync(&labels);
    assert_eq!(live.next_untaken(|_| false), synced.next_untaken(|_| false));
}

#[test]
fn pairs_others_hold_are_looked_past_and_never_recorded() {
    let (cands, truth) = candidates(10);
    let mut live = LiveCal::new(Arc::clone(&cands), 2);
    serve(&mut live, &truth, 30);
    // The first ask reads the last label; from then on asking moves nothing.
    let first = live.next_untaken(|_| false).unwrap().pair;
    let used = live.used();
    // Fifty annotators ask in turn, each holding what they were given: fifty different
    // candidates, none labelled, and the order itself has not moved.
    let mut held: HashSet<P> = HashSet::new();
    for _ in 0..50 {
        let pick = live.next_untaken(|pair| held.contains(pair)).unwrap();
        assert!(held.insert(pick.pair), "{:?} served twice", pick.pair);
    }
    assert_eq!(live.used(), used);
    assert_eq!(live.labels(), 30);
    // Without the holds the order proposes what it proposed first.
    assert_eq!(live.next_untaken(|_| false).unwrap().pair, first);
    assert!(held.contains(&first));
    // Everything held or labelled: nothing to serve.
    let all: HashSet<P> = cands.pairs().iter().copied().collect();
    assert_eq!(live.next_untaken(|pair| all.contains(pair)), None);
}
