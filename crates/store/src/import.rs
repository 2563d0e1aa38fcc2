//! What an import stores: the record of an imported file, and the rows of corpora, claims and
//! system runs, written in short transactions so that no import holds SQLite's write lock for
//! long. Reading, hashing and parsing the file is the import command's (`commands::import`);
//! the store takes the rows it parsed.
//!
//! - a corpus's documents and a claims file's claims come in chunks ([`write_documents`],
//!   [`write_claims`]), hidden until the import's last transaction ([`complete`]);
//! - a run (millions of predictions) is written by a [`RunWriter`] in chunks of a few tens of
//!   milliseconds each, invisible until its last transaction (see [`super::import_writer`]), on
//!   a connection of its own with SQLite's foreign-key checks off ([`bulk_connection`]): every
//!   key it writes was checked or created by the import, and nothing deletes documents, claims
//!   or another import's systems, so the checks (a third of SQLite's time per prediction) could
//!   never fail. Its predictions go in through SQLite's C API ([`insert_rows`]). On PostgreSQL
//!   they go in with `COPY` on a connection that skips the per-row checks likewise, where the
//!   database role may ([`super::import_copy`]).
//!
//! The same file (by the SHA-256 the command gives) is refused the second time.

use super::audit::AuditEvent;
use super::db::{engine, Engine};
use super::id_keys::IdKeys;
use super::import_writer::{self, WriterLock};
use super::raw_rows::{with_connection, Access, RawConnection, RowBinder};
use super::snapshot::read_snapshot;
use super::write_gate::{self, Gate};
use super::{is_unique_violation, now_ms, Db, StoreError, StoreResult};
use domain::formats::Scoring;
use domain::label::Label;
use domain::pool::Role;
use serde::{Deserialize, Serialize};
use sqlx::{AnyConnection, Connection, Executor};
use std::collections::{HashMap, HashSet};
use tokio::sync::mpsc;

/// Rows per multi-row INSERT (SQLite allows 32,766 bound values per statement).
pub const BATCH: usize = 1_000;
/// Predictions per batch a run's parser hands to the writer, which inserts each batch through
/// [`insert_rows`] (whose statements are prepared once per batch).
pub const RUN_BATCH: usize = 4_096;
/// While people write (a writer waited on the board within [`CONTENDED_FOR`]), at most this many
/// predictions go into one write transaction of a run import on SQLite: about 1 ms of SQLite's
/// write lock, which a submission arriving meanwhile waits for. With 8,192 rows (about 10 ms) a
/// lead's 1M-line import from the shell made submissions wait p50 14-18 ms, p99 44-84 ms
/// (issue 35, R1).
const TX_ROWS: usize = 1_024;
/// Otherwise up to this many batches of [`RUN_BATCH`] go into one transaction (8,192 rows):
/// fewer, larger commits write each index page to the WAL fewer times.
const CHUNK_BATCHES: usize = 2;
/// How long after a writer last waited the import keeps to [`TX_ROWS`].
const CONTENDED_FOR: std::time::Duration = std::time::Duration::from_secs(5);
/// The same for PostgreSQL's `COPY` chunks (16,384 rows) while nobody else writes. They take no
/// writers' lock; while others write they are a quarter of this (`import_copy`), since a
/// submission's commit queues at the disk behind the chunk's log and page writes.
pub(super) const COPY_CHUNK_BATCHES: usize = 4;

/// What an import wrote.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ImportReport {
    pub import_id: i64,
    pub file: String,
    pub format: String,
    /// Documents, claims, or predictions written.
    pub rows: u64,
    /// Systems created by a run import.
    pub systems: Vec<String>,
    /// Citation judgments written by a claims import.
    pub judgments: u64,
    /// Pairs skipped because their document is not in the corpus (`allow_missing_docs`).
    pub missing_docs: u64,
}

/// The system a run file creates.
#[derive(Clone, Debug)]
pub struct SystemSpec {
    /// The name; None when the file names its systems (parquet `model`, canonical `system`).
    pub name: Option<String>,
    pub role: Role,
    pub description: String,
    pub negative_sampling_ratio: Option<f64>,
}

