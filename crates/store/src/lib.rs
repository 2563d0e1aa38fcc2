//! Storage: sqlx queries and transactions on SQLite, one module per table group (PostgreSQL so far
//! for `db copy` and `db backup`: [`postgres`], [`transfer`], [`backup`]). Callers get
//! plain Rust values back; no SQL leaves this module.

pub mod accounts;
pub mod annotate;
pub mod api_tokens;
pub mod assessors;
pub mod audit;
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
pub mod search;
pub mod sessions;
mod snapshot;
pub mod sso;
pub mod target;
#[cfg(test)]
mod test_db;
pub mod transfer;
pub mod uploads;
pub mod users;
mod values;
pub mod webhooks;
pub mod work;
pub(crate) mod write_gate;
mod writer_lock;

pub use db::{engine, now_ms, open, Db, Engine};
pub use target::{DbTarget, PgUrl};
/// How long the store's writers wait to begin (the server's metrics watch it).
pub use write_gate::{watch_waits, Wait as WriteWait, WaitWatcher};

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
    /// What is stored does not allow this: `constraint` names the uniqueness or state rule.
    #[error("{message}")]
    Conflict {
        constraint: Constraint,
        message: String,
    },
    /// An input is wrong: `field` names it (None: the request as a whole), `message` says why;
    /// shown as `field: message`.
    #[error("{}", invalid_text(*field, message))]
    Invalid {
        field: Option<Field>,
        message: String,
    },
    #[error("database error: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// A stored value that does not parse as its domain type (the database holds what claimpool
    /// never writes): a fault of the server, with the parser's error.
    #[error("stored data is corrupt: {0}")]
    Unreadable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A fault of the server, not of the request: I/O, a failed background task, hashing.
    /// Clients see an opaque message (the app's `ApiError::opaque`).
    #[error("{0}")]
    Fault(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

pub use domain::field::Field;

/// The uniqueness or state rule a [`StoreError::Conflict`] hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Constraint {
    /// A user name is taken.
    UserName,
    /// A user name looks like a taken one (case, confusable characters).
    UserNameLookalike,
    /// A project name is taken.
    ProjectName,
    /// A user's API token name is taken.
    TokenName,
    /// A project's model assessor name is taken.
    AssessorName,
    /// A project's system (run) name is taken.
    SystemName,
    /// The file is being imported, or was imported, into the project.
    ImportedFile,
    /// The release number is being recorded, or was recorded meanwhile.
    ReleaseNumber,
    /// A pair has one final label.
    FinalLabel,
    /// A UNIQUE or PRIMARY KEY constraint that SQLite's own connection reported, which its
    /// caller did not name.
    Unique,
    /// The item was submitted or withdrawn already.
    ItemClosed,
    /// The annotator's queue has no position left after its last item.
    QueueFull,
    /// The annotation protocol's order: the stage, the pair's state, who may judge it.
    Protocol,
    /// Nothing may be undone, or not this.
    Undo,
    /// The candidate is admitted already.
    Admitted,
    /// The server's job queue is full.
    JobQueueFull,
    /// The job has ended.
    JobEnded,
    /// A pool grows with the strategy it was built with.
    PoolStrategy,
    /// A pool only grows.
    PoolGrowsOnly,
    /// The project's pool is being built.
    PoolBuilding,
    /// The pair is in the pool already, or has a final label (search and judge).
    Pooled,
    /// An earlier sample's pairs lack final labels.
    SampleUnjudged,
    /// The sample no longer matches the project (its pooled systems changed).
    SampleStale,
    /// Pairs were judged while a judgments file was imported.
    JudgedMeanwhile,
    /// A backup never overwrites a file.
    BackupExists,
    /// The project has no model assessor.
    NoAssessor,
    /// The guidelines' text is the current version's.
    GuidelinesUnchanged,
    /// The guidelines' version is not the current one.
    GuidelinesVersion,
    /// The last active admin stays an active admin.
    LastAdmin,
    /// A copy goes into an empty database only.
    TargetNotEmpty,
}

impl StoreError {
    /// The input `field` (None: the request as a whole) is wrong: `message` says why.
    pub fn invalid(field: impl Into<Option<Field>>, message: impl Into<String>) -> StoreError {
        StoreError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    /// What is stored does not allow this: `constraint`, said by `message`.
    pub fn conflict(constraint: Constraint, message: impl Into<String>) -> StoreError {
        StoreError::Conflict {
            constraint,
            message: message.into(),
        }
    }

    /// A stored value that does not parse: `err`, the parser's error.
    pub(crate) fn unreadable(err: impl std::error::Error + Send + Sync + 'static) -> StoreError {
        StoreError::Unreadable(Box::new(err))
    }
}

/// An invalid input's message: `field: message`, or the message alone.
fn invalid_text(field: Option<Field>, message: &str) -> String {
    match field {
        Some(field) => format!("{}: {message}", field.label()),
        None => message.to_owned(),
    }
}

/// The integrity rule a database error broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Violation {
    Unique,
    ForeignKey,
}

/// The integrity rule `err` broke, if it is a database's UNIQUE (or PRIMARY KEY) or FOREIGN KEY
/// violation (both engines report its kind; PostgreSQL also names the constraint).
pub(crate) fn violation(err: &sqlx::Error) -> Option<Violation> {
    let sqlx::Error::Database(db) = err else {
        return None;
    };
    match db.kind() {
        sqlx::error::ErrorKind::UniqueViolation => Some(Violation::Unique),
        sqlx::error::ErrorKind::ForeignKeyViolation => Some(Violation::ForeignKey),
        _ => None,
    }
}

/// Whether an sqlx error is a UNIQUE constraint violation.
pub(crate) fn is_unique_violation(err: &sqlx::Error) -> bool {
    violation(err) == Some(Violation::Unique)
}

/// A statement's result with the integrity rules it may break named (in the spirit of
/// realworld-axum-sqlx's `on_constraint`): the one place sqlx's violations become conflicts.
pub(crate) trait OnConstraint<T> {
    /// A UNIQUE violation is a conflict with `constraint`, said by `message`; any other error
    /// stays what it is.
    fn on_unique(self, constraint: Constraint, message: impl FnOnce() -> String) -> StoreResult<T>;
}

impl<T> OnConstraint<T> for Result<T, sqlx::Error> {
    fn on_unique(self, constraint: Constraint, message: impl FnOnce() -> String) -> StoreResult<T> {
        self.map_err(|e| match violation(&e) {
            Some(Violation::Unique) => StoreError::conflict(constraint, message()),
            Some(Violation::ForeignKey) | None => StoreError::Sql(e),
        })
    }
}
