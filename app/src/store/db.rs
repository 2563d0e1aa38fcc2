//! Opening the database: WAL, foreign keys, a busy timeout, and migrations applied at start.

use super::{StoreError, StoreResult};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;
use std::path::Path;
use std::time::Duration;

/// The connection pool every store function takes.
pub type Db = SqlitePool;

/// Opens (creating if missing) the SQLite database at `path` and applies the migrations.
pub async fn open(path: &Path) -> StoreResult<Db> {
    let shown = path.display().to_string();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(StoreError::Open {
                path: shown,
                source: sqlx::Error::Configuration(
                    format!("the directory {} does not exist", dir.display()).into(),
                ),
            });
        }
    }
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(10))
        .pragma("temp_store", "memory")
        .pragma("cache_size", "-65536")
        // Rows travel from sqlx's SQLite worker thread in batches of this size (default 50):
        // bigger batches mean far fewer thread hand-offs on large reads (the lead report reads
        // ~50,000 predictions), which matters most on a busy machine.
        .row_buffer_size(4096);
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .min_connections(1)
        .connect_with(options)
        .await
        .map_err(|source| StoreError::Open {
            path: shown.clone(),
            source,
        })?;
    sqlx::migrate!("../migrations/sqlite")
        .run(&pool)
        .await
        .map_err(|source| StoreError::Migrate {
            path: shown,
            source,
        })?;
    Ok(pool)
}

/// Milliseconds since the Unix epoch, the unit of every timestamp column.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
