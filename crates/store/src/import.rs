//! Imports of corpora, claims and system runs.
//!
//! Each file is parsed on a blocking thread (streaming, bounded memory) that resolves ids and
//! checks every line. A bad line rejects the whole file: the errors (each naming file, line and
//! field, up to [`MAX_ERRORS`]) are returned and nothing is written. The same file (by SHA-256)
//! is refused the second time. No import holds SQLite's write lock while it reads its file:
//!
//! - a corpus or claims file is parsed into a staging file first ([`super::staged`]), then
//!   written in one transaction (multi-row INSERTs);
//! - a run (millions of predictions) is written in chunks of a few tens of milliseconds each,
//!   invisible until its last transaction (see [`super::import_writer`]), on a connection of its
//!   own with SQLite's foreign-key checks off ([`bulk_connection`]): every key it writes was
//!   checked or created by the import, and nothing deletes documents, claims or another
//!   import's systems, so the checks (a third of SQLite's time per prediction) could never
//!   fail. Its predictions go in through SQLite's C API ([`insert_rows`]). On PostgreSQL they
//!   go in with `COPY` on a connection that skips the per-row checks likewise, where the
//!   database role may ([`super::import_copy`]).

use super::audit::AuditEvent;
use super::background::{self, Background};
use super::db::{engine, Engine};
use super::id_keys::IdKeys;
use super::import_writer::{self, WriterLock};
use super::raw_rows::{with_connection, Access, RawConnection, RowBinder};
use super::snapshot::read_snapshot;
use super::staged::stage;
use super::write_gate::{self, Gate};
use super::{is_unique_violation, now_ms, Db, StoreError, StoreResult};
use domain::formats::{
    ClaimsReader, CorpusFormat, CorpusReader, EvidenceProvenance, FormatError, Located, ParseError,
    RunFormat, RunReadOptions, RunReader, Scoring, ScoringTally,
};
use domain::ids::{ClaimId, DocId};
use domain::label::Label;
use domain::pool::Role;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::{AnyConnection, Connection, Executor};
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::mpsc;

/// At most this many problems are listed for a rejected file.
pub const MAX_ERRORS: usize = 50;
/// Rows per multi-row INSERT (SQLite allows 32,766 bound values per statement).
const BATCH: usize = 1_000;
/// Predictions per batch a run's parser hands to the writer, which inserts each batch through
/// [`insert_rows`] (whose statements are prepared once per batch).
const RUN_BATCH: usize = 4_096;
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
/// The same for PostgreSQL's `COPY` chunks (16,384 rows). They take no writers' lock, so
/// their size does not make submissions wait; a smaller chunk would only add commits, each
/// flushed to disk.
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

/// Problems found in a file, for a rejection that names each.
#[derive(Default)]
pub(crate) struct Problems {
    file: String,
    list: Vec<String>,
    more: usize,
}

impl Problems {
    pub(crate) fn new(file: &str) -> Problems {
        Problems {
            file: file.to_owned(),
            ..Problems::default()
        }
    }

    fn push(&mut self, problem: String) {
        if self.list.len() < MAX_ERRORS {
            self.list.push(problem);
        } else {
            self.more += 1;
        }
    }

    pub(crate) fn at(&mut self, line: usize, field: Option<&str>, message: impl Into<String>) {
        self.push(ParseError::new(&self.file.clone(), line, field, message).to_string());
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The record of a parsed line, or None after noting the line's error.
    pub(crate) fn record<T>(&mut self, item: Result<Located<T>, ParseError>) -> Option<Located<T>> {
        item.map_err(|e| self.push(e.to_string())).ok()
    }

    pub(crate) fn into_error(self) -> StoreError {
        let total = self.list.len() + self.more;
        let mut text = format!(
            "{}: {total} problem{} found, nothing was imported:",
            self.file,
            if total == 1 { "" } else { "s" }
        );
        for p in &self.list {
            text.push_str("\n  ");
            text.push_str(p);
        }
        if self.more > 0 {
            text.push_str(&format!("\n  … and {} more", self.more));
        }
        StoreError::invalid(None, text)
    }
}

/// Ids a file brings: each must be new to the project and appear once in the file.
struct NewIds {
    existing: HashSet<String>,
    seen: HashMap<String, usize>,
    /// "document" or "claim", and the field that holds the id.
    what: &'static str,
    field: &'static str,
}

impl NewIds {
    fn new(existing: HashSet<String>, what: &'static str, field: &'static str) -> NewIds {
        NewIds {
            existing,
            seen: HashMap::new(),
            what,
            field,
        }
    }

