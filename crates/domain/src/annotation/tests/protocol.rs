use super::super::*;
use crate::label::Label;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const A: AnnotatorId = AnnotatorId(1);
const B: AnnotatorId = AnnotatorId(2);
const C: AnnotatorId = AnnotatorId(3);

fn j(stage: Stage, who: AnnotatorId, verdict: Verdict) -> Judged {
    Judged::new(stage, Some(who), verdict).unwrap()
}

fn says(label: Label) -> Verdict {
    Verdict::Label(label)
}

fn op(annotator: AnnotatorId, label: Label) -> Opinion {
    Opinion { annotator, label }
}

fn state(history: &[Judged]) -> PairState {
    PairState::from_judgments(history).unwrap()
}

#[test]
fn no_judgment_needs_a_first_pass() {
    assert_eq!(state(&[]), PairState::NeedsFirst);
    assert_eq!(PairState::NeedsFirst.next_stage(), Some(Stage::First));
}

#[test]
fn clearly_no_evidence_is_final_nei_at_once() {
    let s = state(&[j(Stage::First, A, Verdict::ClearlyNoEvidence)]);
    assert_eq!(
        s,
        PairState::Final(FinalLabel {
            label: Label::Nei,
            decision: Decision::ClearlyNoEvidence { first: A },
            judgment: 0
        })
    );
    assert_eq!(s.next_stage(), None);
}

#[test]
fn a_first_pass_after_reading_needs_a_second_even_when_nei() {
    for label in Label::ALL {
        let s = state(&[j(Stage::First, A, says(label))]);
        assert_eq!(
            s,
            PairState::NeedsSecond {
                first: op(A, label)
            }
        );
        assert_eq!(s.next_stage(), Some(Stage::Second));
    }
}

#[test]
fn agreement_is_final_from_the_second_pass() {
    for label in Label::ALL {
        let s = state(&[
            j(Stage::First, A, says(label)),
            j(Stage::Second, B, says(label)),
        ]);
        assert_eq!(
            s,
            PairState::Final(FinalLabel {
                label,
                decision: Decision::Agreement {
                    first: op(A, label),
                    second: op(B, label)
                },
                judgment: 1
            })
        );
    }
}

#[test]
fn disagreement_goes_to_adjudication_and_the_adjudicator_decides() {
    for first in Label::ALL {
        for second in Label::ALL.into_iter().filter(|&l| l != first) {
            let history = [
                j(Stage::First, A, says(first)),
                j(Stage::Second, B, says(second)),
            ];
            let s = state(&history);
            assert_eq!(
                s,
                PairState::NeedsAdjudication {
                    first: op(A, first),
                    second: op(B, second),
                    third: None,
                }
            );
            for adjudicator in [A, B, C] {
                for decided in Label::ALL {
                    let mut h = history.to_vec();
                    h.push(j(Stage::Adjudication, adjudicator, says(decided)));
                    assert_eq!(
                        state(&h),
                        PairState::Final(FinalLabel {
                            label: decided,
                            decision: Decision::Adjudication {
                                first: op(A, first),
                                second: op(B, second),
                                adjudicator
                            },
                            judgment: 2
                        })
                    );
                }
            }
        }
    }
}

#[test]
fn an_import_finalizes_any_unfinished_pair() {
    let import = Judged::new(Stage::Final, None, says(Label::Support)).unwrap();
    let prefixes: [Vec<Judged>; 3] = [
        vec![],
        vec![j(Stage::First, A, says(Label::Nei))],
        vec![
            j(Stage::First, A, says(Label::Nei)),
            j(Stage::Second, B, says(Label::Support)),
        ],
    ];
    for prefix in prefixes {
        let mut h = prefix.clone();
        h.push(import);
        assert_eq!(
            state(&h),
            PairState::Final(FinalLabel {
                label: Label::Support,
                decision: Decision::Imported { annotator: None },
                judgment: prefix.len()
            })
        );
    }
}

