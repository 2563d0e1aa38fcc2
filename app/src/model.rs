//! Plain data shared by the store, the server functions and the pages (compiles for both sides).

use serde::{Deserialize, Serialize};

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
