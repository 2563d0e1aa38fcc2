//! A project's annotation guidelines behind a project caller's proof: members read and confirm
//! the current version, leads write new versions.

use crate::access::ProjectCaller;
use crate::error::CommandResult;
use domain::model::guidelines::GuidelinesVersion;
use store::Db;

/// One stored version of the guidelines.
pub use store::guidelines::Guidelines;

/// The current guidelines of the caller's project, if it has any.
pub async fn current(db: &Db, caller: &ProjectCaller) -> CommandResult<Option<Guidelines>> {
    Ok(store::guidelines::current(db, caller.project_id()).await?)
}

/// Whether the caller confirmed the current version.
pub async fn has_confirmed_current(db: &Db, caller: &ProjectCaller) -> CommandResult<bool> {
    Ok(store::guidelines::has_confirmed_current(db, caller.project_id(), caller.user().id).await?)
}

/// Confirms that the caller read `version`, which must be the current one.
pub async fn confirm(db: &Db, caller: &ProjectCaller, version: i64) -> CommandResult<()> {
    Ok(store::guidelines::confirm(db, caller.project_id(), caller.user().id, version).await?)
}

/// Every version of the project's guidelines.
pub async fn history(db: &Db, caller: &ProjectCaller) -> CommandResult<Vec<GuidelinesVersion>> {
    Ok(store::guidelines::history(db, caller.project_id()).await?)
}

/// Saves `markdown` as the next version; returns its number. Audited.
pub async fn save(db: &Db, caller: &ProjectCaller, markdown: &str) -> CommandResult<i64> {
    Ok(store::guidelines::save(db, caller.project_id(), markdown, Some(caller.user().id)).await?)
}
