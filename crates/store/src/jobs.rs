//! Background jobs (the `jobs` table): a server function records one and returns; the worker in
//! the server claims it, reports progress, and finishes or fails it. Also the export of a
//! project's corpus and claims to files, which a pipeline job reads.

use super::audit::AuditEvent;
use super::{now_ms, Constraint, Db, StoreError, StoreResult};
use futures::TryStreamExt;
use sqlx::Row;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

/// The kind of a pipeline run job.
pub const PIPELINE: &str = "pipeline";

/// At most this many jobs wait or run at once, on the whole server: one more is refused until
/// one ends (jobs run one at a time, each for minutes). Uploads still being received count,
/// from before their first byte ([`reserve`]).
pub const MAX_WAITING: i64 = 8;

/// One job as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub id: i64,
    pub project_id: Option<i64>,
    pub kind: String,
    /// The job's parameters, JSON.
    pub params: String,
    /// queued, running, done, failed or cancelled.
    pub status: String,
    pub done_units: i64,
    pub total_units: Option<i64>,
    /// Why it failed (or a note).
    pub message: Option<String>,
    /// What it produced, JSON.
    pub result: Option<String>,
    pub created_by: Option<i64>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    /// When a lead asked to cancel the job while it ran.
    pub cancel_requested_at: Option<i64>,
}

const COLUMNS: &str = "id, project_id, kind, params, status, done_units, total_units, message, \
                       result, created_by, created_at, started_at, finished_at, cancel_requested_at";