#[test]
fn histories_out_of_protocol_are_refused_with_the_position() {
    let first = j(Stage::First, A, says(Label::Support));
    let import = Judged::new(Stage::Final, Some(C), says(Label::Nei)).unwrap();
    let cases: Vec<(Vec<Judged>, usize, ProtocolError)> = vec![
        (
            vec![j(Stage::Second, B, says(Label::Nei))],
            0,
            ProtocolError::OutOfOrder {
                expected: Stage::First,
                got: Stage::Second,
            },
        ),
        (
            vec![first, first],
            1,
            ProtocolError::OutOfOrder {
                expected: Stage::Second,
                got: Stage::First,
            },
        ),
        (
            vec![first, j(Stage::Second, A, says(Label::Support))],
            1,
            ProtocolError::SecondBySameAnnotator(A),
        ),
        (
            vec![first, j(Stage::Adjudication, A, says(Label::Support))],
            1,
            ProtocolError::OutOfOrder {
                expected: Stage::Second,
                got: Stage::Adjudication,
            },
        ),
        (
            vec![
                first,
                j(Stage::Second, B, says(Label::Support)),
                j(Stage::Adjudication, C, says(Label::Nei)),
            ],
            2,
            ProtocolError::AlreadyFinal(Label::Support),
        ),
        (
            vec![
                j(Stage::First, A, Verdict::ClearlyNoEvidence),
                j(Stage::Second, B, says(Label::Nei)),
            ],
            1,
            ProtocolError::AlreadyFinal(Label::Nei),
        ),
        (
            vec![import, import],
            1,
            ProtocolError::AlreadyFinal(Label::Nei),
        ),
        (
            vec![import, first],
            1,
            ProtocolError::AlreadyFinal(Label::Nei),
        ),
    ];
    for (history, position, reason) in cases {
        let err = PairState::from_judgments(&history).unwrap_err();
        assert_eq!(
            err,
            ProtocolError::InHistory {
                position,
                reason: Box::new(reason.clone())
            }
        );
        assert!(err
            .to_string()
            .starts_with(&format!("judgment {position} ")));
        assert!(err.to_string().ends_with(&reason.to_string()));
    }
}

#[test]
fn judgment_rows_are_checked() {
    assert_eq!(
        Judged::new(Stage::Second, None, says(Label::Nei)),
        Err(ProtocolError::MissingAnnotator(Stage::Second))
    );
    for stage in [Stage::Second, Stage::Adjudication, Stage::Final] {
        assert_eq!(
            Judged::new(stage, Some(A), Verdict::ClearlyNoEvidence),
            Err(ProtocolError::NoEvidenceOutsideFirstPass(stage))
        );
    }
    assert!(Judged::new(Stage::First, Some(A), Verdict::ClearlyNoEvidence).is_ok());
    assert_eq!(
        Verdict::from_columns(Label::Nei, true),
        Ok(Verdict::ClearlyNoEvidence)
    );
    assert_eq!(
        Verdict::from_columns(Label::Contradict, false),
        Ok(says(Label::Contradict))
    );
    let err = Verdict::from_columns(Label::Support, true).unwrap_err();
    assert_eq!(err, ProtocolError::NoEvidenceWithLabel(Label::Support));
    assert!(err.to_string().contains("must be NEI, not SUPPORT"));
}

/// The states of the pair whose first annotator is A and second is B.
fn sample_states() -> Vec<PairState> {
    vec![
        state(&[]),
        state(&[j(Stage::First, A, says(Label::Support))]),
        state(&[
            j(Stage::First, A, says(Label::Support)),
            j(Stage::Second, B, says(Label::Nei)),
        ]),
        state(&[j(Stage::First, A, Verdict::ClearlyNoEvidence)]),
        state(&[
            j(Stage::First, A, says(Label::Nei)),
            j(Stage::Second, B, says(Label::Nei)),
        ]),
    ]
}

#[test]
fn submissions_every_state_stage_person_and_role() {
    let d = AnnotatorId(4); // a lead who did neither pass
    let mut refusals = 0;
    for s in sample_states() {
        for &stage in Stage::ALL {
            for who in [A, B, C, d] {
                for is_lead in [false, true] {
                    let got = check_submission(&s, stage, who, is_lead);
                    // Expected, stated per state without the implementation's helpers.
                    let expected = match s {
                        PairState::Final(f) => Err(ProtocolError::AlreadyFinal(f.label)),
                        _ if stage == Stage::Final => Err(ProtocolError::FinalStageSubmitted),
                        PairState::NeedsFirst => match stage {
                            Stage::First => Ok(()),
                            got => Err(ProtocolError::OutOfOrder {
                                expected: Stage::First,
                                got,
                            }),
                        },
                        PairState::NeedsSecond { .. } => match stage {
                            Stage::Second if who == A => {
                                Err(ProtocolError::SecondBySameAnnotator(A))
                            }
                            Stage::Second => Ok(()),
                            got => Err(ProtocolError::OutOfOrder {
                                expected: Stage::Second,
                                got,
                            }),
                        },
                        PairState::NeedsAdjudication { .. } => match stage {
                            // A re-annotation: anyone fresh.
                            Stage::Second if who == A || who == B => {
                                Err(ProtocolError::ReannotationByPartisan(who))
                            }
                            Stage::Second => Ok(()),
                            Stage::Adjudication if who == A || who == B || is_lead => Ok(()),
                            Stage::Adjudication => Err(ProtocolError::NotAdjudicator {
                                annotator: who,
                                first: A,
                                second: B,
                            }),
                            got => Err(ProtocolError::OutOfOrder {
                                expected: Stage::Adjudication,
                                got,
                            }),
                        },
                    };
                    assert_eq!(got, expected, "{s:?} {stage:?} {who:?} lead={is_lead}");
                    refusals += usize::from(got.is_err());
                }
            }
        }
    }
    assert!(refusals > 100);
}

