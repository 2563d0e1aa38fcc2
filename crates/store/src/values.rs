//! Multi-row `INSERT ... VALUES (...), (...)` with the parameters each engine reads best:
//! numbered (`$1`, `$2`, …) on PostgreSQL, which does not read `?` (what sqlx's `QueryBuilder`
//! writes for the `Any` driver); plain `?` on SQLite. SQLite reads `$N` too, but then sqlx asks
//! the name of every parameter when it binds, and SQLite finds each name by a walk of the
//! statement's list of names: a statement of n parameters costs n²/2 steps (a thousand
//! assignment rows of six values each, 18 million), the most of a corpus import's time.

use super::db::Engine;
use super::{StoreError, StoreResult};
use sqlx::any::{Any, AnyArguments};
use sqlx::{Arguments, Encode, Type};
use std::fmt::Write as _;

/// One row's values, bound in column order.
pub(crate) struct RowBinds<'a, 'q> {
    rows: &'a mut ValuesInsert<'q>,
    first: bool,
}

impl<'q> RowBinds<'_, 'q> {
    /// Binds the row's next value.
    pub(crate) fn bind<T>(&mut self, value: T) -> &mut Self
    where
        T: 'q + Encode<'q, Any> + Type<Any>,
    {
        if !self.first {
            self.rows.sql.push_str(", ");
        }
        self.first = false;
        self.rows.next += 1;
        match self.rows.engine {
            Engine::Sqlite => self.rows.sql.push('?'),
            Engine::Postgres => {
                let _ = write!(self.rows.sql, "${}", self.rows.next);
            }
        }
        if let Err(e) = self.rows.args.add(value) {
            self.rows.failed.get_or_insert(e.to_string());
        }
        self
    }
}

/// An INSERT of many rows, as SQL text and its arguments.
pub(crate) struct ValuesInsert<'q> {
    engine: Engine,
    sql: String,
    args: AnyArguments<'q>,
    next: usize,
    rows: usize,
    failed: Option<String>,
}

impl<'q> ValuesInsert<'q> {
    /// `insert` is the statement up to `VALUES` (`INSERT INTO t (a, b) `), for `engine`;
    /// `each` binds one item's row.
    pub(crate) fn new<I>(
        engine: Engine,
        insert: &str,
        items: impl IntoIterator<Item = I>,
        mut each: impl FnMut(&mut RowBinds<'_, 'q>, I),
    ) -> ValuesInsert<'q> {
        let mut rows = ValuesInsert {
            engine,
            sql: format!("{insert}VALUES "),
            args: AnyArguments::default(),
            next: 0,
            rows: 0,
            failed: None,
        };
        for item in items {
            if rows.rows > 0 {
                rows.sql.push_str(", ");
            }
            rows.sql.push('(');
            each(
                &mut RowBinds {
                    rows: &mut rows,
                    first: true,
                },
                item,
            );
            rows.sql.push(')');
            rows.rows += 1;
        }
        rows
    }

    /// Appends text after the rows (`RETURNING ...`).
    pub(crate) fn push(mut self, tail: &str) -> Self {
        self.sql.push_str(tail);
        self
    }

    /// The statement and its arguments, for `sqlx::query_with`; `None` when there is no row.
    pub(crate) fn finish(self) -> StoreResult<Option<(String, AnyArguments<'q>)>> {
        if let Some(e) = self.failed {
            return Err(StoreError::Fault(format!("binding a row value: {e}")));
        }
        Ok((self.rows > 0).then_some((self.sql, self.args)))
    }
}
