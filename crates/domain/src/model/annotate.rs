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
    /// The paper's venue, year, authors and links, as far as the corpus line says.
    #[serde(default)]
    pub paper: super::paper::PaperMeta,
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
    /// The viewer's own answer to this item that they undid: it comes back into the form.
    #[serde(default)]
    pub undone: Option<DraftForm>,
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
    /// The server's clock when it answered (ms since the epoch), against which the page reads
    /// [`LastSubmission::undo_until_ms`] (the browser's clock may differ).
    #[serde(default)]
    pub server_ms: i64,
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgingView {
    /// `depth`, `mtf`, `mab-maxmean`, `mab-thompson`, `hedge` or `cal`.
    pub order: String,
    pub seed: u64,
    /// The corpus retrievals per claim `cal` adds to the runs' pairs.
    pub candidates: u32,
    /// What `cal` has to work with and has added, once its retrievals were made.
    pub cal: Option<CalView>,
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

/// The `cal` order's corpus retrievals and what it added to the pool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalView {
    /// Retrievals per claim, by `bm25` or `hybrid`, of how many claims, made when (ms).
    pub per_claim: u32,
    pub retriever: String,
    pub claims: u64,
    pub made_at: i64,
    /// Pairs `cal` added to the pool, and of those, pairs no pooled run ranked.
    pub picks: u64,
    pub outside_runs: u64,
    /// The latest stopping sample and its test, under `cal`.
    pub stopping: Option<CalStopView>,
    /// A corpus or claims import finished after the retrievals were made: they may miss new
    /// abstracts or claims until they are made again.
    pub stale: bool,
}

/// The `cal` order's latest stopping sample: a simple random sample of its candidates
/// unjudged when it was drawn, served before the order's proposals, tested once all judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalStopView {
    pub target_recall: f64,
    /// 1 − α.
    pub confidence: f64,
    /// Pairs drawn, and of those judged so far.
    pub size: u64,
    pub judged: u64,
    /// Candidates unjudged when it was drawn (N), evidence found before it (K).
    pub unjudged: u64,
    pub found: u64,
    /// When (ms).
    pub drawn_at: i64,
    /// `Waiting` until every pair is judged, then the test.
    pub stopping: crate::model::survey::Stopping,
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

    /// The form as the first annotation left it (a second pass in confirm mode): agreeing is
    /// one key. The note stays the second annotator's own.
    pub fn from_opinion(first: &OpinionView) -> DraftForm {
        DraftForm {
            no_evidence: false,
            label: Some(first.label.clone()),
            sentences: first.sentences.clone(),
            specificity: first.specificity.clone(),
            revised_claim: first.revised_claim.clone(),
            note: None,
        }
    }

    /// Chooses `label` (SUPPORT, CONTRADICT or NEI).
    ///
    /// NEI takes no rationale: the sentences go. On a second pass that started from the first
    /// annotation (`first`, confirm mode), a label other than the first annotator's drops what
    /// the form still holds exactly as they gave it (their sentences, specificity, revised
    /// claim), so that nothing of theirs is stored under the second annotator's name; what the
    /// second annotator changed themselves stays. Back to the first annotator's label with
    /// those fields empty, the first annotation's come back.
    pub fn choose_label(&mut self, label: &str, first: Option<&OpinionView>) {
        self.no_evidence = false;
        self.label = Some(label.to_owned());
        if let Some(first) = first {
            if first.label == label {
                let untouched = self.sentences.is_empty()
                    && self.specificity.is_none()
                    && self.revised_claim.is_none();
                if untouched {
                    self.sentences = first.sentences.clone();
                    self.specificity = first.specificity.clone();
                    self.revised_claim = first.revised_claim.clone();
                }
            } else {
                if self.sentences == first.sentences {
                    self.sentences.clear();
                }
                if self.specificity == first.specificity {
                    self.specificity = None;
                }
                if self.revised_claim == first.revised_claim {
                    self.revised_claim = None;
                }
            }
        }
        if label == "NEI" {
            self.sentences.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{DraftForm, OpinionView};

    fn first() -> OpinionView {
        OpinionView {
            stage: "first".into(),
            annotator: "ann1".into(),
            label: "CONTRADICT".into(),
            no_evidence: false,
            sentences: vec![1, 3],
            specificity: Some("closely_related".into()),
            revised_claim: Some("A related claim.".into()),
            note: Some("ann1's note".into()),
            mine: false,
        }
    }

    #[test]
    fn confirm_mode_starts_from_the_first_annotation_without_its_note() {
        let form = DraftForm::from_opinion(&first());
        assert_eq!(form.label.as_deref(), Some("CONTRADICT"));
        assert_eq!(form.sentences, vec![1, 3]);
        assert_eq!(form.specificity.as_deref(), Some("closely_related"));
        assert_eq!(form.revised_claim.as_deref(), Some("A related claim."));
        assert_eq!(form.note, None);
    }

    #[test]
    fn another_label_keeps_nothing_of_the_first_annotation() {
        let first = first();
        for label in ["NEI", "SUPPORT"] {
            let mut form = DraftForm::from_opinion(&first);
            form.note = Some("mine".into());
            form.choose_label(label, Some(&first));
            assert_eq!(
                form,
                DraftForm {
                    label: Some(label.into()),
                    note: Some("mine".into()),
                    ..DraftForm::default()
                },
                "{label}"
            );
        }
    }

    #[test]
    fn what_the_second_annotator_changed_stays_with_another_label() {
        let first = first();
        let mut form = DraftForm::from_opinion(&first);
        form.sentences = vec![2];
        form.specificity = Some("matches".into());
        form.revised_claim = None;
        form.choose_label("SUPPORT", Some(&first));
        assert_eq!(form.sentences, vec![2]);
        assert_eq!(form.specificity.as_deref(), Some("matches"));
        // NEI takes no sentences, whoever chose them.
        form.choose_label("NEI", Some(&first));
        assert!(form.sentences.is_empty());
        assert_eq!(form.specificity.as_deref(), Some("matches"));
    }

    #[test]
    fn back_to_the_first_label_brings_its_fields_back_only_into_an_empty_form() {
        let first = first();
        let mut form = DraftForm::from_opinion(&first);
        form.choose_label("NEI", Some(&first));
        form.choose_label("CONTRADICT", Some(&first));
        assert_eq!(form, DraftForm::from_opinion(&first));
        let mut form = DraftForm::from_opinion(&first);
        form.choose_label("SUPPORT", Some(&first));
        form.sentences = vec![0];
        form.choose_label("CONTRADICT", Some(&first));
        assert_eq!(form.sentences, vec![0]);
        assert_eq!(form.specificity, None);
    }

    #[test]
    fn without_a_first_annotation_only_nei_drops_the_sentences() {
        let mut form = DraftForm {
            label: Some("SUPPORT".into()),
            sentences: vec![0, 2],
            specificity: Some("matches".into()),
            ..DraftForm::default()
        };
        form.choose_label("CONTRADICT", None);
        assert_eq!(form.sentences, vec![0, 2]);
        form.choose_label("NEI", None);
        assert!(form.sentences.is_empty());
        assert_eq!(form.specificity.as_deref(), Some("matches"));
        assert_eq!(form.label.as_deref(), Some("NEI"));
    }
}