fn from_row(row: &sqlx::any::AnyRow) -> StoreResult<Job> {
    Ok(Job {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        kind: row.try_get("kind")?,
        params: row.try_get("params")?,
        status: row.try_get("status")?,
        done_units: row.try_get("done_units")?,
        total_units: row.try_get("total_units")?,
        message: row.try_get("message")?,
        result: row.try_get("result")?,
        created_by: row.try_get("created_by")?,
        created_at: row.try_get("created_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        cancel_requested_at: row.try_get("cancel_requested_at")?,
    })
}

/// Records a job event in the audit trail.
async fn audit(
    conn: &mut sqlx::AnyConnection,
    project_id: Option<i64>,
    actor_id: Option<i64>,
    action: &str,
    id: i64,
    value: Option<serde_json::Value>,
) -> StoreResult<()> {
    AuditEvent {
        project_id,
        actor_id,
        action,
        entity: "job",
        entity_id: Some(id.to_string()),
        old_value: None,
        new_value: value,
    }
    .record(conn)
    .await
}

/// A place in the job queue, held for a job not created yet (an upload still being received):
/// counted as a waiting job until it becomes one ([`create`]) or is dropped.
#[derive(Debug)]
pub struct Slot {
    held: Arc<AtomicI64>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.held.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The slots held in this process for `db`'s queue (one count per database, whichever pool
/// opened it).
fn held_slots(db: &Db) -> Arc<AtomicI64> {
    static HELD: Mutex<Option<HashMap<PathBuf, Arc<AtomicI64>>>> = Mutex::new(None);
    let key = super::db::identity(db);
    let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
    held.get_or_insert_with(HashMap::new)
        .entry(key)
        .or_default()
        .clone()
}

/// How many places in `db`'s job queue this process holds for uploads being received.
pub fn held(db: &Db) -> i64 {
    held_slots(db).load(Ordering::SeqCst)
}

/// Holds a place in the job queue before a job's input is received, so that a full queue
/// refuses it at once (nothing uploaded for nothing). Refused while [`MAX_WAITING`] jobs wait,
/// run or hold a place. Checked in a write transaction, so that it and [`create`] take turns.
pub async fn reserve(db: &Db) -> StoreResult<Slot> {
    let mut tx = super::write_gate::begin(db).await?;
    let waiting: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')")
            .fetch_one(&mut *tx)
            .await?;
    let held = held_slots(db);
    let taken = waiting + held.load(Ordering::SeqCst);
    if taken >= MAX_WAITING {
        return Err(StoreError::conflict(Constraint::JobQueueFull, format!(
            "the server's job queue is full ({taken} jobs wait, run or are being uploaded); start this one when one has ended, or cancel one"
        )));
    }
    held.fetch_add(1, Ordering::SeqCst);
    let slot = Slot { held };
    tx.commit().await?;
    Ok(slot)
}

/// Records a queued job in the place `slot` held ([`reserve`]); returns its id.
pub async fn create(
    db: &Db,
    slot: Slot,
    project_id: i64,
    kind: &str,
    params: &serde_json::Value,
    created_by: Option<i64>,
) -> StoreResult<i64> {
    let mut tx = super::write_gate::begin(db).await?;
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO jobs (project_id, kind, params, status, created_by, created_at) \
         VALUES ($1, $2, $3, 'queued', $4, $5) RETURNING id",
    )
    .bind(project_id)
    .bind(kind)
    .bind(params.to_string())
    .bind(created_by)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await?;
    let value = serde_json::json!({ "kind": kind, "params": params });
    audit(
        &mut tx,
        Some(project_id),
        created_by,
        "job-start",
        id,
        Some(value),
    )
    .await?;
    tx.commit().await?;
    // The job now counts itself.
    drop(slot);
    Ok(id)
}

/// Cancels a job of the project: a queued one at once, a running one when its worker next
/// checks ([`cancel_requested`]). A job that has ended is a conflict.
pub async fn cancel(db: &Db, project_id: i64, id: i64, actor_id: Option<i64>) -> StoreResult<Job> {
    let mut tx = super::write_gate::begin(db).await?;
    let status: Option<String> =
        sqlx::query_scalar("SELECT status FROM jobs WHERE id = $1 AND project_id = $2")
            .bind(id)
            .bind(project_id)
            .fetch_optional(&mut *tx)
            .await?;
    let now = now_ms();
    match status.as_deref() {
        None => return Err(StoreError::NotFound(format!("job {id}"))),
        Some("queued") => {
            sqlx::query(
                "UPDATE jobs SET status = 'cancelled', message = 'cancelled before it started', \
                 finished_at = $1, cancel_requested_at = $1, cancel_requested_by = $2 WHERE id = $3",
            )
            .bind(now)
            .bind(actor_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        Some("running") => {
            sqlx::query(
                "UPDATE jobs SET cancel_requested_at = COALESCE(cancel_requested_at, $1), \
                 cancel_requested_by = COALESCE(cancel_requested_by, $2) WHERE id = $3",
            )
            .bind(now)
            .bind(actor_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        Some(ended) => {
            return Err(StoreError::conflict(
                Constraint::JobEnded,
                format!("job {id} has ended ({ended}); there is nothing to cancel"),
            ))
        }
    }
    audit(&mut tx, Some(project_id), actor_id, "job-cancel", id, None).await?;
    tx.commit().await?;
    get(db, project_id, id).await
}

/// Whether a lead asked to cancel the running job.
pub async fn cancel_requested(db: &Db, id: i64) -> StoreResult<bool> {
    let at: Option<Option<i64>> =
        sqlx::query_scalar("SELECT cancel_requested_at FROM jobs WHERE id = $1")
            .bind(id)
            .fetch_optional(db)
            .await?;
    Ok(at.flatten().is_some())
}

/// One job of a project.
pub async fn get(db: &Db, project_id: i64, id: i64) -> StoreResult<Job> {
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM jobs WHERE id = $1 AND project_id = $2"
    ))
    .bind(id)
    .bind(project_id)
    .fetch_optional(db)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("job {id}")))?;
    from_row(&row)
}

/// The project's latest jobs of a kind, newest first.
pub async fn recent(db: &Db, project_id: i64, kind: &str, limit: i64) -> StoreResult<Vec<Job>> {
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM jobs WHERE project_id = $1 AND kind = $2 ORDER BY id DESC LIMIT $3"
    ))
    .bind(project_id)
    .bind(kind)
    .bind(limit)
    .fetch_all(db)
    .await?;
    rows.iter().map(from_row).collect()
}

/// The project's latest jobs of every kind (or only job `id`), newest first, each with the
/// name of who started it.
pub async fn listed(
    db: &Db,
    project_id: i64,
    id: Option<i64>,
    limit: i64,
) -> StoreResult<Vec<(Job, Option<String>)>> {
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS}, (SELECT username FROM users u WHERE u.id = jobs.created_by) AS started_by \
         FROM jobs WHERE project_id = $1 AND ($2 IS NULL OR id = $2) ORDER BY id DESC LIMIT $3"
    ))
    .bind(project_id)
    .bind(id)
    .bind(limit)
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|row| Ok((from_row(row)?, row.try_get("started_by")?)))
        .collect()
}

/// Takes the oldest queued job and marks it running (one statement, so two workers cannot take
/// the same job).
pub async fn claim_next(db: &Db) -> StoreResult<Option<Job>> {
    let row = sqlx::query(&format!(
        "UPDATE jobs SET status = 'running', started_at = $1 \
         WHERE id = (SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1) \
         RETURNING {COLUMNS}"
    ))
    .bind(now_ms())
    .fetch_optional(db)
    .await?;
    row.as_ref().map(from_row).transpose()
}

