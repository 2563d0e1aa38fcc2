//! The lock a live chunked writer holds (an import, a pool build, a release), named by a token
//! the writer's rows carry while they are `writing`. When the writer's process dies its lock is
//! freed, so a free lock (or none) means the writer is gone and its rows can be removed.
//!
//! - SQLite: an exclusively locked file named by the token, in a directory beside the database
//!   file (the operating system frees it).
//! - PostgreSQL: a session-level advisory lock on a key of the token, held by a connection of the
//!   writer's own (the server frees it when that connection ends). Every server and command of
//!   the database sees it, on any machine.

use super::{now_ms, Db, StoreError, StoreResult};
use sqlx::AnyConnection;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which writers a lock is for: each kind has its directory, `<database file>.<suffix>`, or on
/// PostgreSQL its range of advisory-lock keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LockKind {
    /// Chunked imports: `<database>.imports/`.
    Import,
    /// Pool builds: `<database>.pool-builds/`.
    PoolBuild,
    /// Releases, their archives written in parts: `<database>.releases/`.
    Release,
}

impl LockKind {
    fn dir(self, file: &Path) -> PathBuf {
        let mut name = file.as_os_str().to_owned();
        name.push(match self {
            LockKind::Import => ".imports",
            LockKind::PoolBuild => ".pool-builds",
            LockKind::Release => ".releases",
        });
        PathBuf::from(name)
    }

    /// The top 16 bits of this kind's PostgreSQL advisory-lock keys ("c1".."c3"; the key of the
    /// write transactions' lock, [`super::write_gate`]'s, starts with "cl").
    fn key_prefix(self) -> i64 {
        let tag: i64 = match self {
            LockKind::Import => 0x6331,
            LockKind::PoolBuild => 0x6332,
            LockKind::Release => 0x6333,
        };
        tag << KEY_BITS
    }
}

/// The random bits of a PostgreSQL writer lock's key, below its kind's prefix.
const KEY_BITS: u32 = 48;

/// A live writer's lock. Dropping it frees the lock; [`WriterLock::release`] also removes a
/// lock file.
#[derive(Debug)]
pub(crate) struct WriterLock {
    token: String,
    held: Held,
}

#[derive(Debug)]
enum Held {
    /// The locked file (SQLite).
    File { path: PathBuf, _file: File },
    /// The connection holding the advisory lock (PostgreSQL), out of the pool: closing it frees
    /// the lock. (In a mutex, never locked, only so that a writer may hold `&WriterLock` across
    /// an await: a connection is not `Sync`.)
    Session {
        _conn: std::sync::Mutex<AnyConnection>,
    },
}

impl WriterLock {
    /// Takes a new lock for a writer about to write.
    pub(crate) async fn take(db: &Db, kind: LockKind) -> StoreResult<WriterLock> {
        match super::db::sqlite_file(db) {
            Some(file) => take_file(&kind.dir(&file)),
            None => take_session(db, kind).await,
        }
    }

    /// The token the writer's rows name.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// Frees the lock (after the writer is done or has discarded its rows) and removes its
    /// file.
    pub(crate) fn release(self) {
        // A file left behind is harmless: no `writing` row names its token any more.
        if let Held::File { path, .. } = &self.held {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn take_file(dir: &Path) -> StoreResult<WriterLock> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(dir).map_err(|e| fault(dir, "create", e))?;
    let token = format!(
        "{}-{}-{}",
        std::process::id(),
        now_ms(),
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
            held: Held::File { path, _file: file },
        }),
        Err(e) => Err(StoreError::Fault(format!(
            "cannot lock {}: {e}",
            path.display()
        ))),
    }
}

/// Takes a session-level advisory lock on a random key of `kind` on a connection taken out of
/// the pool (so the lock never goes back into the pool with it).
async fn take_session(db: &Db, kind: LockKind) -> StoreResult<WriterLock> {
    let mut conn = db.acquire().await?.detach();
    loop {
        let key = kind.key_prefix() | (rand::random::<i64>() & ((1 << KEY_BITS) - 1));
        let taken: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
            .bind(key)
            .fetch_one(&mut conn)
            .await?;
        if taken {
            return Ok(WriterLock {
                token: format!("pg-{key}"),
                held: Held::Session {
                    _conn: std::sync::Mutex::new(conn),
                },
            });
        }
    }
}

