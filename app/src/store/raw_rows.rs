//! Reading and writing millions of rows fast: statements stepped through SQLite's C API on the
//! handle of a connection sqlx has lent out ([`sqlx::sqlite::SqliteConnection::lock_handle`]).
//!
//! sqlx copies every value of every row and hands the rows across a channel, about 2.5 µs a
//! row; pooling reads every prediction of a project (10 million in the benchmark), so
//! those reads step their query here ([`for_each_row`]), at about 0.2 µs a row, each value read
//! in place and checked against the storage class the caller expects. A run import writes those
//! predictions with [`insert_rows`]: multi-row INSERTs bound straight from the rows, which saves
//! building sqlx's argument lists and SQL text (a quarter of the import's writing time).
//!
//! The calls block the thread; on a multi-thread runtime they run in
//! [`tokio::task::block_in_place`], so other tasks move to other workers meanwhile.

use super::{StoreError, StoreResult};
use libsqlite3_sys as ffi;
use sqlx::SqliteConnection;
use std::ffi::{c_int, CStr, CString};
use std::ptr::{self, NonNull};

/// Runs `work`, which blocks, without stalling other tasks where the runtime allows it.
fn blocking_section<T>(work: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}

/// A prepared statement, finalized when dropped.
struct Statement {
    stmt: NonNull<ffi::sqlite3_stmt>,
}

impl Statement {
    /// Prepares `sql` on `db`.
    ///
    /// Safety: `db` is an open connection that nothing else uses while the statement lives.
    unsafe fn prepare(db: NonNull<ffi::sqlite3>, sql: &str) -> StoreResult<Statement> {
        let text = CString::new(sql)
            .map_err(|_| StoreError::Invalid(format!("a query holds a NUL byte: {sql}")))?;
        let mut stmt = ptr::null_mut();
        // SAFETY: `db` is open and ours (the caller's contract); `text` is NUL-terminated and
        // outlives the call; `stmt` receives the new statement.
        let rc = unsafe {
            ffi::sqlite3_prepare_v2(db.as_ptr(), text.as_ptr(), -1, &mut stmt, ptr::null_mut())
        };
        match NonNull::new(stmt) {
            Some(stmt) if rc == ffi::SQLITE_OK => Ok(Statement { stmt }),
            other => {
                if let Some(stmt) = other {
                    // SAFETY: a statement SQLite handed out, finalized once.
                    unsafe { ffi::sqlite3_finalize(stmt.as_ptr()) };
                }
                // SAFETY: `db` is open.
                Err(unsafe { sqlite_error(db, rc, sql) })
            }
        }
    }
}

impl Drop for Statement {
    fn drop(&mut self) {
        // SAFETY: the statement came from `prepare` and is finalized only here.
        unsafe { ffi::sqlite3_finalize(self.stmt.as_ptr()) };
    }
}

/// The error SQLite reports for `rc` on `db`, naming the query.
///
/// Safety: `db` is an open connection.
unsafe fn sqlite_error(db: NonNull<ffi::sqlite3>, rc: c_int, sql: &str) -> StoreError {
    // SAFETY: `db` is open; the message is a NUL-terminated string SQLite owns, copied at once.
    let message = unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(db.as_ptr())) }
        .to_string_lossy()
        .into_owned();
    StoreError::Invalid(format!("SQLite error {rc} ({message}) in: {sql}"))
}

/// The current row of a query run by [`for_each_row`].
pub(crate) struct RawRow<'s> {
    statement: &'s Statement,
}

