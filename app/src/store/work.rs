//! Annotators' queues.

use super::{Db, StoreResult};

/// Open assignments of one annotator.
pub async fn open_count(db: &Db, annotator_id: i64) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignments WHERE annotator_id = ? AND status = 'open'",
    )
    .bind(annotator_id)
    .fetch_one(db)
    .await?)
}
