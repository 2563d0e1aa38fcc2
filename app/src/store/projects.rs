//! Projects and their membership.

use super::audit::{json, AuditEvent};
use super::{is_unique_violation, now_ms, Db, StoreError, StoreResult};
use crate::model::{ClaimRow, Page, ProjectSummary};
use sqlx::Row;

/// A project name: 1 to 100 characters, no control characters.
pub fn check_name(name: &str) -> StoreResult<&str> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(StoreError::Invalid(format!(
            "a project name has 1 to 100 printable characters (got {name:?})"
        )));
    }
    Ok(name)
}

pub async fn create(
    db: &Db,
    name: &str,
    description: &str,
    actor_id: Option<i64>,
) -> StoreResult<i64> {
    let name = check_name(name)?;
    let mut tx = db.begin().await?;
    let id = sqlx::query("INSERT INTO projects (name, description, created_at) VALUES (?, ?, ?)")
        .bind(name)
        .bind(description)
        .bind(now_ms())
        .execute(&mut *tx)
        .await
        .map_err(|e| {
            if is_unique_violation(&e) {
                StoreError::Conflict(format!("a project named {name:?} exists already"))
            } else {
                e.into()
            }
        })?
        .last_insert_rowid();
    AuditEvent {
        project_id: Some(id),
        actor_id,
        action: "create",
        entity: "project",
        entity_id: Some(id.to_string()),
        old_value: None,
        new_value: json(&serde_json::json!({ "name": name, "description": description })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// The id of the project with this name.
pub async fn id_by_name(db: &Db, name: &str) -> StoreResult<i64> {
    sqlx::query_scalar("SELECT id FROM projects WHERE name = ?")
        .bind(name)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("project {name:?}")))
}

const SUMMARY_SQL: &str = "SELECT p.id, p.name, p.description,
    (SELECT COUNT(*) FROM documents d WHERE d.project_id = p.id) AS documents,
    (SELECT COUNT(*) FROM claims c WHERE c.project_id = p.id) AS claims,
    (SELECT COUNT(*) FROM systems s WHERE s.project_id = p.id) AS systems,
    (SELECT COUNT(*) FROM predictions pr JOIN systems s ON s.id = pr.system_id WHERE s.project_id = p.id) AS predictions,
    (SELECT COUNT(*) FROM pool_entries e WHERE e.project_id = p.id) AS pooled,
    (SELECT COUNT(*) FROM final_labels f WHERE f.project_id = p.id) AS final_labels
  FROM projects p";

fn summary_from_row(row: &sqlx::sqlite::SqliteRow) -> StoreResult<ProjectSummary> {
    Ok(ProjectSummary {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        documents: row.try_get("documents")?,
        claims: row.try_get("claims")?,
        systems: row.try_get("systems")?,
        predictions: row.try_get("predictions")?,
        pooled: row.try_get("pooled")?,
        final_labels: row.try_get("final_labels")?,
    })
}

pub async fn list(db: &Db) -> StoreResult<Vec<ProjectSummary>> {
    sqlx::query(&format!("{SUMMARY_SQL} ORDER BY p.name"))
        .fetch_all(db)
        .await?
        .iter()
        .map(summary_from_row)
        .collect()
}

pub async fn summary(db: &Db, name: &str) -> StoreResult<ProjectSummary> {
    let row = sqlx::query(&format!("{SUMMARY_SQL} WHERE p.name = ?"))
        .bind(name)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("project {name:?}")))?;
    summary_from_row(&row)
}

/// A page of a project's claims, optionally only those whose id or text contains `search`.
pub async fn claims_page(
    db: &Db,
    project_id: i64,
    search: &str,
    offset: i64,
    limit: i64,
) -> StoreResult<Page<ClaimRow>> {
    let pattern = format!(
        "%{}%",
        search
            .trim()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    );
    let filter =
        "c.project_id = ?1 AND (c.claim_id LIKE ?2 ESCAPE '\\' OR c.text LIKE ?2 ESCAPE '\\')";
    let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM claims c WHERE {filter}"))
        .bind(project_id)
        .bind(&pattern)
        .fetch_one(db)
        .await?;
    let rows = sqlx::query(&format!(
        "SELECT c.claim_id, c.text,
            COALESCE(json_array_length(c.cited_doc_ids), 0) AS cited,
            (SELECT COUNT(*) FROM pool_entries e WHERE e.claim_id = c.id) AS pooled,
            (SELECT COUNT(*) FROM final_labels f WHERE f.claim_id = c.id AND f.label != 'NEI') AS evidence
         FROM claims c WHERE {filter}
         ORDER BY CAST(c.claim_id AS INTEGER), c.claim_id LIMIT ?3 OFFSET ?4"
    ))
    .bind(project_id)
    .bind(&pattern)
    .bind(limit)
    .bind(offset)
    .fetch_all(db)
    .await?;
    let items = rows
        .iter()
        .map(|row| {
            Ok(ClaimRow {
                claim_id: row.try_get("claim_id")?,
                text: row.try_get("text")?,
                cited: row.try_get("cited")?,
                pooled: row.try_get("pooled")?,
                evidence: row.try_get("evidence")?,
            })
        })
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(Page {
        items,
        total,
        offset,
        limit,
    })
}

/// Adds a user to a project (or reactivates them).
pub async fn add_member(
    db: &Db,
    project_id: i64,
    user_id: i64,
    actor_id: Option<i64>,
) -> StoreResult<()> {
    let mut tx = db.begin().await?;
    sqlx::query(
        "INSERT INTO project_members (project_id, user_id, active, added_at) VALUES (?, ?, 1, ?)
         ON CONFLICT (project_id, user_id) DO UPDATE SET active = 1",
    )
    .bind(project_id)
    .bind(user_id)
    .bind(now_ms())
    .execute(&mut *tx)
    .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "add_member",
        entity: "user",
        entity_id: Some(user_id.to_string()),
        old_value: None,
        new_value: None,
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}
