//! Reading and writing millions of rows fast: statements stepped through SQLite's C API on a
//! connection of our own ([`RawConnection`]), used from one blocking thread.
//!
//! sqlx copies every value of every row and hands the rows across a channel, about 2.5 µs a
//! row; pooling reads every prediction of a project (10 million in the benchmark), so
//! those reads step their query here ([`RawConnection::for_each_row`]), at about 0.2 µs a row,
//! each value read in place and checked against the storage class the caller expects. A run
//! import writes those predictions with [`RawConnection::insert_rows`]: multi-row INSERTs bound
//! straight from the rows, which saves building sqlx's argument lists and SQL text (a quarter
//! of the import's writing time).
//!
//! The connection is opened on the database file for the work at hand and closed after it;
//! reads see one snapshot ([`read_snapshot`]). It is never one of sqlx's: lending out the handle
//! of a pooled connection (`lock_handle`) stalled in some runs of the fuzz harness, with sqlx's
//! worker thread and the task each waiting for the connection's lock.

use super::{Constraint, Db, StoreError, StoreResult};
use libsqlite3_sys as ffi;
use std::ffi::{c_int, CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

/// What a [`RawConnection`] may do.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Access {
    /// Read only.
    Read,
    /// Read and write, with foreign-key checks off (see the bulk writers for why that holds).
    Write,
}

/// A connection to the database file of its own, closed when dropped.
pub(crate) struct RawConnection {
    db: NonNull<ffi::sqlite3>,
}

// SAFETY: a `RawConnection` is moved between threads, never shared (it is not `Sync`, and its
// methods take `&self` only on the thread that owns it); SQLite (bundled by sqlx, built
// thread-safe) allows a connection opened with SQLITE_OPEN_NOMUTEX to be used by one thread at
// a time, whichever thread that is.
unsafe impl Send for RawConnection {}

impl RawConnection {
    /// Opens the database file at `path` (which must exist) with a 10-second busy timeout.
    pub(crate) fn open(path: &Path, access: Access) -> StoreResult<RawConnection> {
        let shown = path.display().to_string();
        let text = path
            .to_str()
            .and_then(|p| CString::new(p).ok())
            .ok_or_else(|| {
                StoreError::Fault(format!(
                    "cannot open the database {shown}: the path is not UTF-8 without NUL"
                ))
            })?;
        let flags = ffi::SQLITE_OPEN_NOMUTEX
            | match access {
                Access::Read => ffi::SQLITE_OPEN_READONLY,
                Access::Write => ffi::SQLITE_OPEN_READWRITE,
            };
        let mut db = ptr::null_mut();
        // SAFETY: `text` is NUL-terminated and outlives the call; `db` receives the handle,
        // which SQLite hands out (to be closed) even when the open fails.
        let rc = unsafe { ffi::sqlite3_open_v2(text.as_ptr(), &mut db, flags, ptr::null()) };
        let Some(db) = NonNull::new(db) else {
            return Err(StoreError::Fault(format!(
                "cannot open the database {shown}: SQLite is out of memory"
            )));
        };
        let conn = RawConnection { db };
        if rc != ffi::SQLITE_OK {
            // SAFETY: `db` is a handle SQLite returned; `conn` closes it when dropped.
            return Err(unsafe { sqlite_error(db, rc, &format!("opening {shown}")) });
        }
        // SAFETY: an open connection of ours.
        unsafe {
            ffi::sqlite3_extended_result_codes(db.as_ptr(), 1);
            ffi::sqlite3_busy_timeout(db.as_ptr(), 10_000);
        }
        if access == Access::Write {
            conn.execute("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF")?;
        }
        Ok(conn)
    }