/// Runs CPU-heavy work of a bulk write off the async runtime (a run import's `COPY` text on
/// PostgreSQL), where the caller says: the import command runs it on its lower-priority
/// threads. The store starts no thread of its own for it.
pub trait Offload: Send + Sync {
    /// Starts `work`, named `name` for the logs; an error if it could not be started.
    fn offload(&self, name: &'static str, work: Box<dyn FnOnce() + Send>) -> StoreResult<()>;
}

/// The result of `work` run through `offload`.
pub(crate) async fn offloaded<R: Send + 'static>(
    offload: &dyn Offload,
    name: &'static str,
    work: impl FnOnce() -> R + Send + 'static,
) -> StoreResult<R> {
    let (send, result) = tokio::sync::oneshot::channel();
    offload.offload(
        name,
        Box::new(move || {
            // The receiver is gone only when the writer stopped waiting.
            let _ = send.send(work());
        }),
    )?;
    result
        .await
        .map_err(|_| StoreError::Fault(format!("the {name} stopped before it was done")))
}

/// Refuses a file (by SHA-256) the project has imported, or is importing, as this kind. Imports
/// call it before parsing, for a quick answer; [`begin_import`] again in the write transaction.
pub async fn refuse_repeat<'c>(
    conn: impl sqlx::Executor<'c, Database = sqlx::Any>,
    project_id: i64,
    kind: &str,
    file: &str,
    sha: &str,
) -> StoreResult<()> {
    let earlier: Option<(i64, String, String)> = sqlx::query_as(
        "SELECT id, file_name, state FROM imports WHERE project_id = $1 AND kind = $2 AND sha256 = $3",
    )
    .bind(project_id)
    .bind(kind)
    .bind(sha)
    .fetch_optional(conn)
    .await?;
    match earlier {
        None => Ok(()),
        Some((id, name, state)) => {
            let when = if state == "writing" {
                "is being imported into the project"
            } else {
                "was imported into the project already"
            };
            Err(StoreError::conflict(
                crate::Constraint::ImportedFile,
                format!("{file}: this file {when} (import #{id}, {name}); nothing was imported"),
            ))
        }
    }
}

/// An import about to be recorded by [`begin_import`].
pub struct NewImport<'a> {
    pub project_id: i64,
    /// `corpus`, `claims`, `run` or `judgments`.
    pub kind: &'a str,
    /// The file's name as messages show it.
    pub file: &'a str,
    /// What the file is refused again by: its SHA-256 (a judgments import adds whose and which
    /// stage).
    pub sha: &'a str,
    pub format: &'a str,
    pub actor_id: Option<i64>,
    /// The writer's lock token of a chunked import ([`super::import_writer::WriterLock`]).
    pub lock_token: Option<&'a str>,
}

/// Records the import of a file with SHA-256 `sha` (refusing a file imported already, or being
/// imported) inside the transaction. With a writer's lock token the import is `writing` (see
/// [`super::import_writer`]); without, it is done when the transaction commits.
pub async fn begin_import(conn: &mut AnyConnection, import: NewImport<'_>) -> StoreResult<i64> {
    let NewImport {
        project_id,
        kind,
        file,
        sha,
        format,
        actor_id,
        lock_token,
    } = import;
    refuse_repeat(&mut *conn, project_id, kind, file, sha).await?;
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO imports (project_id, kind, file_name, sha256, format, rows, imported_by, imported_at, state, lock_token)
         VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8, $9) RETURNING id",
    )
    .bind(project_id)
    .bind(kind)
    .bind(file)
    .bind(sha)
    .bind(format)
    .bind(actor_id)
    .bind(now_ms())
    .bind(if lock_token.is_some() { "writing" } else { "done" })
    .bind(lock_token)
    .fetch_one(&mut *conn)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            StoreError::conflict(
                crate::Constraint::ImportedFile,
                format!("{file}: this file is being imported into the project; nothing was imported"),
            )
        } else {
            e.into()
        }
    })?;
    Ok(id)
}

