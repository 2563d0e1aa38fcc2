use super::super::*;
use crate::label::Label;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn draft(
    label: &str,
    rationale: Vec<Vec<i64>>,
    specificity: &str,
    revised: &str,
) -> AnnotationDraft {
    let some = |t: &str| (!t.is_empty()).then(|| t.to_owned());
    AnnotationDraft {
        no_evidence: false,
        label: some(label),
        rationale,
        specificity: some(specificity),
        revised_claim: some(revised),
        note: None,
    }
}

fn refusal(d: &AnnotationDraft, sentences: usize) -> (AnnotationError, String) {
    let err = Annotation::parse(d, sentences).unwrap_err();
    let text = err.to_string();
    (err, text)
}

#[test]
fn support_with_rationale_and_relation() {
    let mut d = draft("supports", vec![vec![3, 1, 3], vec![0]], "matches", "");
    d.note = Some("  checked table 2 \n".into());
    let a = Annotation::parse(&d, 4).unwrap();
    assert_eq!(a.label(), Label::Support);
    assert!(!a.no_evidence());
    let sets: Vec<&[u32]> = a.rationale().iter().map(EvidenceSet::sentences).collect();
    assert_eq!(sets, vec![&[1, 3][..], &[0][..]]);
    assert_eq!(a.specificity(), Some(Specificity::Matches));
    assert_eq!(a.revised_claim(), None);
    assert_eq!(a.note(), Some("checked table 2"));
    assert_eq!(a.warning(), None);
    let json: serde_json::Value = serde_json::from_str(&a.rationale_json()).unwrap();
    assert_eq!(json, serde_json::json!([[1, 3], [0]]));
    assert_eq!(Annotation::parse(&a.to_draft(), 4).unwrap(), a);
}

#[test]
fn contradict_of_a_generalization_keeps_the_revised_claim() {
    let d = draft(
        "REFUTES",
        vec![vec![2]],
        "evidence_more_general",
        "  Statins reduce mortality. ",
    );
    let a = Annotation::parse(&d, 3).unwrap();
    assert_eq!(a.label(), Label::Contradict);
    assert_eq!(a.revised_claim(), Some("Statins reduce mortality."));
    assert_eq!(a.warning(), None);
    // SUPPORT from a generalization is kept but warned about.
    let d = draft(
        "SUPPORT",
        vec![vec![2]],
        "evidence_more_general",
        "Statins help.",
    );
    let w = Annotation::parse(&d, 3).unwrap().warning().unwrap();
    assert_eq!(w.suggested, Label::Nei);
}

#[test]
fn clearly_no_evidence_is_nei_with_nothing_else() {
    for label in [None, Some("NEI".to_owned()), Some(" ".to_owned())] {
        let d = AnnotationDraft {
            no_evidence: true,
            label,
            note: Some("off topic".into()),
            ..AnnotationDraft::default()
        };
        let a = Annotation::parse(&d, 5).unwrap();
        assert!(a.no_evidence());
        assert_eq!(a.label(), Label::Nei);
        assert!(a.rationale().is_empty() && a.relation().is_none());
        assert_eq!(a.rationale_json(), "[]");
        assert_eq!(Annotation::parse(&a.to_draft(), 5).unwrap(), a);
    }
    let base = AnnotationDraft {
        no_evidence: true,
        ..AnnotationDraft::default()
    };
    let cases = [
        (
            AnnotationDraft {
                label: Some("SUPPORT".into()),
                ..base.clone()
            },
            AnnotationError::NoEvidenceWithLabel(Label::Support),
            "label",
        ),
        (
            AnnotationDraft {
                rationale: vec![vec![1]],
                ..base.clone()
            },
            AnnotationError::NoEvidenceWithDetails("rationale"),
            "rationale",
        ),
        (
            AnnotationDraft {
                specificity: Some("matches".into()),
                ..base.clone()
            },
            AnnotationError::NoEvidenceWithDetails("specificity"),
            "specificity",
        ),
        (
            AnnotationDraft {
                revised_claim: Some("x".into()),
                ..base.clone()
            },
            AnnotationError::NoEvidenceWithDetails("revised_claim"),
            "revised_claim",
        ),
    ];
    for (d, expected, field) in cases {
        let (err, text) = refusal(&d, 5);
        assert_eq!(err, expected);
        assert_eq!(err.field(), field);
        assert_eq!(err.input().label(), field);
        assert!(text.contains("clearly no evidence"), "{text}");
    }
}

