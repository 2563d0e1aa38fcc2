//! An annotator's own work across projects.

use crate::error::CommandResult;
use domain::account::User;
use store::Db;

/// How many items wait in `user`'s own queues.
pub async fn open_count(db: &Db, user: &User) -> CommandResult<i64> {
    Ok(store::work::open_count(db, user.id).await?)
}

/// The projects where `user` has items: (project, open items).
pub async fn projects_of(db: &Db, user: &User) -> CommandResult<Vec<(String, i64)>> {
    Ok(store::work::projects_of(db, user.id).await?)
}