#[test]
fn refusal_messages_say_what_to_do() {
    let s = state(&[j(Stage::First, A, says(Label::Support))]);
    let msg = |r: Result<(), ProtocolError>| r.unwrap_err().to_string();
    assert_eq!(
        msg(check_submission(&s, Stage::Second, A, true)),
        "user 1 gave the first pass; the second pass must come from someone else"
    );
    assert_eq!(
        msg(check_submission(&s, Stage::First, B, false)),
        "the pair needs its second pass now, not the first pass"
    );
    let s = state(&[
        j(Stage::First, A, says(Label::Support)),
        j(Stage::Second, B, says(Label::Nei)),
    ]);
    assert_eq!(
        msg(check_submission(&s, Stage::Adjudication, C, false)),
        "user 3 may not adjudicate: only one of the two annotators (user 1 or user 2) or a lead may"
    );
    assert_eq!(
        msg(check_submission(&s, Stage::Final, C, true)),
        "final labels come only from imports; a person submits the first, second or adjudication stage"
    );
    let s = state(&[j(Stage::First, A, Verdict::ClearlyNoEvidence)]);
    assert_eq!(
        msg(check_submission(&s, Stage::Second, B, false)),
        "the pair is already final (NEI); nothing more can be submitted"
    );
    assert_eq!(
        msg(check_stage_verdict(
            Stage::Second,
            Verdict::ClearlyNoEvidence
        )),
        "\"clearly no evidence\" belongs to the first pass; at the second pass give a label"
    );
}

#[test]
fn what_the_form_shows_of_the_first_pass() {
    use SecondPassMode::{Blind, Confirm};
    let first = j(Stage::First, A, says(Label::Contradict));
    let waiting = state(&[first]);
    for viewer in [A, B, C] {
        assert_eq!(
            visible_first_label(Confirm, &waiting, viewer),
            Some(Label::Contradict)
        );
    }
    assert_eq!(
        visible_first_label(Blind, &waiting, A),
        Some(Label::Contradict)
    );
    assert_eq!(visible_first_label(Blind, &waiting, B), None);
    assert_eq!(visible_first_label(Blind, &waiting, C), None);
    // Once B's own second judgment is in, agreeing or not, B (and an adjudicator) see it.
    for second in Label::ALL {
        let after = state(&[first, j(Stage::Second, B, says(second))]);
        for viewer in [A, B, C] {
            assert_eq!(
                visible_first_label(Blind, &after, viewer),
                Some(Label::Contradict)
            );
        }
    }
    for mode in [Confirm, Blind] {
        assert_eq!(visible_first_label(mode, &PairState::NeedsFirst, B), None);
        let imported = state(&[Judged::new(Stage::Final, None, says(Label::Support)).unwrap()]);
        assert_eq!(visible_first_label(mode, &imported, B), None);
        let triaged = state(&[j(Stage::First, A, Verdict::ClearlyNoEvidence)]);
        assert_eq!(visible_first_label(mode, &triaged, B), Some(Label::Nei));
    }
}

/// Random submissions: whatever `check_submission` accepts, replaying accepts, to the same state;
/// whatever it refuses, replaying refuses. Every accepted history ends final within three passes.
#[test]
fn submission_checks_and_replay_agree() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let people = [A, B, C];
    let verdicts = [
        Verdict::ClearlyNoEvidence,
        says(Label::Support),
        says(Label::Contradict),
        says(Label::Nei),
    ];
    let mut finals = 0;
    for _ in 0..3_000 {
        let mut history: Vec<Judged> = Vec::new();
        let mut current = PairState::NeedsFirst;
        for _ in 0..8 {
            let stage = Stage::ALL[rng.gen_range(0..3)];
            let who = people[rng.gen_range(0..3)];
            let verdict = verdicts[rng.gen_range(0..4)];
            let Ok(judged) = Judged::new(stage, Some(who), verdict) else {
                assert!(check_stage_verdict(stage, verdict).is_err());
                continue;
            };
            let mut candidate = history.clone();
            candidate.push(judged);
            match check_submission(&current, stage, who, true) {
                Ok(()) => {
                    current = state(&candidate);
                    history = candidate;
                }
                Err(reason) => {
                    let replay = PairState::from_judgments(&candidate).unwrap_err();
                    assert_eq!(
                        replay,
                        ProtocolError::InHistory {
                            position: history.len(),
                            reason: Box::new(reason)
                        }
                    );
                }
            }
        }
        assert!(history.len() <= 4);
        if let PairState::Final(done) = current {
            finals += 1;
            assert_eq!(Some(done.judgment), history.len().checked_sub(1));
            assert_eq!(history[done.judgment].verdict().label(), done.label);
        }
    }
    assert!(finals > 1_000, "{finals}");
}