#[test]
fn nei_after_reading_may_carry_a_relation_but_no_rationale() {
    let a = Annotation::parse(&draft("NOT ENOUGH INFO", vec![], "", ""), 3).unwrap();
    assert_eq!(
        (a.label(), a.no_evidence(), a.relation()),
        (Label::Nei, false, None)
    );
    let d = draft(
        "NEI",
        vec![],
        "evidence_more_specific",
        "In mice, X lowers Y.",
    );
    let a = Annotation::parse(&d, 3).unwrap();
    assert_eq!(a.specificity(), Some(Specificity::EvidenceMoreSpecific));
    assert_eq!(a.revised_claim(), Some("In mice, X lowers Y."));
    assert_eq!(a.warning(), None);
    let (err, text) = refusal(&draft("NEI", vec![vec![0]], "", ""), 3);
    assert_eq!(err, AnnotationError::RationaleOnNei);
    assert!(text.contains("NEI takes no rationale"));
}

#[test]
fn refusals_name_the_problem_and_the_field() {
    let cases: Vec<(AnnotationDraft, usize, AnnotationError, &str, &str)> =
        vec![
        (draft("", vec![], "", ""), 3, AnnotationError::MissingLabel, "label", "choose a label"),
        (
            draft("MAYBE", vec![], "", ""),
            3,
            AnnotationError::UnknownLabel(crate::label::LabelError("MAYBE".into())),
            "label",
            "unknown label \"MAYBE\"",
        ),
        (
            draft("SUPPORT", vec![], "matches", ""),
            3,
            AnnotationError::MissingRationale(Label::Support),
            "rationale",
            "SUPPORT needs at least one rationale sentence",
        ),
        (
            draft("CONTRADICT", vec![vec![0], vec![]], "matches", ""),
            3,
            AnnotationError::EmptyEvidenceSet { set: 2 },
            "rationale",
            "evidence set 2 is empty",
        ),
        (
            draft("SUPPORT", vec![vec![10]], "matches", ""),
            10,
            AnnotationError::SentenceOutOfRange { set: 1, index: 10, count: 10 },
            "rationale",
            "evidence set 1 names sentence 10, but the abstract has 10 sentences (indices 0 to 9)",
        ),
        (
            draft("SUPPORT", vec![vec![0], vec![-1]], "matches", ""),
            10,
            AnnotationError::SentenceOutOfRange { set: 2, index: -1, count: 10 },
            "rationale",
            "names sentence -1",
        ),
        (
            draft("SUPPORT", vec![vec![0]], "matches", ""),
            0,
            AnnotationError::SentenceOutOfRange { set: 1, index: 0, count: 0 },
            "rationale",
            "the abstract has no sentences",
        ),
        (
            draft("SUPPORT", vec![vec![1]], "matches", ""),
            1,
            AnnotationError::SentenceOutOfRange { set: 1, index: 1, count: 1 },
            "rationale",
            "the abstract has 1 sentence (index 0)",
        ),
        (
            draft("SUPPORT", vec![vec![2, 1], vec![0], vec![1, 2, 2]], "matches", ""),
            3,
            AnnotationError::DuplicateEvidenceSet { first: 1, second: 3 },
            "rationale",
            "evidence sets 1 and 3 are the same",
        ),
        (
            draft("CONTRADICT", vec![vec![0]], "", ""),
            3,
            AnnotationError::MissingSpecificity(Label::Contradict),
            "specificity",
            "CONTRADICT needs the relation",
        ),
        (
            draft("SUPPORT", vec![vec![0]], "narrower", ""),
            3,
            AnnotationError::UnknownSpecificity(Specificity::parse("narrower").unwrap_err()),
            "specificity",
            "unknown specificity \"narrower\"",
        ),
        (
            draft("SUPPORT", vec![vec![0]], "closely_related", " "),
            3,
            AnnotationError::MissingRevisedClaim(Specificity::CloselyRelated),
            "revised_claim",
            "“The evidence addresses a closely related claim” needs a revised claim",
        ),
        (
            draft("SUPPORT", vec![vec![0]], "matches", "Another claim."),
            3,
            AnnotationError::RevisedClaimWithMatches,
            "revised_claim",
            "only for evidence that does not match",
        ),
        (
            draft("NEI", vec![], "", "Another claim."),
            3,
            AnnotationError::RevisedClaimWithoutSpecificity,
            "revised_claim",
            "needs a relation other than \"matches\"",
        ),
    ];
    for (d, sentences, expected, field, message) in cases {
        let (err, text) = refusal(&d, sentences);
        assert_eq!(err, expected, "{d:?}");
        assert_eq!(err.field(), field);
        assert_eq!(err.input().label(), field);
        assert!(text.contains(message), "{text:?} lacks {message:?}");
    }
}

