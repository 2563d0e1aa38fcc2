//! One person's annotation of a claim/abstract pair, parsed from the form so that only states the
//! protocol allows exist.
//!
//! The states ([`Annotation::parse`]):
//! - **clearly no evidence** (first pass only, see [`super::protocol`]): label NEI and nothing
//!   else, no rationale, relation or revised claim;
//! - **NEI after reading**: no rationale (rationales justify SUPPORT or CONTRADICT, as in SciFact),
//!   and an *optional* relation. Decision: NEI may carry the relation, because the FEVER
//!   conventions make specificity a reason for NEI (a generalization that holds, a special case
//!   that fails), and recording it, with the revised claim the evidence does address, is the
//!   claim revision SciFact-Open asks for;
//! - **SUPPORT or CONTRADICT**: at least one evidence set of sentence indices within the
//!   abstract, and a relation.
//!
//! A relation other than [`Specificity::Matches`] needs a revised claim; `Matches` takes none.
//! Texts are trimmed; blank means absent. Evidence sets are sorted, with repeated indices merged;
//! empty or repeated sets are refused.

use super::fever::{check_fever, Warning};
use super::vocab::{Specificity, UnknownValue};
use crate::label::{Label, LabelError};
use serde::{Deserialize, Serialize};

/// Longest note accepted, in characters.
pub const MAX_NOTE_CHARS: usize = 5_000;
/// Longest revised claim accepted, in characters.
pub const MAX_REVISED_CLAIM_CHARS: usize = 1_000;

/// The form as submitted: loose text and numbers, before [`Annotation::parse`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnnotationDraft {
    /// First pass: "clearly no evidence" ticked.
    pub no_evidence: bool,
    /// Any spelling [`Label::parse`] accepts; blank or absent for none.
    pub label: Option<String>,
    /// Evidence sets, each a list of 0-based sentence indices.
    pub rationale: Vec<Vec<i64>>,
    /// A [`Specificity`] database spelling; blank or absent for none.
    pub specificity: Option<String>,
    /// The claim the evidence does address, when the relation is not `matches`.
    pub revised_claim: Option<String>,
    /// Free text.
    pub note: Option<String>,
}

/// One evidence set: sentence indices of the abstract, sorted, distinct, at least one.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct EvidenceSet(Vec<u32>);

impl EvidenceSet {
    /// The sentence indices, ascending.
    pub fn sentences(&self) -> &[u32] {
        &self.0
    }
}

/// How the evidence relates to the claim: a [`Specificity`], with the revised claim exactly when
/// it is not [`Specificity::Matches`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    specificity: Specificity,
    revised_claim: Option<String>,
}

impl Relation {
    /// The relation.
    pub fn specificity(&self) -> Specificity {
        self.specificity
    }

    /// The revised claim; `Some` exactly when the relation is not `Matches`.
    pub fn revised_claim(&self) -> Option<&str> {
        self.revised_claim.as_deref()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    ClearlyNoEvidence,
    Nei {
        relation: Option<Relation>,
    },
    Evidence {
        label: Label,
        rationale: Vec<EvidenceSet>,
        relation: Relation,
    },
}

/// A parsed annotation. See the module documentation for the states it can be in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    kind: Kind,
    note: Option<String>,
}

