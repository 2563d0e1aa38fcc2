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

use super::{Db, StoreError, StoreResult};
use sqlx::{Connection, SqliteConnection};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Predictions deleted per statement when an import's rows are removed.
const DELETE_CHUNK: i64 = 20_000;

/// The lock a live chunked import holds: an exclusively locked file named by its token, in a
/// directory beside the database (`<database>.imports/`). Dropping it unlocks the file;
/// [`WriterLock::release`] also removes it.
#[derive(Debug)]
pub(crate) struct WriterLock {
    token: String,
    path: PathBuf,
    _file: File,
}

impl WriterLock {
    /// Creates and locks a new lock file for an import about to be written.
    pub(crate) fn take(db: &Db) -> StoreResult<WriterLock> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = lock_dir(db);
        std::fs::create_dir_all(&dir).map_err(|e| fault(&dir, "create", e))?;
        let token = format!(
            "{}-{}-{}",
            std::process::id(),
            super::now_ms(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = dir.join(format!("{token}.lock"));
        let file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(&path)
            .map_err(|e| fault(&path, "create", e))?;
        match file.try_lock() {
            Ok(()) => Ok(WriterLock {
                token,
                path,
                _file: file,
            }),
            Err(e) => Err(StoreError::Fault(format!(
                "cannot lock {}: {e}",
                path.display()
            ))),
        }
    }

    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// Unlocks and removes the lock file (after the import is done or discarded).
    pub(crate) fn release(self) {
        // A file left behind is harmless: no `writing` import names its token any more.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `<database file>.imports`: where the lock files of chunked imports live.
fn lock_dir(db: &Db) -> PathBuf {
    let mut name = db.connect_options().get_filename().as_os_str().to_owned();
    name.push(".imports");
    PathBuf::from(name)
}

fn fault(path: &Path, what: &str, e: std::io::Error) -> StoreError {
    StoreError::Fault(format!("cannot {what} {}: {e}", path.display()))
}

/// Whether the writer holding `token` is gone: its lock file is missing or can be locked.
fn writer_is_gone(dir: &Path, token: &str) -> StoreResult<bool> {
    let path = dir.join(format!("{token}.lock"));
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(fault(&path, "open", e)),
    };
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = std::fs::remove_file(&path);
            Ok(true)
        }
        Err(TryLockError::WouldBlock) => Ok(false),
        Err(TryLockError::Error(e)) => Err(fault(&path, "lock", e)),
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
    let dir = lock_dir(db);
    let mut removed = 0;
    let mut conn = db.acquire().await?;
    for (import_id, token) in writing {
        let gone = match token {
            Some(token) => writer_is_gone(&dir, &token)?,
            None => true,
        };
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
async fn delete_in_chunks(conn: &mut SqliteConnection, sql: &str, key: i64) -> StoreResult<()> {
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
pub(crate) async fn discard(conn: &mut SqliteConnection, import_id: i64) -> StoreResult<()> {
    let writing: Option<i64> =
        sqlx::query_scalar("SELECT id FROM imports WHERE id = ? AND state = 'writing'")
            .bind(import_id)
            .fetch_optional(&mut *conn)
            .await?;
    if writing.is_none() {
        return Ok(());
    }
    // Children before parents: final labels name judgments, judgments name claims and
    // documents.
    for sql in [
        "DELETE FROM final_label_rows WHERE rowid IN
           (SELECT f.rowid FROM final_label_rows f JOIN judgment_rows j ON j.id = f.judgment_id
            WHERE j.import_id = ?1 LIMIT ?2)",
        "DELETE FROM judgment_rows WHERE id IN
           (SELECT id FROM judgment_rows WHERE import_id = ?1 LIMIT ?2)",
        "DELETE FROM claim_rows WHERE id IN
           (SELECT id FROM claim_rows WHERE import_id = ?1 LIMIT ?2)",
        "DELETE FROM document_rows WHERE id IN
           (SELECT id FROM document_rows WHERE import_id = ?1 LIMIT ?2)",
    ] {
        delete_in_chunks(conn, sql, import_id).await?;
    }
    let systems: Vec<i64> = sqlx::query_scalar(
        "SELECT s.id FROM systems s JOIN imports i ON i.id = s.import_id
         WHERE s.import_id = ? AND s.ready = 0 AND i.state = 'writing'",
    )
    .bind(import_id)
    .fetch_all(&mut *conn)
    .await?;
    for &system in &systems {
        delete_in_chunks(
            conn,
            "DELETE FROM predictions WHERE system_id = ?1 AND (claim_id, doc_id) IN
               (SELECT claim_id, doc_id FROM predictions WHERE system_id = ?1 LIMIT ?2)",
            system,
        )
        .await?;
    }
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query("DELETE FROM systems WHERE import_id = ? AND ready = 0")
        .bind(import_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM imports WHERE id = ? AND state = 'writing'")
        .bind(import_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}
