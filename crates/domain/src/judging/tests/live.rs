//! Live serving: settings, the labels so far, and a live selector against a fresh one.

use super::super::{
    label_so_far, FirstPasses, JudgingSettings, LivePlan, LiveSelector, Order, Selector,
};
use super::{p, random_rankings, selector, STRATEGIES};
use crate::annotation::{AnnotatorId, Decision, FinalLabel, Opinion, PairState};
use crate::label::Label;
use crate::pool::{FxHashMap, Pair, Strategy};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn opinion(annotator: i64, label: Label) -> Opinion {
    Opinion {
        annotator: AnnotatorId(annotator),
        label,
    }
}

#[test]
fn depth_without_budget_preassigns_and_anything_else_is_live() {
    assert_eq!(
        JudgingSettings::default().first_passes(),
        FirstPasses::Preassigned
    );
    let budgeted = JudgingSettings {
        budget: Some(3),
        ..JudgingSettings::default()
    };
    assert_eq!(
        budgeted.first_passes(),
        FirstPasses::Live(LivePlan {
            order: Order::Depth.into(),
            seed: 0,
            budget: Some(3)
        })
    );
    let mtf = JudgingSettings {
        order: Order::Mtf.into(),
        seed: 9,
        budget: None,
        ..JudgingSettings::default()
    };
    let FirstPasses::Live(plan) = mtf.first_passes() else {
        panic!("mtf is live");
    };
    assert!(plan.may_serve(1_000_000, 50));
    let plan = LivePlan {
        budget: Some(3),
        ..plan
    };
    assert!(plan.may_serve(1, 1));
    assert!(!plan.may_serve(2, 1));
    assert!(!plan.may_serve(3, 0));
    assert!(!LivePlan {
        budget: Some(0),
        ..plan
    }
    .may_serve(0, 0));
}

#[test]
fn labels_so_far_read_the_latest_opinion() {
    assert_eq!(label_so_far(&PairState::NeedsFirst), None);
    // A first pass that read the abstract counts as its label.
    for (label, evidence) in [
        (Label::Support, true),
        (Label::Contradict, true),
        (Label::Nei, false),
    ] {
        let state = PairState::NeedsSecond {
            first: opinion(1, label),
        };
        assert_eq!(label_so_far(&state), Some(evidence), "{label:?}");
    }
    // Until the second pass says otherwise.
    let disagreed = PairState::NeedsAdjudication {
        first: opinion(1, Label::Support),
        second: opinion(2, Label::Nei),
        third: None,
    };
    assert_eq!(label_so_far(&disagreed), Some(false));
    let other_way = PairState::NeedsAdjudication {
        first: opinion(1, Label::Nei),
        second: opinion(2, Label::Contradict),
        third: None,
    };
    assert_eq!(label_so_far(&other_way), Some(true));
    // Final labels ("clearly no evidence" is a final NEI) count as they say.
    for (label, decision, evidence) in [
        (
            Label::Nei,
            Decision::ClearlyNoEvidence {
                first: AnnotatorId(1),
            },
            false,
        ),
        (
            Label::Nei,
            Decision::Agreement {
                first: opinion(1, Label::Nei),
                second: opinion(2, Label::Nei),
            },
            false,
        ),
        (
            Label::Support,
            Decision::Adjudication {
                first: opinion(1, Label::Support),
                second: opinion(2, Label::Nei),
                adjudicator: AnnotatorId(3),
            },
            true,
        ),
        (
            Label::Contradict,
            Decision::Imported { annotator: None },
            true,
        ),
    ] {
        let state = PairState::Final(FinalLabel {
            label,
            decision,
            judgment: 0,
        });
        assert_eq!(
            label_so_far(&state),
            Some(evidence),
            "{label:?} {decision:?}"
        );
    }
}

/// The live selector, synced after every step (labels arriving, some changing), proposes
/// what a selector built afresh from the same labels proposes.
#[test]
fn a_live_selector_proposes_what_a_fresh_one_does() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    for strategy in STRATEGIES {
        for order in Order::ALL {
            for round in 0..8_u64 {
                let rankings = random_rankings(&mut rng, strategy, 3, 4, 6, 0.6);
                let seed = round * 7 + 1;
                let mut live = LiveSelector::new(selector(strategy, &rankings, order, seed));
                let mut labels: FxHashMap<Pair<u32, u32>, bool> = FxHashMap::default();
                let mut changed = 0;
                loop {
                    live.sync(&labels).unwrap();
                    let fresh = selector(strategy, &rankings, order, seed)
                        .with_labels(labels.iter().map(|(k, v)| (*k, *v)))
                        .unwrap()
                        .next_pair();
                    let got = live.next_untaken(|_| false);
                    assert_eq!(got, fresh, "{order} {strategy:?} round {round}");
                    let Some(pair) = got else { break };
                    // Now and then an earlier label is overturned (a second pass disagreed)
                    // or withdrawn (an undo).
                    if !labels.is_empty() && rng.gen_bool(0.15) {
                        let mut keys: Vec<_> = labels.keys().copied().collect();
                        keys.sort_unstable();
                        let k = keys[rng.gen_range(0..keys.len())];
                        if rng.gen_bool(0.5) {
                            let was = labels[&k];
                            labels.insert(k, !was);
                        } else {
                            labels.remove(&k);
                        }
                        changed += 1;
                    }
                    labels.insert(pair, rng.gen_bool(0.3));
                }
                if changed > 0 {
                    assert!(live.rebuilds() > 0);
                }
            }
        }
    }
}