    /// Whether `id` on `line` is new; if not, the problem is noted.
    fn admit(&mut self, id: &str, line: usize, problems: &mut Problems) -> bool {
        let (what, field) = (self.what, self.field);
        if self.existing.contains(id) {
            problems.at(
                line,
                Some(field),
                format!("{what} {id} is in the project already"),
            );
            return false;
        }
        if let Some(first) = self.seen.insert(id.to_owned(), line) {
            problems.at(
                line,
                Some(field),
                format!("{what} {id} appears twice (first on line {first})"),
            );
            return false;
        }
        true
    }
}

pub(crate) fn format_error(err: FormatError) -> StoreError {
    StoreError::invalid(None, err.to_string())
}

pub(crate) fn display_name(path: &Path) -> String {
    path.display().to_string()
}

/// SHA-256 of a file's bytes, streamed.
fn sha256_file(path: &Path) -> StoreResult<String> {
    let mut file = std::fs::File::open(path)
        .map_err(|e| StoreError::invalid(None, format!("cannot read {}: {e}", path.display())))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| {
            StoreError::invalid(None, format!("cannot read {}: {e}", path.display()))
        })?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> StoreResult<T> + Send + 'static,
) -> StoreResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::Fault(format!("the import stopped: {e}")))?
}

/// Refuses a file (by SHA-256) the project has imported, or is importing, as this kind. Imports
/// call it before parsing, for a quick answer; [`begin_import`] again in the write transaction.
pub(crate) async fn refuse_repeat<'c>(
    conn: impl sqlx::Executor<'c, Database = sqlx::Any>,
    project_id: i64,
    kind: &str,
    path: &Path,
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
                format!(
                    "{}: this file {when} (import #{id}, {name}); nothing was imported",
                    display_name(path)
                ),
            ))
        }
    }
}

/// An import about to be recorded by [`begin_import`].
pub(crate) struct NewImport<'a> {
    pub project_id: i64,
    /// `corpus`, `claims`, `run` or `judgments`.
    pub kind: &'a str,
    pub path: &'a Path,
    /// The file's SHA-256 ([`file_sha`]).
    pub sha: &'a str,
    pub format: &'a str,
    pub actor_id: Option<i64>,
    /// The writer's lock token of a chunked import ([`super::import_writer::WriterLock`]).
    pub lock_token: Option<&'a str>,
}

/// SHA-256 of an import's file, read on a blocking thread (before any transaction: hashing a
/// large file takes seconds).
pub(crate) async fn file_sha(path: &Path) -> StoreResult<String> {
    let owned = path.to_owned();
    blocking(move || sha256_file(&owned)).await
}

/// Records the import of a file with SHA-256 `sha` (refusing a file imported already, or being
/// imported) inside the transaction. With a writer's lock token the import is `writing` (see
/// [`super::import_writer`]); without, it is done when the transaction commits.
pub(crate) async fn begin_import(
    conn: &mut AnyConnection,
    import: NewImport<'_>,
) -> StoreResult<i64> {
    let NewImport {
        project_id,
        kind,
        path,
        sha,
        format,
        actor_id,
        lock_token,
    } = import;
    refuse_repeat(&mut *conn, project_id, kind, path, sha).await?;
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO imports (project_id, kind, file_name, sha256, format, rows, imported_by, imported_at, state, lock_token)
         VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8, $9) RETURNING id",
    )
    .bind(project_id)
    .bind(kind)
    .bind(display_name(path))
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
            StoreError::conflict(crate::Constraint::ImportedFile, format!(
                "{}: this file is being imported into the project; nothing was imported",
                display_name(path)
            ))
        } else {
            e.into()
        }
    })?;
    Ok(id)
}

