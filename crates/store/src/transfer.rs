//! `claimpool db copy`: every table of a SQLite database into an empty PostgreSQL database, in
//! one PostgreSQL transaction, through `COPY ... FROM STDIN`; then each table's row count and a
//! checksum of its rows are read back from both and compared.
//!
//! The two schemas agree table for table and column for column (`migrations/sqlite/`,
//! `migrations/postgres/`), so the copy is generic: a table added by a later migration is copied
//! without a change here. Sessions (`sessions`) are not copied: people sign in again.

use super::copy_text::{push_bytes, push_integer, push_real, push_text};
use super::db::sqlite_options;
use super::{Constraint, Db, StoreError, StoreResult};
use domain::hex::hex;
use futures::TryStreamExt;
use sha2::{Digest, Sha256};
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use sqlx::{Connection, PgPool, Row, SqliteConnection, TypeInfo, ValueRef};
use std::collections::{BTreeMap, BTreeSet};

/// Tables that are not data: the migration ledger and the web sessions.
const SKIPPED: [&str; 2] = ["_sqlx_migrations", "sessions"];

/// Rows buffered before they go to PostgreSQL.
const SEND_BYTES: usize = 1 << 20;

/// One table as copied and verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopiedTable {
    pub table: String,
    /// Rows in the source, equal to the rows read back from the target.
    pub rows: u64,
    /// SHA-256 of the table's rows in primary-key order (COPY text lines), equal on both sides.
    pub checksum: String,
}

