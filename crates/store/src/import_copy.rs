//! A run import's predictions on PostgreSQL: each chunk of the parser's batches in a short
//! transaction of its own (as on SQLite), its rows sent with `COPY predictions FROM STDIN`.
//!
//! Unlike SQLite's, these transactions take neither the writers' turn nor their advisory lock:
//! PostgreSQL lets them write beside every other writer. They write only rows no one else
//! reads or writes until the import's last transaction (which does take the lock) makes its
//! systems ready: the new systems and their predictions. So a submission never waits for a
//! chunk's `COPY` (the annotate benchmark while runs import: p50 21 ms, 48 to 50 ms with the
//! lock).
//!
//! As SQLite's import connection turns its foreign-key checks off, this one skips PostgreSQL's
//! (`session_replication_role = replica`), for the same reason: every key the import writes was
//! checked or created by the import itself (see `import::bulk_connection`). The checks are
//! row-level triggers, four fifths of the time `COPY` takes. PostgreSQL lets a superuser skip
//! them, or a role granted `SET ON PARAMETER session_replication_role` (15 and later); any other
//! role keeps the checks, slower and just as correct. The setting is this connection's alone;
//! the table has no trigger of its own that it would skip.

use super::copy_text::{push_integer, push_real, push_text};
use super::import::{
    chunk_from, offloaded, Offload, PredictionRow, SystemSpec, Written, COPY_CHUNK_BATCHES,
};
use super::import_writer::OtherWriters;
use super::write_gate;
use super::{is_unique_violation, now_ms, Db, StoreError, StoreResult};
use sqlx::{Connection, PgConnection};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// While other writers are at work (one began a transaction within this window, in this
/// process or, through the sequence `writers_began`, in any other: [`OtherWriters`]), the
/// import pauses after each chunk for `GIVE_WAY_FACTOR` times as long as the chunk took: it
/// then writes in a tenth of the time, and the disk's write-back of its rows stays small
/// enough that the submissions' commits seldom queue behind it. With nobody else writing it
/// never pauses.
///
/// Measured with the annotate benchmark on PostgreSQL, two servers, 50 annotators and runs of
/// 200,000 lines imported from the shell (2026-12-04, 2 cores): with 4-batch chunks and a
/// factor of 3, the submissions' COMMITs took up to 295 ms (PostgreSQL's log), waiting on the
/// disk's write-back of the import's log and pages, and submit → next p99 was 180-227 ms;
/// with 1-batch chunks and a factor of 9, p99 26-29 ms, the import still writing 54,000-61,000
/// lines a second.
const GIVE_WAY_WINDOW: Duration = Duration::from_secs(1);

/// While other writers are at work, a chunk is this many of the parser's batches (4,096 rows),
/// not [`COPY_CHUNK_BATCHES`]: each burst of the import's log and table writes is shorter, and
/// so is the queue at the disk that the submissions' commits join.
const CONTENDED_COPY_BATCHES: usize = 1;

/// How many times a chunk's own time the import pauses while others write.
const GIVE_WAY_FACTOR: u32 = 9;

/// Bytes of COPY text sent at a time.
const SEND_BYTES: usize = 1 << 20;

/// Writes the parser's batches until the parser is done; see the SQLite writer in
/// `import::write_predictions`.
pub(super) async fn write_predictions(
    db: &Db,
    rx: &mut mpsc::Receiver<Vec<PredictionRow>>,
    project_id: i64,
    spec: &SystemSpec,
    import_id: i64,
    offload: &dyn Offload,
) -> StoreResult<Written> {
    let url = db.connect_options().database_url.clone();
    let mut conn = PgConnection::connect(url.as_str()).await?;
    skip_key_checks(&mut conn).await;
    let mut written = Written::default();
    let mut others = OtherWriters::default();
    let now = now_ms();
    // Whether other writers were at work at the last chunk's end.
    let mut contended = false;
    while let Some(first) = rx.recv().await {
        let batches = if contended {
            CONTENDED_COPY_BATCHES
        } else {
            COPY_CHUNK_BATCHES
        };
        let chunk = chunk_from(first, rx, batches);
        let started = Instant::now();
        let mut tx = conn.begin().await?;
        for row in chunk.iter().flatten() {
            if let Some(name) = &row.new_system {
                let key = create_system(&mut tx, project_id, name, spec, import_id, now).await?;
                written.system_keys.insert(row.system, key);
                written.created.push((row.system, name.clone()));
            }
        }
        // Formatted off the runtime's threads, where the import command says (at the parser's
        // lower priority).
        let keys = written.system_keys.clone();
        let text = offloaded(offload, "COPY text formatter", move || {
            copy_text(&chunk, &keys)
        })
        .await??;
        let mut sink = tx
            .copy_in_raw(
                "COPY predictions (system_id, claim_id, doc_id, label, p_support, p_contradict, \
                 p_nei, confidence, retrieval_rank, sentences) FROM STDIN",
            )
            .await?;
        for piece in text.as_bytes().chunks(SEND_BYTES) {
            sink.send(piece).await?;
        }
        written.rows += sink.finish().await?;
        tx.commit().await?;
        let elsewhere = others.began_within(&mut conn, GIVE_WAY_WINDOW).await?;
        contended = elsewhere || write_gate::writers_began_within(GIVE_WAY_WINDOW);
        if contended {
            tokio::time::sleep(started.elapsed() * GIVE_WAY_FACTOR).await;
        }
    }
    conn.close().await?;
    Ok(written)
}

