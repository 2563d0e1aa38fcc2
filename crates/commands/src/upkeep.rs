//! The server's own upkeep when it starts, before it serves anyone: the rows a crashed process
//! left half written. No caller acts here, so no proof is taken. Errors are the store's as they
//! are (the server names what it was removing).

use store::{Db, StoreResult};

/// Removes the rows of every import whose writer died; returns how many imports it removed.
pub async fn reclaim_abandoned_imports(db: &Db) -> StoreResult<usize> {
    store::import_writer::reclaim_abandoned(db).await
}

/// Removes the rows of every pool build whose writer died; returns how many builds it removed.
pub async fn reclaim_abandoned_pool_builds(db: &Db) -> StoreResult<usize> {
    store::pool::reclaim_abandoned(db).await
}

/// Removes the rows of every release whose writer died; returns how many releases it removed.
pub async fn reclaim_abandoned_releases(db: &Db) -> StoreResult<usize> {
    store::release_parts::reclaim_abandoned(db).await
}

/// Whether the database can serve: it answers, and every migration of this build is applied
/// (`/readyz`).
pub async fn readiness(db: &Db) -> StoreResult<()> {
    store::db::readiness(db).await
}