/// What the copy reports while it runs.
#[derive(Clone, Debug)]
pub enum CopyProgress<'a> {
    /// A table's copy began; `rows` is its source row count.
    Table { table: &'a str, rows: u64 },
    /// Rows of the current table sent so far.
    Rows { table: &'a str, sent: u64 },
    /// The copy committed; the counts and checksums are being compared.
    Verifying,
}

/// A column of the target, with how its values are read back.
#[derive(Clone, Debug)]
struct Column {
    name: String,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Integer,
    Real,
    Text,
    Bytes,
}

#[derive(Clone, Debug)]
struct Table {
    name: String,
    columns: Vec<Column>,
    /// Primary-key columns, in key order (all columns when the table has no key).
    order_by: Vec<String>,
    /// Identity column whose sequence is moved past the copied ids.
    identity: Option<String>,
}

/// Copies every table of `src` into `dst` (which must hold no rows) and verifies the copy.
pub async fn sqlite_to_postgres(
    src: &Db,
    dst: &PgPool,
    mut progress: impl FnMut(CopyProgress<'_>),
) -> StoreResult<Vec<CopiedTable>> {
    // One read transaction on a connection of its own: the copy is of one snapshot, while the
    // server may go on writing.
    let options = sqlite_options(src)
        .ok_or_else(|| StoreError::invalid(None, "the copy reads a SQLite database"))?;
    let mut source = SqliteConnection::connect_with(&options).await?;
    let mut src = source.begin().await?;
    let tables = matched_tables(&mut src, dst).await?;
    for table in &tables {
        let held: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {}", table.name))
            .fetch_one(dst)
            .await?;
        if held > 0 {
            return Err(StoreError::conflict(
                Constraint::TargetNotEmpty,
                format!(
                "the target database already holds data ({held} rows in {}): copy into an empty \
                 database",
                table.name
            ),
            ));
        }
    }
    let order = copy_order(dst, &tables).await?;

    let mut tx = dst.begin().await?;
    let mut copied = Vec::with_capacity(order.len());
    for table in &order {
        let expected: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {}", table.name))
            .fetch_one(&mut *src)
            .await?;
        progress(CopyProgress::Table {
            table: &table.name,
            rows: u64::try_from(expected).unwrap_or(0),
        });
        let names = column_list(table);
        let statement = format!("COPY {} ({names}) FROM STDIN", table.name);
        let mut sink = tx.copy_in_raw(&statement).await?;
        let select = format!(
            "SELECT {names} FROM {} ORDER BY {}",
            table.name,
            table.order_by.join(", ")
        );
        let mut rows = sqlx::query(&select).fetch(&mut *src);
        let mut buffer = String::with_capacity(SEND_BYTES + 4096);
        let mut hasher = Sha256::new();
        let mut sent = 0u64;
        let mut line = String::new();
        while let Some(row) = rows.try_next().await? {
            line.clear();
            sqlite_line(&row, table, &mut line)?;
            hasher.update(line.as_bytes());
            buffer.push_str(&line);
            sent += 1;
            if buffer.len() >= SEND_BYTES {
                sink.send(buffer.as_bytes())
                    .await
                    .map_err(|e| copy_error(table, e))?;
                buffer.clear();
                progress(CopyProgress::Rows {
                    table: &table.name,
                    sent,
                });
            }
        }
        drop(rows);
        if !buffer.is_empty() {
            sink.send(buffer.as_bytes())
                .await
                .map_err(|e| copy_error(table, e))?;
        }
        let written = sink.finish().await.map_err(|e| copy_error(table, e))?;
        if written != sent {
            return Err(StoreError::Corrupt(format!(
                "{}: {sent} rows sent, PostgreSQL wrote {written}",
                table.name
            )));
        }
        copied.push(CopiedTable {
            table: table.name.clone(),
            rows: sent,
            checksum: hex(&hasher.finalize()),
        });
    }
    for table in &order {
        if let Some(column) = &table.identity {
            // The next generated id follows the largest copied one.
            let move_on = format!(
                "SELECT setval(pg_get_serial_sequence('{0}', '{column}'), \
                 COALESCE((SELECT MAX({column}) FROM {0}), 0) + 1, false)",
                table.name
            );
            sqlx::query(&move_on).execute(&mut *tx).await?;
        }
    }
    tx.commit().await?;

    progress(CopyProgress::Verifying);
    for (table, source) in order.iter().zip(&copied) {
        let (rows, checksum) = postgres_checksum(dst, table).await?;
        if rows != source.rows || checksum != source.checksum {
            return Err(StoreError::Corrupt(format!(
                "{}: the source has {} rows (checksum {}), the copy {rows} (checksum {checksum})",
                table.name, source.rows, source.checksum
            )));
        }
    }
    copied.sort_by(|a, b| a.table.cmp(&b.table));
    Ok(copied)
}

fn copy_error(table: &Table, e: sqlx::Error) -> StoreError {
    StoreError::invalid(None, format!("copying {} into PostgreSQL: {e}", table.name))
}

fn column_list(table: &Table) -> String {
    table
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The source's tables, each checked against the target's table of the same name.
async fn matched_tables(src: &mut SqliteConnection, dst: &PgPool) -> StoreResult<Vec<Table>> {
    let source: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' \
         ESCAPE '\\' ORDER BY name",
    )
    .fetch_all(&mut *src)
    .await?;
    let source: BTreeSet<String> = source
        .into_iter()
        .filter(|t| !SKIPPED.contains(&t.as_str()))
        .collect();
    let target: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
    )
    .fetch_all(dst)
    .await?;
    let target: BTreeSet<String> = target
        .into_iter()
        .filter(|t| !SKIPPED.contains(&t.as_str()))
        .collect();
    if source != target {
        let only_source: Vec<_> = source.difference(&target).cloned().collect();
        let only_target: Vec<_> = target.difference(&source).cloned().collect();
        return Err(StoreError::invalid(
            None,
            format!(
            "the two schemas differ (is one database from another claimpool version?): only in \
             SQLite: [{}]; only in PostgreSQL: [{}]",
            only_source.join(", "),
            only_target.join(", ")
        ),
        ));
    }

    let mut tables = Vec::with_capacity(source.len());
    for name in source {
        let sqlite_columns: Vec<(String, i64)> =
            sqlx::query_as("SELECT name, pk FROM pragma_table_info($1) ORDER BY cid")
                .bind(&name)
                .fetch_all(&mut *src)
                .await?;
        let pg_columns: Vec<(String, String, String)> = sqlx::query_as(
            "SELECT column_name::text, data_type::text, is_identity::text \
             FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1 \
             ORDER BY ordinal_position",
        )
        .bind(&name)
        .fetch_all(dst)
        .await?;
        let left: Vec<&str> = sqlite_columns.iter().map(|(c, _)| c.as_str()).collect();
        let right: Vec<&str> = pg_columns.iter().map(|(c, _, _)| c.as_str()).collect();
        if left != right {
            return Err(StoreError::invalid(
                None,
                format!(
                "the two schemas differ in table {name}: SQLite has columns ({}), PostgreSQL ({})",
                left.join(", "),
                right.join(", ")
            ),
            ));
        }
        let mut columns = Vec::with_capacity(pg_columns.len());
        let mut identity = None;
        for (column, data_type, is_identity) in pg_columns {
            let kind = match data_type.as_str() {
                "bigint" | "integer" | "smallint" => Kind::Integer,
                "double precision" | "real" => Kind::Real,
                "text" | "character varying" => Kind::Text,
                "bytea" => Kind::Bytes,
                other => {
                    return Err(StoreError::invalid(
                        None,
                        format!(
                        "{name}.{column} has PostgreSQL type {other}, which the copy does not know"
                    ),
                    ))
                }
            };
            if is_identity == "YES" {
                identity = Some(column.clone());
            }
            columns.push(Column { name: column, kind });
        }
        let mut key: Vec<(i64, String)> = sqlite_columns
            .into_iter()
            .filter(|(_, pk)| *pk > 0)
            .map(|(c, pk)| (pk, c))
            .collect();
        key.sort();
        let order_by = if key.is_empty() {
            columns.iter().map(|c| c.name.clone()).collect()
        } else {
            key.into_iter().map(|(_, c)| c).collect()
        };
        tables.push(Table {
            name,
            columns,
            order_by,
            identity,
        });
    }
    Ok(tables)
}

/// Parents before children along the target's foreign keys that are checked at once (deferred
/// ones are checked at commit, which is how the schema's few cycles are closed).
async fn copy_order(dst: &PgPool, tables: &[Table]) -> StoreResult<Vec<Table>> {
    let edges: Vec<(String, String)> = sqlx::query_as(
        "SELECT child.relname::text, parent.relname::text \
         FROM pg_constraint c \
         JOIN pg_class child ON child.oid = c.conrelid \
         JOIN pg_class parent ON parent.oid = c.confrelid \
         WHERE c.contype = 'f' AND NOT c.condeferrable \
           AND c.connamespace = current_schema()::regnamespace",
    )
    .fetch_all(dst)
    .await?;
    let mut parents: BTreeMap<&str, BTreeSet<String>> = tables
        .iter()
        .map(|t| (t.name.as_str(), BTreeSet::new()))
        .collect();
    for (child, parent) in edges {
        if child != parent {
            if let Some(set) = parents.get_mut(child.as_str()) {
                set.insert(parent);
            }
        }
    }
    let mut placed: BTreeSet<String> = BTreeSet::new();
    let mut order = Vec::with_capacity(tables.len());
    while order.len() < tables.len() {
        let ready: Vec<&Table> = tables
            .iter()
            .filter(|t| !placed.contains(&t.name))
            .filter(|t| parents[t.name.as_str()].iter().all(|p| placed.contains(p)))
            .collect();
        if ready.is_empty() {
            let left: Vec<&str> = tables
                .iter()
                .filter(|t| !placed.contains(&t.name))
                .map(|t| t.name.as_str())
                .collect();
            return Err(StoreError::invalid(
                None,
                format!(
                "the PostgreSQL schema's foreign keys form a cycle among {}: one of them must be \
                 DEFERRABLE",
                left.join(", ")
            ),
            ));
        }
        for table in ready {
            placed.insert(table.name.clone());
            order.push(table.clone());
        }
    }
    Ok(order)
}

/// A SQLite row as a line of PostgreSQL's COPY text format.
fn sqlite_line(row: &SqliteRow, table: &Table, line: &mut String) -> StoreResult<()> {
    for (i, column) in table.columns.iter().enumerate() {
        if i > 0 {
            line.push('\t');
        }
        let raw = row.try_get_raw(i)?;
        if raw.is_null() {
            line.push_str("\\N");
            continue;
        }
        let storage = raw.type_info().name().to_owned();
        match storage.as_str() {
            "INTEGER" => push_integer(line, row.try_get_unchecked::<i64, _>(i)?),
            "REAL" => push_real(line, row.try_get_unchecked::<f64, _>(i)?),
            "TEXT" => push_text(line, &row.try_get_unchecked::<String, _>(i)?),
            "BLOB" => push_bytes(line, &row.try_get_unchecked::<Vec<u8>, _>(i)?),
            other => {
                return Err(StoreError::Corrupt(format!(
                    "{}.{} holds a value of SQLite type {other}",
                    table.name, column.name
                )))
            }
        }
    }
    line.push('\n');
    Ok(())
}

/// The same line for a PostgreSQL row, so that both sides hash alike.
fn postgres_line(row: &PgRow, table: &Table, line: &mut String) -> StoreResult<()> {
    for (i, column) in table.columns.iter().enumerate() {
        if i > 0 {
            line.push('\t');
        }
        if row.try_get_raw(i)?.is_null() {
            line.push_str("\\N");
            continue;
        }
        match column.kind {
            Kind::Integer => push_integer(line, row.try_get_unchecked::<i64, _>(i)?),
            Kind::Real => push_real(line, row.try_get_unchecked::<f64, _>(i)?),
            Kind::Text => push_text(line, &row.try_get_unchecked::<String, _>(i)?),
            Kind::Bytes => push_bytes(line, &row.try_get_unchecked::<Vec<u8>, _>(i)?),
        }
    }
    line.push('\n');
    Ok(())
}

async fn postgres_checksum(dst: &PgPool, table: &Table) -> StoreResult<(u64, String)> {
    // Columns read as the copy wrote them: integers of any width as bigint.
    let select_list: Vec<String> = table
        .columns
        .iter()
        .map(|c| match c.kind {
            Kind::Integer => format!("{}::bigint", c.name),
            Kind::Real => format!("{}::double precision", c.name),
            Kind::Text => format!("{}::text", c.name),
            Kind::Bytes => c.name.clone(),
        })
        .collect();
    let order_by: Vec<String> = table
        .order_by
        .iter()
        .map(|name| {
            // SQLite orders text by bytes, as collation "C" does.
            match table
                .columns
                .iter()
                .find(|c| &c.name == name)
                .map(|c| c.kind)
            {
                Some(Kind::Text) => format!("{name}::text COLLATE \"C\""),
                _ => name.clone(),
            }
        })
        .collect();
    let select = format!(
        "SELECT {} FROM {} ORDER BY {}",
        select_list.join(", "),
        table.name,
        order_by.join(", ")
    );
    let mut rows = sqlx::query(&select).fetch(dst);
    let mut hasher = Sha256::new();
    let mut count = 0u64;
    let mut line = String::new();
    while let Some(row) = rows.try_next().await? {
        line.clear();
        postgres_line(&row, table, &mut line)?;
        hasher.update(line.as_bytes());
        count += 1;
    }
    Ok((count, hex(&hasher.finalize())))
}
