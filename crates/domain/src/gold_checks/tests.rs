use super::*;
use crate::label::Label;
use std::collections::BTreeSet;

fn result(reference: Label, refs: &[u32], answer: Label, ans: &[u32], at: i64) -> GoldResult {
    GoldResult {
        reference,
        reference_sentences: refs.iter().copied().collect(),
        answer,
        answer_sentences: ans.iter().copied().collect(),
        at_ms: at,
    }
}

#[test]
fn the_schedule_serves_exactly_one_check_per_block_at_unpredictable_places() {
    let schedule = GoldSchedule::new(5, 42).expect("5 is a rate");
    for annotator in [1_i64, 2, 77] {
        let slots: Vec<u64> = (0..500)
            .filter(|n| schedule.is_gold_slot(annotator, *n))
            .collect();
        assert_eq!(slots.len(), 100, "one in five over 100 blocks");
        for block in 0..100 {
            assert_eq!(
                slots.iter().filter(|n| **n / 5 == block).count(),
                1,
                "block {block}"
            );
        }
        let places: BTreeSet<u64> = slots.iter().map(|n| n % 5).collect();
        assert!(places.len() >= 4, "the place in a block varies: {places:?}");
    }
    assert_ne!(
        (0..50)
            .map(|n| schedule.is_gold_slot(1, n))
            .collect::<Vec<_>>(),
        (0..50)
            .map(|n| schedule.is_gold_slot(2, n))
            .collect::<Vec<_>>(),
        "two annotators get different places"
    );
    assert!(GoldSchedule::new(1, 0).is_none());
}

#[test]
fn a_pick_is_stable_and_comes_from_the_candidates() {
    let candidates = [10_i64, 11, 12, 13];
    let a = pick(7, 3, 8, &candidates).expect("a pick");
    assert!(candidates.contains(&a));
    assert_eq!(pick(7, 3, 8, &candidates), Some(a));
    assert_eq!(pick(7, 3, 8, &[]), None);
    let picks: BTreeSet<i64> = (0..40).filter_map(|n| pick(7, 3, n, &candidates)).collect();
    assert!(picks.len() > 1, "different items over time: {picks:?}");
    let mut ids: Vec<i64> = (0..20).collect();
    ids.sort_by_key(|id| draw_order(5, *id));
    assert_ne!(ids, (0..20).collect::<Vec<_>>(), "a draw shuffles");
    let mut again: Vec<i64> = (0..20).rev().collect();
    again.sort_by_key(|id| draw_order(5, *id));
    assert_eq!(ids, again, "the same seed, the same draw");
}

#[test]
fn figures_count_by_hand() {
    use Label::{Contradict as C, Nei as N, Support as S};
    let results = [
        result(S, &[1, 2], S, &[1], 1), // correct; 1 of 1 marked matches, 1 of 2 found
        result(S, &[3], C, &[3, 4], 2), // wrong; 1 matched of 2 marked
        result(C, &[0], C, &[0], 3),    // correct; 1 of 1
        result(N, &[], N, &[], 4),      // correct; not an evidence item
        result(N, &[], S, &[5], 5),     // wrong; not an evidence item
        result(C, &[2, 6], N, &[], 6),  // wrong; nothing marked, 2 to find
    ];
    let f = score(&results);
    assert_eq!((f.answered, f.correct), (6, 3));
    assert_eq!(f.accuracy, Some(0.5));
    // rows: reference S, C, N; columns: answer S, C, N
    assert_eq!(f.confusion, [[1, 1, 0], [0, 1, 1], [1, 0, 1]]);
    let r = f.rationale;
    assert_eq!((r.items, r.matched, r.marked, r.reference), (4, 3, 4, 6));
    assert_eq!(r.precision, Some(0.75));
    assert_eq!(r.recall, Some(0.5));
    let f1 = r.f1.expect("defined");
    assert!((f1 - 0.6).abs() < 1e-12, "2·0.75·0.5/1.25 = 0.6, got {f1}");

    let empty = score(&[]);
    assert_eq!(
        (empty.answered, empty.accuracy, empty.rationale.f1),
        (0, None, None)
    );
}

#[test]
fn drift_windows_follow_time_not_input_order() {
    use Label::{Nei as N, Support as S};
    let results = [
        result(S, &[], S, &[], 30),
        result(S, &[], N, &[], 10),
        result(S, &[], N, &[], 20),
        result(S, &[], S, &[], 40),
        result(S, &[], S, &[], 50),
    ];
    let d = drift(&results, 2);
    let shape: Vec<(i64, i64, u64, u64)> = d
        .iter()
        .map(|p| (p.from_ms, p.to_ms, p.answered, p.correct))
        .collect();
    assert_eq!(shape, vec![(10, 20, 2, 0), (30, 40, 2, 2), (50, 50, 1, 1)]);
    assert!(drift(&results, 0).is_empty());
}

#[test]
fn settings_read_the_form_and_name_the_field_of_a_mistake() {
    let s = GoldSettings::parse_form("10", "3", "5", "80%").expect("valid");
    assert_eq!(s.every, Some(10));
    let q = s.qualification.expect("a qualification");
    assert_eq!((q.training, q.graded), (3, 5));
    assert!((q.pass.get() - 0.8).abs() < 1e-12);
    assert_eq!(s.columns(), (Some(10), 3, 5, 0.8));
    assert_eq!(
        GoldSettings::from_columns(Some(10), 3, 5, 0.8).expect("columns"),
        s
    );
    let off = GoldSettings::parse_form("", "0", "0", "").expect("off");
    assert_eq!((off.every, off.qualification), (None, None));
    for (every, training, graded, pass, field) in [
        ("1", "0", "0", "", "gold_every"),
        ("x", "0", "0", "", "gold_every"),
        ("", "2", "0", "", "qualification_training"),
        ("", "0", "101", "", "qualification_graded"),
        ("", "0", "5", "1.5%x", "qualification_pass"),
        ("", "0", "5", "120", "qualification_pass"),
    ] {
        let e = GoldSettings::parse_form(every, training, graded, pass).expect_err("invalid");
        assert_eq!(e.field(), field, "{e}");
    }
}

#[test]
fn pass_marks_and_steps() {
    let pass = PassMark::parse("0.8").expect("share");
    assert!(pass.passed(4, 5));
    assert!(!pass.passed(3, 5));
    assert!(!pass.passed(0, 0), "no graded item passes nobody");
    assert_eq!(PassMark::parse("75").map(PassMark::get), Ok(0.75));
    let q = Qualification {
        training: 2,
        graded: 3,
        pass,
    };
    assert_eq!(q.next_step(0, 0), Step::Training { done: 0 });
    assert_eq!(q.next_step(2, 1), Step::Graded { done: 1 });
    assert_eq!(q.next_step(2, 3), Step::Decide);
}

#[test]
fn sentences_of_reads_rationale_json() {
    assert_eq!(
        sentences_of("[[1,2],[2,5]]"),
        Some([1, 2, 5].into_iter().collect())
    );
    assert_eq!(sentences_of("[]"), Some(BTreeSet::new()));
    assert_eq!(sentences_of("nope"), None);
}