impl RawRow<'_> {
    fn column_type(&self, column: c_int) -> c_int {
        // SAFETY: the statement is on a row (`for_each_row` hands out rows only then); SQLite
        // answers SQLITE_NULL for a column index out of range.
        unsafe { ffi::sqlite3_column_type(self.statement.stmt.as_ptr(), column) }
    }

    fn mismatch(&self, column: c_int, expected: &str) -> StoreError {
        let found = match self.column_type(column) {
            ffi::SQLITE_INTEGER => "an integer",
            ffi::SQLITE_FLOAT => "a real",
            ffi::SQLITE_TEXT => "text",
            ffi::SQLITE_BLOB => "a blob",
            _ => "NULL",
        };
        StoreError::Corrupt(format!(
            "column {column} holds {found} where {expected} belongs"
        ))
    }

    /// An INTEGER column.
    pub(crate) fn integer(&self, column: c_int) -> StoreResult<i64> {
        self.optional_integer(column)?
            .ok_or_else(|| self.mismatch(column, "an integer"))
    }

    /// An INTEGER column that may be NULL.
    pub(crate) fn optional_integer(&self, column: c_int) -> StoreResult<Option<i64>> {
        match self.column_type(column) {
            // SAFETY: on a row, and the column holds an integer.
            ffi::SQLITE_INTEGER => Ok(Some(unsafe {
                ffi::sqlite3_column_int64(self.statement.stmt.as_ptr(), column)
            })),
            ffi::SQLITE_NULL => Ok(None),
            _ => Err(self.mismatch(column, "an integer")),
        }
    }

    /// A number (REAL, or INTEGER as SQLite may store a whole REAL) as a float.
    pub(crate) fn real(&self, column: c_int) -> StoreResult<f64> {
        match self.column_type(column) {
            // SAFETY: on a row, and the column holds a number, which converts without loss of
            // meaning (an integer stored for a REAL column is a whole number).
            ffi::SQLITE_FLOAT | ffi::SQLITE_INTEGER => {
                Ok(unsafe { ffi::sqlite3_column_double(self.statement.stmt.as_ptr(), column) })
            }
            _ => Err(self.mismatch(column, "a number")),
        }
    }

    /// A TEXT column, borrowed until the next row.
    pub(crate) fn text(&self, column: c_int) -> StoreResult<&str> {
        if self.column_type(column) != ffi::SQLITE_TEXT {
            return Err(self.mismatch(column, "text"));
        }
        let stmt = self.statement.stmt.as_ptr();
        // SAFETY: on a row whose column holds text. `sqlite3_column_text` is called before
        // `sqlite3_column_bytes` (the order SQLite documents) and the pointer stays valid until
        // the statement steps again or is finalized, which cannot happen while `self` (and the
        // borrow of the returned slice) lives.
        let bytes = unsafe {
            let data = ffi::sqlite3_column_text(stmt, column);
            let len = usize::try_from(ffi::sqlite3_column_bytes(stmt, column)).unwrap_or(0);
            if data.is_null() || len == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(data, len)
            }
        };
        std::str::from_utf8(bytes)
            .map_err(|e| StoreError::Corrupt(format!("column {column} is not UTF-8: {e}")))
    }
}

