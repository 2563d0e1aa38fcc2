//! Reading millions of rows in one snapshot of the database, on a blocking thread: the pool's
//! predictions, a run import's id maps. On SQLite the statements step through its C API
//! ([`RawConnection`], about 0.2 µs a row); on PostgreSQL through a connection of its own in
//! one `REPEATABLE READ` read-only transaction. Callers see one [`Reader`] and its [`Row`]s.

use super::db::{engine, Engine};
use super::raw_rows::{with_connection, Access, RawConnection, RawRow};
use super::{Db, StoreError, StoreResult};
use futures::TryStreamExt;
use sqlx::postgres::PgRow;
use sqlx::{Connection, PgConnection, Row as _};
use std::cell::RefCell;
use std::ffi::c_int;

/// A connection reading one snapshot.
pub(crate) enum Reader<'c> {
    Sqlite(&'c RawConnection),
    Postgres(&'c PgReader),
}

/// PostgreSQL's side of a [`Reader`]: its connection, driven from the blocking thread.
pub(crate) struct PgReader {
    conn: RefCell<PgConnection>,
    runtime: tokio::runtime::Handle,
}

/// The current row of [`Reader::for_each_row`].
pub(crate) enum Row<'r> {
    Sqlite(RawRow<'r>),
    Postgres(&'r PgRow),
}

/// Runs `work` (reads) on a connection of its own, in one read transaction: every query of
/// `work` sees the database as it was when the first one started.
pub(crate) async fn read_snapshot<T: Send + 'static>(
    db: &Db,
    work: impl FnOnce(&Reader<'_>) -> StoreResult<T> + Send + 'static,
) -> StoreResult<T> {
    match engine(db) {
        Engine::Sqlite => {
            with_connection(db, Access::Read, move |conn| {
                conn.execute("BEGIN")?;
                let out = work(&Reader::Sqlite(conn))?;
                conn.execute("COMMIT")?;
                Ok(out)
            })
            .await
        }
        Engine::Postgres => {
            let url = db.connect_options().database_url.clone();
            let mut conn = PgConnection::connect(url.as_str()).await?;
            sqlx::query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .execute(&mut conn)
                .await?;
            let reader = PgReader {
                conn: RefCell::new(conn),
                runtime: tokio::runtime::Handle::current(),
            };
            let (out, reader) = tokio::task::spawn_blocking(move || {
                let out = work(&Reader::Postgres(&reader));
                (out, reader)
            })
            .await
            .map_err(|e| StoreError::Fault(format!("a database read stopped: {e}")))?;
            let out = out?;
            let mut conn = reader.conn.into_inner();
            sqlx::query("COMMIT").execute(&mut conn).await?;
            conn.close().await?;
            Ok(out)
        }
    }
}

impl Reader<'_> {
    /// Runs `sql` (a read) with the integer parameters `params` (`$1`, `$2`, …) and calls `each`
    /// on every row, in the query's order; the first error of `each` stops the query.
    pub(crate) fn for_each_row(
        &self,
        sql: &str,
        params: &[i64],
        mut each: impl FnMut(&Row<'_>) -> StoreResult<()>,
    ) -> StoreResult<()> {
        match self {
            Reader::Sqlite(conn) => conn.for_each_row(sql, params, |row| each(&Row::Sqlite(*row))),
            Reader::Postgres(pg) => {
                let mut conn = pg
                    .conn
                    .try_borrow_mut()
                    .map_err(|_| StoreError::Fault("a snapshot query ran inside another".into()))?;
                pg.runtime.block_on(async {
                    let mut query = sqlx::query(sql);
                    for value in params {
                        query = query.bind(*value);
                    }
                    let mut rows = query.fetch(&mut *conn);
                    while let Some(row) = rows.try_next().await? {
                        each(&Row::Postgres(&row))?;
                    }
                    Ok(())
                })
            }
        }
    }
}

impl Row<'_> {
    fn pg_error(column: c_int, e: sqlx::Error) -> StoreError {
        StoreError::Corrupt(format!("column {column}: {e}"))
    }

    /// An integer column.
    pub(crate) fn integer(&self, column: c_int) -> StoreResult<i64> {
        match self {
            Row::Sqlite(row) => row.integer(column),
            Row::Postgres(row) => row
                .try_get::<i64, _>(index(column))
                .map_err(|e| Self::pg_error(column, e)),
        }
    }

    /// An integer column that may be NULL.
    pub(crate) fn optional_integer(&self, column: c_int) -> StoreResult<Option<i64>> {
        match self {
            Row::Sqlite(row) => row.optional_integer(column),
            Row::Postgres(row) => row
                .try_get::<Option<i64>, _>(index(column))
                .map_err(|e| Self::pg_error(column, e)),
        }
    }

    /// A number as a float.
    pub(crate) fn real(&self, column: c_int) -> StoreResult<f64> {
        match self {
            Row::Sqlite(row) => row.real(column),
            Row::Postgres(row) => row
                .try_get::<f64, _>(index(column))
                .map_err(|e| Self::pg_error(column, e)),
        }
    }

    /// A text column, borrowed until the next row.
    pub(crate) fn text(&self, column: c_int) -> StoreResult<&str> {
        match self {
            Row::Sqlite(row) => row.text(column),
            Row::Postgres(row) => row
                .try_get::<&str, _>(index(column))
                .map_err(|e| Self::pg_error(column, e)),
        }
    }
}

fn index(column: c_int) -> usize {
    usize::try_from(column).unwrap_or(usize::MAX)
}
