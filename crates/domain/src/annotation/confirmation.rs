//! What a second annotator in confirm mode did with the first annotation they were shown: the
//! fields they kept as they were and those they changed (issue 39), stored with their judgment
//! so that agreement counts an unchanged confirmation apart from an edited one.

use crate::label::Label;
use serde::{Deserialize, Serialize};

/// A field of an answer that a confirmation keeps or changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerField {
    Label,
    Rationale,
    Specificity,
    RevisedClaim,
}

impl AnswerField {
    pub const ALL: [AnswerField; 4] = [
        AnswerField::Label,
        AnswerField::Rationale,
        AnswerField::Specificity,
        AnswerField::RevisedClaim,
    ];

    /// The field as a page names it.
    pub fn title(self) -> &'static str {
        match self {
            AnswerField::Label => "label",
            AnswerField::Rationale => "rationale",
            AnswerField::Specificity => "specificity",
            AnswerField::RevisedClaim => "revised claim",
        }
    }
}

/// One answer's fields as a confirmation compares them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer<'a> {
    /// "Clearly no evidence" counts as NEI.
    pub label: Label,
    /// Rationale sentences, evidence sets merged (any order: compared as a set).
    pub sentences: Vec<u32>,
    pub specificity: Option<&'a str>,
    pub revised_claim: Option<&'a str>,
}

/// The fields kept as the first annotator gave them, and those changed, each in
/// [`AnswerField::ALL`]'s order; a field neither gave counts as kept.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confirmation {
    pub kept: Vec<AnswerField>,
    pub edited: Vec<AnswerField>,
}

impl Confirmation {
    /// What `second` kept of `first` and what it changed.
    pub fn of(first: &Answer, second: &Answer) -> Confirmation {
        let set = |s: &[u32]| {
            let mut s = s.to_vec();
            s.sort_unstable();
            s.dedup();
            s
        };
        let text = |t: Option<&str>| {
            t.map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        let mut out = Confirmation::default();
        for field in AnswerField::ALL {
            let same = match field {
                AnswerField::Label => first.label == second.label,
                AnswerField::Rationale => set(&first.sentences) == set(&second.sentences),
                AnswerField::Specificity => first.specificity == second.specificity,
                AnswerField::RevisedClaim => {
                    text(first.revised_claim) == text(second.revised_claim)
                }
            };
            if same {
                out.kept.push(field);
            } else {
                out.edited.push(field);
            }
        }
        out
    }

    /// Every field kept: the first annotation confirmed as it was.
    pub fn unchanged(&self) -> bool {
        self.edited.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer<'a>(
        label: Label,
        sentences: &[u32],
        spec: Option<&'a str>,
        rev: Option<&'a str>,
    ) -> Answer<'a> {
        Answer {
            label,
            sentences: sentences.to_vec(),
            specificity: spec,
            revised_claim: rev,
        }
    }

    #[test]
    fn an_unchanged_confirmation_keeps_every_field() {
        let first = answer(Label::Support, &[3, 1], Some("matches"), None);
        let second = answer(Label::Support, &[1, 3], Some("matches"), Some("  "));
        let c = Confirmation::of(&first, &second);
        assert!(c.unchanged());
        assert_eq!(c.kept, AnswerField::ALL.to_vec());
    }

    #[test]
    fn each_changed_field_is_named_in_order() {
        let first = answer(
            Label::Contradict,
            &[2],
            Some("closely_related"),
            Some("A claim."),
        );
        // Changed to NEI: the form drops the rationale, specificity and revision.
        let nei = answer(Label::Nei, &[], None, None);
        let c = Confirmation::of(&first, &nei);
        assert_eq!(c.kept, vec![]);
        assert_eq!(c.edited, AnswerField::ALL.to_vec());
        // Only the rationale widened.
        let wider = answer(
            Label::Contradict,
            &[2, 4],
            Some("closely_related"),
            Some("A claim. "),
        );
        let c = Confirmation::of(&first, &wider);
        assert_eq!(c.edited, vec![AnswerField::Rationale]);
        assert_eq!(
            c.kept,
            vec![
                AnswerField::Label,
                AnswerField::Specificity,
                AnswerField::RevisedClaim
            ]
        );
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(
            json,
            r#"{"kept":["label","specificity","revised_claim"],"edited":["rationale"]}"#
        );
    }
}
