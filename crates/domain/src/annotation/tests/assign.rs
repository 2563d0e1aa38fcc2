use super::super::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

fn ids(raw: &[i64]) -> Vec<AnnotatorId> {
    raw.iter().map(|&i| AnnotatorId(i)).collect()
}

fn pairs(depths: &[u32]) -> Vec<PoolPair> {
    depths
        .iter()
        .enumerate()
        .map(|(i, &entry_depth)| PoolPair {
            entry: PoolEntryId(100 + i as i64),
            entry_depth,
        })
        .collect()
}

/// Checks a first-pass assignment from scratch: every pair once, to an active annotator, in
/// depth order; loads counted; and the balance property: an annotator who received a pair ends
/// at most one above the least loaded active annotator, so when the pairs suffice to level the
/// initial loads, the final loads differ by at most 1.
fn check_first(
    input: &[PoolPair],
    active: &[AnnotatorId],
    before: &Loads,
    after: &Loads,
    got: &[Assigned],
) {
    let roster: BTreeSet<AnnotatorId> = active.iter().copied().collect();
    let expected: BTreeSet<PoolEntryId> = input.iter().map(|p| p.entry).collect();
    let assigned: Vec<PoolEntryId> = got.iter().map(|a| a.entry).collect();
    assert_eq!(assigned.len(), input.len());
    assert_eq!(assigned.iter().copied().collect::<BTreeSet<_>>(), expected);
    let depth: BTreeMap<PoolEntryId, u32> =
        input.iter().map(|p| (p.entry, p.entry_depth)).collect();
    assert!(got
        .windows(2)
        .all(|w| (depth[&w[0].entry], w[0].entry) < (depth[&w[1].entry], w[1].entry)));
    let mut received: BTreeMap<AnnotatorId, usize> = BTreeMap::new();
    for a in got {
        assert_eq!(a.stage, Stage::First);
        assert!(roster.contains(&a.annotator));
        *received.entry(a.annotator).or_default() += 1;
    }
    let all: BTreeSet<AnnotatorId> = before
        .iter()
        .map(|(a, _)| a)
        .chain(roster.iter().copied())
        .collect();
    for &a in &all {
        assert_eq!(
            after.get(a),
            before.get(a) + received.get(&a).copied().unwrap_or(0)
        );
    }
    if roster.is_empty() {
        return;
    }
    let finals: Vec<usize> = roster.iter().map(|&a| after.get(a)).collect();
    let min = *finals.iter().min().unwrap();
    let max = *finals.iter().max().unwrap();
    for (&a, _) in received.iter() {
        assert!(
            after.get(a) <= min + 1,
            "{a} got pairs but ends at {} with min {min}",
            after.get(a)
        );
    }
    let top = roster.iter().map(|&a| before.get(a)).max().unwrap();
    let deficit: usize = roster.iter().map(|&a| top - before.get(a)).sum();
    if input.len() >= deficit {
        assert!(max - min <= 1, "loads {finals:?}");
    }
}

#[test]
fn first_passes_are_balanced_deterministic_and_order_free_on_random_inputs() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for case in 0..600 {
        let k = rng.gen_range(1..7);
        let active: Vec<AnnotatorId> = (0..k).map(|_| AnnotatorId(rng.gen_range(1..12))).collect();
        let before: Loads = (0..rng.gen_range(0..10))
            .map(|_| (AnnotatorId(rng.gen_range(1..14)), rng.gen_range(0..6)))
            .collect();
        let depths: Vec<u32> = (0..rng.gen_range(0..50))
            .map(|_| rng.gen_range(1..20))
            .collect();
        let input = pairs(&depths);
        let seed: u64 = rng.gen();
        let mut after = before.clone();
        let got = assign_first(&input, &active, &mut after, seed).unwrap();
        check_first(&input, &active, &before, &after, &got);

        // Same seed, shuffled inputs and roster: the same result.
        let mut shuffled = input.clone();
        shuffled.shuffle(&mut rng);
        let mut roster = active.clone();
        roster.shuffle(&mut rng);
        let mut again = before.clone();
        assert_eq!(
            assign_first(&shuffled, &roster, &mut again, seed).unwrap(),
            got,
            "case {case}"
        );
        assert_eq!(again, after);
    }
}

