//! Annotators' queues.

use super::{Db, StoreResult};

/// Open assignments of one annotator (those of a pool build still being written are hidden
/// with its entries).
pub async fn open_count(db: &Db, annotator_id: i64) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
         WHERE a.annotator_id = ? AND a.status = 'open'",
    )
    .bind(annotator_id)
    .fetch_one(db)
    .await?)
}

/// The projects where the annotator has assignments, with their open items, by name.
pub async fn projects_of(db: &Db, annotator_id: i64) -> StoreResult<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT p.name, COALESCE(SUM(a.status = 'open'), 0) FROM assignments a
         JOIN pool_entries e ON e.id = a.pool_entry_id JOIN projects p ON p.id = e.project_id
         WHERE a.annotator_id = ? GROUP BY p.name ORDER BY p.name",
    )
    .bind(annotator_id)
    .fetch_all(db)
    .await?)
}
