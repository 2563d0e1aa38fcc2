//! Generating a run on the server from the lead's project page: what the server offers, starting
//! a job (recorded in `jobs`, run by the server's worker), and its progress. Leads only.

#[cfg(feature = "ssr")]
use crate::domain::account::ProjectRole;
use crate::error::ApiError;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// What a lead can choose from: names only (the server's administrator set them up).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PipelineChoices {
    /// Whether the hybrid retriever (MiniLM) is set up.
    pub hybrid: bool,
    /// Trained model names.
    pub models: Vec<String>,
    /// External command names.
    pub commands: Vec<String>,
}

/// A pipeline job as the page shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobView {
    pub id: i64,
    /// queued, running, done, failed or cancelled.
    pub status: String,
    /// A lead asked to cancel it while it ran (it stops at its next check).
    pub cancelling: bool,
    /// Claims done and in all (None until the job has read the claims).
    pub done: i64,
    pub total: Option<i64>,
    /// The system the job creates.
    pub system: String,
    pub description: String,
    /// Why it failed.
    pub message: Option<String>,
    /// Predictions imported, once done.
    pub imported: Option<u64>,
}

impl JobView {
    /// Whether the job has ended (done, failed or cancelled).
    pub fn finished(&self) -> bool {
        matches!(self.status.as_str(), "done" | "failed" | "cancelled")
    }
}

#[cfg(feature = "ssr")]
fn view(job: commands::jobs::Job) -> JobView {
    let params: Option<crate::pipeline::job::PipelineJobParams> =
        serde_json::from_str(&job.params).ok();
    let result: Option<serde_json::Value> = job
        .result
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok());
    JobView {
        id: job.id,
        cancelling: job.status == "running" && job.cancel_requested_at.is_some(),
        status: job.status,
        done: job.done_units,
        total: job.total_units,
        system: params
            .as_ref()
            .map(|p| p.system.clone())
            .unwrap_or_default(),
        description: params.as_ref().map(|p| p.describe()).unwrap_or_default(),
        message: job.message,
        imported: result.and_then(|r| r["rows"].as_u64()),
    }
}

#[server(endpoint = "pipeline/options")]
pub async fn pipeline_options(project: String) -> Result<PipelineChoices, ApiError> {
    crate::api::respond(
        async {
            crate::api::project_caller(ProjectRole::Lead, &project).await?;
            let settings = crate::state::pipeline()?;
            Ok(PipelineChoices {
                hybrid: settings.embedder_dir.is_some(),
                models: settings.models.iter().map(|(n, _)| n.clone()).collect(),
                commands: settings.commands.iter().map(|(n, _)| n.clone()).collect(),
            })
        }
        .await,
    )
}

/// Records a pipeline job and returns it at once; the server's worker runs it. `scorer` is
/// bm25, trained (with `model`, a name the server offers) or external (with `command`, a name).
#[allow(clippy::too_many_arguments)]
#[server(endpoint = "pipeline/start")]
pub async fn start_pipeline(
    project: String,
    retriever: String,
    k: u32,
    scorer: String,
    #[server(default)] model: String,
    #[server(default)] command: String,
    system: String,
    role: String,
) -> Result<JobView, ApiError> {
    crate::api::respond(
        async {
            use crate::pipeline::job::{PipelineJobParams, RetrieverChoice, ScorerChoice};
            let (db, caller) = crate::api::project_caller(ProjectRole::Lead, &project).await?;
            let settings = crate::state::pipeline()?;
            let retriever = match retriever.as_str() {
                "bm25" => RetrieverChoice::Bm25,
                "hybrid" => RetrieverChoice::Hybrid,
                other => return Err(ApiError::Invalid(format!("unknown retriever {other:?}"))),
            };
            let scorer = match scorer.as_str() {
                "bm25" => ScorerChoice::Bm25,
                "trained" => ScorerChoice::Trained { model },
                "external" => ScorerChoice::External { command },
                other => return Err(ApiError::Invalid(format!("unknown scorer {other:?}"))),
            };
            crate::domain::pool::Role::parse(&role)
                .map_err(|e| ApiError::Invalid(e.to_string()))?;
            let params = PipelineJobParams {
                retriever,
                k,
                scorer,
                system: system.trim().to_owned(),
                role,
            };
            params.check(&settings).map_err(ApiError::Invalid)?;
            Ok(view(
                commands::jobs::start_pipeline(&db, &caller, &params).await?,
            ))
        }
        .await,
    )
}

#[server(endpoint = "pipeline/job")]
pub async fn pipeline_job(project: String, id: i64) -> Result<JobView, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) = crate::api::project_caller(ProjectRole::Lead, &project).await?;
            Ok(view(commands::jobs::get(&db, &caller, id).await?))
        }
        .await,
    )
}

/// The project's ten latest pipeline jobs, newest first.
#[server(endpoint = "pipeline/jobs")]
pub async fn pipeline_jobs(project: String) -> Result<Vec<JobView>, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) = crate::api::project_caller(ProjectRole::Lead, &project).await?;
            let jobs = commands::jobs::recent(&db, &caller, commands::jobs::PIPELINE, 10).await?;
            Ok(jobs.into_iter().map(view).collect())
        }
        .await,
    )
}

/// Cancels a job of the project: a queued one at once, a running one within a second (its
/// external command is killed); it imports nothing. Audited.
#[server(endpoint = "pipeline/cancel")]
pub async fn cancel_pipeline_job(project: String, id: i64) -> Result<JobView, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) = crate::api::project_caller(ProjectRole::Lead, &project).await?;
            Ok(view(commands::jobs::cancel(&db, &caller, id).await?))
        }
        .await,
    )
}
