//! Opening the database: WAL, foreign keys, a busy timeout, and migrations applied at start.
//!
//! The store talks to the database through sqlx's `Any` driver, so one text of each query serves
//! every engine; the few paths that use what one engine is fast at (SQLite's C API for bulk rows)
//! ask [`sqlite_file`] for the file.

use super::target::{DbTarget, PgUrl};
use super::{StoreError, StoreResult};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, Executor};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

/// The connection pool every store function takes.
pub type Db = sqlx::AnyPool;

/// Which database engine a [`Db`] runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// The engine `db` runs on.
pub fn engine(db: &Db) -> Engine {
    match db.connect_options().database_url.scheme() {
        "postgres" | "postgresql" => Engine::Postgres,
        _ => Engine::Sqlite,
    }
}

/// The engine a connection of a [`Db`] runs on.
pub fn engine_of(conn: &sqlx::AnyConnection) -> Engine {
    match conn.backend_name() {
        "PostgreSQL" => Engine::Postgres,
        _ => Engine::Sqlite,
    }
}

/// Begins a read-only transaction whose statements all see one snapshot of the database, taken
/// at its first read: a deferred `BEGIN` on SQLite (in WAL mode a read transaction keeps the
/// snapshot it started with); `REPEATABLE READ READ ONLY` on PostgreSQL, whose default,
/// `READ COMMITTED`, gives each statement a snapshot of its own, so that a report or a release
/// read while annotators submit would mix two states of the project.
pub(crate) async fn begin_read(db: &Db) -> StoreResult<sqlx::Transaction<'static, sqlx::Any>> {
    Ok(db.begin_with(read_transaction(engine(db))).await?)
}

/// [`begin_read`] on a connection of the caller's.
pub(crate) async fn begin_read_on(
    conn: &mut sqlx::AnyConnection,
) -> StoreResult<sqlx::Transaction<'_, sqlx::Any>> {
    let statement = read_transaction(engine_of(conn));
    Ok(conn.begin_with(statement).await?)
}

fn read_transaction(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => "BEGIN",
        Engine::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    }
}

/// What tells two databases apart within the process: the SQLite file (canonical, so two paths
/// to one file are one database), or the PostgreSQL URL.
pub(crate) fn identity(db: &Db) -> PathBuf {
    match sqlite_file(db) {
        Some(file) => std::fs::canonicalize(&file).unwrap_or(file),
        None => PathBuf::from(db.connect_options().database_url.as_str()),
    }
}

/// The SQLite file `db` opens; `None` on another engine.
pub(crate) fn sqlite_file(db: &Db) -> Option<PathBuf> {
    sqlite_options(db).map(|o| o.get_filename().to_path_buf())
}

/// The connect options of `db`'s SQLite file (for a connection of one's own); `None` on another
/// engine.
pub(crate) fn sqlite_options(db: &Db) -> Option<SqliteConnectOptions> {
    let url = &db.connect_options().database_url;
    if engine(db) != Engine::Sqlite {
        return None;
    }
    SqliteConnectOptions::from_str(url.as_str()).ok().map(|o| {
        o.foreign_keys(true)
            .busy_timeout(Duration::from_secs(10))
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
            .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
    })
}

/// What every SQLite connection of the pool runs first.
const SQLITE_PRAGMAS: &str = "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000; \
     PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536;";

/// Opens (creating if missing) the SQLite database at `path` and applies the migrations.
pub async fn open(path: &Path) -> StoreResult<Db> {
    sqlx::any::install_default_drivers();
    let shown = path.display().to_string();
    let open_error = |source| StoreError::Open {
        path: shown.clone(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(open_error(sqlx::Error::Configuration(
                format!("the directory {} does not exist", dir.display()).into(),
            )));
        }
    }
    // The file is created, and switched to WAL (which the file keeps), on a connection of its
    // own; the pool's connections then open it by URL.
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
        .busy_timeout(Duration::from_secs(10));
    let first = options.connect().await.map_err(open_error)?;
    first.close().await.map_err(open_error)?;
    let url = options.to_url_lossy();
    let pool = AnyPoolOptions::new()
        .max_connections(8)
        .min_connections(1)
        .after_connect(|conn, _| {
            Box::pin(async move {
                conn.execute(SQLITE_PRAGMAS).await?;
                Ok(())
            })
        })
        .connect_with(AnyConnectOptions::from_url(&url).map_err(open_error)?)
        .await
        .map_err(open_error)?;
    sqlx::migrate!("../../migrations/sqlite")
        .run(&pool)
        .await
        .map_err(|source| StoreError::Migrate {
            path: shown,
            source,
        })?;
    Ok(pool)
}

