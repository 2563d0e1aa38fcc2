//! The lead's report and its section beyond the depth, as the dashboard, the command line's
//! `report` and `eval --estimate`, and the HTTP API read them, for a [`Lead`] proof.

use super::Lead;
use crate::error::CommandError;
use crate::error::CommandResult;
use domain::judging::RecallTarget;
use domain::model::survey::Survey;
use domain::report::ReportOptions;
use domain::report::{PoolSetting, Report};
use store::pool;
/// Which pairs an estimate is of.
pub use store::pool::Estimated;
use store::report::{self, ProjectSnapshot};
use store::{Db, StoreError};

/// A project's report, with the pool's setting and the pooled systems the current pool does
/// not include yet.
#[derive(Clone, Debug)]
pub struct ProjectReport {
    /// The report.
    pub report: Report,
    /// The pool as last built; `None` before the first build.
    pub pool: Option<PoolSetting>,
    /// See [`ProjectSnapshot::not_yet_pooled`].
    pub not_yet_pooled: Vec<String>,
}

/// The project's report under `options`: the snapshot read from the store, the report computed
/// off the async threads (it is CPU work), on a thread of its own at a lower priority so that
/// annotators' requests come first.
pub async fn project_report(
    db: &Db,
    lead: &Lead,
    options: ReportOptions,
) -> CommandResult<ProjectReport> {
    let ProjectSnapshot {
        snapshot,
        not_yet_pooled,
    } = report::snapshot(db, lead.project_id()).await?;
    let pool = snapshot.pool;
    let report = crate::background::spawn("report", move || Report::compute(&snapshot, &options))?
        .join()
        .await?
        .map_err(|e| {
            CommandError::Internal(format!(
                "stored data is corrupt: project {} cannot be reported on: {e}",
                lead.project()
            ))
        })?;
    Ok(ProjectReport {
        report,
        pool,
        not_yet_pooled,
    })
}

/// The pool's depth, None before the first build (the dashboard's default depth step).
pub async fn pool_depth(db: &Db, lead: &Lead) -> CommandResult<Option<u32>> {
    Ok(pool::settings(db, lead.project_id())
        .await?
        .map(|(_, depth)| depth))
}

/// The sample's estimates, stopping test and planner for `estimated` (the project's systems or
/// one run), or why there are none (no pool or no sample yet, the pooled systems changed since
/// the sample): `Err` only for a failure of the server.
pub async fn survey(
    db: &Db,
    lead: &Lead,
    target: RecallTarget,
    estimated: Estimated,
) -> CommandResult<Result<Survey, String>> {
    match pool::survey(db, lead.project_id(), target, estimated).await {
        Ok(survey) => Ok(Ok(survey)),
        Err(
            e
            @ (StoreError::Invalid { .. } | StoreError::Conflict { .. } | StoreError::NotFound(_)),
        ) => Ok(Err(e.to_string())),
        Err(e) => Err(e.into()),
    }
}
