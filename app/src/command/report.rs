//! The lead's report and its section beyond the depth, as the dashboard, the command line's
//! `report` and `eval --estimate`, and the HTTP API read them, for a [`Lead`] proof.

use super::Lead;
use crate::domain::judging::RecallTarget;
use crate::domain::report::ReportOptions;
use crate::error::ApiResult;
use crate::model::survey::Survey;
use crate::store::pool::{self, Estimated};
use crate::store::report::{self, ProjectReport};
use crate::store::{Db, StoreError};

/// The project's report under `options`.
pub async fn project_report(
    db: &Db,
    lead: &Lead,
    options: ReportOptions,
) -> ApiResult<ProjectReport> {
    Ok(report::report(db, lead.project_id(), options).await?)
}

/// The pool's depth, None before the first build (the dashboard's default depth step).
pub async fn pool_depth(db: &Db, lead: &Lead) -> ApiResult<Option<u32>> {
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
) -> ApiResult<Result<Survey, String>> {
    match pool::survey(db, lead.project_id(), target, estimated).await {
        Ok(survey) => Ok(Ok(survey)),
        Err(e @ (StoreError::Invalid(_) | StoreError::Conflict(_) | StoreError::NotFound(_))) => {
            Ok(Err(e.to_string()))
        }
        Err(e) => Err(e.into()),
    }
}
