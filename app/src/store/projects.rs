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
    (SELECT COUNT(*) FROM systems s WHERE s.project_id = p.id AND s.ready = 1) AS systems,
    (SELECT COUNT(*) FROM predictions pr JOIN systems s ON s.id = pr.system_id WHERE s.project_id = p.id AND s.ready = 1) AS predictions,
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
    super::annotate::assign_pending(&mut tx, project_id, actor_id).await?;
    tx.commit().await?;
    Ok(())
}

/// The systems of a project with their prediction counts.
pub async fn systems(db: &Db, project_id: i64) -> StoreResult<Vec<crate::model::SystemRow>> {
    let rows: Vec<(String, String, String, String, Option<f64>, i64)> = sqlx::query_as(
        "SELECT s.name, s.role, s.scoring, s.description, s.negative_sampling_ratio,
                (SELECT COUNT(*) FROM predictions p WHERE p.system_id = s.id)
         FROM systems s WHERE s.project_id = ? AND s.ready = 1 ORDER BY s.name",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(name, role, scoring, description, negative_sampling_ratio, predictions)| {
                crate::model::SystemRow {
                    name,
                    role,
                    scoring,
                    description,
                    negative_sampling_ratio,
                    predictions,
                }
            },
        )
        .collect())
}

/// A claim and its pooled, cited and judged pairs.
pub async fn claim_detail(
    db: &Db,
    project_id: i64,
    claim_id: &str,
) -> StoreResult<crate::model::ClaimDetail> {
    let (key, text, cited): (i64, String, Option<String>) = sqlx::query_as(
        "SELECT id, text, cited_doc_ids FROM claims WHERE project_id = ? AND claim_id = ?",
    )
    .bind(project_id)
    .bind(claim_id)
    .fetch_optional(db)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("claim {claim_id}")))?;
    let cited: Vec<String> = cited
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    #[derive(sqlx::FromRow)]
    struct PairRow {
        doc_id: String,
        title: String,
        entry: Option<i64>,
        depth: Option<i64>,
        label: Option<String>,
        provenance: Option<String>,
        specificity: Option<String>,
        revised_claim: Option<String>,
    }
    let rows: Vec<PairRow> = sqlx::query_as(
        "SELECT d.doc_id, d.title, e.id AS entry, e.entry_depth AS depth, f.label, f.provenance,
                j.specificity, j.revised_claim
         FROM documents d
         LEFT JOIN pool_entries e ON e.claim_id = ?1 AND e.doc_id = d.id
         LEFT JOIN final_labels f ON f.claim_id = ?1 AND f.doc_id = d.id
         LEFT JOIN judgments j ON j.id = f.judgment_id
         WHERE d.project_id = ?2 AND (e.id IS NOT NULL OR f.label IS NOT NULL OR d.doc_id IN (SELECT value FROM json_each(?3)))",
    )
    .bind(key)
    .bind(project_id)
    .bind(serde_json::to_string(&cited).unwrap_or_else(|_| "[]".into()))
    .fetch_all(db)
    .await?;
    let ranks: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT r.pool_entry_id, s.name, r.rank FROM pool_ranks r
         JOIN pool_entries e ON e.id = r.pool_entry_id JOIN systems s ON s.id = r.system_id
         WHERE e.claim_id = ? ORDER BY s.name",
    )
    .bind(key)
    .fetch_all(db)
    .await?;
    let mut pairs: Vec<crate::model::ClaimPair> = rows
        .into_iter()
        .map(|row| crate::model::ClaimPair {
            cited: cited.contains(&row.doc_id),
            entry_depth: row.depth.and_then(|d| u32::try_from(d).ok()),
            model_ranks: ranks
                .iter()
                .filter(|(e, _, _)| Some(*e) == row.entry)
                .map(|(_, s, r)| (s.clone(), u32::try_from(*r).unwrap_or(u32::MAX)))
                .collect(),
            doc_id: row.doc_id,
            title: row.title,
            final_label: row.label,
            provenance: row.provenance,
            specificity: row.specificity,
            revised_claim: row.revised_claim,
        })
        .collect();
    pairs.sort_by_key(|p| (p.entry_depth.unwrap_or(u32::MAX), p.doc_id.clone()));
    Ok(crate::model::ClaimDetail {
        claim_id: claim_id.to_owned(),
        text,
        pairs,
    })
}