/// Sets a running job's progress.
pub async fn progress(db: &Db, id: i64, done: i64, total: Option<i64>) -> StoreResult<()> {
    sqlx::query(
        "UPDATE jobs SET done_units = $1, total_units = COALESCE($2, total_units) \
         WHERE id = $3 AND status = 'running'",
    )
    .bind(done)
    .bind(total)
    .bind(id)
    .execute(db)
    .await?;
    Ok(())
}

/// Ends a job (`from` the given states) with a status, a message or a result, and records it.
async fn end(
    db: &Db,
    id: i64,
    from: &str,
    status: &str,
    message: Option<&str>,
    result: Option<&serde_json::Value>,
) -> StoreResult<()> {
    let mut tx = super::write_gate::begin(db).await?;
    let project: Option<Option<i64>> = sqlx::query_scalar(&format!(
        "UPDATE jobs SET status = $1, message = COALESCE($2, message), result = $3, finished_at = $4 \
         WHERE id = $5 AND status IN ({from}) RETURNING project_id"
    ))
    .bind(status)
    .bind(message)
    .bind(result.map(serde_json::Value::to_string))
    .bind(now_ms())
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(project) = project {
        let value = serde_json::json!({ "status": status, "message": message, "result": result });
        audit(
            &mut tx,
            project,
            None,
            &format!("job-{status}"),
            id,
            Some(value),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Marks a running job done with its result.
pub async fn finish(db: &Db, id: i64, result: &serde_json::Value) -> StoreResult<()> {
    end(db, id, "'running'", "done", None, Some(result)).await
}

/// Marks a queued or running job failed with the reason.
pub async fn fail(db: &Db, id: i64, message: &str) -> StoreResult<()> {
    end(db, id, "'queued', 'running'", "failed", Some(message), None).await
}

/// Marks a running job cancelled (its worker stopped it), with what it did.
pub async fn cancelled(db: &Db, id: i64, message: &str) -> StoreResult<()> {
    end(db, id, "'running'", "cancelled", Some(message), None).await
}

/// Fails the jobs left running by a server that stopped; returns how many. Call before a
/// worker starts.
pub async fn fail_interrupted(db: &Db) -> StoreResult<u64> {
    Ok(sqlx::query(
        "UPDATE jobs SET status = 'failed', finished_at = $1, \
         message = 'the server stopped while the job ran; start it again' \
         WHERE status = 'running'",
    )
    .bind(now_ms())
    .execute(db)
    .await?
    .rows_affected())
}

/// A write of an export that failed.
fn export_error(what: &'static str) -> impl Fn(std::io::Error) -> StoreError {
    move |e| StoreError::Fault(format!("writing the {what} export: {e}"))
}

/// Writes the project's documents as a SciFact corpus (`doc_id`, `title`, `abstract`), one per
/// line, to `out`, streaming them from the database; returns how many.
pub async fn export_corpus(
    db: &Db,
    project_id: i64,
    out: &mut (dyn Write + Send),
) -> StoreResult<u64> {
    let mut rows = sqlx::query(
        "SELECT doc_id, title, sentences FROM documents WHERE project_id = $1 ORDER BY id",
    )
    .bind(project_id)
    .fetch(db);
    let mut count = 0;
    while let Some(row) = rows.try_next().await? {
        let doc_id: String = row.try_get("doc_id")?;
        let sentences: String = row.try_get("sentences")?;
        let sentences: Vec<String> = serde_json::from_str(&sentences)
            .map_err(|e| StoreError::Corrupt(format!("sentences of doc {doc_id}: {e}")))?;
        let line = serde_json::json!({
            "doc_id": doc_id,
            "title": row.try_get::<String, _>("title")?,
            "abstract": sentences,
        });
        writeln!(out, "{line}").map_err(export_error("corpus"))?;
        count += 1;
    }
    out.flush().map_err(export_error("corpus"))?;
    Ok(count)
}

/// Writes the project's claims as a SciFact claims file (`id`, `claim`) to `out`; returns how
/// many.
pub async fn export_claims(
    db: &Db,
    project_id: i64,
    out: &mut (dyn Write + Send),
) -> StoreResult<u64> {
    let mut rows =
        sqlx::query("SELECT claim_id, text FROM claims WHERE project_id = $1 ORDER BY id")
            .bind(project_id)
            .fetch(db);
    let mut count = 0;
    while let Some(row) = rows.try_next().await? {
        let line = serde_json::json!({
            "id": row.try_get::<String, _>("claim_id")?,
            "claim": row.try_get::<String, _>("text")?,
        });
        writeln!(out, "{line}").map_err(export_error("claims"))?;
        count += 1;
    }
    out.flush().map_err(export_error("claims"))?;
    Ok(count)
}
