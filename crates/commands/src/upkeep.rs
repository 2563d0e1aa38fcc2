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

/// What `/metrics` reads from the database at each scrape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceCounts {
    /// Jobs by state (states without a job left out).
    pub jobs: Vec<(String, i64)>,
    /// Judgments stored, of every project.
    pub judgments: i64,
}

/// The database's [`ServiceCounts`].
pub async fn service_counts(db: &Db) -> StoreResult<ServiceCounts> {
    Ok(ServiceCounts {
        jobs: store::jobs::count_by_status(db).await?,
        judgments: store::annotate::judgments_stored(db).await?,
    })
}

/// Removes the uploads kept in the database a day ago or more that no queued or running job
/// imports (their server died before it recorded the job); returns how many.
pub async fn remove_stale_uploads(db: &Db) -> StoreResult<usize> {
    Ok(usize::try_from(store::uploads::remove_stale(db).await?).unwrap_or(usize::MAX))
}
