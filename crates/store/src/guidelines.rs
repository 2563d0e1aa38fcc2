//! A project's annotation guidelines: append-only versions written by its leads, and the
//! members' confirmations that they read the current one.

use super::audit::{json, AuditEvent};
use super::{now_ms, Constraint, Db, StoreError, StoreResult};
use domain::guidelines::{check_new_version, GuidelinesError};
use domain::model::guidelines::GuidelinesVersion;
use sqlx::AnyConnection;

/// One version of a project's guidelines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guidelines {
    pub version: i64,
    pub markdown: String,
    pub author: Option<String>,
    pub created_at_ms: i64,
}

async fn current_in(conn: &mut AnyConnection, project_id: i64) -> StoreResult<Option<Guidelines>> {
    let row: Option<(i64, String, Option<String>, i64)> = sqlx::query_as(
        "SELECT g.version, g.markdown, u.username, g.created_at FROM guideline_versions g
         LEFT JOIN users u ON u.id = g.author_id
         WHERE g.project_id = $1 ORDER BY g.version DESC LIMIT 1",
    )
    .bind(project_id)
    .fetch_optional(conn)
    .await?;
    Ok(
        row.map(|(version, markdown, author, created_at_ms)| Guidelines {
            version,
            markdown,
            author,
            created_at_ms,
        }),
    )
}

/// The project's current guidelines; None before the first version.
pub async fn current(db: &Db, project_id: i64) -> StoreResult<Option<Guidelines>> {
    let mut conn = db.acquire().await?;
    current_in(&mut conn, project_id).await
}

/// Every version, newest first, with how many members confirmed each.
pub async fn history(db: &Db, project_id: i64) -> StoreResult<Vec<GuidelinesVersion>> {
    let rows: Vec<(i64, Option<String>, i64, i64, i64)> = sqlx::query_as(
        "SELECT g.version, u.username, g.created_at, OCTET_LENGTH(g.markdown),
                (SELECT COUNT(*) FROM guideline_confirmations c
                 WHERE c.project_id = g.project_id AND c.version = g.version)
         FROM guideline_versions g LEFT JOIN users u ON u.id = g.author_id
         WHERE g.project_id = $1 ORDER BY g.version DESC",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(version, author, created_at_ms, bytes, confirmations)| GuidelinesVersion {
                version,
                author,
                created_at_ms,
                bytes,
                confirmations,
            },
        )
        .collect())
}

/// Saves `markdown` as the project's next version and returns its number. Refuses a blank
/// text, one over the size limit, and one the same as the current version's.
pub async fn save(
    db: &Db,
    project_id: i64,
    markdown: &str,
    actor_id: Option<i64>,
) -> StoreResult<i64> {
    let mut tx = super::write_gate::begin(db).await?;
    let current = current_in(&mut tx, project_id).await?;
    let text = check_new_version(
        markdown,
        current.as_ref().map(|g| (g.version, g.markdown.as_str())),
    )
    .map_err(|e| match e {
        GuidelinesError::Unchanged(_) => {
            StoreError::conflict(Constraint::GuidelinesUnchanged, e.to_string())
        }
        _ => StoreError::invalid(None, e.to_string()),
    })?;
    let version = current.as_ref().map_or(1, |g| g.version + 1);
    sqlx::query(
        "INSERT INTO guideline_versions (project_id, version, markdown, author_id, created_at)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(project_id)
    .bind(version)
    .bind(&text)
    .bind(actor_id)
    .bind(now_ms())
    .execute(&mut *tx)
    .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "save_guidelines",
        entity: "guidelines",
        entity_id: Some(version.to_string()),
        old_value: current
            .map(|g| serde_json::json!({ "version": g.version, "bytes": g.markdown.len() })),
        new_value: json(&serde_json::json!({ "version": version, "bytes": text.len() })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(version)
}

/// Records that `user_id` read `version` of the project's guidelines, which must be the
/// current one. Confirming a version twice changes nothing.
pub async fn confirm(db: &Db, project_id: i64, user_id: i64, version: i64) -> StoreResult<()> {
    let mut tx = super::write_gate::begin(db).await?;
    let current = current_in(&mut tx, project_id)
        .await?
        .ok_or_else(|| StoreError::NotFound("this project has no guidelines".into()))?;
    if current.version != version {
        return Err(StoreError::conflict(Constraint::GuidelinesVersion, format!(
            "version {version} of the guidelines is not the current one: read version {} and confirm it",
            current.version
        )));
    }
    let inserted = sqlx::query(
        "INSERT INTO guideline_confirmations (project_id, user_id, version, confirmed_at)
         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
    )
    .bind(project_id)
    .bind(user_id)
    .bind(version)
    .bind(now_ms())
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if inserted > 0 {
        AuditEvent {
            project_id: Some(project_id),
            actor_id: Some(user_id),
            action: "confirm_guidelines",
            entity: "guidelines",
            entity_id: Some(version.to_string()),
            old_value: None,
            new_value: json(&serde_json::json!({ "version": version })),
        }
        .record(&mut tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// The query of [`to_confirm`] with the project's id in parameter `project` and the user's in
/// `user` (`$1`, `$2`, …): one place, also read as a column of the queue's snapshot.
pub(crate) fn to_confirm_sql(project: &str, user: &str) -> String {
    format!(
        "SELECT g.version FROM guideline_versions g
         WHERE g.project_id = {project}
           AND g.version = (SELECT MAX(version) FROM guideline_versions WHERE project_id = {project})
           AND NOT EXISTS (SELECT 1 FROM guideline_confirmations c
                           WHERE c.project_id = {project} AND c.user_id = {user} AND c.version = g.version)"
    )
}

/// The version `user_id` must confirm before working in the project: the current one, unless
/// they confirmed it or the project has no guidelines.
pub async fn to_confirm(db: &Db, project_id: i64, user_id: i64) -> StoreResult<Option<i64>> {
    Ok(sqlx::query_scalar(&to_confirm_sql("$1", "$2"))
        .bind(project_id)
        .bind(user_id)
        .fetch_optional(db)
        .await?)
}

/// Whether `user_id` confirmed the project's current guidelines (true when it has none).
pub async fn has_confirmed_current(db: &Db, project_id: i64, user_id: i64) -> StoreResult<bool> {
    Ok(to_confirm(db, project_id, user_id).await?.is_none())
}
