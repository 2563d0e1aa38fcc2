//! Gold checks and qualification as the lead's page shows them (issue 16). Computed by
//! `domain::gold_checks` (server only); plain data here, for the browser too.

use serde::{Deserialize, Serialize};

/// The labels in the order of a confusion matrix's rows and columns.
pub const LABELS: [&str; 3] = ["SUPPORT", "CONTRADICT", "NEI"];

/// How rationale sentences of the answers match the reference's, over the answers to items whose
/// reference is evidence (micro-averaged: summed over items, then divided).
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct RationaleFit {
    /// Answers to evidence items.
    pub items: u64,
    /// Sentences in both the answer and the reference.
    pub matched: u64,
    /// Sentences the answers marked.
    pub marked: u64,
    /// Sentences the references hold.
    pub reference: u64,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
}

/// Figures over a set of gold answers.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct GoldFigures {
    pub answered: u64,
    /// Answers whose label is the reference's.
    pub correct: u64,
    /// correct / answered; None without an answer.
    pub accuracy: Option<f64>,
    /// confusion[reference][answer], in the order of [`LABELS`].
    pub confusion: [[u64; 3]; 3],
    pub rationale: RationaleFit,
}

/// Accuracy over consecutive answers in time order: does an annotator get worse (or better)?
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DriftPoint {
    /// When the first and the last answer of the window were given (ms since the epoch).
    pub from_ms: i64,
    pub to_ms: i64,
    pub answered: u64,
    pub correct: u64,
    pub accuracy: f64,
}

/// One annotator's gold figures in a project.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnotatorGold {
    pub user_id: i64,
    pub username: String,
    /// Gold checks among real items.
    pub checks: GoldFigures,
    /// The graded part of the qualification.
    pub graded: GoldFigures,
    /// The checks' accuracy over windows of [`GoldOverview::drift_window`] answers.
    pub drift: Vec<DriftPoint>,
}

/// A candidate's standing in the qualification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub user_id: i64,
    pub username: String,
    pub training_done: u64,
    pub graded_done: u64,
    pub correct: u64,
    /// training, graded, admitted or failed.
    pub standing: String,
    /// Who admitted them by hand (None: the pass mark decided, or not decided yet).
    pub admitted_by: Option<String>,
}

/// A project's gold at a glance (leads).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoldOverview {
    pub project: String,
    /// Disagreements go to a fresh annotator before adjudication.
    pub reannotate: bool,
    /// One gold check among every this many items; None: no checks.
    pub every: Option<u32>,
    pub training: u32,
    pub graded: u32,
    /// The pass mark as a share in [0, 1].
    pub pass: f64,
    /// Gold items by source: (citation, final).
    pub items_citation: u64,
    pub items_final: u64,
    /// Pairs that could still be added as gold: (citation, final).
    pub available_citation: u64,
    pub available_final: u64,
    pub drift_window: u32,
    pub annotators: Vec<AnnotatorGold>,
    pub candidates: Vec<Candidate>,
}

/// The reference annotation shown after a training item.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoldFeedback {
    pub label: String,
    /// The reference's rationale sentences (0-based), all evidence sets together.
    pub sentences: Vec<u32>,
    pub agrees: bool,
}

/// Where the caller stands in the project's qualification, while they are a candidate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QualificationStatus {
    /// training, graded or failed.
    pub phase: String,
    pub training_done: u32,
    pub training: u32,
    pub graded_done: u32,
    pub graded: u32,
    /// The pass mark as a share in [0, 1].
    pub pass: f64,
    /// Failed: correct graded answers.
    pub correct: Option<u32>,
}
