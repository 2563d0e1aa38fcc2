use super::super::*;
use crate::label::Label;

const A: AnnotatorId = AnnotatorId(1);
const B: AnnotatorId = AnnotatorId(2);
const C: AnnotatorId = AnnotatorId(3);
const WINDOW: i64 = 30_000;

fn j(stage: Stage, who: AnnotatorId, verdict: Verdict) -> Judged {
    Judged::new(stage, Some(who), verdict).unwrap()
}

fn says(label: Label) -> Verdict {
    Verdict::Label(label)
}

#[test]
fn the_window() {
    assert!(can_undo(1_000, 1_000, WINDOW));
    assert!(can_undo(1_000, 1_000 + WINDOW - 1, WINDOW));
    assert!(!can_undo(1_000, 1_000 + WINDOW, WINDOW));
    assert!(!can_undo(1_000, 1_000, 0));
    assert!(
        can_undo(5_000, 4_000, WINDOW),
        "a clock that went back counts as no time"
    );
    assert!(!can_undo(i64::MIN, i64::MAX, i64::MAX));
    assert!(can_undo(i64::MAX, i64::MIN, 1));
}

#[test]
fn undo_restores_the_state_before_the_judgment() {
    let first = j(Stage::First, A, says(Label::Support));
    let agree = j(Stage::Second, B, says(Label::Support));
    let disagree = j(Stage::Second, B, says(Label::Nei));
    let adjudicate = j(Stage::Adjudication, C, says(Label::Nei));
    let cases: Vec<(Vec<Judged>, AnnotatorId, bool)> = vec![
        (vec![first], A, false),
        (
            vec![j(Stage::First, A, Verdict::ClearlyNoEvidence)],
            A,
            true,
        ),
        (vec![first, agree], B, true),
        (vec![first, disagree], B, false),
        (vec![first, disagree, adjudicate], C, true),
    ];
    for (history, author, withdraws) in cases {
        let last = history.len() - 1;
        let plan = plan_undo(&history, last, author, 0, 10, WINDOW).unwrap();
        assert_eq!(plan.before, PairState::from_judgments(&history).unwrap());
        assert_eq!(
            plan.after,
            PairState::from_judgments(&history[..last]).unwrap()
        );
        assert_eq!(plan.after.next_stage(), Some(history[last].stage()));
        assert_eq!(plan.withdraws_final_label(), withdraws, "{history:?}");
    }
}

#[test]
fn undo_refusals() {
    let first = j(Stage::First, A, says(Label::Support));
    let second = j(Stage::Second, B, says(Label::Nei));
    let import = Judged::new(Stage::Final, None, says(Label::Nei)).unwrap();
    let history = [first, second];
    let err = plan_undo(&history, 0, A, 0, 1, WINDOW).unwrap_err();
    assert_eq!(err, UndoError::LaterJudgment(Stage::Second));
    assert_eq!(
        err.to_string(),
        "a later second pass depends on this judgment; it can no longer be undone"
    );
    assert_eq!(
        plan_undo(&history, 1, A, 0, 1, WINDOW),
        Err(UndoError::NotAuthor { author: B })
    );
    assert_eq!(
        plan_undo(&history, 2, B, 0, 1, WINDOW),
        Err(UndoError::NoSuchJudgment {
            position: 2,
            count: 2
        })
    );
    assert_eq!(
        plan_undo(&[import], 0, A, 0, 1, WINDOW),
        Err(UndoError::Imported)
    );
    let err = plan_undo(&history, 1, B, 0, 45_000, WINDOW).unwrap_err();
    assert_eq!(
        err,
        UndoError::WindowClosed {
            elapsed_ms: 45_000,
            window_ms: WINDOW
        }
    );
    assert_eq!(
        err.to_string(),
        "the undo window of 30000 ms has passed (45000 ms ago)"
    );
    let broken = [second];
    assert!(matches!(
        plan_undo(&broken, 0, B, 0, 1, WINDOW),
        Err(UndoError::History(_))
    ));
}