#[test]
fn pairs_enough_to_level_equal_out_the_loads() {
    let active = ids(&[1, 2, 3]);
    let before: Loads = [
        (AnnotatorId(1), 5),
        (AnnotatorId(2), 0),
        (AnnotatorId(3), 2),
    ]
    .into_iter()
    .collect();
    let input = pairs(&[1; 8]);
    let mut after = before.clone();
    let got = assign_first(&input, &active, &mut after, 9).unwrap();
    check_first(&input, &active, &before, &after, &got);
    // 15 in all over three annotators: 5 each.
    assert_eq!(
        active.iter().map(|&a| after.get(a)).collect::<Vec<_>>(),
        [5, 5, 5]
    );
}

#[test]
fn ties_are_broken_at_random_and_only_among_the_least_loaded() {
    let active = ids(&[1, 2, 3]);
    let mut counts = BTreeMap::new();
    for entry in 0..3_000 {
        let p = [PoolPair {
            entry: PoolEntryId(entry),
            entry_depth: 1,
        }];
        let got = assign_first(&p, &active, &mut Loads::new(), 42).unwrap();
        *counts.entry(got[0].annotator).or_insert(0) += 1;
    }
    // Expected 1000 each, standard deviation about 26.
    assert_eq!(counts.len(), 3);
    assert!(
        counts.values().all(|&n| (850..=1150).contains(&n)),
        "{counts:?}"
    );

    let loaded: Loads = [(AnnotatorId(2), 1), (AnnotatorId(3), 1)]
        .into_iter()
        .collect();
    for seed in 0..200 {
        let got = assign_first(&pairs(&[4]), &active, &mut loaded.clone(), seed).unwrap();
        assert_eq!(got[0].annotator, AnnotatorId(1));
    }
    let outcomes: BTreeSet<Vec<AnnotatorId>> = (0..50)
        .map(|seed| {
            let got = assign_first(&pairs(&[1, 1, 2]), &active, &mut Loads::new(), seed).unwrap();
            got.iter().map(|a| a.annotator).collect()
        })
        .collect();
    assert!(outcomes.len() > 1, "seeds do not change the assignment");
}

#[test]
fn first_pass_refusals_leave_loads_alone() {
    let before: Loads = [(AnnotatorId(1), 2)].into_iter().collect();
    let mut loads = before.clone();
    let twice = [
        PoolPair {
            entry: PoolEntryId(5),
            entry_depth: 1,
        },
        PoolPair {
            entry: PoolEntryId(5),
            entry_depth: 3,
        },
    ];
    let err = assign_first(&twice, &ids(&[1, 2]), &mut loads, 0).unwrap_err();
    assert_eq!(err, AssignError::DuplicateEntry(PoolEntryId(5)));
    assert_eq!(
        err.to_string(),
        "pool entry 5 appears more than once among the pairs to assign"
    );
    let err = assign_first(&pairs(&[2, 1]), &[], &mut loads, 0).unwrap_err();
    assert_eq!(err, AssignError::NoActiveAnnotator(PoolEntryId(101)));
    assert_eq!(loads, before);
    assert_eq!(assign_first(&[], &[], &mut loads, 0), Ok(vec![]));
}

