//! `claimpool db`: back up the database, or copy a SQLite database into PostgreSQL.

use crate::release_cmd::say;
use anyhow::bail;
use clap::Subcommand;
use commands::backup::{self, CopyFailure, CopyProgress};
use commands::db::DbTarget;
use commands::Operator;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum DbCommand {
    /// Copy every table of a SQLite database into an empty PostgreSQL database (users, projects,
    /// corpora, runs, pools, judgments, audit, releases), then compare each table's row count and
    /// checksum on both sides
    Copy {
        /// The SQLite database: a path or sqlite://PATH
        #[arg(long, value_name = "DB")]
        from: DbTarget,
        /// The PostgreSQL database: postgres://USER@HOST[:PORT]/DB (created beforehand, empty)
        #[arg(long, value_name = "DB")]
        to: DbTarget,
    },
    /// Write a consistent backup of the database (--db) to FILE while it is in use: SQLite with
    /// VACUUM INTO (a database file), PostgreSQL with pg_dump (custom format, for pg_restore)
    Backup {
        /// The backup file; never overwritten
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
}

pub async fn run(db: Option<DbTarget>, command: DbCommand) -> anyhow::Result<()> {
    // `claimpool db` runs at the shell, on the database it names.
    let operator = Operator::at_the_shell();
    match command {
        DbCommand::Copy { from, to } => copy(&operator, from, to).await,
        DbCommand::Backup { out } => {
            let target = db.unwrap_or_else(|| DbTarget::Sqlite(crate::cli::DEFAULT_DB.into()));
            let bytes = match &target {
                DbTarget::Sqlite(path) => {
                    if !path.is_file() {
                        bail!("{} does not exist: nothing to back up", path.display());
                    }
                    let db = commands::db::open(path).await?;
                    backup::sqlite(&operator, &db, &out).await?
                }
                DbTarget::Postgres(url) => backup::postgres(&operator, url, &out).await?,
            };
            say(&format!(
                "backed up {target} to {} ({bytes} bytes)",
                out.display()
            ))
        }
    }
}

async fn copy(operator: &Operator, from: DbTarget, to: DbTarget) -> anyhow::Result<()> {
    let DbTarget::Sqlite(source) = &from else {
        bail!("--from {from}: the copy reads a SQLite database (a path or sqlite://PATH)");
    };
    let DbTarget::Postgres(url) = &to else {
        bail!("--to {to}: the copy writes into PostgreSQL (postgres://USER@HOST/DB)");
    };
    if !source.is_file() {
        bail!("{} does not exist: nothing to copy", source.display());
    }
    let src = commands::db::open(source).await?;
    let mut bar: Option<indicatif::ProgressBar> = None;
    let copied = backup::sqlite_to_postgres(operator, &src, url, |step| match step {
        CopyProgress::Table { table, rows } => {
            if let Some(done) = bar.take() {
                done.finish();
            }
            let next = crate::cli::progress_bar(Some(rows), table);
            bar = Some(next);
        }
        CopyProgress::Rows { sent, .. } => {
            if let Some(bar) = &bar {
                bar.set_position(sent);
            }
        }
        CopyProgress::Verifying => {
            if let Some(done) = bar.take() {
                done.finish();
            }
            eprintln!("comparing row counts and checksums");
        }
    })
    .await;
    let copied = match copied {
        Ok(copied) => copied,
        // The target as it was opened before the copy: its error names it.
        Err(CopyFailure::Target(e)) => return Err(e.into()),
        Err(CopyFailure::Copy(e)) => {
            return Err(anyhow::Error::from(e).context(format!("copying {from} into {to}")))
        }
    };
    let rows: u64 = copied.iter().map(|t| t.rows).sum();
    for table in &copied {
        say(&format!(
            "{:<26} {:>12} rows  sha256 {}",
            table.table,
            table.rows,
            &table.checksum[..16]
        ))?;
    }
    say(&format!(
        "copied {} tables, {rows} rows, from {from} to {to}: counts and checksums agree",
        copied.len()
    ))
}