pub(crate) async fn finish_import(
    conn: &mut AnyConnection,
    project_id: i64,
    import_id: i64,
    actor_id: Option<i64>,
    report: &ImportReport,
) -> StoreResult<()> {
    sqlx::query("UPDATE imports SET rows = $1, state = 'done', lock_token = NULL WHERE id = $2")
        .bind(i64::try_from(report.rows).unwrap_or(i64::MAX))
        .bind(import_id)
        .execute(&mut *conn)
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

/// A parser's batches of rows, and the problems it found once it is done.
type Parser<T> = (mpsc::Receiver<Vec<T>>, Background<Problems>);

/// Runs a parser on a thread of its own, at a lower CPU priority than requests (see
/// [`background`]), that sends batches of rows, and collects its problems.
fn spawn_parser<T: Send + 'static>(
    parse: impl FnOnce(&mpsc::Sender<Vec<T>>, &mut Problems) + Send + 'static,
    file: String,
) -> StoreResult<Parser<T>> {
    let (tx, rx) = mpsc::channel(4);
    let handle = background::spawn("import parser", move || {
        let mut problems = Problems::new(&file);
        parse(&tx, &mut problems);
        problems
    })?;
    Ok((rx, handle))
}

/// Sends a batch of `size` rows once full (unless problems were found: then rows are only
/// checked, not sent).
fn push_row<T>(
    batch: &mut Vec<T>,
    size: usize,
    row: T,
    tx: &mpsc::Sender<Vec<T>>,
    problems: &Problems,
) {
    if !problems.is_empty() {
        batch.clear();
        return;
    }
    batch.push(row);
    if batch.len() >= size {
        // A closed channel means the writer failed; its error is reported instead.
        let _ = tx.blocking_send(std::mem::take(batch));
    }
}

fn flush<T>(batch: Vec<T>, tx: &mpsc::Sender<Vec<T>>, problems: &Problems) {
    if problems.is_empty() && !batch.is_empty() {
        let _ = tx.blocking_send(batch);
    }
}

/// The parser's rows staged on disk, once it is done and found no problem.
async fn stage_checked<T: Serialize + Send + 'static>(
    rx: mpsc::Receiver<Vec<T>>,
    parser: Background<Problems>,
) -> StoreResult<super::staged::Staged<T>> {
    let staged = stage(rx).await?;
    let problems = parser.join().await?;
    if !problems.is_empty() {
        return Err(problems.into_error());
    }
    Ok(staged)
}

async fn external_ids(db: &Db, sql: &str, project_id: i64) -> StoreResult<HashMap<String, i64>> {
    let rows: Vec<(String, i64)> = sqlx::query_as(sql).bind(project_id).fetch_all(db).await?;
    Ok(rows.into_iter().collect())
}

pub(crate) async fn doc_ids(db: &Db, project_id: i64) -> StoreResult<HashMap<String, i64>> {
    external_ids(
        db,
        "SELECT doc_id, id FROM documents WHERE project_id = $1",
        project_id,
    )
    .await
}

pub(crate) async fn claim_ids(db: &Db, project_id: i64) -> StoreResult<HashMap<String, i64>> {
    external_ids(
        db,
        "SELECT claim_id, id FROM claims WHERE project_id = $1",
        project_id,
    )
    .await
}

#[derive(Serialize, serde::Deserialize)]
struct DocRow {
    doc_id: String,
    title: String,
    sentences: String,
    extra: Option<String>,
}

