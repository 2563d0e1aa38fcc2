//! The web sessions' store, in the table `sessions` of the application's database, on its
//! engine (tower-sessions' sqlx stores; each keeps a small pool of its own on the database).

use super::db::{engine, sqlite_options, Engine};
use super::{Db, StoreError, StoreResult};
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, ExpiredDeletion, SessionStore};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

/// The sessions of a [`Db`].
#[derive(Clone, Debug)]
pub enum Sessions {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

const TABLE: &str = "sessions";

/// The PostgreSQL advisory-lock key servers take while they create the sessions table ("clstart"
/// in ASCII; the write transactions' key and the writers' keys differ from it).
const STARTUP_LOCK_KEY: i64 = 0x0063_6c73_7461_7274;

impl Sessions {
    /// The store of `db`'s sessions, its table created when missing.
    pub async fn open(db: &Db) -> StoreResult<Sessions> {
        let store = match engine(db) {
            Engine::Sqlite => {
                let options = sqlite_options(db)
                    .ok_or_else(|| StoreError::Fault("the database has no SQLite file".into()))?;
                let pool = sqlx::sqlite::SqlitePoolOptions::new()
                    .max_connections(4)
                    .connect_with(options)
                    .await?;
                let store = SqliteStore::new(pool)
                    .with_table_name(TABLE)
                    .map_err(|e| StoreError::Fault(format!("session table name: {e}")))?;
                store.migrate().await?;
                Sessions::Sqlite(store)
            }
            Engine::Postgres => {
                let url = db.connect_options().database_url.clone();
                let pool = sqlx::postgres::PgPoolOptions::new()
                    .max_connections(4)
                    .connect(url.as_str())
                    .await?;
                let store = PostgresStore::new(pool.clone())
                    .with_schema_name("public")
                    .and_then(|s| s.with_table_name(TABLE))
                    .map_err(|e| StoreError::Fault(format!("session table name: {e}")))?;
                // Servers started together would create the table at once, and one of them
                // fail on the catalog's unique index (CREATE TABLE IF NOT EXISTS is not safe
                // against itself): one at a time, under a lock every server of the database
                // sees. The lock is the connection's; it ends with it, also on an error.
                let mut conn = pool.acquire().await?;
                sqlx::query("SELECT pg_advisory_lock($1)")
                    .bind(STARTUP_LOCK_KEY)
                    .execute(&mut *conn)
                    .await?;
                let migrated = store.migrate().await;
                let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)")
                    .bind(STARTUP_LOCK_KEY)
                    .execute(&mut *conn)
                    .await;
                migrated?;
                unlocked?;
                Sessions::Postgres(store)
            }
        };
        Ok(store)
    }
}

#[async_trait::async_trait]
impl SessionStore for Sessions {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        match self {
            Sessions::Sqlite(s) => s.create(record).await,
            Sessions::Postgres(s) => s.create(record).await,
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        match self {
            Sessions::Sqlite(s) => s.save(record).await,
            Sessions::Postgres(s) => s.save(record).await,
        }
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        match self {
            Sessions::Sqlite(s) => s.load(id).await,
            Sessions::Postgres(s) => s.load(id).await,
        }
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        match self {
            Sessions::Sqlite(s) => s.delete(id).await,
            Sessions::Postgres(s) => s.delete(id).await,
        }
    }
}

#[async_trait::async_trait]
impl ExpiredDeletion for Sessions {
    async fn delete_expired(&self) -> session_store::Result<()> {
        match self {
            Sessions::Sqlite(s) => s.delete_expired().await,
            Sessions::Postgres(s) => s.delete_expired().await,
        }
    }
}
