//! Which database a benchmark runs on, from its arguments:
//!
//! - nothing, or `--engine sqlite`: a SQLite file in the benchmark's temporary directory (WAL,
//!   `synchronous = NORMAL`, as `claimpool` opens every file);
//! - `--engine postgres`: a fresh database on a PostgreSQL cluster the benchmark starts and stops
//!   itself (Debian's `postgresql`, 15 or later), with PostgreSQL's durable defaults: every
//!   commit is flushed to disk;
//! - `--db postgres://USER@HOST/DB`: an empty database on a server of your own.

use testdata::postgres;

use std::path::Path;
use store::{self, Db, DbTarget};

/// Opens, migrated, the database the arguments ask for (`name` names a SQLite file in `dir`) and
/// prints which it is.
pub async fn open(args: &[String], dir: &Path, name: &str) -> anyhow::Result<Db> {
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map(String::as_str)
    };
    let (target, described) = match (value("--db"), value("--engine")) {
        (Some(url), _) => {
            let target: DbTarget = url.parse()?;
            let described = format!("{target} (given)");
            (target, described)
        }
        (None, Some("postgres")) => {
            let url =
                postgres::fresh_database_on(postgres::Durability::Durable).ok_or_else(|| {
                    anyhow::anyhow!("--engine postgres needs PostgreSQL 15 or later installed")
                })?;
            let described = format!(
                "a throwaway PostgreSQL cluster ({})",
                postgres::Durability::Durable.settings()
            );
            (url.parse()?, described)
        }
        (None, None | Some("sqlite")) => (
            DbTarget::Sqlite(dir.join(format!("{name}.db"))),
            "a SQLite file (WAL, synchronous = NORMAL)".to_owned(),
        ),
        (None, Some(other)) => anyhow::bail!("--engine {other}: use sqlite or postgres"),
    };
    let db = store::db::connect(&target).await?;
    let version: String = match store::engine(&db) {
        store::Engine::Sqlite => sqlx::query_scalar("SELECT 'SQLite ' || sqlite_version()"),
        store::Engine::Postgres => sqlx::query_scalar("SELECT version()"),
    }
    .fetch_one(&db)
    .await?;
    let version = version.split(" on ").next().unwrap_or(&version).to_owned();
    println!("database: {version}, {described}");
    Ok(db)
}