/// Why a draft is not an annotation. [`AnnotationError::field`] names the form field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnnotationError {
    #[error("choose a label: SUPPORT, CONTRADICT or NEI")]
    MissingLabel,
    #[error(transparent)]
    UnknownLabel(#[from] LabelError),
    #[error("\"clearly no evidence\" means NEI; it cannot go with the label {0}")]
    NoEvidenceWithLabel(Label),
    #[error("\"clearly no evidence\" takes nothing else: remove the {}", in_words(.0))]
    NoEvidenceWithDetails(&'static str),
    #[error("{0} needs at least one rationale sentence")]
    MissingRationale(Label),
    #[error("evidence set {set} is empty: tick at least one sentence or remove the set")]
    EmptyEvidenceSet { set: usize },
    #[error("evidence set {set} names sentence {index}, but {}", sentence_range(*.count))]
    SentenceOutOfRange {
        set: usize,
        index: i64,
        count: usize,
    },
    #[error("evidence sets {first} and {second} are the same; remove one")]
    DuplicateEvidenceSet { first: usize, second: usize },
    #[error("NEI takes no rationale sentences: untick them, or choose SUPPORT or CONTRADICT, which they justify")]
    RationaleOnNei,
    #[error("{0} needs the relation between the evidence and the claim (specificity)")]
    MissingSpecificity(Label),
    #[error(transparent)]
    UnknownSpecificity(#[from] UnknownValue),
    #[error("“{}” needs a revised claim: type the claim as the evidence does address it", .0.human())]
    MissingRevisedClaim(Specificity),
    #[error("a revised claim is only for evidence that does not match the claim; remove it or choose another relation")]
    RevisedClaimWithMatches,
    #[error("a revised claim needs a relation other than \"matches\"; choose one")]
    RevisedClaimWithoutSpecificity,
    #[error("the {field} is {chars} characters long; at most {max} are accepted")]
    TooLong {
        field: &'static str,
        chars: usize,
        max: usize,
    },
}

/// A form field's name as a message says it.
fn in_words(field: &str) -> &str {
    match field {
        "rationale" => "rationale sentences",
        "revised_claim" => "revised claim",
        other => other,
    }
}

fn sentence_range(count: usize) -> String {
    match count {
        0 => "the abstract has no sentences".to_owned(),
        1 => "the abstract has 1 sentence (index 0)".to_owned(),
        n => format!("the abstract has {n} sentences (indices 0 to {})", n - 1),
    }
}

impl AnnotationError {
    /// The [`AnnotationDraft`] field the error is about, for the form to highlight.
    pub fn field(&self) -> &'static str {
        match self {
            AnnotationError::MissingLabel
            | AnnotationError::UnknownLabel(_)
            | AnnotationError::NoEvidenceWithLabel(_) => "label",
            AnnotationError::NoEvidenceWithDetails(field) => field,
            AnnotationError::MissingRationale(_)
            | AnnotationError::EmptyEvidenceSet { .. }
            | AnnotationError::SentenceOutOfRange { .. }
            | AnnotationError::DuplicateEvidenceSet { .. }
            | AnnotationError::RationaleOnNei => "rationale",
            AnnotationError::MissingSpecificity(_) | AnnotationError::UnknownSpecificity(_) => {
                "specificity"
            }
            AnnotationError::MissingRevisedClaim(_)
            | AnnotationError::RevisedClaimWithMatches
            | AnnotationError::RevisedClaimWithoutSpecificity => "revised_claim",
            AnnotationError::TooLong { field, .. } => field,
        }
    }

    /// The field the error is about as commands name it (its label is [`Self::field`]).
    pub fn input(&self) -> crate::field::Field {
        use crate::field::Field;
        match self.field() {
            "label" => Field::Label,
            "rationale" => Field::Rationale,
            "specificity" => Field::Specificity,
            "revised_claim" => Field::RevisedClaim,
            // `note`: the only other text of the form.
            _ => Field::Note,
        }
    }
}

/// Trims `text`; blank is `None`; longer than `max` characters is refused.
fn clean_text(
    text: Option<&str>,
    field: &'static str,
    max: usize,
) -> Result<Option<String>, AnnotationError> {
    let Some(trimmed) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let chars = trimmed.chars().count();
    if chars > max {
        return Err(AnnotationError::TooLong { field, chars, max });
    }
    Ok(Some(trimmed.to_owned()))
}

fn parse_rationale(
    sets: &[Vec<i64>],
    sentence_count: usize,
) -> Result<Vec<EvidenceSet>, AnnotationError> {
    let mut parsed: Vec<EvidenceSet> = Vec::with_capacity(sets.len());
    for (i, raw) in sets.iter().enumerate() {
        let set = i + 1;
        if raw.is_empty() {
            return Err(AnnotationError::EmptyEvidenceSet { set });
        }
        let mut indices = raw
            .iter()
            .map(|&index| {
                u32::try_from(index)
                    .ok()
                    .filter(|&s| usize::try_from(s).is_ok_and(|s| s < sentence_count))
                    .ok_or(AnnotationError::SentenceOutOfRange {
                        set,
                        index,
                        count: sentence_count,
                    })
            })
            .collect::<Result<Vec<u32>, _>>()?;
        indices.sort_unstable();
        indices.dedup();
        let candidate = EvidenceSet(indices);
        if let Some(first) = parsed.iter().position(|earlier| *earlier == candidate) {
            return Err(AnnotationError::DuplicateEvidenceSet {
                first: first + 1,
                second: set,
            });
        }
        parsed.push(candidate);
    }
    Ok(parsed)
}

fn parse_relation(
    specificity: Option<Specificity>,
    revised_claim: Option<String>,
) -> Result<Option<Relation>, AnnotationError> {
    match (specificity, revised_claim) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(AnnotationError::RevisedClaimWithoutSpecificity),
        (Some(Specificity::Matches), Some(_)) => Err(AnnotationError::RevisedClaimWithMatches),
        (Some(Specificity::Matches), None) => Ok(Some(Relation {
            specificity: Specificity::Matches,
            revised_claim: None,
        })),
        (Some(other), None) => Err(AnnotationError::MissingRevisedClaim(other)),
        (Some(other), Some(claim)) => Ok(Some(Relation {
            specificity: other,
            revised_claim: Some(claim),
        })),
    }
}

