//! What annotation pages and server functions exchange. Annotators' views carry no system names,
//! confidences or ranks, and another annotator's label only where the protocol shows it.

use serde::{Deserialize, Serialize};

/// The form as the page submits it (the server parses it into an annotation).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DraftForm {
    /// First pass: the abstract clearly holds no evidence.
    pub no_evidence: bool,
    /// SUPPORT, CONTRADICT or NEI; None when not chosen.
    pub label: Option<String>,
    /// Rationale sentences (0-based), one evidence set.
    pub sentences: Vec<u32>,
    /// A specificity relation's database spelling.
    pub specificity: Option<String>,
    pub revised_claim: Option<String>,
    pub note: Option<String>,
}

/// One person's annotation of a pair, as shown beside another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpinionView {
    /// first, second or adjudication.
    pub stage: String,
    pub annotator: String,
    pub label: String,
    pub no_evidence: bool,
    /// Rationale sentences (0-based), all evidence sets merged.
    pub sentences: Vec<u32>,
    pub specificity: Option<String>,
    pub revised_claim: Option<String>,
    pub note: Option<String>,
    /// The viewer's own annotation.
    pub mine: bool,
}

/// A comment on a pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommentView {
    pub author: String,
    pub body: String,
    pub at_ms: i64,
}

/// One item to annotate: an assignment with the claim and the abstract.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemView {
    /// The assignment; None when a lead adjudicates a pair nobody holds.
    pub assignment_id: Option<i64>,
    pub pool_entry_id: i64,
    /// first, second or adjudication.
    pub stage: String,
    pub claim_id: String,
    pub claim: String,
    pub doc_id: String,
    pub title: String,
    pub sentences: Vec<String>,
    /// Second pass in confirm mode (or after one's own submission): the first annotation.
    pub first: Option<OpinionView>,
    /// Adjudication: both annotations, side by side.
    pub opinions: Vec<OpinionView>,
    pub comments: Vec<CommentView>,
    pub flagged: bool,
    pub flag_note: Option<String>,
    /// confirm or blind.
    pub mode: String,
    /// At the first and second pass, while the lead has suggestions on: the chosen model
    /// assessor's label for the pair (SUPPORT, CONTRADICT or NEI), and nothing else of it — not
    /// its name, its system or a score.
    #[serde(default)]
    pub suggestion: Option<String>,
}

/// What happened to the caller's last submission, for the reveal and undo line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LastSubmission {
    pub judgment_id: i64,
    pub claim_id: String,
    pub doc_id: String,
    pub stage: String,
    pub label: String,
    /// In blind mode the second annotator sees the first label after submitting.
    pub first_label: Option<String>,
    /// "final SUPPORT", "waiting for a second annotator", "sent to adjudication", …
    pub outcome: String,
    /// Until when (ms since the epoch) the submission may be undone.
    pub undo_until_ms: i64,
    /// Whether it may be undone at all: not a blind second pass, which revealed the first label.
    pub undoable: bool,
    /// A qualification's training item: the reference annotation, shown after answering.
    #[serde(default)]
    pub feedback: Option<crate::model::gold::GoldFeedback>,
}

/// The head of the caller's queue in a project: the item to do, the one after it (preloaded),
/// and counts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueHead {
    pub project: String,
    pub current: Option<ItemView>,
    pub next: Option<ItemView>,
    /// Open items, the current one included.
    pub open: i64,
    /// Items the caller finished in this project.
    pub done: i64,
    pub last: Option<LastSubmission>,
    /// The version of the project's guidelines the caller must confirm before any item; while
    /// set, `current` and `next` are None.
    #[serde(default)]
    pub guidelines_to_confirm: Option<i64>,
    /// While the caller is a candidate in the project's qualification: where they stand.
    #[serde(default)]
    pub qualification: Option<crate::model::gold::QualificationStatus>,
}

/// One annotator's progress in a project (lead view).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnotatorProgress {
    pub user_id: i64,
    pub username: String,
    pub active: bool,
    pub open: i64,
    pub done_first: i64,
    pub done_second: i64,
    pub done_adjudication: i64,
    /// Median seconds per submitted item; None before the first.
    pub median_seconds: Option<f64>,
    /// Submitted items per hour of recorded annotation time.
    pub items_per_hour: Option<f64>,
}

/// A pair whose two passes disagree (lead view).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DisagreementRow {
    pub pool_entry_id: i64,
    pub claim_id: String,
    pub doc_id: String,
    pub claim: String,
    pub first: String,
    pub second: String,
    /// Who holds the adjudication; None when nobody active may (a lead must).
    pub adjudicator: Option<String>,
    pub comments: i64,
}

/// An open item (lead view), for reassignment and flags.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenItemRow {
    pub assignment_id: i64,
    pub pool_entry_id: i64,
    pub claim_id: String,
    pub doc_id: String,
    pub stage: String,
    pub annotator: String,
    pub entry_depth: u32,
    pub flagged: bool,
    pub flag_note: Option<String>,
}

/// Annotation in a project at a glance (lead view).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnotationOverview {
    pub mode: String,
    pub pooled: i64,
    /// Pooled pairs with a final label.
    pub finished: i64,
    pub open_first: i64,
    pub open_second: i64,
    pub open_adjudication: i64,
    /// Pairs waiting for a stage that no active annotator may take.
    pub unassigned: i64,
    pub annotators: Vec<AnnotatorProgress>,
    pub disagreements: Vec<DisagreementRow>,
    pub flagged: Vec<OpenItemRow>,
    /// Users who may be added as annotators (not yet members).
    pub candidates: Vec<String>,
    /// The judging order and budget.
    pub judging: JudgingView,
}

/// The project's judging order as the lead's annotation page shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgingView {
    /// `depth`, `mtf`, `mab-maxmean`, `mab-thompson` or `hedge`.
    pub order: String,
    pub seed: u64,
    /// The most first passes served; `None`: no limit.
    pub budget: Option<u64>,
    /// First passes submitted (undone ones not counted).
    pub spent: u64,
    /// First passes given out and not yet submitted.
    pub held: u64,
    /// Whether first passes are chosen when asked (any order but `depth`, or a budget).
    pub live: bool,
    /// Every order, for the choice.
    pub orders: Vec<String>,
}

/// The project's suggestions as the lead's annotation page shows them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuggestionsView {
    /// The model assessor whose labels annotators see; None: suggestions are off.
    pub current: Option<String>,
    /// The project's model assessors, by name, to choose from.
    pub assessors: Vec<String>,
}

impl DraftForm {
    /// The form as the annotation rules read it (one evidence set).
    pub fn to_draft(&self) -> crate::annotation::AnnotationDraft {
        crate::annotation::AnnotationDraft {
            no_evidence: self.no_evidence,
            label: self.label.clone(),
            rationale: if self.sentences.is_empty() {
                Vec::new()
            } else {
                vec![self.sentences.iter().map(|&s| i64::from(s)).collect()]
            },
            specificity: self.specificity.clone(),
            revised_claim: self.revised_claim.clone(),
            note: self.note.clone(),
        }
    }
}
