//! Plain data shared by the store, the server functions and the pages (compiles for both sides).

pub mod agreement;
pub mod annotate;
pub mod gold;
pub mod guidelines;
pub mod history;
pub mod paper;
pub mod release_diff;
pub mod search;
pub mod significance;
pub mod survey;
pub mod webhooks;

use serde::{Deserialize, Serialize};

/// The run formats a form offers, as (name, title): the names are those of
/// `domain::formats::RunFormat` (a test checks they are the same, in the same order), which is
/// server-only.
pub const RUN_FORMATS: &[(&str, &str)] = &[
    ("canonical", "canonical JSONL"),
    ("scifact-open-parquet", "SciFact-Open parquet"),
    ("leaderboard", "SciFact leaderboard"),
    ("verisci", "VeriSci label predictions"),
    ("trec", "TREC run"),
    ("sentence-scores", "sentence scores"),
    ("retrieved-claims", "retrieved claims"),
];

/// A project with the counts its overview shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProjectSummary {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub documents: i64,
    pub claims: i64,
    pub systems: i64,
    pub predictions: i64,
    pub pooled: i64,
    pub final_labels: i64,
}

/// A member of a project, as lists show them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub username: String,
    pub role: crate::account::ProjectRole,
    pub active: bool,
}

/// One row of a project's claim list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimRow {
    pub claim_id: String,
    pub text: String,
    pub cited: i64,
    pub pooled: i64,
    pub evidence: i64,
}

/// A page of a longer list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: i64,
    pub offset: i64,
    pub limit: i64,
}

/// A system of a project, as the lead sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SystemRow {
    pub name: String,
    pub role: String,
    pub scoring: String,
    pub description: String,
    pub negative_sampling_ratio: Option<f64>,
    pub predictions: i64,
}

/// What an import wrote, for the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportSummary {
    pub file: String,
    pub format: String,
    pub rows: u64,
    pub systems: Vec<String>,
    pub missing_docs: u64,
}

/// One candidate depth of a pool preview.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreviewStep {
    pub depth: u32,
    pub pool_size: usize,
    pub added: usize,
    pub to_annotate: usize,
}

/// The pool as built, and what the last step did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BuildSummary {
    pub strategy: String,
    pub depth: u32,
    pub pool_size: usize,
    pub added: usize,
    pub to_annotate: usize,
}

/// Pool statistics (SciFact-Open Table 2b and 2c), as tables.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolStatsView {
    pub strategy: String,
    pub depth: u32,
    pub pool_size: usize,
    pub judged: usize,
    pub evidence: usize,
    /// (found by n systems, pooled, judged, evidence, % evidence)
    pub by_system_count: Vec<(u32, usize, usize, usize, Option<f64>)>,
    /// (system, pooled, unique)
    pub per_system: Vec<(String, usize, usize)>,
    pub prior_total: usize,
    pub prior_in_pool: usize,
    pub top_k: u32,
    /// (system, role, retrieved, in top k, in top depth)
    pub prior: Vec<(String, String, usize, usize, usize)>,
}

/// A claim with every pair a lead may look at: pooled, cited or judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimDetail {
    pub claim_id: String,
    pub text: String,
    pub pairs: Vec<ClaimPair>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimPair {
    pub doc_id: String,
    pub title: String,
    pub cited: bool,
    /// None when the pair is not pooled.
    pub entry_depth: Option<u32>,
    /// (system, rank) for every pooled system that scored it.
    pub model_ranks: Vec<(String, u32)>,
    /// The final label, if any, and where it came from.
    pub final_label: Option<String>,
    pub provenance: Option<String>,
    /// The final judgment's specificity relation and revised claim, when it has them.
    pub specificity: Option<String>,
    pub revised_claim: Option<String>,
    /// (assessor, label) of every model assessor that labelled the pair, by assessor: a
    /// system's predictions, shown to leads beside the final label, never final (issue 16).
    pub model_labels: Vec<(String, String)>,
}