/// Imports a corpus (SciFact or BEIR `corpus.jsonl`, plain or gzip); `format` None detects it.
pub async fn corpus(
    db: &Db,
    project_id: i64,
    path: &Path,
    format: Option<CorpusFormat>,
    actor_id: Option<i64>,
) -> StoreResult<ImportReport> {
    // A crashed import of this file no longer stands in the way.
    import_writer::reclaim_abandoned(db).await?;
    let format = match format {
        Some(f) => f,
        None => CorpusFormat::detect_file(path).map_err(format_error)?,
    };
    let sha = file_sha(path).await?;
    refuse_repeat(db, project_id, "corpus", path, &sha).await?;
    let reader = CorpusReader::open(path, format).map_err(format_error)?;
    let mut ids = NewIds::new(
        doc_ids(db, project_id).await?.into_keys().collect(),
        "document",
        "doc_id",
    );
    let (rx, parser) = spawn_parser(
        move |tx, problems| {
            let mut batch = Vec::with_capacity(BATCH);
            for item in reader {
                let Some(located) = problems.record(item) else {
                    continue;
                };
                let doc = located.record;
                let id = doc.doc_id.as_str().to_owned();
                if !ids.admit(&id, located.line, problems) {
                    continue;
                }
                let sentences =
                    serde_json::to_string(&doc.sentences).unwrap_or_else(|_| "[]".into());
                let extra = (!doc.extra.is_empty())
                    .then(|| serde_json::Value::Object(doc.extra).to_string());
                push_row(
                    &mut batch,
                    BATCH,
                    DocRow {
                        doc_id: id,
                        title: doc.title,
                        sentences,
                        extra,
                    },
                    tx,
                    problems,
                );
            }
            flush(batch, tx, problems);
        },
        display_name(path),
    )?;
    let mut staged = stage_checked(rx, parser).await?;
    let (lock, import_id) = begin_chunked(
        db,
        NewImport {
            project_id,
            kind: "corpus",
            path,
            sha: &sha,
            format: format_name_corpus(format),
            actor_id,
            lock_token: None,
        },
    )
    .await?;
    let report = ImportReport {
        import_id,
        file: display_name(path),
        format: format_name_corpus(format).to_owned(),
        rows: staged.rows(),
        systems: vec![],
        judgments: 0,
        missing_docs: 0,
    };
    let written = write_documents(db, &mut staged, project_id, import_id).await;
    let result = match written {
        Ok(()) => {
            // The last transaction: the corpus appears whole.
            async {
                let mut tx = write_gate::begin(db).await?;
                finish_import(&mut tx, project_id, import_id, actor_id, &report).await?;
                tx.commit().await?;
                Ok(report)
            }
            .await
        }
        Err(e) => Err(e),
    };
    finish_chunked(db, import_id, lock, result).await
}

/// Batches of [`BATCH`] documents per write transaction of a corpus import (2,000 abstracts, a
/// few megabytes: tens of milliseconds of SQLite's write lock).
const CORPUS_CHUNK_BATCHES: usize = 2;

/// Writes a corpus import's staged documents in short transactions, each in its turn; they stay
/// hidden (the view `documents`) while the import is `writing`.
async fn write_documents(
    db: &Db,
    staged: &mut super::staged::Staged<DocRow>,
    project_id: i64,
    import_id: i64,
) -> StoreResult<()> {
    loop {
        let mut chunk = Vec::with_capacity(CORPUS_CHUNK_BATCHES);
        while chunk.len() < CORPUS_CHUNK_BATCHES {
            let batch: Vec<DocRow> = staged.next_batch(BATCH).await?;
            if batch.is_empty() {
                break;
            }
            chunk.push(batch);
        }
        if chunk.is_empty() {
            return Ok(());
        }
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
}

fn format_name_corpus(format: CorpusFormat) -> &'static str {
    match format {
        CorpusFormat::SciFact => "scifact-corpus",
        CorpusFormat::Beir => "beir-corpus",
    }
}

/// A claim ready to insert: its evidence resolved to document keys.
#[derive(Serialize, serde::Deserialize)]
struct ClaimRow {
    claim_id: String,
    text: String,
    cited: Option<String>,
    /// (document key, label, rationale sets as JSON, provenance)
    judged: Vec<(i64, Label, String, String)>,
}