/// Opens the database `target` names: a SQLite file ([`open`]) or a PostgreSQL database (15 or
/// later), its migrations applied.
pub async fn connect(target: &DbTarget) -> StoreResult<Db> {
    match target {
        DbTarget::Sqlite(path) => open(path).await,
        DbTarget::Postgres(url) => open_postgres(url).await,
    }
}

async fn open_postgres(url: &PgUrl) -> StoreResult<Db> {
    sqlx::any::install_default_drivers();
    let shown = url.to_string();
    let open_error = |source| StoreError::Open {
        path: shown.clone(),
        source,
    };
    // The server's version and the schema, checked and migrated on PostgreSQL's own driver.
    super::postgres::open(url).await?.close().await;
    let options = AnyConnectOptions::from_str(url.expose()).map_err(open_error)?;
    AnyPoolOptions::new()
        .max_connections(16)
        .acquire_timeout(Duration::from_secs(30))
        .connect_with(options)
        .await
        .map_err(open_error)
}

/// Whether `db` can serve: it answers, and every migration this build knows is applied
/// (a server of a newer version may have applied more; that is fine). The error says which.
pub async fn readiness(db: &Db) -> StoreResult<()> {
    let migrator = match engine(db) {
        Engine::Sqlite => sqlx::migrate!("../../migrations/sqlite"),
        Engine::Postgres => sqlx::migrate!("../../migrations/postgres"),
    };
    let applied: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success = TRUE")
            .fetch_all(db)
            .await?;
    let missing: Vec<i64> = migrator
        .iter()
        .map(|m| m.version)
        .filter(|v| !applied.contains(v))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(StoreError::Fault(format!(
            "migrations not applied: {}",
            missing
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }
}

/// Milliseconds since the Unix epoch, the unit of every timestamp column.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The projects `read` counts before and after another connection commits project `name`.
    async fn counts_around_a_commit(
        read: &mut sqlx::AnyConnection,
        db: &Db,
        name: &str,
    ) -> (i64, i64) {
        let count = "SELECT COUNT(*) FROM projects";
        let before: i64 = sqlx::query_scalar(count)
            .fetch_one(&mut *read)
            .await
            .unwrap();
        crate::projects::create(db, name, "", None).await.unwrap();
        let after: i64 = sqlx::query_scalar(count)
            .fetch_one(&mut *read)
            .await
            .unwrap();
        (before, after)
    }

    /// A read transaction sees one state of the database: a project created meanwhile (and
    /// committed) is not in its second read, on either engine.
    #[tokio::test]
    async fn a_read_transaction_reads_one_snapshot() {
        let test = crate::test_db::TestDb::fresh().await;
        let db = test.db.clone();
        crate::projects::create(&db, "before", "", None)
            .await
            .unwrap();
        let mut read = begin_read(&db).await.unwrap();
        assert_eq!(
            counts_around_a_commit(&mut read, &db, "meanwhile").await,
            (1, 1)
        );
        // Read only: a write inside is refused on PostgreSQL (SQLite's deferred BEGIN would
        // take the write lock instead, which no caller does).
        if engine(&db) == Engine::Postgres {
            let write = sqlx::query("DELETE FROM projects")
                .execute(&mut *read)
                .await;
            assert!(write.is_err(), "a write in a read transaction went through");
        }
        read.rollback().await.unwrap();
        // The same on a connection of one's own.
        let mut conn = db.acquire().await.unwrap();
        let mut read = begin_read_on(&mut conn).await.unwrap();
        assert_eq!(
            counts_around_a_commit(&mut read, &db, "later").await,
            (2, 2)
        );
        read.rollback().await.unwrap();
        let now: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM projects")
            .fetch_one(&db)
            .await
            .unwrap();
        assert_eq!(now, 3);
    }

    #[tokio::test]
    async fn two_paths_to_one_sqlite_file_are_one_database() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let a = open(&dir.path().join("a.db")).await.unwrap();
        let b = open(&dir.path().join("sub/../a.db")).await.unwrap();
        let c = open(&dir.path().join("c.db")).await.unwrap();
        assert_eq!(identity(&a), identity(&b));
        assert_ne!(identity(&a), identity(&c));
    }
}
