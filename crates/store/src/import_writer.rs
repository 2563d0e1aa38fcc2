//! Imports written in chunks (run imports: millions of predictions; corpus imports: hundreds of
//! thousands of abstracts; claims imports), so that no write transaction of theirs lasts longer than one chunk
//! and annotators' submissions wait milliseconds, not the length of an import.
//!
//! While an import is written, its `imports` row has state `writing` and names the token of a
//! lock file its writer holds locked ([`WriterLock`]); its systems have `ready = 0`, which every
//! reader of systems filters out, and its documents, claims, judgments and final labels are
//! hidden by the views `documents`, `claims`, `judgments` and `final_labels` (the rows live in
//! `*_rows` tables). The last transaction makes the import `done` (and its systems
//! ready), so the import appears whole or not at all. A writer that fails removes its rows
//! itself ([`discard`]); one that died (killed, power cut) leaves its lock file unlocked (the
//! operating system releases the lock with the process), and [`reclaim_abandoned`] removes its
//! rows: every run import calls it before it starts, and `serve` at start.

use super::writer_lock::{writer_is_gone, LockKind};
use super::{Db, StoreResult};
use sqlx::AnyConnection;

/// Predictions deleted per statement when an import's rows are removed.
const DELETE_CHUNK: i64 = 20_000;

/// The lock of a live chunked import ([`super::writer_lock`], in `<database>.imports/`).
pub(crate) struct WriterLock(super::writer_lock::WriterLock);

impl WriterLock {
    /// Takes a new lock for an import about to be written.
    pub(crate) async fn take(db: &Db) -> StoreResult<WriterLock> {
        super::writer_lock::WriterLock::take(db, LockKind::Import)
            .await
            .map(WriterLock)
    }

    pub(crate) fn token(&self) -> &str {
        self.0.token()
    }

    /// Frees the lock (after the import is done or discarded).
    pub(crate) fn release(self) {
        self.0.release();
    }
}

/// Whether a run import of `db` gives way before its next chunk now: a writer, of this process
/// or of another on the same SQLite file (the server beside a lead's `claimpool import run`),
/// is waiting for the write lock (the file's board, see [`super::write_gate`]). The import's
/// chunk then waits until that writer has the lock, for at most a quarter of a second. Never
/// on PostgreSQL, whose chunks take no lock that writers wait for.
pub fn gives_way_now(db: &Db) -> bool {
    super::write_gate::Gate::of(db).writer_waiting()
}

/// The writers' board of `db`'s SQLite file (`<database>-writers`, beside it); `None` on
/// PostgreSQL or where it could not be opened.
pub fn board_file(db: &Db) -> Option<std::path::PathBuf> {
    super::write_gate::Gate::of(db).board_file()
}

/// The writers of every process on a PostgreSQL database as a run import sees them between its
/// chunks: each process's writers advance the sequence `writers_began` at most four times a
/// second while they begin write transactions ([`super::write_gate`]); the import reads it
/// (`last_value`, no lock) after each chunk, and gives way while it moved within the last
/// second (`import_copy`'s pause). A `claimpool import run` at the shell thus pauses for the
/// server's writers, and the server's import for a script's.
#[derive(Debug, Default)]
pub struct OtherWriters {
    /// The sequence's value at the last reading.
    last: Option<i64>,
    /// When a reading first found it moved.
    moved: Option<std::time::Instant>,
}

impl OtherWriters {
    /// Reads the sequence on `conn`; whether writers (of any process) began a write
    /// transaction within `window` as far as this and the earlier readings tell.
    pub async fn began_within(
        &mut self,
        conn: &mut sqlx::PgConnection,
        window: std::time::Duration,
    ) -> StoreResult<bool> {
        // `last_value` stays 1 at the first `nextval`, which only sets `is_called`.
        let value: i64 = sqlx::query_scalar(
            "SELECT last_value + CASE WHEN is_called THEN 1 ELSE 0 END FROM writers_began",
        )
        .fetch_one(&mut *conn)
        .await?;
        if self.last.is_some_and(|last| last != value) {
            self.moved = Some(std::time::Instant::now());
        }
        self.last = Some(value);
        Ok(self.moved.is_some_and(|at| at.elapsed() <= window))
    }
}

