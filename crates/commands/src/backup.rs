//! The operator's copies of a database (`claimpool db`): a backup file written while the
//! database is in use, and a SQLite database copied into an empty PostgreSQL one. Only the
//! shell's [`Operator`] may make them (the database file is theirs). Errors are the store's as
//! they are: they name the file, the database or the program that failed.

use crate::Operator;
use std::path::Path;
use store::{Db, PgUrl, StoreError, StoreResult};

/// A table the copy wrote (its rows and checksum), and how far the copy is.
pub use store::transfer::{CopiedTable, CopyProgress};

/// Writes a SQLite backup of `db` (`VACUUM INTO`) to `out`, which must not exist yet; returns
/// its size in bytes.
pub async fn sqlite(_: &Operator, db: &Db, out: &Path) -> StoreResult<u64> {
    store::backup::sqlite(db, out).await
}

/// Writes a PostgreSQL backup of the database at `url` (`pg_dump`, custom format) to `out`,
/// which must not exist yet; returns its size in bytes.
pub async fn postgres(_: &Operator, url: &PgUrl, out: &Path) -> StoreResult<u64> {
    store::backup::postgres(url, out).await
}

/// Why a copy into PostgreSQL failed: the target could not be opened, or the copy itself
/// failed (the caller names the two databases for the second).
#[derive(Debug)]
pub enum CopyFailure {
    Target(StoreError),
    Copy(StoreError),
}

/// Copies every table of the SQLite database `src` into the empty PostgreSQL database at `to`,
/// then compares each table's row count and checksum on both sides; `progress` hears of each
/// step.
pub async fn sqlite_to_postgres(
    _: &Operator,
    src: &Db,
    to: &PgUrl,
    progress: impl FnMut(CopyProgress<'_>),
) -> Result<Vec<CopiedTable>, CopyFailure> {
    let dst = store::postgres::open(to)
        .await
        .map_err(CopyFailure::Target)?;
    store::transfer::sqlite_to_postgres(src, &dst, progress)
        .await
        .map_err(CopyFailure::Copy)
}