/// Runs `sql` (a read) with the integer parameters `params` on `conn` and calls `each` on every
/// row, in the query's order; the first error of `each` stops the query and is returned.
///
/// The connection's handle is held for the whole query: nothing else uses the connection
/// meanwhile, and the calls block the current thread (about 0.2 µs a row).
pub(crate) async fn for_each_row(
    conn: &mut SqliteConnection,
    sql: &str,
    params: &[i64],
    mut each: impl FnMut(&RawRow<'_>) -> StoreResult<()>,
) -> StoreResult<()> {
    let mut handle = conn.lock_handle().await?;
    let db = handle.as_raw_handle();
    // SAFETY: `handle` locks the connection for this function: sqlx's worker makes no call on
    // it until `handle` drops, after `statement` is finalized (declared later, dropped first).
    let statement = unsafe { Statement::prepare(db, sql)? };
    for (i, &value) in params.iter().enumerate() {
        let index = c_int::try_from(i + 1)
            .map_err(|_| StoreError::Invalid(format!("too many parameters for: {sql}")))?;
        // SAFETY: a live statement; SQLite checks the index and returns an error code.
        let rc = unsafe { ffi::sqlite3_bind_int64(statement.stmt.as_ptr(), index, value) };
        if rc != ffi::SQLITE_OK {
            // SAFETY: `db` is open and ours.
            return Err(unsafe { sqlite_error(db, rc, sql) });
        }
    }
    blocking_section(|| loop {
        // SAFETY: a live, fully bound statement on a connection nothing else uses.
        match unsafe { ffi::sqlite3_step(statement.stmt.as_ptr()) } {
            ffi::SQLITE_ROW => each(&RawRow {
                statement: &statement,
            })?,
            ffi::SQLITE_DONE => return Ok(()),
            // SAFETY: `db` is open and ours.
            rc => return Err(unsafe { sqlite_error(db, rc, sql) }),
        }
    })?;
    drop(statement);
    drop(handle);
    Ok(())
}

/// Rows per INSERT statement of [`insert_rows`]: enough to spread the statement's start-up
/// (opening its cursors) over many rows, small enough to prepare in a tenth of a millisecond.
const ROWS_PER_STATEMENT: usize = 100;

/// Binds one row's values, in column order, to an INSERT of [`insert_rows`].
pub(crate) struct RowBinder<'s> {
    statement: &'s Statement,
    /// The next parameter, 1-based.
    next: c_int,
    /// The first failed bind: its parameter and SQLite's code.
    failed: Option<(c_int, c_int)>,
}

impl RowBinder<'_> {
    fn bound(&mut self, rc: c_int) -> &mut Self {
        if rc != ffi::SQLITE_OK && self.failed.is_none() {
            self.failed = Some((self.next, rc));
        }
        self.next += 1;
        self
    }

    /// An INTEGER, or NULL.
    pub(crate) fn integer(&mut self, value: Option<i64>) -> &mut Self {
        let stmt = self.statement.stmt.as_ptr();
        // SAFETY: a live statement; SQLite checks the parameter index (SQLITE_RANGE).
        let rc = unsafe {
            match value {
                Some(v) => ffi::sqlite3_bind_int64(stmt, self.next, v),
                None => ffi::sqlite3_bind_null(stmt, self.next),
            }
        };
        self.bound(rc)
    }

    /// A REAL, or NULL.
    pub(crate) fn real(&mut self, value: Option<f64>) -> &mut Self {
        let stmt = self.statement.stmt.as_ptr();
        // SAFETY: as in `integer`.
        let rc = unsafe {
            match value {
                Some(v) => ffi::sqlite3_bind_double(stmt, self.next, v),
                None => ffi::sqlite3_bind_null(stmt, self.next),
            }
        };
        self.bound(rc)
    }

    /// A TEXT, or NULL.
    pub(crate) fn text(&mut self, value: Option<&str>) -> &mut Self {
        let stmt = self.statement.stmt.as_ptr();
        let rc = match value {
            Some(v) => match c_int::try_from(v.len()) {
                // SAFETY: `v` is valid UTF-8 of `len` bytes for the call; SQLITE_TRANSIENT makes
                // SQLite copy it before returning.
                Ok(len) => unsafe {
                    ffi::sqlite3_bind_text(
                        stmt,
                        self.next,
                        v.as_ptr().cast(),
                        len,
                        ffi::SQLITE_TRANSIENT(),
                    )
                },
                Err(_) => ffi::SQLITE_TOOBIG,
            },
            // SAFETY: as in `integer`.
            None => unsafe { ffi::sqlite3_bind_null(stmt, self.next) },
        };
        self.bound(rc)
    }
}

/// `head` (`INSERT INTO t (a, b)`) followed by `rows` groups of `columns` parameters.
fn insert_sql(head: &str, columns: usize, rows: usize) -> String {
    let group = format!("({})", vec!["?"; columns].join(", "));
    let mut sql = String::with_capacity(head.len() + 8 + rows * (group.len() + 2));
    sql.push_str(head);
    sql.push_str(" VALUES ");
    for i in 0..rows {
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&group);
    }
    sql
}

