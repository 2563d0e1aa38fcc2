//! Imports from the browser as background jobs (issue 14), and the project's jobs list: what
//! ran, who started it, how long it took and how it ended. Leads only.

use crate::error::ApiError;
use leptos::prelude::*;
use leptos::server_fn::codec::{MultipartData, MultipartFormData};
use serde::{Deserialize, Serialize};

/// A job as the project page lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRow {
    pub id: i64,
    /// `import` or `pipeline`.
    pub kind: String,
    /// What it does: "corpus from corpus.jsonl", "bm25 × trained model m1, system s".
    pub what: String,
    /// queued, running, done, failed or cancelled.
    pub status: String,
    /// A lead asked to cancel it while it ran (it stops at its next check).
    pub cancelling: bool,
    /// Progress: `done` of `total` `unit`s (bytes of the file for imports, claims for
    /// pipeline jobs).
    pub done: i64,
    pub total: Option<i64>,
    pub unit: String,
    pub started_by: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    /// Why it failed, or how it was cancelled.
    pub message: Option<String>,
    /// What it produced, for people: "3,544 rows", "1 system, 53,160 rows".
    pub outcome: Option<String>,
}

impl JobRow {
    /// Whether the job has ended (done, failed or cancelled).
    pub fn finished(&self) -> bool {
        matches!(self.status.as_str(), "done" | "failed" | "cancelled")
    }

    /// Seconds from start to end (to `now_ms` while it runs).
    pub fn seconds(&self, now_ms: i64) -> Option<f64> {
        let start = self.started_at?;
        Some((self.finished_at.unwrap_or(now_ms) - start).max(0) as f64 / 1000.0)
    }
}

#[cfg(feature = "ssr")]
fn row(job: commands::jobs::Job, started_by: Option<String>) -> JobRow {
    use commands::import::{ImportJob, IMPORT};
    let result: Option<serde_json::Value> = job
        .result
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok());
    let (what, unit) = if job.kind == IMPORT {
        let params: Option<ImportJob> = serde_json::from_str(&job.params).ok();
        (params.map(|p| p.describe()).unwrap_or_default(), "bytes")
    } else {
        let params: Option<crate::pipeline::job::PipelineJobParams> =
            serde_json::from_str(&job.params).ok();
        (
            params
                .map(|p| format!("{}: {}", p.system, p.describe()))
                .unwrap_or_default(),
            "claims",
        )
    };
    let outcome = result.map(|r| {
        let count = |key: &str| r[key].as_u64().unwrap_or(0);
        let systems = r["systems"].as_array().map_or(0, Vec::len) as u64;
        let mut parts = vec![counted(count("rows"), "row", "rows")];
        if systems > 0 {
            parts.push(counted(systems, "system", "systems"));
        }
        if count("judgments") > 0 {
            parts.push(counted(count("judgments"), "final label", "final labels"));
        }
        parts.join(", ")
    });
    JobRow {
        id: job.id,
        kind: job.kind,
        what,
        cancelling: job.status == "running" && job.cancel_requested_at.is_some(),
        status: job.status,
        done: job.done_units,
        total: job.total_units,
        unit: unit.to_owned(),
        started_by,
        created_at: job.created_at,
        started_at: job.started_at,
        finished_at: job.finished_at,
        message: job.message,
        outcome,
    }
}

/// "1 row", "3,544 rows".
#[cfg(feature = "ssr")]
fn counted(n: u64, one: &str, many: &str) -> String {
    let n_text = crate::domain::units::format_count(i64::try_from(n).unwrap_or(i64::MAX));
    if n == 1 {
        format!("{n_text} {one}")
    } else {
        format!("{n_text} {many}")
    }
}

/// The job `id` of the project, as the list shows it.
#[cfg(feature = "ssr")]
async fn one(
    db: &commands::Db,
    caller: &crate::auth::ProjectCaller,
    id: i64,
) -> Result<JobRow, ApiError> {
    commands::jobs::listed(db, caller, Some(id), 1)
        .await?
        .into_iter()
        .find(|(job, _)| job.id == id)
        .map(|(job, by)| row(job, by))
        .ok_or_else(|| ApiError::NotFound(format!("job {id}")))
}

