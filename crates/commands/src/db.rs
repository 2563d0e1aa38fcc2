//! Opening the database: what names one (a SQLite file or a PostgreSQL URL, as `--db` gives it),
//! and opening it with its migrations applied. The server opens the database once and hands the
//! handle ([`crate::Db`]) to every command; opening and migrating are the store's, re-exported
//! as they are (their errors name the database and what failed).

/// What names a database: a SQLite file or a PostgreSQL URL (parsed from `--db`).
pub use store::target::{DbTarget, PgUrl};

/// [`open`]: the SQLite file at a path (created if missing), migrated; [`connect`]: the
/// database a [`DbTarget`] names, migrated.
pub use store::db::{connect, open};

/// Watching how long the writers of a database wait to begin ([`store::watch_waits`]): their
/// turn in this process, then the database's write lock.
pub use store::{watch_waits, WaitWatcher, WriteWait};
