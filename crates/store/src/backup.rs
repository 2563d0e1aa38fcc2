//! `claimpool db backup`: a consistent copy of a live database in one file. SQLite writes it with
//! `VACUUM INTO` (a compact, self-contained database file, taken while the server runs);
//! PostgreSQL through `pg_dump --format=custom`. Restoring is described in the README.

use super::target::PgUrl;
use super::{Constraint, Db, StoreError, StoreResult};
use std::path::Path;

/// Writes a SQLite backup of `db` to `out`, which must not exist yet.
pub async fn sqlite(db: &Db, out: &Path) -> StoreResult<u64> {
    refuse_existing(out)?;
    let target = out.to_str().ok_or_else(|| {
        StoreError::invalid(
            None,
            format!("the backup path {} is not UTF-8", out.display()),
        )
    })?;
    sqlx::query("VACUUM INTO ?")
        .bind(target)
        .execute(db)
        .await
        .map_err(|e| StoreError::Fault(format!("writing the backup {}: {e}", out.display())))?;
    file_size(out)
}

/// Writes a PostgreSQL backup of the database at `url` to `out` with `pg_dump` (custom format,
/// for `pg_restore`).
pub async fn postgres(url: &PgUrl, out: &Path) -> StoreResult<u64> {
    refuse_existing(out)?;
    let output = tokio::process::Command::new("pg_dump")
        .arg("--format=custom")
        .arg("--no-owner")
        .arg("--file")
        .arg(out)
        .arg("--dbname")
        .arg(url.expose())
        .output()
        .await
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                StoreError::invalid(
                    None,
                    "pg_dump is not installed: install PostgreSQL's client programs (Debian: \
                     postgresql-client) of the server's major version or later",
                )
            } else {
                StoreError::Fault(format!("starting pg_dump: {e}"))
            }
        })?;
    if !output.status.success() {
        let _ = std::fs::remove_file(out);
        return Err(StoreError::Fault(format!(
            "pg_dump of {url} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    file_size(out)
}

fn refuse_existing(out: &Path) -> StoreResult<()> {
    if out.exists() {
        return Err(StoreError::conflict(
            Constraint::BackupExists,
            format!(
                "{} already exists: a backup never overwrites a file",
                out.display()
            ),
        ));
    }
    Ok(())
}

fn file_size(out: &Path) -> StoreResult<u64> {
    std::fs::metadata(out)
        .map(|m| m.len())
        .map_err(|e| StoreError::Fault(format!("reading the backup {}: {e}", out.display())))
}