fn fault(path: &Path, what: &str, e: std::io::Error) -> StoreError {
    StoreError::Fault(format!("cannot {what} {}: {e}", path.display()))
}

/// Whether the writer of `kind` holding `token` is gone: its lock is free, or its lock file
/// is missing (a row without a token has no live writer either, nor has a token of another
/// kind or engine).
pub(crate) async fn writer_is_gone(
    db: &Db,
    kind: LockKind,
    token: Option<&str>,
) -> StoreResult<bool> {
    let Some(token) = token else { return Ok(true) };
    if let Some(file) = super::db::sqlite_file(db) {
        return file_is_free(&kind.dir(&file).join(format!("{token}.lock")));
    }
    let key = token
        .strip_prefix("pg-")
        .and_then(|k| k.parse::<i64>().ok())
        .filter(|k| k >> KEY_BITS == kind.key_prefix() >> KEY_BITS);
    match key {
        Some(key) => session_lock_is_free(db, key).await,
        None => Ok(true),
    }
}

fn file_is_free(path: &Path) -> StoreResult<bool> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(fault(path, "open", e)),
    };
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = std::fs::remove_file(path);
            Ok(true)
        }
        Err(TryLockError::WouldBlock) => Ok(false),
        Err(TryLockError::Error(e)) => Err(fault(path, "lock", e)),
    }
}

/// Whether no session of this database holds the advisory lock on `key` (read from
/// `pg_locks`, without taking it: a bigint key shows as its high half in `classid`, its low
/// half in `objid`, and `objsubid` 1).
async fn session_lock_is_free(db: &Db, key: i64) -> StoreResult<bool> {
    let held: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pg_locks
         WHERE locktype = 'advisory' AND objsubid = 1
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND classid::bigint = $1 AND objid::bigint = $2",
    )
    .bind(key >> 32)
    .bind(key & 0xffff_ffff)
    .fetch_one(db)
    .await?;
    Ok(held == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_held_lock_is_live_a_dropped_one_is_gone_and_kinds_are_apart() {
        let test = crate::test_db::TestDb::fresh().await;
        let db = test.db.clone();
        // Another process (on PostgreSQL: another machine, too) sees the lock through its own pool.
        let other = test.reopen().await;
        let lock = WriterLock::take(&db, LockKind::Import).await.unwrap();
        let token = lock.token().to_owned();
        let second = WriterLock::take(&db, LockKind::Import).await.unwrap();
        assert_ne!(second.token(), token);
        if crate::test_db::tests_on_postgres() {
            // The tests' wait for dead writers counts these two locks.
            assert_eq!(crate::test_db::held_writer_locks(&other).await, 2);
        }
        for db in [&db, &other] {
            assert!(!writer_is_gone(db, LockKind::Import, Some(&token))
                .await
                .unwrap());
            assert!(writer_is_gone(db, LockKind::PoolBuild, Some(&token))
                .await
                .unwrap());
            assert!(writer_is_gone(db, LockKind::Import, None).await.unwrap());
            assert!(writer_is_gone(db, LockKind::Import, Some("pg-12"))
                .await
                .unwrap());
        }
        drop(lock);
        // PostgreSQL frees the lock when it sees the connection close: soon, not at once.
        let freed = std::time::Instant::now();
        while !writer_is_gone(&other, LockKind::Import, Some(&token))
            .await
            .unwrap()
        {
            assert!(
                freed.elapsed() < std::time::Duration::from_secs(10),
                "still held"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let live = second.token().to_owned();
        assert!(!writer_is_gone(&other, LockKind::Import, Some(&live))
            .await
            .unwrap());
        second.release();
        let released = WriterLock::take(&db, LockKind::PoolBuild).await.unwrap();
        if let Held::File { path, .. } = &released.held {
            let path = path.clone();
            released.release();
            assert!(!path.exists());
        }
    }
}
