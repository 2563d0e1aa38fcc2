//! Opening a PostgreSQL database (15 or later) and applying its migrations
//! (`migrations/postgres/`, the same schema as SQLite's, table for table and column for column).

use super::target::PgUrl;
use super::{StoreError, StoreResult};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;
use std::str::FromStr;
use std::time::Duration;

/// The oldest PostgreSQL claimpool runs on (`server_version_num`).
const MIN_SERVER_VERSION: i64 = 150000;

/// Connects to the database at `url`, checks the server's version and applies the migrations.
pub async fn open(url: &PgUrl) -> StoreResult<PgPool> {
    let shown = url.to_string();
    let open_error = |source| StoreError::Open {
        path: shown.clone(),
        source,
    };
    let options = PgConnectOptions::from_str(url.expose()).map_err(open_error)?;
    let pool = PgPoolOptions::new()
        .max_connections(8)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await
        .map_err(open_error)?;
    let version: String = sqlx::query_scalar("SHOW server_version_num")
        .fetch_one(&pool)
        .await
        .map_err(open_error)?;
    let number: i64 = version.trim().parse().unwrap_or(0);
    if number < MIN_SERVER_VERSION {
        return Err(StoreError::Open {
            path: shown,
            source: sqlx::Error::Configuration(
                format!("claimpool needs PostgreSQL 15 or later; this server is {version}").into(),
            ),
        });
    }
    sqlx::migrate!("../../migrations/postgres")
        .run(&pool)
        .await
        .map_err(|source| StoreError::Migrate {
            path: shown,
            source,
        })?;
    Ok(pool)
}
