//! The lead's releases of a project: how complete the collection is, the releases made so far,
//! and making a new one. The archives are downloaded from the plain HTTP route
//! `/lead/projects/NAME/releases/NUMBER/download` (see [`download_path`]).

#[cfg(feature = "ssr")]
use crate::domain::account::ProjectRole;
use crate::error::ApiError;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// One release, as the releases page lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReleaseRow {
    pub number: u32,
    /// The date of the state released (`YYYY-MM-DD`).
    pub date: String,
    /// The UTC day the release was recorded (`YYYY-MM-DD`).
    pub recorded: String,
    pub partial: bool,
    /// `qrels.txt` lists unjudged pooled pairs with relevance -1.
    pub qrels_unjudged: bool,
    /// SHA-256 of the archive.
    pub sha256: String,
    pub archive_bytes: i64,
    pub claims: u64,
    pub evidence_pairs: u64,
    pub judged_pairs: u64,
    pub unjudged_pooled_pairs: u64,
    pub documents: u64,
    pub runs: u64,
}

/// The releases page: completeness of the pool and the releases so far (latest first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReleasesView {
    pub pooled: i64,
    /// Pooled pairs without a final label.
    pub unjudged: i64,
    pub final_labels: i64,
    /// The project's model assessors (issue 16): a release may carry their labels apart.
    #[serde(default)]
    pub model_assessors: u64,
    pub releases: Vec<ReleaseRow>,
}

/// What making a release did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CreatedRelease {
    /// `false` when nothing changed since the latest release, which is returned.
    pub new: bool,
    pub release: ReleaseRow,
}

/// Where a release's archive is downloaded (the project name percent-encoded).
pub fn download_path(project: &str, number: u32) -> String {
    let encoded: String = project
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect();
    format!("/lead/projects/{encoded}/releases/{number}/download")
}

#[cfg(feature = "ssr")]
fn row(release: commands::release::Release) -> ReleaseRow {
    let recorded = crate::domain::release::ReleaseDate::from_unix_ms(release.created_at)
        .map(|d| d.as_str().to_owned())
        .unwrap_or_default();
    let c = release.counts;
    ReleaseRow {
        number: release.number,
        date: release.date,
        recorded,
        partial: release.partial,
        qrels_unjudged: release.qrels_unjudged,
        sha256: release.sha256,
        archive_bytes: release.archive_bytes,
        claims: c.claims,
        evidence_pairs: c.evidence_pairs,
        judged_pairs: c.judged_pairs,
        unjudged_pooled_pairs: c.unjudged_pooled_pairs,
        documents: c.documents,
        runs: c.runs,
    }
}

#[server(endpoint = "release/overview")]
pub async fn releases_overview(project: String) -> Result<ReleasesView, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) = crate::api::project_caller(ProjectRole::Lead, &project).await?;
            overview(&db, &caller).await
        }
        .await,
    )
}

/// How complete the project's collection is, and its releases (latest first).
#[cfg(feature = "ssr")]
pub async fn overview(
    db: &commands::Db,
    caller: &crate::auth::ProjectCaller,
) -> Result<ReleasesView, ApiError> {
    let (state, releases, model_assessors) = commands::release::overview(db, caller).await?;
    Ok(ReleasesView {
        pooled: state.pooled,
        unjudged: state.unjudged,
        final_labels: state.final_labels,
        model_assessors,
        releases: releases.into_iter().map(row).collect(),
    })
}

/// Releases the project's current state (or returns the latest release when nothing changed).
/// `partial`: release although pooled pairs lack a final label; `unjudged`: list those pairs
/// in `qrels.txt` with relevance -1; `model_qrels`: also write `qrels-model.txt`, the model
/// assessors' labels, apart (issue 16).
#[server(endpoint = "release/create")]
pub async fn create_release(
    project: String,
    partial: bool,
    unjudged: bool,
    #[server(default)] model_qrels: bool,
) -> Result<CreatedRelease, ApiError> {
    crate::api::respond(
        async {
            let (db, lead) = crate::api::lead(&project).await?;
            create(&db, &lead, partial, unjudged, model_qrels).await
        }
        .await,
    )
}

/// Releases the project's current state (see [`create_release`]): the command behind the
/// releases page and the HTTP API. Audited.
#[cfg(feature = "ssr")]
pub async fn create(
    db: &commands::Db,
    lead: &commands::Lead,
    partial: bool,
    unjudged: bool,
    model_qrels: bool,
) -> Result<CreatedRelease, ApiError> {
    let created = commands::release::CreateRelease {
        partial,
        unjudged,
        model_qrels,
    }
    .run(db, lead)
    .await?;
    Ok(CreatedRelease {
        new: created.new,
        release: row(created.release),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn download_paths_encode_the_project_name() {
        assert_eq!(
            super::download_path("scifact", 3),
            "/lead/projects/scifact/releases/3/download"
        );
        assert_eq!(
            super::download_path("a b/c?é", 1),
            "/lead/projects/a%20b%2Fc%3F%C3%A9/releases/1/download"
        );
    }
}