/// Removes the rows of every import whose writer died; returns how many imports it removed.
pub async fn reclaim_abandoned(db: &Db) -> StoreResult<usize> {
    let writing: Vec<(i64, Option<String>)> =
        sqlx::query_as("SELECT id, lock_token FROM imports WHERE state = 'writing'")
            .fetch_all(db)
            .await?;
    if writing.is_empty() {
        return Ok(0);
    }
    let mut removed = 0;
    let mut conn = db.acquire().await?;
    for (import_id, token) in writing {
        let gone = writer_is_gone(db, LockKind::Import, token.as_deref()).await?;
        if gone {
            discard(&mut conn, import_id).await?;
            tracing::warn!(import_id, "removed the rows of an import whose writer died");
            removed += 1;
        }
    }
    Ok(removed)
}

/// Runs `sql` (a DELETE of at most `?2` rows of key `?1`) with [`DELETE_CHUNK`] until it
/// deletes nothing: each statement its own short transaction.
async fn delete_in_chunks(conn: &mut AnyConnection, sql: &str, key: i64) -> StoreResult<()> {
    loop {
        let deleted = sqlx::query(sql)
            .bind(key)
            .bind(DELETE_CHUNK)
            .execute(&mut *conn)
            .await?
            .rows_affected();
        if deleted == 0 {
            return Ok(());
        }
    }
}

/// [`discard`] on a pooled connection.
pub(crate) async fn discard_on(db: &Db, import_id: i64) -> StoreResult<()> {
    discard(&mut *db.acquire().await?, import_id).await
}

/// Removes what a `writing` import wrote: its final labels, judgments, claims, documents and
/// predictions (in chunks, each its own short transaction), its systems and its row. A `done`
/// import is never touched.
pub(crate) async fn discard(conn: &mut AnyConnection, import_id: i64) -> StoreResult<()> {
    let writing: Option<i64> =
        sqlx::query_scalar("SELECT id FROM imports WHERE id = $1 AND state = 'writing'")
            .bind(import_id)
            .fetch_optional(&mut *conn)
            .await?;
    if writing.is_none() {
        return Ok(());
    }
    // Children before parents: final labels name judgments, judgments name claims and
    // documents.
    for sql in [
        "DELETE FROM final_label_rows WHERE (claim_id, doc_id) IN
           (SELECT f.claim_id, f.doc_id FROM final_label_rows f JOIN judgment_rows j ON j.id = f.judgment_id
            WHERE j.import_id = $1 LIMIT $2)",
        "DELETE FROM judgment_rows WHERE id IN
           (SELECT id FROM judgment_rows WHERE import_id = $1 LIMIT $2)",
        "DELETE FROM claim_rows WHERE id IN
           (SELECT id FROM claim_rows WHERE import_id = $1 LIMIT $2)",
        "DELETE FROM document_rows WHERE id IN
           (SELECT id FROM document_rows WHERE import_id = $1 LIMIT $2)",
    ] {
        delete_in_chunks(conn, sql, import_id).await?;
    }
    let systems: Vec<i64> = sqlx::query_scalar(
        "SELECT s.id FROM systems s JOIN imports i ON i.id = s.import_id
         WHERE s.import_id = $1 AND s.ready = 0 AND i.state = 'writing'",
    )
    .bind(import_id)
    .fetch_all(&mut *conn)
    .await?;
    for &system in &systems {
        delete_in_chunks(
            conn,
            "DELETE FROM predictions WHERE system_id = $1 AND (claim_id, doc_id) IN
               (SELECT claim_id, doc_id FROM predictions WHERE system_id = $1 LIMIT $2)",
            system,
        )
        .await?;
    }
    let mut tx = super::write_gate::begin_on(conn).await?;
    sqlx::query("DELETE FROM systems WHERE import_id = $1 AND ready = 0")
        .bind(import_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM imports WHERE id = $1 AND state = 'writing'")
        .bind(import_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}
