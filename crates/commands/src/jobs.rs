//! Background jobs of a project behind a project caller's proof: a place in the queue, an
//! import or pipeline job recorded, the jobs listed, one cancelled.

use crate::access::ProjectCaller;
use crate::error::{CommandError, CommandResult};
use store::Db;

/// A stored job, a place held in the job queue, and the pipeline jobs' kind.
pub use store::jobs::{Job, Slot, PIPELINE};

/// Holds a place in the server's job queue for a job of the caller's project (a full queue
/// refuses at once).
pub async fn reserve(db: &Db, caller: &ProjectCaller) -> CommandResult<Slot> {
    let _ = caller;
    Ok(store::jobs::reserve(db).await?)
}

/// Records the import `job` in the held place; returns its id. On PostgreSQL, whose servers
/// may run on several machines, the upload is first kept in the database (in parts, each in a
/// write transaction of its own) and its saved file removed: whichever server's worker takes
/// the job reads it from there. On SQLite it stays where it was saved, on the database's one
/// machine.
pub async fn create_import(
    db: &Db,
    caller: &ProjectCaller,
    slot: Slot,
    mut job: crate::import::ImportJob,
) -> CommandResult<i64> {
    let upload = match store::engine(db) {
        store::Engine::Postgres => Some(crate::uploads::keep(db, &job.path).await?),
        store::Engine::Sqlite => None,
    };
    job.upload = upload;
    let params = serde_json::to_value(&job)
        .map_err(|e| CommandError::Internal(format!("the job's parameters: {e}")))?;
    let created = store::jobs::create(
        db,
        slot,
        store::jobs::NewJob {
            project_id: caller.project_id(),
            kind: crate::import::IMPORT,
            params: &params,
            created_by: Some(caller.user().id),
            upload_id: upload,
        },
    )
    .await;
    match (created, upload) {
        (Ok(id), Some(_)) => {
            job.remove_upload();
            Ok(id)
        }
        (Ok(id), None) => Ok(id),
        (Err(e), upload) => {
            if let Some(upload) = upload {
                if let Err(removing) = store::uploads::remove(db, upload).await {
                    tracing::warn!(error = %removing, "cannot remove the kept upload of a job not recorded");
                }
            }
            Err(e.into())
        }
    }
}

/// Records the pipeline job `params` of the caller's project and returns it: refused when the
/// project has a system of the run's name already, or no corpus or claims yet.
pub async fn start_pipeline(
    db: &Db,
    caller: &ProjectCaller,
    params: &pipeline::job::PipelineJobParams,
) -> CommandResult<Job> {
    let id = caller.project_id();
    let systems = store::projects::systems(db, id).await?;
    if systems.iter().any(|s| s.name == params.system) {
        return Err(CommandError::Conflict(format!(
            "the project has a system named {:?} already",
            params.system
        )));
    }
    let summary = store::projects::summary(db, caller.project()).await?;
    if summary.documents == 0 || summary.claims == 0 {
        return Err(CommandError::Invalid(
            "the project needs a corpus and claims before a run can be generated".into(),
        ));
    }
    let json = serde_json::to_value(params)
        .map_err(|e| CommandError::Internal(format!("job parameters: {e}")))?;
    let slot = store::jobs::reserve(db).await?;
    let job = store::jobs::create(
        db,
        slot,
        store::jobs::NewJob {
            project_id: id,
            kind: PIPELINE,
            params: &json,
            created_by: Some(caller.user().id),
            upload_id: None,
        },
    )
    .await?;
    Ok(store::jobs::get(db, id, job).await?)
}

/// The job `id` of the caller's project.
pub async fn get(db: &Db, caller: &ProjectCaller, id: i64) -> CommandResult<Job> {
    Ok(store::jobs::get(db, caller.project_id(), id).await?)
}

/// The project's `limit` latest jobs of `kind`, newest first.
pub async fn recent(
    db: &Db,
    caller: &ProjectCaller,
    kind: &str,
    limit: i64,
) -> CommandResult<Vec<Job>> {
    Ok(store::jobs::recent(db, caller.project_id(), kind, limit).await?)
}

/// The project's `limit` latest jobs of every kind (only job `id` when given), newest first,
/// each with the name of the user who started it.
pub async fn listed(
    db: &Db,
    caller: &ProjectCaller,
    id: Option<i64>,
    limit: i64,
) -> CommandResult<Vec<(Job, Option<String>)>> {
    Ok(store::jobs::listed(db, caller.project_id(), id, limit).await?)
}

/// Cancels the job `id` of the caller's project. Audited.
pub async fn cancel(db: &Db, caller: &ProjectCaller, id: i64) -> CommandResult<Job> {
    Ok(store::jobs::cancel(db, caller.project_id(), id, Some(caller.user().id)).await?)
}