/// Turns the connection's row-level foreign-key checks off if the role may; says once per
/// process when it may not.
async fn skip_key_checks(conn: &mut PgConnection) {
    static SAID: std::sync::Once = std::sync::Once::new();
    if let Err(e) = sqlx::query("SET session_replication_role = replica")
        .execute(&mut *conn)
        .await
    {
        SAID.call_once(|| {
            tracing::info!(
                error = %e,
                "run imports check every prediction's foreign keys: grant the database role \
                 SET ON PARAMETER session_replication_role to import several times faster"
            );
        });
    }
}

/// A chunk's predictions as COPY text, each under its system's database key.
fn copy_text(chunk: &[Vec<PredictionRow>], keys: &HashMap<usize, i64>) -> StoreResult<String> {
    let mut text = String::with_capacity(chunk.iter().map(Vec::len).sum::<usize>() * 96);
    for row in chunk.iter().flatten() {
        let system = keys.get(&row.system).copied().ok_or_else(|| {
            StoreError::Fault("a prediction came before its system's first row".into())
        })?;
        prediction_line(&mut text, system, row);
    }
    Ok(text)
}

/// A prediction as a COPY line, in the column order of the COPY above.
fn prediction_line(text: &mut String, system: i64, r: &PredictionRow) {
    let optional_real = |text: &mut String, value: Option<f64>| match value {
        Some(v) => push_real(text, v),
        None => text.push_str("\\N"),
    };
    push_integer(text, system);
    text.push('\t');
    push_integer(text, r.claim);
    text.push('\t');
    push_integer(text, r.doc);
    text.push('\t');
    match r.label {
        Some(label) => push_text(text, label.as_str()),
        None => text.push_str("\\N"),
    }
    for value in [r.p_support, r.p_contradict, r.p_nei] {
        text.push('\t');
        optional_real(text, value);
    }
    text.push('\t');
    push_real(text, r.confidence);
    text.push('\t');
    match r.rank {
        Some(rank) => push_integer(text, i64::from(rank)),
        None => text.push_str("\\N"),
    }
    text.push('\t');
    match &r.sentences {
        Some(s) => push_text(text, s),
        None => text.push_str("\\N"),
    }
    text.push('\n');
}

/// Creates a system of a run import (not ready until the import ends); its key.
async fn create_system(
    conn: &mut PgConnection,
    project_id: i64,
    name: &str,
    spec: &SystemSpec,
    import_id: i64,
    now: i64,
) -> StoreResult<i64> {
    sqlx::query_scalar(
        "INSERT INTO systems (project_id, name, description, role, negative_sampling_ratio, \
         scoring, import_id, created_at, ready) \
         VALUES ($1, $2, $3, $4, $5, 'order', $6, $7, 0) RETURNING id",
    )
    .bind(project_id)
    .bind(name)
    .bind(&spec.description)
    .bind(spec.role.as_str())
    .bind(spec.negative_sampling_ratio)
    .bind(import_id)
    .bind(now)
    .fetch_one(&mut *conn)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            StoreError::conflict(
                crate::Constraint::SystemName,
                format!("the project has a system named {name:?} already"),
            )
        } else {
            e.into()
        }
    })
}
