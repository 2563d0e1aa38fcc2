//! Annotators' queues.

use super::{Db, StoreResult};

/// Open assignments of one annotator, gold items among them (those of a pool build still being
/// written are hidden with its entries).
pub async fn open_count(db: &Db, annotator_id: i64) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignments a LEFT JOIN pool_entries e ON e.id = a.pool_entry_id
         WHERE a.annotator_id = $1 AND a.status = 'open'
           AND (e.id IS NOT NULL OR a.gold_item_id IS NOT NULL)",
    )
    .bind(annotator_id)
    .fetch_one(db)
    .await?)
}

/// The projects where the annotator has assignments or is an active annotator member (a
/// qualification candidate has no real item yet), with their open items, gold ones among them,
/// by name.
pub async fn projects_of(db: &Db, annotator_id: i64) -> StoreResult<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT p.name,
                (SELECT COUNT(*) FROM assignments a
                 LEFT JOIN pool_entries e ON e.id = a.pool_entry_id
                 LEFT JOIN gold_items g ON g.id = a.gold_item_id
                 WHERE a.annotator_id = $1 AND a.status = 'open'
                   AND COALESCE(e.project_id, g.project_id) = p.id)
         FROM projects p
         WHERE p.id IN (SELECT e.project_id FROM assignments a
                        JOIN pool_entries e ON e.id = a.pool_entry_id WHERE a.annotator_id = $1)
            OR p.id IN (SELECT project_id FROM project_members
                        WHERE user_id = $1 AND active = 1 AND role = 'annotator')
         ORDER BY p.name",
    )
    .bind(annotator_id)
    .fetch_all(db)
    .await?)
}
