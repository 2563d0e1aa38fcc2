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

/// What a new job is.
#[derive(Clone, Copy, Debug)]
pub struct NewJob<'a> {
    pub project_id: i64,
    pub kind: &'a str,
    pub params: &'a serde_json::Value,
    pub created_by: Option<i64>,
    /// The upload it imports, kept in the database ([`super::uploads`]): removed when the job
    /// ends.
    pub upload_id: Option<i64>,
}

/// Records a queued job in the place `slot` held ([`reserve`]); returns its id.
pub async fn create(db: &Db, slot: Slot, job: NewJob<'_>) -> StoreResult<i64> {
    let NewJob {
        project_id,
        kind,
        params,
        created_by,
        upload_id,
    } = job;
    let mut tx = super::write_gate::begin(db).await?;
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO jobs (project_id, kind, params, status, created_by, created_at, upload_id) \
         VALUES ($1, $2, $3, 'queued', $4, $5, $6) RETURNING id",
    )
    .bind(project_id)
    .bind(kind)
    .bind(params.to_string())
    .bind(created_by)
    .bind(now_ms())
    .bind(upload_id)
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
            remove_upload(&mut tx, id).await?;
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

/// A server's claim on the jobs it runs: who it is (unique among the servers of a database)
/// and how long a claim lasts unrenewed. A running job whose lease expired belongs to nobody:
/// its server stopped, or lost the database, and any server may fail it ([`expire_leases`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub owner: String,
    pub ttl_ms: i64,
}

/// Takes the oldest queued job and marks it running under `lease` (one statement, so two
/// workers cannot take the same job; on PostgreSQL the row is locked `SKIP LOCKED`, so
/// workers of several servers do not queue behind each other's claim).
///
/// Every server's worker calls this several times a second; a read that takes no lock answers
/// "none queued" first, so that an idle worker never takes the writers' turn (on SQLite, the
/// database's one write lock).
pub async fn claim_next(db: &Db, lease: &Lease) -> StoreResult<Option<Job>> {
    let queued: Option<i64> =
        sqlx::query_scalar("SELECT id FROM jobs WHERE status = 'queued' LIMIT 1")
            .fetch_optional(db)
            .await?;
    if queued.is_none() {
        return Ok(None);
    }
    let lock = match super::db::engine(db) {
        super::db::Engine::Postgres => " FOR UPDATE SKIP LOCKED",
        super::db::Engine::Sqlite => "",
    };
    let now = now_ms();
    let mut tx = super::write_gate::begin(db).await?;
    let row = sqlx::query(&format!(
        "UPDATE jobs SET status = 'running', started_at = $1, lease_owner = $2, \
         lease_expires_at = $3 \
         WHERE id = (SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1{lock}) \
         RETURNING {COLUMNS}"
    ))
    .bind(now)
    .bind(&lease.owner)
    .bind(now.saturating_add(lease.ttl_ms))
    .fetch_optional(&mut *tx)
    .await?;
    let job = row.as_ref().map(from_row).transpose()?;
    tx.commit().await?;
    Ok(job)
}

/// Renews `lease` on running job `id`: false when the lease is no longer this server's (it
/// expired and another server failed the job, or the job ended).
pub async fn renew(db: &Db, id: i64, lease: &Lease) -> StoreResult<bool> {
    let renewed = sqlx::query(
        "UPDATE jobs SET lease_expires_at = $1 \
         WHERE id = $2 AND status = 'running' AND lease_owner = $3",
    )
    .bind(now_ms().saturating_add(lease.ttl_ms))
    .bind(id)
    .bind(&lease.owner)
    .execute(db)
    .await?
    .rows_affected();
    Ok(renewed == 1)
}

/// Sets a running job's progress.
pub async fn progress(
    db: &Db,
    id: i64,
    lease: &Lease,
    done: i64,
    total: Option<i64>,
) -> StoreResult<()> {
    sqlx::query(
        "UPDATE jobs SET done_units = $1, total_units = COALESCE($2, total_units) \
         WHERE id = $3 AND status = 'running' AND lease_owner = $4",
    )
    .bind(done)
    .bind(total)
    .bind(id)
    .bind(&lease.owner)
    .execute(db)
    .await?;
    Ok(())
}

/// Which running job an end applies to.
enum Holder<'a> {
    /// The job the lease's owner runs.
    Owner(&'a Lease),
    /// A job whose lease expired before this time (ms), or that has none.
    ExpiredBefore(i64),
}

/// Ends running job `id` held as `holder` says with a status, a message or a result, and
/// records it; false when no such job was running.
async fn end(
    db: &Db,
    id: i64,
    holder: Holder<'_>,
    status: &str,
    message: Option<&str>,
    result: Option<&serde_json::Value>,
) -> StoreResult<bool> {
    let mut tx = super::write_gate::begin(db).await?;
    let held = match holder {
        Holder::Owner(_) => "lease_owner = $6",
        Holder::ExpiredBefore(_) => "(lease_expires_at IS NULL OR lease_expires_at < $6)",
    };
    let query = format!(
        "UPDATE jobs SET status = $1, message = COALESCE($2, message), result = $3, finished_at = $4, \
         lease_expires_at = NULL WHERE id = $5 AND status = 'running' AND {held} \
         RETURNING project_id, upload_id, kind"
    );
    let query = sqlx::query_as(&query)
        .bind(status)
        .bind(message)
        .bind(result.map(serde_json::Value::to_string))
        .bind(now_ms())
        .bind(id);
    let query = match holder {
        Holder::Owner(lease) => query.bind(lease.owner.clone()),
        Holder::ExpiredBefore(at) => query.bind(at),
    };
    let ended: Option<(Option<i64>, Option<i64>, String)> = query.fetch_optional(&mut *tx).await?;
    if let Some((_, Some(upload), _)) = &ended {
        super::uploads::remove_in(&mut tx, *upload).await?;
    }
    if let Some((Some(project), _, kind)) = &ended {
        notify_end(&mut tx, *project, id, kind, status, message, result).await?;
    }
    let project = ended.map(|(project, _, _)| project);
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
    Ok(project.is_some())
}

