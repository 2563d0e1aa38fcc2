use super::super::*;
use crate::label::Label;

use Direction::{Neither, Refutes, Supports};
use Label::{Contradict, Nei, Support};
use Specificity::{CloselyRelated, EvidenceMoreGeneral, EvidenceMoreSpecific, Matches};

/// FEVER's table, written out cell by cell.
const TABLE: [(Specificity, Direction, Option<Label>); 12] = [
    (Matches, Supports, Some(Support)),
    (Matches, Refutes, Some(Contradict)),
    (Matches, Neither, Some(Nei)),
    (EvidenceMoreSpecific, Supports, Some(Support)),
    (EvidenceMoreSpecific, Refutes, Some(Nei)),
    (EvidenceMoreSpecific, Neither, Some(Nei)),
    (EvidenceMoreGeneral, Supports, Some(Nei)),
    (EvidenceMoreGeneral, Refutes, Some(Contradict)),
    (EvidenceMoreGeneral, Neither, Some(Nei)),
    (CloselyRelated, Supports, None),
    (CloselyRelated, Refutes, None),
    (CloselyRelated, Neither, None),
];

/// Which label/relation choices warn, and what they suggest, written out cell by cell.
const WARNINGS: [(Label, Specificity, Option<Label>); 12] = [
    (Support, Matches, None),
    (Contradict, Matches, None),
    (Nei, Matches, None),
    (Support, EvidenceMoreSpecific, None),
    (Contradict, EvidenceMoreSpecific, Some(Nei)),
    (Nei, EvidenceMoreSpecific, None),
    (Support, EvidenceMoreGeneral, Some(Nei)),
    (Contradict, EvidenceMoreGeneral, None),
    (Nei, EvidenceMoreGeneral, None),
    (Support, CloselyRelated, None),
    (Contradict, CloselyRelated, None),
    (Nei, CloselyRelated, None),
];

#[test]
fn the_fever_table_is_exhaustive_and_exact() {
    let mut seen = 0;
    for &relation in Specificity::ALL {
        for direction in Direction::ALL {
            let expected = TABLE
                .iter()
                .find(|(r, d, _)| *r == relation && *d == direction)
                .map(|(_, _, l)| *l)
                .unwrap();
            assert_eq!(
                fever_label(relation, direction),
                expected,
                "{relation:?} {direction:?}"
            );
            seen += 1;
        }
    }
    assert_eq!(seen, TABLE.len());
}

#[test]
fn warnings_exactly_where_the_label_contradicts_the_rule() {
    for &relation in Specificity::ALL {
        for label in Label::ALL {
            let expected = WARNINGS
                .iter()
                .find(|(l, r, _)| *l == label && *r == relation)
                .map(|(_, _, s)| *s)
                .unwrap();
            let got = check_fever(label, relation);
            assert_eq!(got.map(|w| w.suggested), expected, "{label} {relation:?}");
            if let Some(w) = got {
                assert_eq!((w.label, w.relation), (label, relation));
                let text = w.to_string();
                assert!(text.contains(label.as_str()) && text.contains(rule_text(relation)));
            }
        }
    }
}

#[test]
fn rule_texts_name_the_labels_they_prescribe() {
    for &relation in Specificity::ALL {
        let text = rule_text(relation);
        for direction in Direction::ALL {
            if let Some(label) = fever_label(relation, direction) {
                assert!(text.contains(label.as_str()), "{relation:?}: {text}");
            }
        }
    }
    assert!(rule_text(CloselyRelated).contains("no FEVER rule"));
}
