//! `claimpool db`: back up the database, or copy a SQLite database into PostgreSQL.

use crate::release_cmd::say;
use anyhow::{bail, Context};
use clap::Subcommand;
use std::path::PathBuf;
use store::{self, DbTarget};

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
    match command {
        DbCommand::Copy { from, to } => copy(from, to).await,
        DbCommand::Backup { out } => {
            let target = db.unwrap_or_else(|| DbTarget::Sqlite(crate::cli::DEFAULT_DB.into()));
            let bytes = match &target {
                DbTarget::Sqlite(path) => {
                    if !path.is_file() {
                        bail!("{} does not exist: nothing to back up", path.display());
                    }
                    let db = store::open(path).await?;
                    store::backup::sqlite(&db, &out).await?
                }
                DbTarget::Postgres(url) => store::backup::postgres(url, &out).await?,
            };
            say(&format!(
                "backed up {target} to {} ({bytes} bytes)",
                out.display()
            ))
        }
    }
}

async fn copy(from: DbTarget, to: DbTarget) -> anyhow::Result<()> {
    let DbTarget::Sqlite(source) = &from else {
        bail!("--from {from}: the copy reads a SQLite database (a path or sqlite://PATH)");
    };
    let DbTarget::Postgres(url) = &to else {
        bail!("--to {to}: the copy writes into PostgreSQL (postgres://USER@HOST/DB)");
    };
    if !source.is_file() {
        bail!("{} does not exist: nothing to copy", source.display());
    }
    let src = store::open(source).await?;
    let dst = store::postgres::open(url).await?;
    let mut bar: Option<indicatif::ProgressBar> = None;
    let copied = store::transfer::sqlite_to_postgres(&src, &dst, |step| match step {
        store::transfer::CopyProgress::Table { table, rows } => {
            if let Some(done) = bar.take() {
                done.finish();
            }
            let next = crate::cli::progress_bar(Some(rows), table);
            bar = Some(next);
        }
        store::transfer::CopyProgress::Rows { sent, .. } => {
            if let Some(bar) = &bar {
                bar.set_position(sent);
            }
        }
        store::transfer::CopyProgress::Verifying => {
            if let Some(done) = bar.take() {
                done.finish();
            }
            eprintln!("comparing row counts and checksums");
        }
    })
    .await
    .with_context(|| format!("copying {from} into {to}"))?;
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