/// A live selector given only the changed pairs ([`LiveSelector::apply`]: new labels, some
/// overturned, some withdrawn, a pair repeated) proposes what a fresh selector does.
#[test]
fn applying_the_changes_proposes_what_a_fresh_selector_does() {
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    for strategy in STRATEGIES {
        for order in Order::ALL {
            for round in 0..8_u64 {
                let rankings = random_rankings(&mut rng, strategy, 3, 4, 6, 0.6);
                let seed = round * 5 + 2;
                let mut live = LiveSelector::new(selector(strategy, &rankings, order, seed));
                let mut labels: FxHashMap<Pair<u32, u32>, bool> = FxHashMap::default();
                let mut changes: Vec<(Pair<u32, u32>, Option<bool>)> = Vec::new();
                let mut changed = 0;
                loop {
                    live.apply(changes.drain(..)).unwrap();
                    assert_eq!(live.labels(), labels.len());
                    let fresh = selector(strategy, &rankings, order, seed)
                        .with_labels(labels.iter().map(|(k, v)| (*k, *v)))
                        .unwrap()
                        .next_pair();
                    let got = live.next_untaken(|_| false);
                    assert_eq!(got, fresh, "{order} {strategy:?} round {round}");
                    let Some(pair) = got else { break };
                    if !labels.is_empty() && rng.gen_bool(0.2) {
                        let mut keys: Vec<_> = labels.keys().copied().collect();
                        keys.sort_unstable();
                        let k = keys[rng.gen_range(0..keys.len())];
                        let now = if rng.gen_bool(0.5) {
                            Some(!labels[&k])
                        } else {
                            None
                        };
                        // Told twice: the first word is stale, the last counts.
                        changes.push((k, Some(rng.gen_bool(0.5))));
                        changes.push((k, now));
                        match now {
                            Some(evidence) => labels.insert(k, evidence),
                            None => labels.remove(&k),
                        };
                        changed += 1;
                    }
                    // A pair with no label, told so, changes nothing.
                    changes.push((Pair::new(u32::MAX, u32::MAX), None));
                    let evidence = rng.gen_bool(0.3);
                    labels.insert(pair, evidence);
                    changes.push((pair, Some(evidence)));
                }
                if changed > 0 {
                    assert!(live.rebuilds() > 0);
                }
            }
        }
    }
}

/// Pairs others hold are passed over as if they were evidence; the selector itself is not
/// changed by looking.
#[test]
fn held_pairs_are_passed_over_as_evidence() {
    // Global mtf over A = (0,1) (0,2) (0,3) and B = (1,1) (1,2).
    let rankings = vec![vec![p(0, 1), p(0, 2), p(0, 3)], vec![p(1, 1), p(1, 2)]];
    let base = Selector::new(Strategy::Confidence, rankings, Order::Mtf, 0).unwrap();
    let mut live = LiveSelector::new(base);
    assert_eq!(live.next_untaken(|_| false), Some(p(0, 1)));
    // (0,1) held: counted as evidence, mtf stays with A.
    assert_eq!(live.next_untaken(|q| *q == p(0, 1)), Some(p(0, 2)));
    // Both held.
    assert_eq!(
        live.next_untaken(|q| [p(0, 1), p(0, 2)].contains(q)),
        Some(p(0, 3))
    );
    // Nothing recorded by looking.
    assert_eq!(live.labels(), 0);
    assert_eq!(live.next_untaken(|_| false), Some(p(0, 1)));
    // (0,1) turns out not evidence: A drops to -1, B's top comes next.
    let labels: FxHashMap<_, _> = [(p(0, 1), false)].into_iter().collect();
    live.sync(&labels).unwrap();
    assert_eq!(live.next_untaken(|_| false), Some(p(1, 1)));
    // Everything held: nothing to serve.
    assert_eq!(live.next_untaken(|_| true), None);
}