/// Re-annotation: after a disagreement, a fresh annotator's label that agrees with either pass
/// makes it final by majority; a third label leaves the pair to adjudication, with no second
/// re-annotation; the two annotators cannot re-annotate; the re-annotator is blind.
#[test]
fn a_reannotation_settles_by_majority_or_leaves_the_pair_to_adjudication() {
    use Label::{Contradict, Nei, Support};
    const D: AnnotatorId = AnnotatorId(4);
    let disagreement = [
        j(Stage::First, A, says(Support)),
        j(Stage::Second, B, says(Nei)),
    ];
    let before = state(&disagreement);
    assert!(before.may_reannotate());
    assert_eq!(
        check_submission(&before, Stage::Second, A, false),
        Err(ProtocolError::ReannotationByPartisan(A))
    );
    assert_eq!(
        check_submission(&before, Stage::Second, B, true),
        Err(ProtocolError::ReannotationByPartisan(B))
    );
    assert_eq!(check_submission(&before, Stage::Second, C, false), Ok(()));
    // The re-annotator's form shows neither label; a second pass's may.
    assert!(!shows_first_label(Stage::Second, &before));
    assert!(shows_first_label(Stage::Adjudication, &before));
    assert!(shows_first_label(Stage::Second, &state(&disagreement[..1])));
    for (third, label) in [
        (Support, Some(Support)),
        (Nei, Some(Nei)),
        (Contradict, None),
    ] {
        let mut h = disagreement.to_vec();
        h.push(j(Stage::Second, C, says(third)));
        let after = state(&h);
        match label {
            Some(label) => {
                let PairState::Final(done) = after else {
                    panic!("{third:?}: {after:?}")
                };
                assert_eq!(done.label, label);
                assert_eq!(done.judgment, 2);
                assert_eq!(
                    done.decision,
                    Decision::Majority {
                        first: op(A, Support),
                        second: op(B, Nei),
                        third: op(C, third)
                    }
                );
                assert_eq!(after.first(), Some(op(A, Support)));
            }
            None => {
                assert_eq!(
                    after,
                    PairState::NeedsAdjudication {
                        first: op(A, Support),
                        second: op(B, Nei),
                        third: Some(op(C, Contradict)),
                    }
                );
                assert!(!after.may_reannotate());
                assert_eq!(
                    check_submission(&after, Stage::Second, D, false),
                    Err(ProtocolError::ReannotatedTwice)
                );
                h.push(j(Stage::Adjudication, A, says(Contradict)));
                let PairState::Final(done) = state(&h) else {
                    panic!("adjudicated")
                };
                assert_eq!(done.label, Contradict);
                assert_eq!(done.judgment, 3);
            }
        }
    }
    // Without a re-annotation, adjudication decides as before.
    let mut h = disagreement.to_vec();
    h.push(j(Stage::Adjudication, B, says(Support)));
    assert!(matches!(
        state(&h),
        PairState::Final(FinalLabel {
            decision: Decision::Adjudication { .. },
            ..
        })
    ));
}

/// Issue 35 R3: a re-annotation needs the project's say-so (its setting, or a re-annotation it
/// gave out); a first or second pass, and the replay of a history, do not.
#[test]
fn a_reannotation_needs_the_projects_setting_other_stages_do_not() {
    use Label::{Nei, Support};
    let disagreement = state(&[
        j(Stage::First, A, says(Support)),
        j(Stage::Second, B, says(Nei)),
    ]);
    assert_eq!(
        check_new_judgment(&disagreement, Stage::Second, C, false, false),
        Err(ProtocolError::ReannotationOff)
    );
    assert_eq!(
        check_new_judgment(&disagreement, Stage::Second, C, false, true),
        Ok(())
    );
    // The other rules still come first.
    assert_eq!(
        check_new_judgment(&disagreement, Stage::Second, A, false, true),
        Err(ProtocolError::ReannotationByPartisan(A))
    );
    assert_eq!(
        check_new_judgment(&disagreement, Stage::Adjudication, A, false, false),
        Ok(())
    );
    let first = state(&[j(Stage::First, A, says(Support))]);
    assert_eq!(
        check_new_judgment(&first, Stage::Second, B, false, false),
        Ok(())
    );
    assert_eq!(
        check_new_judgment(&PairState::NeedsFirst, Stage::First, A, false, false),
        Ok(())
    );
    // A history with a re-annotation stays valid whatever the setting is now.
    let h = [
        j(Stage::First, A, says(Support)),
        j(Stage::Second, B, says(Nei)),
        j(Stage::Second, C, says(Nei)),
    ];
    assert!(matches!(state(&h), PairState::Final(_)));
}