    /// Runs `sql` (one or more statements without results).
    pub(crate) fn execute(&self, sql: &str) -> StoreResult<()> {
        let text = CString::new(sql)
            .map_err(|_| StoreError::Fault(format!("a query holds a NUL byte: {sql}")))?;
        // SAFETY: an open connection of ours; `text` is NUL-terminated and outlives the call;
        // no callback and no error-message buffer (the message is read from the connection).
        let rc = unsafe {
            ffi::sqlite3_exec(
                self.db.as_ptr(),
                text.as_ptr(),
                None,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if rc == ffi::SQLITE_OK {
            Ok(())
        } else {
            // SAFETY: an open connection of ours.
            Err(unsafe { sqlite_error(self.db, rc, sql) })
        }
    }

    /// Runs `work` in a write transaction (`BEGIN IMMEDIATE`): committed if it succeeds,
    /// rolled back if it fails.
    pub(crate) fn write_transaction<T>(
        &self,
        work: impl FnOnce(&RawConnection) -> StoreResult<T>,
    ) -> StoreResult<T> {
        self.execute("BEGIN IMMEDIATE")?;
        match work(self).and_then(|out| self.execute("COMMIT").map(|()| out)) {
            Ok(out) => Ok(out),
            Err(e) => {
                // A failed COMMIT may leave the transaction open; a rollback of none is harmless.
                let _ = self.execute("ROLLBACK");
                Err(e)
            }
        }
    }

    /// The rowid of the last row this connection inserted.
    pub(crate) fn last_insert_rowid(&self) -> i64 {
        // SAFETY: an open connection of ours.
        unsafe { ffi::sqlite3_last_insert_rowid(self.db.as_ptr()) }
    }
}

impl Drop for RawConnection {
    fn drop(&mut self) {
        // SAFETY: the handle came from `sqlite3_open_v2` and is closed only here; every
        // statement of ours is finalized before its method returns.
        unsafe { ffi::sqlite3_close(self.db.as_ptr()) };
    }
}

/// The file of the database `db` opens.
fn database_file(db: &Db) -> StoreResult<PathBuf> {
    let path = super::db::sqlite_file(db).unwrap_or_default();
    let text = path.to_string_lossy();
    if text.is_empty() || text.contains(":memory:") {
        return Err(StoreError::Fault(
            "an in-memory database cannot be read by a second connection".into(),
        ));
    }
    Ok(path)
}

/// Runs `work` on a connection of its own to `db`'s file with `access`, on a blocking thread.
pub(crate) async fn with_connection<T: Send + 'static>(
    db: &Db,
    access: Access,
    work: impl FnOnce(&RawConnection) -> StoreResult<T> + Send + 'static,
) -> StoreResult<T> {
    let path = database_file(db)?;
    tokio::task::spawn_blocking(move || work(&RawConnection::open(&path, access)?))
        .await
        .map_err(|e| StoreError::Fault(format!("a database read stopped: {e}")))?
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
            .map_err(|_| StoreError::Fault(format!("a query holds a NUL byte: {sql}")))?;
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

/// The error SQLite reports for `rc` on `db`, naming the query: a UNIQUE or PRIMARY KEY
/// violation is a [`StoreError::Conflict`] with [`Constraint::Unique`] (callers name what
/// conflicts), anything else a
/// fault of the server.
///
/// Safety: `db` is an open connection.
unsafe fn sqlite_error(db: NonNull<ffi::sqlite3>, rc: c_int, sql: &str) -> StoreError {
    // SAFETY: `db` is open; the message is a NUL-terminated string SQLite owns, copied at once.
    let (message, code) = unsafe {
        (
            CStr::from_ptr(ffi::sqlite3_errmsg(db.as_ptr()))
                .to_string_lossy()
                .into_owned(),
            ffi::sqlite3_extended_errcode(db.as_ptr()),
        )
    };
    let text = format!("SQLite error {rc} ({message}) in: {sql}");
    match code {
        ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
            StoreError::conflict(Constraint::Unique, text)
        }
        _ => StoreError::Fault(text),
    }
}

/// The current row of a query run by [`for_each_row`].
#[derive(Clone, Copy)]
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

impl RawConnection {
    /// Runs `sql` (a read) with the integer parameters `params` and calls `each` on every row,
    /// in the query's order; the first error of `each` stops the query and is returned.
    ///
    /// Blocks the thread (about 0.2 µs a row).
    pub(crate) fn for_each_row(
        &self,
        sql: &str,
        params: &[i64],
        mut each: impl FnMut(&RawRow<'_>) -> StoreResult<()>,
    ) -> StoreResult<()> {
        let db = self.db;
        // SAFETY: an open connection of ours, used by this thread only.
        let statement = unsafe { Statement::prepare(db, sql)? };
        for (i, &value) in params.iter().enumerate() {
            let index = c_int::try_from(i + 1)
                .map_err(|_| StoreError::Fault(format!("too many parameters for: {sql}")))?;
            // SAFETY: a live statement; SQLite checks the index and returns an error code.
            let rc = unsafe { ffi::sqlite3_bind_int64(statement.stmt.as_ptr(), index, value) };
            if rc != ffi::SQLITE_OK {
                // SAFETY: `db` is open and ours.
                return Err(unsafe { sqlite_error(db, rc, sql) });
            }
        }
        loop {
            // SAFETY: a live, fully bound statement on a connection nothing else uses.
            match unsafe { ffi::sqlite3_step(statement.stmt.as_ptr()) } {
                ffi::SQLITE_ROW => each(&RawRow {
                    statement: &statement,
                })?,
                ffi::SQLITE_DONE => return Ok(()),
                // SAFETY: `db` is open and ours.
                rc => return Err(unsafe { sqlite_error(db, rc, sql) }),
            }
        }
    }
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

impl RawConnection {
    /// Inserts `rows` with `head` (`INSERT INTO t (a, b, c)`, `columns` names), in the
    /// connection's current transaction: `bind` gives each row's values in column order.
    ///
    /// The statements are prepared for this call and finalized before it returns. A constraint
    /// that fails is an error quoting SQLite's message; rows of the call may have been written
    /// before it, so the caller rolls its transaction back.
    pub(crate) fn insert_rows<R>(
        &self,
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
            return Err(StoreError::Fault(format!(
            "{columns} columns per row do not fit an INSERT of {ROWS_PER_STATEMENT} rows: {head}"
        )));
        }
        let db = self.db;
        {
            let mut full: Option<Statement> = None;
            for chunk in rows.chunks(ROWS_PER_STATEMENT) {
                let sql = || insert_sql(head, columns, chunk.len());
                // SAFETY (both): an open connection of ours, used by this thread only; the
                // statements are finalized (on drop) before this function returns.
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
                        return Err(StoreError::Fault(format!(
                            "a row gave {given} values for the {columns} columns of: {head}"
                        )));
                    }
                }
                let stmt = statement.stmt.as_ptr();
                if let Some((parameter, rc)) = binder.failed {
                    return Err(StoreError::Fault(format!(
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
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database file with table `t`, and a read-write connection to it.
    fn database() -> (tempfile::TempDir, RawConnection) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        std::fs::File::create(&path).unwrap();
        let conn = RawConnection::open(&path, Access::Write).unwrap();
        conn.execute(
            "CREATE TABLE t (i INTEGER, r REAL, s TEXT);
             INSERT INTO t VALUES (1, 0.25, 'a'), (2, 3, 'bé'), (NULL, 0.5, ''), (4, NULL, NULL);",
        )
        .unwrap();
        (dir, conn)
    }

    fn count(conn: &RawConnection, sql: &str) -> i64 {
        let mut n = None;
        conn.for_each_row(sql, &[], |row| {
            n = Some(row.integer(0)?);
            Ok(())
        })
        .unwrap();
        n.unwrap()
    }

    #[test]
    fn reads_rows_with_parameters_in_order() {
        let (_dir, conn) = database();
        let mut got = Vec::new();
        conn.for_each_row(
            "SELECT i, r, s FROM t WHERE rowid <= $1 AND rowid >= $2 ORDER BY rowid",
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
        .unwrap();
        let want = vec![
            (Some(1), 0.25, "a".to_owned()),
            (Some(2), 3.0, "bé".to_owned()),
            (None, 0.5, String::new()),
        ];
        assert_eq!(got, want, "a whole REAL reads back as a float");
    }

    #[test]
    fn a_value_of_the_wrong_kind_is_an_error_naming_the_column() {
        let (_dir, conn) = database();
        let err = conn
            .for_each_row("SELECT i, r, s FROM t", &[], |row| {
                row.integer(0)?;
                Ok(())
            })
            .unwrap_err();
        assert!(err.to_string().contains("column 0 holds NULL"), "{err}");
        let err = conn
            .for_each_row("SELECT s FROM t", &[], |row| {
                row.real(0)?;
                Ok(())
            })
            .unwrap_err();
        assert!(err.to_string().contains("holds text"), "{err}");
        let err = conn
            .for_each_row("SELECT absent FROM t", &[], |_| Ok(()))
            .unwrap_err();
        assert!(err.to_string().contains("no such column"), "{err}");
        assert!(matches!(err, StoreError::Fault(_)), "{err:?}");
        // The connection is usable afterwards.
        assert_eq!(count(&conn, "SELECT COUNT(*) FROM t"), 4);
    }

    #[test]
    fn an_error_of_the_callback_stops_the_query() {
        let (_dir, conn) = database();
        let mut seen = 0;
        let err = conn
            .for_each_row("SELECT i FROM t", &[], |_| {
                seen += 1;
                Err(StoreError::invalid(None, "stop"))
            })
            .unwrap_err();
        assert_eq!((seen, err.to_string()), (1, "stop".to_owned()));
    }

    #[test]
    fn inserts_rows_in_full_and_partial_statements_as_they_read_back() {
        let (_dir, conn) = database();
        conn.execute("CREATE TABLE u (k INTEGER PRIMARY KEY, r REAL CHECK (r >= 0), s TEXT)")
            .unwrap();
        // 2.5 statements' worth, with NULLs and non-ASCII text.
        let rows: Vec<(i64, Option<f64>, Option<String>)> = (0..250)
            .map(|k| {
                let r = (k % 3 != 0).then(|| k as f64 / 8.0);
                let s = (k % 5 != 0).then(|| format!("é{k}"));
                (k, r, s)
            })
            .collect();
        conn.insert_rows("INSERT INTO u (k, r, s)", 3, &rows, |row, b| {
            b.integer(Some(row.0)).real(row.1).text(row.2.as_deref());
        })
        .unwrap();
        let mut stored = Vec::new();
        conn.for_each_row("SELECT k, r, s FROM u ORDER BY k", &[], |row| {
            let r = match row.optional_integer(1) {
                Ok(None) => None,
                _ => Some(row.real(1)?),
            };
            let s = match row.optional_integer(2) {
                Ok(None) => None,
                _ => Some(row.text(2)?.to_owned()),
            };
            stored.push((row.integer(0)?, r, s));
            Ok(())
        })
        .unwrap();
        assert_eq!(stored, rows);
    }

    #[test]
    fn a_failed_constraint_or_a_short_row_is_an_error_and_the_transaction_rolls_back() {
        let (_dir, conn) = database();
        conn.execute("CREATE TABLE u (k INTEGER PRIMARY KEY, r REAL CHECK (r >= 0))")
            .unwrap();
        let err = conn
            .write_transaction(|c| {
                c.insert_rows(
                    "INSERT INTO u (k, r)",
                    2,
                    &[(1, 0.5), (2, -1.0)],
                    |row, b| {
                        b.integer(Some(row.0)).real(Some(row.1));
                    },
                )
            })
            .unwrap_err();
        assert!(err.to_string().contains("CHECK constraint failed"), "{err}");
        assert_eq!(count(&conn, "SELECT COUNT(*) FROM u"), 0, "rolled back");
        let err = conn
            .insert_rows("INSERT INTO u (k, r)", 2, &[(3, 0.5)], |row, b| {
                b.integer(Some(row.0));
            })
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("a row gave 1 values for the 2 columns"),
            "{err}"
        );
        assert_eq!(count(&conn, "SELECT COUNT(*) FROM u WHERE k = 3"), 0);
        conn.execute("INSERT INTO u VALUES (5, 1)").unwrap();
        let err = conn.execute("INSERT INTO u VALUES (5, 2)").unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::Conflict {
                    constraint: Constraint::Unique,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(conn.last_insert_rowid(), 5);
    }

    #[test]
    fn a_read_only_connection_refuses_writes_and_reads_one_snapshot() {
        let (dir, writer) = database();
        writer.execute("PRAGMA journal_mode = WAL").unwrap();
        let reader = RawConnection::open(&dir.path().join("t.db"), Access::Read).unwrap();
        assert!(reader.execute("INSERT INTO t VALUES (9, 9, 'x')").is_err());
        reader.execute("BEGIN").unwrap();
        assert_eq!(count(&reader, "SELECT COUNT(*) FROM t"), 4);
        writer.execute("INSERT INTO t VALUES (9, 9, 'x')").unwrap();
        assert_eq!(count(&reader, "SELECT COUNT(*) FROM t"), 4, "same snapshot");
        reader.execute("COMMIT").unwrap();
        assert_eq!(count(&reader, "SELECT COUNT(*) FROM t"), 5);
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent.db");
        let err = RawConnection::open(&path, Access::Read).err().unwrap();
        assert!(err.to_string().contains("absent.db"), "{err}");
        assert!(!path.exists(), "opening never creates the file");
    }
}