/// The job kind of imports (a run, judgments, a corpus: `commands::import`).
pub const IMPORT: &str = "import";

/// The webhook events of a job's end: `job.failed` for any job, and `import.failed` for an
/// import (an import that finished says so itself, `import::finish_import`, from the shell too).
async fn notify_end(
    conn: &mut sqlx::AnyConnection,
    project: i64,
    id: i64,
    kind: &str,
    status: &str,
    message: Option<&str>,
    result: Option<&serde_json::Value>,
) -> StoreResult<()> {
    use domain::webhooks::Event;
    let data = serde_json::json!({
        "job": id,
        "kind": kind,
        "status": status,
        "message": message,
        "result": result,
    });
    let import = kind == IMPORT;
    if status == "failed" {
        super::webhooks::enqueue(conn, project, Event::JobFailed, data.clone()).await?;
        if import {
            super::webhooks::enqueue(conn, project, Event::ImportFailed, data).await?;
        }
    }
    Ok(())
}

/// Removes the upload job `id` imports, kept in the database, once the job has ended.
async fn remove_upload(conn: &mut sqlx::AnyConnection, id: i64) -> StoreResult<()> {
    let upload: Option<Option<i64>> =
        sqlx::query_scalar("SELECT upload_id FROM jobs WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    if let Some(Some(upload)) = upload {
        super::uploads::remove_in(conn, upload).await?;
    }
    Ok(())
}

/// Marks the running job `lease` holds done with its result; false when the lease was lost.
pub async fn finish(
    db: &Db,
    id: i64,
    lease: &Lease,
    result: &serde_json::Value,
) -> StoreResult<bool> {
    end(db, id, Holder::Owner(lease), "done", None, Some(result)).await
}

/// Marks the running job `lease` holds failed with the reason; false when the lease was lost.
pub async fn fail(db: &Db, id: i64, lease: &Lease, message: &str) -> StoreResult<bool> {
    end(db, id, Holder::Owner(lease), "failed", Some(message), None).await
}

/// Marks the running job `lease` holds cancelled (its worker stopped it), with what it did;
/// false when the lease was lost.
pub async fn cancelled(db: &Db, id: i64, lease: &Lease, message: &str) -> StoreResult<bool> {
    end(
        db,
        id,
        Holder::Owner(lease),
        "cancelled",
        Some(message),
        None,
    )
    .await
}

/// Puts the running job `lease` holds back in the queue, unstarted (its server is stopping
/// and stopped its work, which wrote nothing): another server, or this one when it is back,
/// runs it from the start. False when the lease was lost.
pub async fn release(db: &Db, id: i64, lease: &Lease) -> StoreResult<bool> {
    let mut tx = super::write_gate::begin(db).await?;
    let project: Option<Option<i64>> = sqlx::query_scalar(
        "UPDATE jobs SET status = 'queued', started_at = NULL, done_units = 0, \
         lease_owner = NULL, lease_expires_at = NULL \
         WHERE id = $1 AND status = 'running' AND lease_owner = $2 RETURNING project_id",
    )
    .bind(id)
    .bind(&lease.owner)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(project) = project {
        let value = serde_json::json!({ "server": lease.owner });
        audit(&mut tx, project, None, "job-requeued", id, Some(value)).await?;
    }
    tx.commit().await?;
    Ok(project.is_some())
}

/// Fails the running jobs whose lease expired (their server stopped renewing it: it died, or
/// lost the database), or that have none (a server of a version before leases ran them);
/// returns their ids. A job whose lease is live is never touched, whoever asks.
pub async fn expire_leases(db: &Db) -> StoreResult<Vec<i64>> {
    let now = now_ms();
    let expired: Vec<(i64, Option<String>)> = sqlx::query_as(
        "SELECT id, lease_owner FROM jobs WHERE status = 'running' \
         AND (lease_expires_at IS NULL OR lease_expires_at < $1) ORDER BY id",
    )
    .bind(now)
    .fetch_all(db)
    .await?;
    let mut failed = Vec::with_capacity(expired.len());
    for (id, owner) in expired {
        let who = owner.map_or_else(|| "the server".to_owned(), |o| format!("server {o}"));
        let message = format!(
            "{who} running it stopped renewing its lease (it stopped or lost the database); start the job again"
        );
        if end(
            db,
            id,
            Holder::ExpiredBefore(now),
            "failed",
            Some(&message),
            None,
        )
        .await?
        {
            failed.push(id);
        }
    }
    Ok(failed)
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

/// How many jobs of the database are in each state (states without a job left out).
pub async fn count_by_status(db: &Db) -> StoreResult<Vec<(String, i64)>> {
    Ok(
        sqlx::query_as("SELECT status, COUNT(*) FROM jobs GROUP BY status ORDER BY status")
            .fetch_all(db)
            .await?,
    )
}
