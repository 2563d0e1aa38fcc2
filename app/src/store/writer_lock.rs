//! The lock a live chunked writer holds (an import, a pool build, a release): an exclusively locked file
//! named by its token, in a directory beside the database. The writer's rows name the token
//! while they are `writing`; the operating system releases the lock when the process dies, so a
//! free lock file (or none) means the writer is gone and its rows can be removed.

use super::{now_ms, Db, StoreError, StoreResult};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which writers a lock is for: each kind has its directory, `<database file>.<suffix>`.
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
    fn dir(self, db: &Db) -> PathBuf {
        let mut name = base(db).into_os_string();
        name.push(match self {
            LockKind::Import => ".imports",
            LockKind::PoolBuild => ".pool-builds",
            LockKind::Release => ".releases",
        });
        PathBuf::from(name)
    }
}

/// Where a database's lock directories go: beside its SQLite file; for a PostgreSQL database,
/// under the system's temporary directory, named by a hash of its URL (so the writers of one
/// database share them: those of the processes on this machine, as a claimpool server and its
/// command line are).
fn base(db: &Db) -> PathBuf {
    if let Some(file) = super::db::sqlite_file(db) {
        return file;
    }
    use sha2::{Digest, Sha256};
    let url = db.connect_options().database_url.to_string();
    let digest = Sha256::digest(url.as_bytes());
    let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    std::env::temp_dir().join(format!("claimpool-{name}"))
}

/// A live writer's lock. Dropping it unlocks the file; [`WriterLock::release`] also removes it.
#[derive(Debug)]
pub(crate) struct WriterLock {
    token: String,
    path: PathBuf,
    _file: File,
}

impl WriterLock {
    /// Creates and locks a new lock file for a writer about to write.
    pub(crate) fn take(db: &Db, kind: LockKind) -> StoreResult<WriterLock> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = kind.dir(db);
        std::fs::create_dir_all(&dir).map_err(|e| fault(&dir, "create", e))?;
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
                path,
                _file: file,
            }),
            Err(e) => Err(StoreError::Fault(format!(
                "cannot lock {}: {e}",
                path.display()
            ))),
        }
    }

    /// The token the writer's rows name.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// Unlocks and removes the lock file (after the writer is done or has discarded its rows).
    pub(crate) fn release(self) {
        // A file left behind is harmless: no `writing` row names its token any more.
        let _ = std::fs::remove_file(&self.path);
    }
}

fn fault(path: &Path, what: &str, e: std::io::Error) -> StoreError {
    StoreError::Fault(format!("cannot {what} {}: {e}", path.display()))
}

/// Whether the writer holding `token` is gone: its lock file is missing or can be locked (a
/// row without a token has no live writer either).
pub(crate) fn writer_is_gone(db: &Db, kind: LockKind, token: Option<&str>) -> StoreResult<bool> {
    let Some(token) = token else { return Ok(true) };
    let path = kind.dir(db).join(format!("{token}.lock"));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_held_lock_is_live_a_dropped_one_is_gone_and_kinds_are_apart() {
        let test = crate::store::test_db::TestDb::fresh().await;
        let db = test.db.clone();
        let lock = WriterLock::take(&db, LockKind::Import).unwrap();
        let token = lock.token().to_owned();
        assert!(!writer_is_gone(&db, LockKind::Import, Some(&token)).unwrap());
        assert!(writer_is_gone(&db, LockKind::PoolBuild, Some(&token)).unwrap());
        assert!(writer_is_gone(&db, LockKind::Import, None).unwrap());
        drop(lock);
        assert!(writer_is_gone(&db, LockKind::Import, Some(&token)).unwrap());
        let released = WriterLock::take(&db, LockKind::PoolBuild).unwrap();
        let path = released.path.clone();
        released.release();
        assert!(!path.exists());
    }
}