/// Inserts `rows` with `head` (`INSERT INTO t (a, b, c)`, `columns` names) on `conn`, in the
/// connection's current transaction: `bind` gives each row's values in column order.
///
/// The statements are prepared for this call and finalized before it returns. A constraint
/// that fails is an error quoting SQLite's message; rows of the call may have been written
/// before it, so the caller rolls its transaction back.
pub(crate) async fn insert_rows<R>(
    conn: &mut SqliteConnection,
    head: &str,
    columns: usize,
    rows: &[R],
    mut bind: impl FnMut(&R, &mut RowBinder<'_>),
) -> StoreResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    // SQLite takes at most 32,766 parameters per statement.
    if columns == 0 || columns * ROWS_PER_STATEMENT > 32_766 {
        return Err(StoreError::Invalid(format!(
            "{columns} columns per row do not fit an INSERT of {ROWS_PER_STATEMENT} rows: {head}"
        )));
    }
    let mut handle = conn.lock_handle().await?;
    let db = handle.as_raw_handle();
    blocking_section(|| {
        let mut full: Option<Statement> = None;
        for chunk in rows.chunks(ROWS_PER_STATEMENT) {
            let sql = || insert_sql(head, columns, chunk.len());
            // SAFETY (both): `handle` locks the connection until this function returns, after
            // the statements (finalized on drop, inside this closure) are gone.
            let partial;
            let statement = if chunk.len() == ROWS_PER_STATEMENT {
                match &mut full {
                    Some(statement) => &*statement,
                    slot => &*slot.insert(unsafe { Statement::prepare(db, &sql())? }),
                }
            } else {
                partial = unsafe { Statement::prepare(db, &sql())? };
                &partial
            };
            let mut binder = RowBinder {
                statement,
                next: 1,
                failed: None,
            };
            for row in chunk {
                let start = binder.next;
                bind(row, &mut binder);
                let given = usize::try_from(binder.next - start).unwrap_or(0);
                if given != columns {
                    return Err(StoreError::Invalid(format!(
                        "a row gave {given} values for the {columns} columns of: {head}"
                    )));
                }
            }
            let stmt = statement.stmt.as_ptr();
            if let Some((parameter, rc)) = binder.failed {
                return Err(StoreError::Invalid(format!(
                    "SQLite error {rc} binding parameter {parameter} of: {head}"
                )));
            }
            // SAFETY: a live, fully bound statement on a connection nothing else uses; reset
            // makes it ready for the next chunk (every parameter is bound again).
            let rc = unsafe { ffi::sqlite3_step(stmt) };
            if rc != ffi::SQLITE_DONE {
                // SAFETY: `db` is open and ours.
                return Err(unsafe { sqlite_error(db, rc, head) });
            }
            // SAFETY: as for the step.
            unsafe { ffi::sqlite3_reset(stmt) };
        }
        Ok(())
    })?;
    drop(handle);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Connection;

    async fn memory() -> SqliteConnection {
        let mut conn = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        sqlx::query(
            "CREATE TABLE t (i INTEGER, r REAL, s TEXT);
             INSERT INTO t VALUES (1, 0.25, 'a'), (2, 3, 'bé'), (NULL, 0.5, ''), (4, NULL, NULL);",
        )
        .execute(&mut conn)
        .await
        .unwrap();
        conn
    }

    #[tokio::test]
    async fn reads_rows_as_sqlx_does_with_parameters_in_order() {
        let mut conn = memory().await;
        let mut got = Vec::new();
        for_each_row(
            &mut conn,
            "SELECT i, r, s FROM t WHERE rowid <= ? AND rowid >= ? ORDER BY rowid",
            &[3, 1],
            |row| {
                got.push((
                    row.optional_integer(0)?,
                    row.real(1)?,
                    row.text(2)?.to_owned(),
                ));
                Ok(())
            },
        )
        .await
        .unwrap();
        let want: Vec<(Option<i64>, f64, String)> =
            sqlx::query_as("SELECT i, r, s FROM t WHERE rowid <= 3 ORDER BY rowid")
                .fetch_all(&mut conn)
                .await
                .unwrap();
        assert_eq!(got, want);
        assert_eq!(got[1].1, 3.0, "a whole REAL reads back as a float");
    }

    #[tokio::test]
    async fn a_value_of_the_wrong_kind_is_an_error_naming_the_column() {
        let mut conn = memory().await;
        let err = for_each_row(&mut conn, "SELECT i, r, s FROM t", &[], |row| {
            row.integer(0)?;
            Ok(())
        })
        .await
        .unwrap_err();
        assert!(err.to_string().contains("column 0 holds NULL"), "{err}");
        let err = for_each_row(&mut conn, "SELECT s FROM t", &[], |row| {
            row.real(0)?;
            Ok(())
        })
        .await
        .unwrap_err();
        assert!(err.to_string().contains("holds text"), "{err}");
        let err = for_each_row(&mut conn, "SELECT absent FROM t", &[], |_| Ok(()))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("no such column"), "{err}");
        // The connection is usable afterwards.
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(n, 4);
    }

    #[tokio::test]
    async fn an_error_of_the_callback_stops_the_query() {
        let mut conn = memory().await;
        let mut seen = 0;
        let err = for_each_row(&mut conn, "SELECT i FROM t", &[], |_| {
            seen += 1;
            Err(StoreError::Invalid("stop".into()))
        })
        .await
        .unwrap_err();
        assert_eq!((seen, err.to_string()), (1, "stop".to_owned()));
    }

    #[tokio::test]
    async fn inserts_rows_in_full_and_partial_statements_as_sqlx_reads_them() {
        let mut conn = memory().await;
        sqlx::query("CREATE TABLE u (k INTEGER PRIMARY KEY, r REAL CHECK (r >= 0), s TEXT)")
            .execute(&mut conn)
            .await
            .unwrap();
        // 2.5 statements' worth, with NULLs and non-ASCII text.
        let rows: Vec<(i64, Option<f64>, Option<String>)> = (0..250)
            .map(|k| {
                let r = (k % 3 != 0).then(|| k as f64 / 8.0);
                let s = (k % 5 != 0).then(|| format!("é{k}"));
                (k, r, s)
            })
            .collect();
        insert_rows(&mut conn, "INSERT INTO u (k, r, s)", 3, &rows, |row, b| {
            b.integer(Some(row.0)).real(row.1).text(row.2.as_deref());
        })
        .await
        .unwrap();
        let stored: Vec<(i64, Option<f64>, Option<String>)> =
            sqlx::query_as("SELECT k, r, s FROM u ORDER BY k")
                .fetch_all(&mut conn)
                .await
                .unwrap();
        assert_eq!(stored, rows);
    }

    #[tokio::test]
    async fn a_failed_constraint_or_a_short_row_is_an_error() {
        let mut conn = memory().await;
        sqlx::query("CREATE TABLE u (k INTEGER PRIMARY KEY, r REAL CHECK (r >= 0))")
            .execute(&mut conn)
            .await
            .unwrap();
        let err = insert_rows(
            &mut conn,
            "INSERT INTO u (k, r)",
            2,
            &[(1, 0.5), (2, -1.0)],
            |row, b| {
                b.integer(Some(row.0)).real(Some(row.1));
            },
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("CHECK constraint failed"), "{err}");
        let err = insert_rows(
            &mut conn,
            "INSERT INTO u (k, r)",
            2,
            &[(3, 0.5)],
            |row, b| {
                b.integer(Some(row.0));
            },
        )
        .await
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("a row gave 1 values for the 2 columns"),
            "{err}"
        );
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM u WHERE k = 3")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(n, 0);
    }
}