pub async fn finish_import(
    conn: &mut AnyConnection,
    project_id: i64,
    import_id: i64,
    actor_id: Option<i64>,
    report: &ImportReport,
) -> StoreResult<()> {
    let (kind, file): (String, String) = sqlx::query_as(
        "UPDATE imports SET rows = $1, state = 'done', lock_token = NULL WHERE id = $2 \
         RETURNING kind, file_name",
    )
    .bind(i64::try_from(report.rows).unwrap_or(i64::MAX))
    .bind(import_id)
    .fetch_one(&mut *conn)
    .await?;
    // Every import ends here, the shell's and the jobs' alike.
    let data = serde_json::json!({
        "import": import_id,
        "kind": kind,
        "file": file,
        "report": report,
    });
    super::webhooks::enqueue(
        conn,
        project_id,
        domain::webhooks::Event::ImportFinished,
        data,
    )
    .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "import",
        entity: "import",
        entity_id: Some(import_id.to_string()),
        old_value: None,
        new_value: super::audit::json(report),
    }
    .record(conn)
    .await
}

async fn external_ids(db: &Db, sql: &str, project_id: i64) -> StoreResult<HashMap<String, i64>> {
    let rows: Vec<(String, i64)> = sqlx::query_as(sql).bind(project_id).fetch_all(db).await?;
    Ok(rows.into_iter().collect())
}

/// The project's documents' keys by external id.
pub async fn doc_ids(db: &Db, project_id: i64) -> StoreResult<HashMap<String, i64>> {
    external_ids(
        db,
        "SELECT doc_id, id FROM documents WHERE project_id = $1",
        project_id,
    )
    .await
}

/// The project's claims' keys by external id.
pub async fn claim_ids(db: &Db, project_id: i64) -> StoreResult<HashMap<String, i64>> {
    external_ids(
        db,
        "SELECT claim_id, id FROM claims WHERE project_id = $1",
        project_id,
    )
    .await
}

/// A document a corpus import writes.
#[derive(Serialize, Deserialize)]
pub struct DocRow {
    pub doc_id: String,
    pub title: String,
    /// The sentences as a JSON array.
    pub sentences: String,
    /// The file's other fields as a JSON object.
    pub extra: Option<String>,
}

/// The last transaction of a corpus or claims import: it appears whole.
pub async fn complete(
    db: &Db,
    project_id: i64,
    import_id: i64,
    actor_id: Option<i64>,
    report: &ImportReport,
) -> StoreResult<()> {
    let mut tx = write_gate::begin(db).await?;
    finish_import(&mut tx, project_id, import_id, actor_id, report).await?;
    tx.commit().await?;
    Ok(())
}

/// Batches of [`BATCH`] documents per write transaction of a corpus import (2,000 abstracts, a
/// few megabytes: tens of milliseconds of SQLite's write lock).
pub const CORPUS_CHUNK_BATCHES: usize = 2;

/// Writes one chunk of a corpus import's documents (up to [`CORPUS_CHUNK_BATCHES`] batches of
/// [`BATCH`]) in a short transaction of its own, in its turn; they stay hidden (the view
/// `documents`) while the import is `writing`.
pub async fn write_documents(
    db: &Db,
    chunk: Vec<Vec<DocRow>>,
    project_id: i64,
    import_id: i64,
) -> StoreResult<()> {
    {
        let mut tx = write_gate::begin(db).await?;
        for batch in chunk {
            let rows = super::values::ValuesInsert::new(
                super::db::engine_of(&tx),
                "INSERT INTO document_rows (project_id, doc_id, title, sentences, extra, import_id) ",
                batch,
                |b, d| {
                    b.bind(project_id)
                        .bind(d.doc_id)
                        .bind(d.title)
                        .bind(d.sentences)
                        .bind(d.extra)
                        .bind(import_id);
                },
            );
            if let Some((sql, args)) = rows.finish()? {
                sqlx::query_with(&sql, args).execute(&mut *tx).await?;
            }
        }
        tx.commit().await?;
    }
    Ok(())
}

/// A claim ready to insert: its evidence resolved to document keys.
#[derive(Serialize, Deserialize)]
pub struct ClaimRow {
    pub claim_id: String,
    pub text: String,
    /// The cited documents' ids as a JSON array.
    pub cited: Option<String>,
    /// (document key, label, rationale sets as JSON, provenance)
    pub judged: Vec<(i64, Label, String, String)>,
}