/// Uploads a file and queues its import: form fields `project` (first: the caller must lead it
/// before the rest is read), `kind` (`corpus`, `claims`, `run` or `judgments`), the kind's
/// options (as the command line's: `format`; runs: `system`, `role`, `label_order`,
/// `description`; judgments: `annotator`, `stage`), then `file`. A full job queue refuses the
/// form before its file is received. Options are checked at once; the file when the job runs,
/// with the same checks as the command line (a rejected or cancelled import writes nothing).
#[server(endpoint = "lead/import/upload", input = MultipartFormData)]
pub async fn upload_import(data: MultipartData) -> Result<JobRow, ApiError> {
    crate::api::respond(queue(data).await)
}

#[cfg(feature = "ssr")]
async fn queue(data: MultipartData) -> Result<JobRow, ApiError> {
    let limits = crate::state::limits()?;
    let db = crate::state::db()?;
    let saved = crate::api::upload::save(data, "upload.jsonl").await?;
    let what = saved.what(None)?;
    queue_saved(&db, saved, what, &limits).await
}

/// Queues the import of a saved upload as `what` (the browser's form and the HTTP API's body
/// alike): the job owns the upload's directory from here and removes it when it ends.
#[cfg(feature = "ssr")]
pub(crate) async fn queue_saved(
    db: &commands::Db,
    saved: crate::api::upload::SavedUpload,
    what: commands::import::ImportKind,
    limits: &crate::state::UploadLimits,
) -> Result<JobRow, ApiError> {
    let job = saved.job(what, limits)?;
    let dir = saved.dir.keep();
    match commands::jobs::create_import(db, &saved.caller, saved.slot, job).await {
        Ok(id) => one(db, &saved.caller, id).await,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            Err(e.into())
        }
    }
}

/// Queues the import of a request body that is the file itself (the HTTP API): `kind` is
/// `corpus`, `claims`, `run` or `judgments`, `options` the import's options (as the upload
/// form's fields; `file_name` names the file in messages). The options are checked, and a place
/// in the job queue is held (a full queue refuses at once), before the body is read; the body
/// is streamed to disk under the server's limits and imported by the same background job as a
/// browser's upload.
#[cfg(feature = "ssr")]
pub async fn queue_body(
    db: &commands::Db,
    caller: crate::auth::ProjectCaller,
    kind: &str,
    options: std::collections::HashMap<String, String>,
    body: axum::body::Body,
    limits: &crate::state::UploadLimits,
) -> Result<JobRow, ApiError> {
    let what = crate::api::upload::what_of(kind, &options)?;
    let file_name = options
        .get("file_name")
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| format!("{kind}.jsonl"));
    let slot = commands::jobs::reserve(db, &caller).await?;
    let saved =
        crate::api::upload::save_body(caller, slot, options, &file_name, body, limits).await?;
    queue_saved(db, saved, what, limits).await
}

/// The job `id` of the caller's project (any kind), as the jobs list shows it.
#[cfg(feature = "ssr")]
pub async fn job_of(
    db: &commands::Db,
    caller: &crate::auth::ProjectCaller,
    id: i64,
) -> Result<JobRow, ApiError> {
    one(db, caller, id).await
}

/// The project's 20 latest jobs of every kind, newest first.
#[server(endpoint = "lead/jobs")]
pub async fn project_jobs(project: String) -> Result<Vec<JobRow>, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                crate::api::project_caller(crate::domain::account::ProjectRole::Lead, &project)
                    .await?;
            Ok(commands::jobs::listed(&db, &caller, None, 20)
                .await?
                .into_iter()
                .map(|(job, by)| row(job, by))
                .collect())
        }
        .await,
    )
}

/// One job of the project.
#[server(endpoint = "lead/job")]
pub async fn project_job(project: String, id: i64) -> Result<JobRow, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                crate::api::project_caller(crate::domain::account::ProjectRole::Lead, &project)
                    .await?;
            job_of(&db, &caller, id).await
        }
        .await,
    )
}

/// Cancels a job of the project: a queued one at once, a running one at its next check (an
/// import stops reading its file and writes nothing). Audited.
#[server(endpoint = "lead/job/cancel")]
pub async fn cancel_job(project: String, id: i64) -> Result<JobRow, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                crate::api::project_caller(crate::domain::account::ProjectRole::Lead, &project)
                    .await?;
            let job = commands::jobs::cancel(&db, &caller, id).await?;
            // A queued import cancelled before it ran: nobody else removes its upload.
            if job.kind == commands::import::IMPORT && job.started_at.is_none() {
                if let Ok(params) = serde_json::from_str::<commands::import::ImportJob>(&job.params)
                {
                    params.remove_upload();
                }
            }
            one(&db, &caller, id).await
        }
        .await,
    )
}