impl Annotation {
    /// Parses a submitted form against the abstract it annotates (`abstract_sentence_count`
    /// sentences, indexed from 0). The first refusal found is returned, with its field.
    pub fn parse(
        draft: &AnnotationDraft,
        abstract_sentence_count: usize,
    ) -> Result<Annotation, AnnotationError> {
        let note = clean_text(draft.note.as_deref(), "note", MAX_NOTE_CHARS)?;
        let label = draft
            .label
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(Label::parse)
            .transpose()?;
        let specificity = draft
            .specificity
            .as_deref()
            .filter(|t| !t.trim().is_empty())
            .map(Specificity::parse)
            .transpose()?;
        let revised_claim = clean_text(
            draft.revised_claim.as_deref(),
            "revised_claim",
            MAX_REVISED_CLAIM_CHARS,
        )?;

        if draft.no_evidence {
            return match label {
                Some(label) if label != Label::Nei => {
                    Err(AnnotationError::NoEvidenceWithLabel(label))
                }
                _ if !draft.rationale.is_empty() => {
                    Err(AnnotationError::NoEvidenceWithDetails("rationale"))
                }
                _ if specificity.is_some() => {
                    Err(AnnotationError::NoEvidenceWithDetails("specificity"))
                }
                _ if revised_claim.is_some() => {
                    Err(AnnotationError::NoEvidenceWithDetails("revised_claim"))
                }
                _ => Ok(Annotation {
                    kind: Kind::ClearlyNoEvidence,
                    note,
                }),
            };
        }

        let label = label.ok_or(AnnotationError::MissingLabel)?;
        let relation = parse_relation(specificity, revised_claim)?;
        let kind = if label == Label::Nei {
            if !draft.rationale.is_empty() {
                return Err(AnnotationError::RationaleOnNei);
            }
            Kind::Nei { relation }
        } else {
            let rationale = parse_rationale(&draft.rationale, abstract_sentence_count)?;
            if rationale.is_empty() {
                return Err(AnnotationError::MissingRationale(label));
            }
            let relation = relation.ok_or(AnnotationError::MissingSpecificity(label))?;
            Kind::Evidence {
                label,
                rationale,
                relation,
            }
        };
        Ok(Annotation { kind, note })
    }

    /// The label: NEI for "clearly no evidence".
    pub fn label(&self) -> Label {
        match &self.kind {
            Kind::ClearlyNoEvidence | Kind::Nei { .. } => Label::Nei,
            Kind::Evidence { label, .. } => *label,
        }
    }

    /// "Clearly no evidence" was ticked (`judgments.no_evidence`).
    pub fn no_evidence(&self) -> bool {
        matches!(self.kind, Kind::ClearlyNoEvidence)
    }

    /// The evidence sets; empty unless the label is SUPPORT or CONTRADICT.
    pub fn rationale(&self) -> &[EvidenceSet] {
        match &self.kind {
            Kind::Evidence { rationale, .. } => rationale,
            Kind::ClearlyNoEvidence | Kind::Nei { .. } => &[],
        }
    }

    /// The evidence sets as `judgments.rationale` stores them: a JSON array of arrays.
    pub fn rationale_json(&self) -> String {
        let sets: Vec<String> = self
            .rationale()
            .iter()
            .map(|set| {
                let indices: Vec<String> = set.sentences().iter().map(u32::to_string).collect();
                format!("[{}]", indices.join(","))
            })
            .collect();
        format!("[{}]", sets.join(","))
    }

    /// The relation, when one was given (always for SUPPORT and CONTRADICT).
    pub fn relation(&self) -> Option<&Relation> {
        match &self.kind {
            Kind::ClearlyNoEvidence => None,
            Kind::Nei { relation } => relation.as_ref(),
            Kind::Evidence { relation, .. } => Some(relation),
        }
    }

    /// `judgments.specificity`.
    pub fn specificity(&self) -> Option<Specificity> {
        self.relation().map(Relation::specificity)
    }

    /// `judgments.revised_claim`.
    pub fn revised_claim(&self) -> Option<&str> {
        self.relation().and_then(Relation::revised_claim)
    }

    /// `judgments.note`, trimmed.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// The FEVER-convention warning for the chosen label and relation, if any.
    pub fn warning(&self) -> Option<Warning> {
        self.specificity()
            .and_then(|relation| check_fever(self.label(), relation))
    }

    /// The form that parses back to this annotation (to re-show a stored judgment for editing).
    pub fn to_draft(&self) -> AnnotationDraft {
        AnnotationDraft {
            no_evidence: self.no_evidence(),
            label: Some(self.label().as_str().to_owned()),
            rationale: self
                .rationale()
                .iter()
                .map(|set| set.sentences().iter().map(|&s| i64::from(s)).collect())
                .collect(),
            specificity: self.specificity().map(|s| s.as_str().to_owned()),
            revised_claim: self.revised_claim().map(str::to_owned),
            note: self.note.clone(),
        }
    }
}