/// Ends a chunked import: on failure its rows are removed (or, if that fails too, left to the
/// next import or `serve` to reclaim); the writer lock is released either way.
pub async fn finish_chunked<T, E>(db: &Db, chunked: Chunked, result: Result<T, E>) -> Result<T, E> {
    let Chunked {
        lock, import_id, ..
    } = chunked;
    if result.is_err() {
        if let Err(e) = import_writer::discard_on(db, import_id).await {
            // The lock is released below: the next import or `serve` removes the rows.
            tracing::warn!(import_id, error = %e, "could not remove a failed import's rows");
        }
    }
    lock.release();
    result
}

/// A chunked import being written: its writer's lock and its `imports` row.
pub struct Chunked {
    lock: WriterLock,
    import_id: i64,
    /// When the import began (ms): the time its rows are stamped with, whatever their chunk.
    began_at: i64,
}

impl Chunked {
    /// The import's id.
    pub fn import_id(&self) -> i64 {
        self.import_id
    }
}

/// Starts a chunked import: takes a writer lock and records the import as `writing` under its
/// token (`import.lock_token` is set here), in a short transaction of its own.
pub async fn begin_chunked(db: &Db, import: NewImport<'_>) -> StoreResult<Chunked> {
    let lock = WriterLock::take(db).await?;
    let mut tx = write_gate::begin(db).await?;
    let id = begin_import(
        &mut tx,
        NewImport {
            lock_token: Some(lock.token()),
            ..import
        },
    )
    .await?;
    tx.commit().await?;
    Ok(Chunked {
        lock,
        import_id: id,
        began_at: now_ms(),
    })
}

/// Claims per write transaction of a claims import (with their evidence: a few thousand rows).
pub const CLAIMS_CHUNK: usize = 1_000;