#[test]
fn the_second_annotator_is_never_the_first() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for _ in 0..3_000 {
        let k = rng.gen_range(1..6);
        let active: Vec<AnnotatorId> = (0..k).map(|_| AnnotatorId(rng.gen_range(1..8))).collect();
        let first = AnnotatorId(rng.gen_range(1..9));
        let mut loads: Loads = (1..9)
            .map(|a| (AnnotatorId(a), rng.gen_range(0..4)))
            .collect();
        let before = loads.clone();
        let entry = PoolEntryId(rng.gen_range(0..1_000));
        let others: BTreeSet<AnnotatorId> =
            active.iter().copied().filter(|&a| a != first).collect();
        match assign_second(entry, first, &active, &mut loads, rng.gen()) {
            Ok(second) => {
                assert_ne!(second, first);
                assert!(others.contains(&second));
                let least = others.iter().map(|&a| before.get(a)).min().unwrap();
                assert_eq!(before.get(second), least);
                assert_eq!(loads.get(second), least + 1);
            }
            Err(err) => {
                assert!(others.is_empty());
                assert_eq!(err, AssignError::NoOtherAnnotator { entry, first });
                assert_eq!(loads, before);
            }
        }
    }
}

#[test]
fn with_exactly_two_annotators_the_second_is_the_other_one() {
    let active = ids(&[7, 9]);
    let mut loads = Loads::new();
    for seed in 0..100 {
        let entry = PoolEntryId(seed as i64);
        assert_eq!(
            assign_second(entry, AnnotatorId(7), &active, &mut loads, seed),
            Ok(AnnotatorId(9))
        );
        assert_eq!(
            assign_second(entry, AnnotatorId(9), &active, &mut loads, seed),
            Ok(AnnotatorId(7))
        );
    }
    // Only one active: no second annotator, with a message that says why.
    let err = assign_second(PoolEntryId(3), AnnotatorId(7), &ids(&[7]), &mut loads, 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pool entry 3 needs a second annotator other than user 7, who gave the first pass, but no other annotator is active"
    );
}

#[test]
fn adjudication_goes_to_the_less_loaded_active_annotator_of_the_pair() {
    let (a, b, c) = (AnnotatorId(1), AnnotatorId(2), AnnotatorId(3));
    let mut loads: Loads = [(a, 3), (b, 1), (c, 0)].into_iter().collect();
    let e = PoolEntryId(8);
    assert_eq!(
        assign_adjudication(e, a, b, &[a, b, c], &mut loads, 0),
        Ok(b)
    );
    assert_eq!(loads.get(b), 2);
    assert_eq!(assign_adjudication(e, a, b, &[a, c], &mut loads, 0), Ok(a));
    let err = assign_adjudication(e, a, b, &[c], &mut loads, 0).unwrap_err();
    assert_eq!(
        err,
        AssignError::NoAdjudicator {
            entry: e,
            first: a,
            second: b
        }
    );
    assert!(err.to_string().contains("a lead must adjudicate it"));
}

#[test]
fn a_deactivated_annotators_items_move_by_the_same_rules() {
    let (a, b, c) = (AnnotatorId(1), AnnotatorId(2), AnnotatorId(3));
    let item = |entry: i64, depth: u32, work: Work| OpenItem {
        entry: PoolEntryId(entry),
        entry_depth: depth,
        work,
    };
    let items = [
        item(1, 5, Work::Second { first: a }),
        item(2, 1, Work::Second { first: c }),
        item(
            3,
            2,
            Work::Adjudication {
                first: a,
                second: b,
            },
        ),
        item(
            4,
            2,
            Work::Adjudication {
                first: b,
                second: c,
            },
        ),
        item(5, 3, Work::First),
    ];
    // b leaves; a and c remain.
    let mut loads = Loads::new();
    let got = reassign(b, &items, &[a, b, c], &mut loads, 1);
    let by_entry: BTreeMap<i64, Result<AnnotatorId, AssignError>> =
        got.iter().map(|r| (r.entry.0, r.outcome.clone())).collect();
    assert_eq!(by_entry[&1], Ok(c));
    assert_eq!(by_entry[&2], Ok(a));
    assert_eq!(by_entry[&3], Ok(a));
    assert_eq!(by_entry[&4], Ok(c));
    assert!(matches!(by_entry[&5], Ok(x) if x == a || x == c));
    let order: Vec<i64> = got.iter().map(|r| r.entry.0).collect();
    assert_eq!(order, [2, 3, 4, 5, 1]);

    // Exactly two annotators, b leaves: a second pass of a's cannot move, the rest go to a.
    let items = [
        item(1, 1, Work::Second { first: a }),
        item(2, 1, Work::First),
        item(
            3,
            1,
            Work::Adjudication {
                first: a,
                second: b,
            },
        ),
        item(
            4,
            1,
            Work::Adjudication {
                first: b,
                second: c,
            },
        ),
    ];
    let mut loads = Loads::new();
    let got = reassign(b, &items, &[a, b], &mut loads, 1);
    let outcomes: Vec<Result<AnnotatorId, AssignError>> =
        got.into_iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Err(AssignError::NoOtherAnnotator {
                entry: PoolEntryId(1),
                first: a
            }),
            Ok(a),
            Ok(a),
            Err(AssignError::NoAdjudicator {
                entry: PoolEntryId(4),
                first: b,
                second: c
            }),
        ]
    );
    assert_eq!(loads.get(a), 2);
}