/// Imports claims (SciFact or SciFact-Open `claims.jsonl`). Evidence in the file becomes final
/// judgments with provenance `citation` (or `pooling`, as a SciFact-Open file says); the cited
/// documents without evidence were read by SciFact's annotators and become final NEI judgments
/// with provenance `citation`. A claims file without evidence imports claims only.
pub async fn claims(
    db: &Db,
    project_id: i64,
    path: &Path,
    actor_id: Option<i64>,
) -> StoreResult<ImportReport> {
    // A crashed import of this file no longer stands in the way.
    import_writer::reclaim_abandoned(db).await?;
    let sha = file_sha(path).await?;
    refuse_repeat(db, project_id, "claims", path, &sha).await?;
    let reader = ClaimsReader::open(path).map_err(format_error)?;
    let docs = Arc::new(doc_ids(db, project_id).await?);
    let mut ids = NewIds::new(
        claim_ids(db, project_id).await?.into_keys().collect(),
        "claim",
        "id",
    );
    let (rx, parser) = spawn_parser(
        move |tx, problems| {
            let mut batch = Vec::with_capacity(BATCH);
            for item in reader {
                let Some(located) = problems.record(item) else {
                    continue;
                };
                let (line, claim) = (located.line, located.record);
                let id = claim.id.as_str().to_owned();
                if !ids.admit(&id, line, problems) {
                    continue;
                }
                let mut judged = Vec::new();
                let mut evidence_docs = HashSet::new();
                for ev in &claim.evidence {
                    let Some(&doc) = docs.get(ev.doc_id.as_str()) else {
                        let field = format!("evidence.{}", ev.doc_id);
                        problems.at(
                            line,
                            Some(&field),
                            format!("document {} is not in the corpus", ev.doc_id),
                        );
                        continue;
                    };
                    evidence_docs.insert(ev.doc_id.clone());
                    let provenance = match ev.provenance {
                        Some(EvidenceProvenance::Pooling) => "pooling",
                        Some(EvidenceProvenance::Citation) | None => "citation",
                    };
                    let sets =
                        serde_json::to_string(&ev.sentence_sets).unwrap_or_else(|_| "[]".into());
                    judged.push((doc, ev.label, sets, provenance.to_owned()));
                }
                for (i, cited) in claim.cited_doc_ids.iter().flatten().enumerate() {
                    // A claim may cite one document twice; its judgment is written once.
                    if !evidence_docs.insert(cited.clone()) {
                        continue;
                    }
                    match docs.get(cited.as_str()) {
                        Some(&doc) => {
                            judged.push((doc, Label::Nei, "[]".to_owned(), "citation".to_owned()))
                        }
                        None => {
                            let field = format!("cited_doc_ids.{i}");
                            problems.at(
                                line,
                                Some(&field),
                                format!("document {cited} is not in the corpus"),
                            );
                        }
                    }
                }
                let cited = claim.cited_doc_ids.as_ref().map(|ids| {
                    serde_json::to_string(&ids.iter().map(DocId::as_str).collect::<Vec<_>>())
                        .unwrap_or_default()
                });
                push_row(
                    &mut batch,
                    BATCH,
                    ClaimRow {
                        claim_id: id,
                        text: claim.text,
                        cited,
                        judged,
                    },
                    tx,
                    problems,
                );
            }
            flush(batch, tx, problems);
        },
        display_name(path),
    )?;
    let mut staged = stage_checked(rx, parser).await?;
    let (lock, import_id) = begin_chunked(
        db,
        NewImport {
            project_id,
            kind: "claims",
            path,
            sha: &sha,
            format: "scifact-claims",
            actor_id,
            lock_token: None,
        },
    )
    .await?;
    let result = async {
        let (rows, judgments) = write_claims(db, &mut staged, project_id, import_id).await?;
        let report = ImportReport {
            import_id,
            file: display_name(path),
            format: "scifact-claims".into(),
            rows,
            systems: vec![],
            judgments,
            missing_docs: 0,
        };
        // The last transaction: the claims and their evidence appear whole.
        let mut tx = write_gate::begin(db).await?;
        finish_import(&mut tx, project_id, import_id, actor_id, &report).await?;
        tx.commit().await?;
        Ok(report)
    }
    .await;
    finish_chunked(db, import_id, lock, result).await
}