/// Writes one chunk of a claims import's claims (up to [`CLAIMS_CHUNK`]), with their evidence
/// as final judgments, in a short transaction of its own, in its turn; hidden (the views
/// `claims`, `judgments`, `final_labels`) while the import is `writing`. Returns the claims and
/// judgments written. Every chunk's judgments are stamped with the time the import began.
pub async fn write_claims(
    db: &Db,
    batch: Vec<ClaimRow>,
    project_id: i64,
    chunked: &Chunked,
) -> StoreResult<(u64, u64)> {
    let (mut rows, mut judgments) = (0u64, 0u64);
    let (import_id, now) = (chunked.import_id, chunked.began_at);
    {
        let mut tx = write_gate::begin(db).await?;
        for claim in batch {
            let key = sqlx::query_scalar::<_, i64>("INSERT INTO claim_rows (project_id, claim_id, text, cited_doc_ids, import_id) VALUES ($1, $2, $3, $4, $5) RETURNING id")
                .bind(project_id)
                .bind(&claim.claim_id)
                .bind(&claim.text)
                .bind(&claim.cited)
                .bind(import_id)
                .fetch_one(&mut *tx)
                .await?;
            rows += 1;
            for (doc, label, sets, provenance) in claim.judged {
                let judgment = sqlx::query_scalar::<_, i64>(
                    "INSERT INTO judgment_rows (project_id, claim_id, doc_id, stage, label, rationale, provenance, import_id, created_at)
                     VALUES ($1, $2, $3, 'final', $4, $5, $6, $7, $8) RETURNING id",
                )
                .bind(project_id)
                .bind(key)
                .bind(doc)
                .bind(label.as_str())
                .bind(&sets)
                .bind(&provenance)
                .bind(import_id)
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
                sqlx::query(
                    "INSERT INTO final_label_rows (project_id, claim_id, doc_id, judgment_id, label, provenance, decided_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(project_id)
                .bind(key)
                .bind(doc)
                .bind(judgment)
                .bind(label.as_str())
                .bind(provenance)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                judgments += 1;
            }
        }
        tx.commit().await?;
    }
    Ok((rows, judgments))
}

/// A prediction a run import writes: its claim and document resolved to keys.
pub struct PredictionRow {
    /// The parser's index of its system, in the order the file names them.
    pub system: usize,
    /// On the first row of each system, in the order the file names them: the system's name.
    pub new_system: Option<String>,
    pub claim: i64,
    pub doc: i64,
    pub label: Option<Label>,
    pub p_support: Option<f64>,
    pub p_contradict: Option<f64>,
    pub p_nei: Option<f64>,
    pub confidence: f64,
    pub rank: Option<u32>,
    /// The rationale sentences as a JSON array.
    pub sentences: Option<String>,
}

/// The project's keys a run import resolves its ids against, and the names it may not take.
pub struct RunKeys {
    pub docs: ProjectKeys,
    pub claims: ProjectKeys,
    /// The project's systems, those being imported included: two imports of one name cannot
    /// both succeed.
    pub systems: HashSet<String>,
}

/// The database keys of a project's claims or documents, by external id: one lookup per
/// prediction, millions per file.
#[derive(Debug, Default)]
pub struct ProjectKeys(IdKeys);

impl ProjectKeys {
    /// The key of `id`, if the project has it.
    pub fn get(&self, id: &str) -> Option<i64> {
        self.0.get(id)
    }
}

/// A run import's writer: its writer lock, and a connection of its own ([`bulk_connection`]).
/// [`RunWriter::close`] ends it, removing what it wrote unless it was completed.
pub struct RunWriter {
    conn: AnyConnection,
    lock: WriterLock,
    gate: Gate,
    project_id: i64,
    actor_id: Option<i64>,
    import_id: Option<i64>,
    completed: bool,
}

impl RunWriter {
    /// Opens the writer of a run import into the project (which must exist, as must the actor
    /// if any), and reads the keys its rows resolve against. The keys are read without the
    /// write lock: documents, claims and systems are never deleted (a system only by the failed
    /// import that wrote it), so they hold until the end.
    pub async fn open(
        db: &Db,
        project_id: i64,
        actor_id: Option<i64>,
    ) -> StoreResult<(RunWriter, RunKeys)> {
        let lock = WriterLock::take(db).await?;
        let mut conn = bulk_connection(db).await?;
        let keys = async {
            check_writer(&mut conn, project_id, actor_id).await?;
            let (docs, claims) = read_snapshot(db, move |c| {
                Ok((
                    IdKeys::read(
                        c,
                        "SELECT doc_id, id FROM documents WHERE project_id = $1",
                        project_id,
                    )?,
                    IdKeys::read(
                        c,
                        "SELECT claim_id, id FROM claims WHERE project_id = $1",
                        project_id,
                    )?,
                ))
            })
            .await?;
            let systems: HashSet<String> =
                sqlx::query_scalar::<_, String>("SELECT name FROM systems WHERE project_id = $1")
                    .bind(project_id)
                    .fetch_all(&mut conn)
                    .await?
                    .into_iter()
                    .collect();
            Ok::<_, StoreError>(RunKeys {
                docs: ProjectKeys(docs),
                claims: ProjectKeys(claims),
                systems,
            })
        }
        .await;
        let writer = RunWriter {
            conn,
            lock,
            gate: Gate::of(db),
            project_id,
            actor_id,
            import_id: None,
            completed: false,
        };
        match keys {
            Ok(keys) => Ok((writer, keys)),
            Err(e) => {
                // Best effort: the error the caller sees is the first one.
                let _ = writer.close().await;
                Err(e)
            }
        }
    }

    /// Records the import (`writing`, under the writer's lock); its id.
    pub async fn begin(&mut self, file: &str, sha: &str, format: &str) -> StoreResult<i64> {
        let _turn = self.gate.turn().await;
        let mut tx = write_gate::begin_on(&mut self.conn).await?;
        let id = begin_import(
            &mut tx,
            NewImport {
                project_id: self.project_id,
                kind: "run",
                file,
                sha,
                format,
                actor_id: self.actor_id,
                lock_token: Some(self.lock.token()),
            },
        )
        .await?;
        tx.commit().await?;
        self.import_id = Some(id);
        Ok(id)
    }

    fn import_id(&self) -> StoreResult<i64> {
        self.import_id
            .ok_or_else(|| StoreError::Fault("a run import wrote before it began".into()))
    }

    /// Writes the parser's batches of predictions until the parser is done (its channel
    /// closes), in chunks of short transactions; the systems are created with their first rows
    /// (not ready until [`RunWriter::complete`]).
    pub async fn write(
        &mut self,
        db: &Db,
        mut rx: mpsc::Receiver<Vec<PredictionRow>>,
        spec: &SystemSpec,
        offload: &dyn Offload,
    ) -> StoreResult<Written> {
        let import_id = self.import_id()?;
        let project_id = self.project_id;
        match engine(db) {
            Engine::Sqlite => {
                let (spec, turns) = (spec.clone(), self.gate.clone());
                with_connection(db, Access::Write, move |raw| {
                    write_predictions(raw, &mut rx, &turns, project_id, &spec, import_id)
                })
                .await
            }
            Engine::Postgres => {
                super::import_copy::write_predictions(
                    db, &mut rx, project_id, spec, import_id, offload,
                )
                .await
            }
        }
    }

    /// The last transaction: the systems become ready, each with how it scores, and the import
    /// done, at once.
    pub async fn complete(
        &mut self,
        systems: &[(i64, Scoring)],
        report: &ImportReport,
    ) -> StoreResult<()> {
        let import_id = self.import_id()?;
        let _turn = self.gate.turn().await;
        let mut tx = write_gate::begin_on(&mut self.conn).await?;
        for (key, scoring) in systems {
            let scoring = match scoring {
                Scoring::Scores => "scores",
                _ => "order",
            };
            sqlx::query("UPDATE systems SET scoring = $1, ready = 1 WHERE id = $2")
                .bind(scoring)
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        finish_import(&mut tx, self.project_id, import_id, self.actor_id, report).await?;
        tx.commit().await?;
        self.completed = true;
        Ok(())
    }

    /// Ends the writer: an import begun and not completed has its rows removed (or, if that
    /// fails too, left to the next import or `serve` to reclaim); the lock is released and the
    /// connection closed either way.
    pub async fn close(mut self) -> StoreResult<()> {
        if let (false, Some(import_id)) = (self.completed, self.import_id) {
            if let Err(e) = import_writer::discard(&mut self.conn, import_id).await {
                // The lock is released below: the next import or `serve` removes the rows.
                tracing::warn!(import_id, error = %e, "could not remove a failed import's rows");
            }
        }
        self.lock.release();
        self.conn.close().await?;
        Ok(())
    }
}

/// Removes what crashed imports left, so that they no longer stand in the way (every import
/// calls it before it starts, and `serve` at start).
pub async fn reclaim_abandoned(db: &Db) -> StoreResult<usize> {
    import_writer::reclaim_abandoned(db).await
}

/// A connection of its own for a run import, with foreign-key checks off; closed after the
/// import, never shared (the pool's connections keep the checks).
///
/// The import writes only keys it checked or made: the project and the actor (checked by
/// [`check_writer`]), the documents and claims it resolves ids against (never deleted), the
/// import row and the systems it inserts (deleted only by [`import_writer::discard`] of this
/// very import). The checks SQLite would make for each prediction row (its system, claim and
/// document) therefore always pass.
async fn bulk_connection(db: &Db) -> StoreResult<AnyConnection> {
    let mut conn = AnyConnection::connect_with(&db.connect_options()).await?;
    if engine(db) == Engine::Sqlite {
        conn.execute("PRAGMA foreign_keys = OFF; PRAGMA busy_timeout = 10000;")
            .await?;
    }
    Ok(conn)
}

/// Before a bulk import writes: the project exists, and so does the actor if any (what the
/// foreign keys of `imports` would have checked; neither is ever deleted).
async fn check_writer(
    conn: &mut AnyConnection,
    project_id: i64,
    actor_id: Option<i64>,
) -> StoreResult<()> {
    let project: Option<i64> = sqlx::query_scalar("SELECT id FROM projects WHERE id = $1")
        .bind(project_id)
        .fetch_optional(&mut *conn)
        .await?;
    if project.is_none() {
        return Err(StoreError::NotFound(format!("project #{project_id}")));
    }
    if let Some(actor) = actor_id {
        let user: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE id = $1")
            .bind(actor)
            .fetch_optional(&mut *conn)
            .await?;
        if user.is_none() {
            return Err(StoreError::NotFound(format!("user #{actor}")));
        }
    }
    Ok(())
}

/// What [`write_predictions`] wrote.
#[derive(Default)]
pub struct Written {
    /// Database keys of the systems, by the parser's index.
    pub system_keys: HashMap<usize, i64>,
    /// The systems created, by parser index and name, in the order the file names them.
    pub created: Vec<(usize, String)>,
    pub rows: u64,
}

/// Writes the parser's batches of predictions on `raw` (the import's own connection, on a
/// blocking thread) until the parser is done: each chunk (what the parser has ready, up to
/// [`CHUNK_BATCHES`] batches; [`TX_ROWS`] rows while people write) in a short transaction of its
/// own, so no transaction ever waits for the parser and other writers wait about a millisecond.
fn write_predictions(
    raw: &RawConnection,
    rx: &mut mpsc::Receiver<Vec<PredictionRow>>,
    gate: &Gate,
    project_id: i64,
    spec: &SystemSpec,
    import_id: i64,
) -> StoreResult<Written> {
    let mut written = Written::default();
    let now = now_ms();
    let mut write = |batches: &[&[PredictionRow]]| -> StoreResult<()> {
        let _turn = gate.blocking_turn();
        raw.write_transaction(|raw| {
            for rows in batches {
                for row in *rows {
                    if let Some(name) = &row.new_system {
                        let key = create_system(raw, project_id, name, spec, import_id, now)?;
                        written.system_keys.insert(row.system, key);
                        written.created.push((row.system, name.clone()));
                    }
                }
                written.rows += rows.len() as u64;
                let keys = &written.system_keys;
                raw.insert_rows(
                    "INSERT INTO predictions (system_id, claim_id, doc_id, label, p_support, p_contradict, p_nei, confidence, retrieval_rank, sentences)",
                    10,
                    rows,
                    |r, b| bind_prediction(r, keys.get(&r.system).copied(), b),
                )?;
            }
            Ok(())
        })
    };
    while let Some(first) = rx.blocking_recv() {
        if gate.gave_way_within(CONTENDED_FOR) {
            for rows in first.chunks(TX_ROWS) {
                write(&[rows])?;
            }
        } else {
            let chunk = chunk_from(first, rx, CHUNK_BATCHES);
            let batches: Vec<&[PredictionRow]> = chunk.iter().map(Vec::as_slice).collect();
            write(&batches)?;
        }
    }
    Ok(written)
}

/// A chunk: `first` and what else the parser has ready, up to `max_batches` batches.
pub(super) fn chunk_from<T>(
    first: Vec<T>,
    rx: &mut mpsc::Receiver<Vec<T>>,
    max_batches: usize,
) -> Vec<Vec<T>> {
    let mut chunk = vec![first];
    while chunk.len() < max_batches {
        match rx.try_recv() {
            Ok(batch) => chunk.push(batch),
            Err(_) => break,
        }
    }
    chunk
}

/// Binds a prediction's values in the column order of [`write_predictions`]'s INSERT.
fn bind_prediction(r: &PredictionRow, system: Option<i64>, b: &mut RowBinder<'_>) {
    b.integer(system)
        .integer(Some(r.claim))
        .integer(Some(r.doc))
        .text(r.label.map(Label::as_str))
        .real(r.p_support)
        .real(r.p_contradict)
        .real(r.p_nei)
        .real(Some(r.confidence))
        .integer(r.rank.map(i64::from))
        .text(r.sentences.as_deref());
}

/// Creates a system of a run import (not ready until the import ends); its key.
fn create_system(
    raw: &RawConnection,
    project_id: i64,
    name: &str,
    spec: &SystemSpec,
    import_id: i64,
    now: i64,
) -> StoreResult<i64> {
    raw.insert_rows(
        "INSERT INTO systems (project_id, name, description, role, negative_sampling_ratio, scoring, import_id, created_at, ready)",
        9,
        &[()],
        |(), b| {
            b.integer(Some(project_id))
                .text(Some(name))
                .text(Some(&spec.description))
                .text(Some(spec.role.as_str()))
                .real(spec.negative_sampling_ratio)
                .text(Some("order"))
                .integer(Some(import_id))
                .integer(Some(now))
                .integer(Some(0));
        },
    )
    .map_err(|e| match e {
        StoreError::Conflict { .. } => StoreError::conflict(
            crate::Constraint::SystemName,
            format!("the project has a system named {name:?} already"),
        ),
        other => other,
    })?;
    Ok(raw.last_insert_rowid())
}
