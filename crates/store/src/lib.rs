//! Storage: sqlx queries and transactions on SQLite, one module per table group (PostgreSQL so far
//! for `db copy` and `db backup`: [`postgres`], [`transfer`], [`backup`]). Callers get
//! plain Rust values back; no SQL leaves this module.

pub mod accounts;
pub mod annotate;
pub mod api_tokens;
pub mod assessors;
pub mod audit;
pub mod background;
pub mod backup;
mod copy_text;
pub mod db;
mod dialect;
mod flag;
pub mod guidelines;
mod id_keys;
pub mod import;
mod import_copy;
pub mod import_writer;
pub mod jobs;
pub mod judging;
#[cfg(test)]
mod layering;
pub mod pool;
pub mod postgres;
pub mod projects;
mod raw_rows;
pub mod release;
pub mod release_parts;
pub mod report;
pub mod sessions;
mod snapshot;
mod staged;
pub mod target;
#[cfg(test)]
mod test_db;
pub mod transfer;
pub mod users;
mod values;
pub mod work;
pub(crate) mod write_gate;
mod writer_lock;

pub use db::{engine, now_ms, open, Db, Engine};
pub use target::{DbTarget, PgUrl};

/// What can go wrong in storage, with the context a person needs to act on it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the database {path}: {source}")]
    Open {
        path: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("cannot migrate the database {path}: {source}")]
    Migrate {
        path: String,
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    #[error("not found: {0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Invalid(String),
    #[error("database error: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// A fault of the server, not of the request: I/O, a failed background task, hashing.
    /// Clients see an opaque message (the app's `ApiError::opaque`).
    #[error("{0}")]
    Fault(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Whether an sqlx error is a UNIQUE constraint violation.
pub(crate) fn is_unique_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.is_unique_violation())
}