/// Ends a chunked import: on failure its rows are removed (or, if that fails too, left to the
/// next import or `serve` to reclaim); the writer lock is released either way.
pub(crate) async fn finish_chunked<T>(
    db: &Db,
    import_id: i64,
    lock: WriterLock,
    result: StoreResult<T>,
) -> StoreResult<T> {
    if result.is_err() {
        if let Err(e) = import_writer::discard_on(db, import_id).await {
            // The lock is released below: the next import or `serve` removes the rows.
            tracing::warn!(import_id, error = %e, "could not remove a failed import's rows");
        }
    }
    lock.release();
    result
}

/// Starts a chunked import: takes a writer lock and records the import as `writing` under its
/// token (`import.lock_token` is set here), in a short transaction of its own.
pub(crate) async fn begin_chunked(
    db: &Db,
    import: NewImport<'_>,
) -> StoreResult<(WriterLock, i64)> {
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
    Ok((lock, id))
}

/// Claims per write transaction of a claims import (with their evidence: a few thousand rows).
const CLAIMS_CHUNK: usize = 1_000;

/// Writes a claims import's staged claims, with their evidence as final judgments, in short
/// transactions, each in its turn; hidden (the views `claims`, `judgments`, `final_labels`)
/// while the import is `writing`. Returns the claims and judgments written.
async fn write_claims(
    db: &Db,
    staged: &mut super::staged::Staged<ClaimRow>,
    project_id: i64,
    import_id: i64,
) -> StoreResult<(u64, u64)> {
    let (mut rows, mut judgments) = (0u64, 0u64);
    let now = now_ms();
    loop {
        let batch: Vec<ClaimRow> = staged.next_batch(CLAIMS_CHUNK).await?;
        if batch.is_empty() {
            return Ok((rows, judgments));
        }
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
}

/// How to read a run file.
#[derive(Clone, Debug)]
pub struct RunImport {
    pub path: PathBuf,
    /// None: detected from the file.
    pub format: Option<RunFormat>,
    pub options: RunReadOptions,
    pub system: SystemSpec,
    /// Skip (and count) pairs whose document is not in the corpus instead of refusing the file.
    pub allow_missing_docs: bool,
}

pub(super) struct PredictionRow {
    pub(super) system: usize,
    /// On the first row of each system, in the order the file names them: the system's name.
    pub(super) new_system: Option<String>,
    pub(super) claim: i64,
    pub(super) doc: i64,
    pub(super) label: Option<Label>,
    pub(super) p_support: Option<f64>,
    pub(super) p_contradict: Option<f64>,
    pub(super) p_nei: Option<f64>,
    pub(super) confidence: f64,
    pub(super) rank: Option<u32>,
    pub(super) sentences: Option<String>,
}

/// What the parser learned about the systems of a run file.
#[derive(Default)]
struct RunSummary {
    names: Vec<String>,
    tallies: Vec<ScoringTally>,
    missing_docs: u64,
}

/// Imports a system run (one system, or one per system the file names).
///
/// The run is written in chunks of at most [`CHUNK_BATCHES`] × [`RUN_BATCH`] predictions
/// ([`TX_ROWS`] while people write), each
/// its own short transaction, and appears whole when the last one commits (see
/// [`super::import_writer`]); a failed import removes what it wrote.
pub async fn run(
    db: &Db,
    project_id: i64,
    import: RunImport,
    actor_id: Option<i64>,
) -> StoreResult<ImportReport> {
    // A crashed import of this file or of these systems no longer stands in the way.
    import_writer::reclaim_abandoned(db).await?;
    let path = import.path.clone();
    let format = match import.format {
        Some(f) => f,
        None => RunFormat::detect_file(&path).map_err(format_error)?,
    };
    let opened_path = path.clone();
    let options = RunReadOptions {
        one_system: import.system.name.is_some(),
        ..import.options.clone()
    };
    let reader =
        blocking(move || RunReader::open(&opened_path, format, &options).map_err(format_error))
            .await?;
    let sha = file_sha(&path).await?;
    refuse_repeat(db, project_id, "run", &path, &sha).await?;
    let lock = WriterLock::take(db).await?;
    let mut conn = bulk_connection(db).await?;
    let mut started = None;
    let result = run_on(
        db,
        &mut conn,
        RunWrite {
            project_id,
            import,
            format,
            actor_id,
            sha,
            lock_token: lock.token().to_owned(),
            gate: Gate::of(db),
        },
        reader,
        &mut started,
    )
    .await;
    if let (Err(_), Some(import_id)) = (&result, started) {
        if let Err(e) = import_writer::discard(&mut conn, import_id).await {
            // The lock is released below: the next import or `serve` removes the rows.
            tracing::warn!(import_id, error = %e, "could not remove a failed import's rows");
        }
    }
    lock.release();
    let closed = conn.close().await;
    let report = result?;
    closed?;
    Ok(report)
}

/// What [`run_on`] writes, besides the parsed rows.
struct RunWrite {
    project_id: i64,
    import: RunImport,
    format: RunFormat,
    actor_id: Option<i64>,
    sha: String,
    lock_token: String,
    gate: Gate,
}

/// [`run`] on the import's own connection; sets `started` once the import's row exists.
async fn run_on(
    db: &Db,
    conn: &mut AnyConnection,
    write: RunWrite,
    reader: RunReader,
    started: &mut Option<i64>,
) -> StoreResult<ImportReport> {
    let RunWrite {
        project_id,
        import,
        format,
        actor_id,
        sha,
        lock_token,
        gate,
    } = write;
    let path = import.path.clone();
    // The keys are read without the write lock: documents, claims and systems are never
    // deleted (a system only by the failed import that wrote it), so they hold until the end.
    check_writer(conn, project_id, actor_id).await?;
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
    // Systems being imported count: two imports of one name cannot both succeed.
    let existing_systems: HashSet<String> =
        sqlx::query_scalar::<_, String>("SELECT name FROM systems WHERE project_id = $1")
            .bind(project_id)
            .fetch_all(&mut *conn)
            .await?
            .into_iter()
            .collect();
    let given_name = import.system.name.clone();
    let allow_missing = import.allow_missing_docs;
    let summary = Arc::new(std::sync::Mutex::new(RunSummary::default()));
    let shared = Arc::clone(&summary);
    let (mut rx, parser) = spawn_parser(
        move |tx, problems| {
            let mut local = RunSummary::default();
            let mut index: HashMap<String, usize> = HashMap::new();
            // Per system index: whether its first row was sent (with the system's name).
            let mut announced: Vec<bool> = Vec::new();
            let mut batch = Vec::with_capacity(RUN_BATCH);
            for item in reader {
                let Some(located) = problems.record(item) else {
                    continue;
                };
                let (line, rec) = (located.line, located.record);
                let name: &str = match (&given_name, &rec.system) {
                    (Some(name), _) => name,
                    (None, Some(name)) => name,
                    (None, None) => {
                        problems.at(
                            line,
                            None,
                            "the file does not name its system: give the system's name",
                        );
                        break;
                    }
                };
                let system = match index.get(name) {
                    Some(&i) => i,
                    None => {
                        if existing_systems.contains(name) {
                            problems.at(
                                line,
                                Some("system"),
                                format!("the project has a system named {name:?} already"),
                            );
                            break;
                        }
                        index.insert(name.to_owned(), local.names.len());
                        local.names.push(name.to_owned());
                        local.tallies.push(ScoringTally::default());
                        announced.push(false);
                        local.names.len() - 1
                    }
                };
                let Some(claim) = claims.get(rec.claim_id.as_str()) else {
                    problems.at(
                        line,
                        Some("claim_id"),
                        format!("claim {} is not in the project", rec.claim_id),
                    );
                    continue;
                };
                let Some(doc) = docs.get(rec.doc_id.as_str()) else {
                    if allow_missing {
                        local.missing_docs += 1;
                    } else {
                        problems.at(
                            line,
                            Some("doc_id"),
                            format!("document {} is not in the corpus (allow this with --allow-missing-docs)", rec.doc_id),
                        );
                    }
                    continue;
                };
                if let Some(tally) = local.tallies.get_mut(system) {
                    tally.observe(&rec);
                }
                // A system announces itself (is created) with its first row that is written.
                let new_system = match announced.get_mut(system) {
                    Some(sent) if !*sent => {
                        *sent = true;
                        local.names.get(system).cloned()
                    }
                    _ => None,
                };
                let row = PredictionRow {
                    system,
                    new_system,
                    claim,
                    doc,
                    label: rec.label,
                    p_support: rec.p_support.map(|p| p.get()),
                    p_contradict: rec.p_contradict.map(|p| p.get()),
                    p_nei: rec.p_nei.map(|p| p.get()),
                    confidence: rec.confidence(),
                    rank: rec.rank,
                    sentences: rec
                        .sentences
                        .as_ref()
                        .map(|s| serde_json::to_string(s).unwrap_or_default()),
                };
                push_row(&mut batch, RUN_BATCH, row, tx, problems);
            }
            flush(batch, tx, problems);
            if let Ok(mut summary) = shared.lock() {
                *summary = local;
            }
        },
        display_name(&path),
    )?;
    let import_id = {
        let _turn = gate.turn().await;
        let mut tx = super::write_gate::begin_on(conn).await?;
        let id = begin_import(
            &mut tx,
            NewImport {
                project_id,
                kind: "run",
                path: &path,
                sha: &sha,
                format: format.as_str(),
                actor_id,
                lock_token: Some(&lock_token),
            },
        )
        .await?;
        tx.commit().await?;
        id
    };
    *started = Some(import_id);
    let spec = import.system.clone();
    let turns = gate.clone();
    let Written {
        system_keys,
        created,
        rows,
    } = match engine(db) {
        Engine::Sqlite => {
            with_connection(db, Access::Write, move |raw| {
                write_predictions(raw, &mut rx, &turns, project_id, &spec, import_id)
            })
            .await?
        }
        Engine::Postgres => {
            super::import_copy::write_predictions(db, &mut rx, project_id, &spec, import_id).await?
        }
    };
    let problems = parser.join().await?;
    if !problems.is_empty() {
        return Err(problems.into_error());
    }
    let summary = std::mem::take(
        &mut *summary
            .lock()
            .map_err(|_| StoreError::invalid(None, "the parser failed"))?,
    );
    if created.is_empty() {
        return Err(StoreError::invalid(None, format!(
            "{}: the run has no predictions for the project's claims and documents; nothing was imported",
            display_name(&path)
        )));
    }
    // The last transaction: the systems become ready and the import done, at once.
    let _turn = gate.turn().await;
    let mut tx = super::write_gate::begin_on(conn).await?;
    for (i, _) in &created {
        let scoring = match summary.tallies.get(*i).map(ScoringTally::scoring) {
            Some(Scoring::Scores) => "scores",
            _ => "order",
        };
        if let Some(key) = system_keys.get(i) {
            sqlx::query("UPDATE systems SET scoring = $1, ready = 1 WHERE id = $2")
                .bind(scoring)
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
    }
    let report = ImportReport {
        import_id,
        file: display_name(&path),
        format: format.as_str().to_owned(),
        rows,
        systems: created.into_iter().map(|(_, name)| name).collect(),
        judgments: 0,
        missing_docs: summary.missing_docs,
    };
    finish_import(&mut tx, project_id, import_id, actor_id, &report).await?;
    tx.commit().await?;
    Ok(report)
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
pub(super) struct Written {
    /// Database keys of the systems, by the parser's index.
    pub(super) system_keys: HashMap<usize, i64>,
    /// The systems created, by parser index and name, in the order the file names them.
    pub(super) created: Vec<(usize, String)>,
    pub(super) rows: u64,
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
        StoreError::Conflict { .. } => {
            StoreError::conflict(crate::Constraint::SystemName, format!("the project has a system named {name:?} already"))
        }
        other => other,
    })?;
    Ok(raw.last_insert_rowid())
}

/// Parses a claim id given on a command line or form.
pub fn claim_id(text: &str) -> StoreResult<ClaimId> {
    ClaimId::parse(text).map_err(|e| StoreError::invalid(None, format!("claim id {text:?} {e}")))
}