#[test]
fn reassignment_respects_eligibility_on_random_inputs() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for _ in 0..1_000 {
        let people: Vec<AnnotatorId> = (1..=rng.gen_range(1..6)).map(AnnotatorId).collect();
        let from = people[rng.gen_range(0..people.len())];
        let items: Vec<OpenItem> = (0..rng.gen_range(0..15))
            .map(|i| {
                let p = |rng: &mut ChaCha8Rng| AnnotatorId(rng.gen_range(1..7));
                let work = match rng.gen_range(0..3) {
                    0 => Work::First,
                    1 => Work::Second { first: p(&mut rng) },
                    _ => Work::Adjudication {
                        first: from,
                        second: p(&mut rng),
                    },
                };
                OpenItem {
                    entry: PoolEntryId(i),
                    entry_depth: rng.gen_range(1..5),
                    work,
                }
            })
            .collect();
        let mut loads = Loads::new();
        let got = reassign(from, &items, &people, &mut loads, rng.gen());
        assert_eq!(got.len(), items.len());
        let mut received: BTreeMap<AnnotatorId, usize> = BTreeMap::new();
        for r in &got {
            let item = items.iter().find(|i| i.entry == r.entry).unwrap();
            assert_eq!(r.stage, item.work.stage());
            // Who may take it, stated independently.
            let eligible: Vec<AnnotatorId> = people
                .iter()
                .copied()
                .filter(|&p| p != from)
                .filter(|&p| match item.work {
                    Work::First => true,
                    Work::Second { first } => p != first,
                    Work::Reannotation { first, second } => p != first && p != second,
                    Work::Adjudication { first, second } => p == first || p == second,
                })
                .collect();
            match &r.outcome {
                Ok(to) => {
                    assert!(eligible.contains(to), "{item:?} went to {to}");
                    *received.entry(*to).or_default() += 1;
                }
                Err(_) => assert!(
                    eligible.is_empty(),
                    "{item:?} refused though {eligible:?} may take it"
                ),
            }
        }
        assert_eq!(
            loads
                .iter()
                .filter(|&(_, n)| n > 0)
                .collect::<BTreeMap<_, _>>(),
            received
        );
        let depth = |r: &Reassigned| {
            items
                .iter()
                .find(|i| i.entry == r.entry)
                .unwrap()
                .entry_depth
        };
        assert!(got
            .windows(2)
            .all(|w| (depth(&w[0]), w[0].entry) <= (depth(&w[1]), w[1].entry)));
    }
}

#[test]
fn loads_sum_repeated_counts() {
    let loads: Loads = [
        (AnnotatorId(1), 2),
        (AnnotatorId(1), 3),
        (AnnotatorId(2), 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(loads.get(AnnotatorId(1)), 5);
    assert_eq!(loads.get(AnnotatorId(9)), 0);
}