#[test]
fn texts_are_limited_in_characters_not_bytes() {
    let mut d = draft("NEI", vec![], "", "");
    d.note = Some("é".repeat(MAX_NOTE_CHARS));
    assert!(Annotation::parse(&d, 1).is_ok());
    d.note = Some("é".repeat(MAX_NOTE_CHARS + 1));
    let (err, text) = refusal(&d, 1);
    assert_eq!(
        err,
        AnnotationError::TooLong {
            field: "note",
            chars: MAX_NOTE_CHARS + 1,
            max: MAX_NOTE_CHARS
        }
    );
    assert!(text.contains("the note is 5001 characters long; at most 5000"));
    let long = "ü".repeat(MAX_REVISED_CLAIM_CHARS + 1);
    let (err, _) = refusal(&draft("NEI", vec![], "closely_related", &long), 1);
    assert_eq!(err.field(), "revised_claim");
    d.note = Some(" \t ".into());
    assert_eq!(Annotation::parse(&d, 1).unwrap().note(), None);
}

/// An independent statement of which drafts are annotations.
fn acceptable(d: &AnnotationDraft, n: usize) -> bool {
    let blank = |t: &Option<String>| t.as_deref().is_none_or(|t| t.trim().is_empty());
    let label = d
        .label
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .map(Label::parse);
    let spec = d
        .specificity
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .map(Specificity::parse);
    if matches!(label, Some(Err(_))) || matches!(spec, Some(Err(_))) {
        return false;
    }
    let label = label.map(Result::unwrap);
    let spec = spec.map(Result::unwrap);
    let revised = !blank(&d.revised_claim);
    if d.no_evidence {
        return matches!(label, None | Some(Label::Nei))
            && d.rationale.is_empty()
            && spec.is_none()
            && !revised;
    }
    let relation_ok = match spec {
        None => !revised,
        Some(Specificity::Matches) => !revised,
        Some(_) => revised,
    };
    let sets_ok = {
        let mut norm: Vec<Vec<i64>> = d
            .rationale
            .iter()
            .map(|s| {
                let mut s = s.clone();
                s.sort();
                s.dedup();
                s
            })
            .collect();
        let in_range = norm
            .iter()
            .all(|s| !s.is_empty() && s.iter().all(|&i| i >= 0 && (i as usize) < n));
        let count = norm.len();
        norm.sort();
        norm.dedup();
        in_range && norm.len() == count
    };
    match label {
        None => false,
        Some(Label::Nei) => relation_ok && d.rationale.is_empty(),
        Some(_) => relation_ok && spec.is_some() && !d.rationale.is_empty() && sets_ok,
    }
}

#[test]
fn random_drafts_parse_exactly_when_acceptable_and_round_trip() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let labels = ["", "SUPPORT", "CONTRADICT", "NEI", "refutes", "maybe"];
    let specs = [
        "",
        "matches",
        "evidence_more_specific",
        "evidence_more_general",
        "closely_related",
        "other",
    ];
    let revised = ["", "  ", "A revised claim."];
    // Accepted drafts of each kind: clearly no evidence, NEI after reading, evidence.
    let (mut accepted, mut refused) = ([0; 3], 0);
    for _ in 0..20_000 {
        let n = rng.gen_range(0..6usize);
        let sets = (0..rng.gen_range(0..3))
            .map(|_| {
                (0..rng.gen_range(0..4))
                    .map(|_| rng.gen_range(-1..7i64))
                    .collect()
            })
            .collect();
        let d = AnnotationDraft {
            no_evidence: rng.gen_bool(0.3),
            label: Some(labels[rng.gen_range(0..labels.len())].to_owned()),
            rationale: sets,
            specificity: Some(specs[rng.gen_range(0..specs.len())].to_owned()),
            revised_claim: Some(revised[rng.gen_range(0..revised.len())].to_owned()),
            note: None,
        };
        match Annotation::parse(&d, n) {
            Ok(a) => {
                accepted[if a.no_evidence() {
                    0
                } else if a.label().is_evidence() {
                    2
                } else {
                    1
                }] += 1;
                assert!(acceptable(&d, n), "accepted {d:?} with {n} sentences");
                assert_eq!(Annotation::parse(&a.to_draft(), n).unwrap(), a);
                assert_eq!(a.label().is_evidence(), !a.rationale().is_empty());
                if a.label().is_evidence() {
                    assert!(a.relation().is_some());
                }
                let mismatch = a.specificity().is_some_and(|s| s != Specificity::Matches);
                assert_eq!(mismatch, a.revised_claim().is_some());
                if a.no_evidence() {
                    assert!(a.relation().is_none() && a.label() == Label::Nei);
                }
            }
            Err(err) => {
                refused += 1;
                assert!(
                    !acceptable(&d, n),
                    "refused {d:?} with {n} sentences: {err}"
                );
            }
        }
    }
    assert!(
        accepted.iter().all(|&n| n > 50) && refused > 1_000,
        "{accepted:?} accepted, {refused} refused"
    );
}
