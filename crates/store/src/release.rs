//! Releases of a project's test collection: the project's state gathered into a
//! [`ReleaseInput`], and numbered, immutable releases (view `releases`: the manifest and the
//! SHA-256 and size of the `.tar.gz` archive, whose bytes are in `release_parts`).
//!
//! What a release holds (see [`input`]):
//! - every claim; the final label of every judged pair (`final_labels`), with the rationale
//!   sets, specificity and revised claim of the judgment each final label points to;
//! - `model_ranks` of pooled pairs (`pool_entries`/`pool_ranks`; none for citation evidence);
//! - pooled pairs without a final label yet (for partial releases and `-1` qrels);
//! - every system with its role, and its predictions as a published run;
//! - the documents of every judged or pooled pair; the pool strategy and depth.
//!
//! The release date is the UTC day of the latest change to that state (an import, a judgment, a
//! retraction, a final label, a pool build, a system), never the wall clock, so exporting the
//! same state twice gives the same bytes.
//!
//! The archive is written in parts, hidden until whole ([`super::release_parts`]).
//!
//! Numbering (the release command, `app::command::release`, which builds the archive and then
//! calls [`record`]): releases are numbered 1, 2, ... per project and never change. When
//! the state and the options give the same files as the latest release (the same manifest, which
//! holds the SHA-256 of every file), that release is returned and nothing is recorded; otherwise
//! the next number is recorded, with an audit event. Options are part of the state released: the
//! same state with `qrels_unjudged` switched gives a new release.

use super::audit::{json, AuditEvent};
use super::release_parts::{self, NewRelease};
use super::{Constraint, Db, StoreError, StoreResult};
use domain::annotation::{Provenance, Specificity};
use domain::formats::{Document, RunRecord};
use domain::ids::{ClaimId, DocId};
use domain::label::{Label, Probability};
use domain::pool::Role;
use domain::release::{
    file_stem, ClaimText, FinalLabel, PoolSettings, ReleaseCounts, ReleaseDate, ReleaseInput,
    ReleaseOptions, SpecificityNote, SystemInfo,
};
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroU32;

/// A recorded release, as lists show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Release {
    pub number: u32,
    /// Some pooled pairs had no final label.
    pub partial: bool,
    /// `qrels.txt` lists pooled pairs without a final label with relevance -1.
    pub qrels_unjudged: bool,
    /// The date of the state released, `YYYY-MM-DD`.
    pub date: String,
    /// When the release was recorded (ms since the epoch).
    pub created_at: i64,
    /// SHA-256 of the archive.
    pub sha256: String,
    /// Size of the archive in bytes.
    pub archive_bytes: i64,
    pub counts: ReleaseCounts,
}

/// How far annotation of the pool has come.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Completeness {
    pub pooled: i64,
    /// Pooled pairs without a final label.
    pub unjudged: i64,
    /// Final labels, citation evidence and NEI included.
    pub final_labels: i64,
}

/// The fields of a stored manifest that lists show.
#[derive(Deserialize)]
struct ManifestHead {
    date: String,
    qrels_unjudged: bool,
    counts: ReleaseCounts,
}

fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(what.to_string())
}

fn claim_id(text: &str) -> StoreResult<ClaimId> {
    ClaimId::parse(text).map_err(|e| corrupt(format!("claim id {text:?}: {e}")))
}

fn doc_id(text: &str) -> StoreResult<DocId> {
    DocId::parse(text).map_err(|e| corrupt(format!("doc id {text:?}: {e}")))
}

fn parse_json<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> StoreResult<T> {
    serde_json::from_str(text).map_err(|e| corrupt(format!("{what} {text:?}: {e}")))
}

fn probability(value: Option<f64>) -> StoreResult<Option<Probability>> {
    value
        .map(|p| Probability::new(p).map_err(|e| corrupt(format!("stored probability: {e}"))))
        .transpose()
}

fn positive(what: &str, value: i64) -> StoreResult<u32> {
    u32::try_from(value)
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| corrupt(format!("{what} {value}")))
}

fn role(text: &str) -> StoreResult<Role> {
    Role::parse(text).map_err(corrupt)
}

/// The state of a project, as a release of it would hold it: numbered 1 (callers renumber),
/// `partial` when some pooled pair has no final label. Read in one snapshot, so the state is
/// consistent even while others write; its lists are in row order (claims and documents by
/// row id, labels and each run's records by claim and document), so two reads of one state are
/// equal on either engine whatever plan the database picks.
pub async fn input(db: &Db, project_id: i64) -> StoreResult<ReleaseInput> {
    input_with(db, project_id, &ReleaseOptions::default()).await
}

/// [`input`] for a release written with `options`: the model assessors' labels only with
/// `model_qrels` (refused when the project has none), and then the release dates from the
/// latest of the other changes and the latest assessor's registration.
pub async fn input_with(
    db: &Db,
    project_id: i64,
    options: &ReleaseOptions,
) -> StoreResult<ReleaseInput> {
    let mut tx = super::db::begin_read(db).await?;
    let input = read_input(&mut tx, project_id, options.model_qrels).await;
    tx.rollback().await?;
    let input = input?;
    if options.model_qrels && input.model_labels.is_empty() {
        return Err(StoreError::conflict(
            Constraint::NoAssessor,
            "the project has no model assessor: register one (`claimpool assessor add`) before \
             asking for qrels-model.txt",
        ));
    }
    Ok(input)
}

async fn read_input(
    conn: &mut AnyConnection,
    project_id: i64,
    with_models: bool,
) -> StoreResult<ReleaseInput> {
    let (project, strategy, depth): (String, Option<String>, Option<i64>) =
        sqlx::query_as("SELECT name, pool_strategy, pool_depth FROM projects WHERE id = $1")
            .bind(project_id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("project #{project_id}")))?;
    let pool = match (strategy, depth) {
        (Some(strategy), Some(depth)) => Some(PoolSettings {
            strategy: super::pool::parse_strategy(&strategy)?,
            depth: NonZeroU32::new(positive("pool depth", depth)?)
                .ok_or_else(|| corrupt("pool depth 0"))?,
        }),
        _ => None,
    };
    let claims = read_claims(conn, project_id).await?;
    let ranks = read_model_ranks(conn, project_id).await?;
    let (final_labels, specificity) = read_final_labels(conn, project_id, &ranks).await?;
    let unjudged_pooled = read_unjudged(conn, project_id).await?;
    let documents = read_documents(conn, project_id).await?;
    let (systems, runs) = read_systems(conn, project_id).await?;
    let mut latest = latest_change(conn, project_id).await?;
    let model_labels = if with_models {
        if let Some(registered) = super::assessors::latest_change(conn, project_id).await? {
            latest = latest.max(registered);
        }
        super::assessors::read_labels(conn, project_id).await?
    } else {
        Vec::new()
    };
    let date = ReleaseDate::from_unix_ms(latest)
        .map_err(|e| corrupt(format!("the time of the latest change: {e}")))?;
    Ok(ReleaseInput {
        project,
        number: NonZeroU32::MIN,
        date,
        partial: !unjudged_pooled.is_empty(),
        pool,
        systems,
        claims,
        final_labels,
        unjudged_pooled,
        specificity,
        documents,
        runs,
        model_labels,
        recall: domain::release::RecallStatement::NotEstimated,
    })
}

async fn read_claims(conn: &mut AnyConnection, project_id: i64) -> StoreResult<Vec<ClaimText>> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT claim_id, text FROM claims WHERE project_id = $1 ORDER BY id")
            .bind(project_id)
            .fetch_all(conn)
            .await?;
    rows.into_iter()
        .map(|(id, text)| {
            Ok(ClaimText {
                id: claim_id(&id)?,
                text,
            })
        })
        .collect()
}

/// Pair keys (claims.id, documents.id) of pooled pairs → each system's rank of the pair.
type Ranks = HashMap<(i64, i64), BTreeMap<String, u32>>;

async fn read_model_ranks(conn: &mut AnyConnection, project_id: i64) -> StoreResult<Ranks> {
    let rows: Vec<(i64, i64, Option<String>, Option<i64>)> = sqlx::query_as(
        "SELECT e.claim_id, e.doc_id, s.name, r.rank FROM pool_entries e
         LEFT JOIN pool_ranks r ON r.pool_entry_id = e.id
         LEFT JOIN systems s ON s.id = r.system_id
         WHERE e.project_id = $1",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut ranks: Ranks = HashMap::new();
    for (claim, doc, system, rank) in rows {
        let by_system = ranks.entry((claim, doc)).or_default();
        if let (Some(system), Some(rank)) = (system, rank) {
            by_system.insert(system, positive("pool rank", rank)?);
        }
    }
    // A pair found beyond the runs (issue 38) has its finder's rank under the finder's name: a
    // search find the result's rank under `search`; a pair the live `cal` order added that no
    // run ranked its corpus retrieval's rank (its entry depth) under `cal`.
    let finders = [
        (
            super::search::SEARCH_SYSTEM,
            "search rank",
            "SELECT claim_id, doc_id, result_rank FROM search_finds WHERE project_id = $1",
        ),
        (
            super::search::CAL_SYSTEM,
            "cal retrieval rank",
            "SELECT e.claim_id, e.doc_id, e.entry_depth FROM cal_picks p
             JOIN pool_entry_rows e ON e.id = p.pool_entry_id
             WHERE p.project_id = $1 AND p.in_runs = 0",
        ),
    ];
    for (system, what, sql) in finders {
        let found: Vec<(i64, i64, i64)> = sqlx::query_as(sql)
            .bind(project_id)
            .fetch_all(&mut *conn)
            .await?;
        for (claim, doc, rank) in found {
            ranks
                .entry((claim, doc))
                .or_default()
                .insert(system.to_owned(), positive(what, rank)?);
        }
    }
    Ok(ranks)
}

#[derive(sqlx::FromRow)]
struct FinalRow {
    claim_key: i64,
    doc_key: i64,
    claim_id: String,
    doc_id: String,
    label: String,
    provenance: String,
    rationale: String,
    specificity: Option<String>,
    revised_claim: Option<String>,
}

/// Final labels with the rationale sets of the judgment each points to, and the specificity
/// notes of those judgments.
async fn read_final_labels(
    conn: &mut AnyConnection,
    project_id: i64,
    ranks: &Ranks,
) -> StoreResult<(Vec<FinalLabel>, Vec<SpecificityNote>)> {
    let rows: Vec<FinalRow> = sqlx::query_as(
        "SELECT f.claim_id AS claim_key, f.doc_id AS doc_key, c.claim_id, d.doc_id, f.label,
                f.provenance, j.rationale, j.specificity, j.revised_claim
         FROM final_labels f
         JOIN claims c ON c.id = f.claim_id
         JOIN documents d ON d.id = f.doc_id
         JOIN judgments j ON j.id = f.judgment_id
         WHERE f.project_id = $1
         ORDER BY f.claim_id, f.doc_id",
    )
    .bind(project_id)
    .fetch_all(conn)
    .await?;
    let mut labels = Vec::with_capacity(rows.len());
    let mut notes = Vec::new();
    for row in rows {
        let claim = claim_id(&row.claim_id)?;
        let doc = doc_id(&row.doc_id)?;
        let provenance = Provenance::parse(&row.provenance).map_err(corrupt)?;
        let relation = row
            .specificity
            .as_deref()
            .map(Specificity::parse)
            .transpose()
            .map_err(corrupt)?;
        if relation.is_some() || row.revised_claim.is_some() {
            notes.push(SpecificityNote {
                claim: claim.clone(),
                doc: doc.clone(),
                relation,
                revised_claim: row.revised_claim,
            });
        }
        labels.push(FinalLabel {
            claim,
            doc,
            label: Label::parse(&row.label).map_err(corrupt)?,
            provenance,
            sentences: parse_json("rationale", &row.rationale)?,
            model_ranks: match provenance {
                Provenance::Citation => None,
                Provenance::Pooling | Provenance::Import => {
                    ranks.get(&(row.claim_key, row.doc_key)).cloned()
                }
            },
        });
    }
    Ok((labels, notes))
}

const UNJUDGED_SQL: &str = "FROM pool_entries e
     JOIN claims c ON c.id = e.claim_id
     JOIN documents d ON d.id = e.doc_id
     WHERE e.project_id = $1 AND NOT EXISTS
       (SELECT 1 FROM final_labels f WHERE f.claim_id = e.claim_id AND f.doc_id = e.doc_id)";

async fn read_unjudged(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<Vec<(ClaimId, DocId)>> {
    let rows: Vec<(String, String)> =
        sqlx::query_as(&format!("SELECT c.claim_id, d.doc_id {UNJUDGED_SQL}"))
            .bind(project_id)
            .fetch_all(conn)
            .await?;
    let mut pairs = rows
        .iter()
        .map(|(c, d)| Ok((claim_id(c)?, doc_id(d)?)))
        .collect::<StoreResult<Vec<_>>>()?;
    pairs.sort();
    Ok(pairs)
}

/// The documents of every judged or pooled pair.
async fn read_documents(conn: &mut AnyConnection, project_id: i64) -> StoreResult<Vec<Document>> {
    let rows: Vec<(String, String, String, Option<String>)> = sqlx::query_as(
        "SELECT doc_id, title, sentences, extra FROM documents WHERE id IN
           (SELECT doc_id FROM final_labels WHERE project_id = $1
            UNION SELECT doc_id FROM pool_entries WHERE project_id = $1)
         ORDER BY id",
    )
    .bind(project_id)
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|(id, title, sentences, extra)| {
            Ok(Document {
                doc_id: doc_id(&id)?,
                title,
                sentences: parse_json("sentences", &sentences)?,
                extra: match extra {
                    Some(extra) => parse_json("extra fields", &extra)?,
                    None => serde_json::Map::new(),
                },
            })
        })
        .collect()
}

#[derive(sqlx::FromRow)]
struct PredictionRow {
    claim_id: String,
    doc_id: String,
    label: Option<String>,
    p_support: Option<f64>,
    p_contradict: Option<f64>,
    p_nei: Option<f64>,
    confidence: f64,
    retrieval_rank: Option<i64>,
    sentences: Option<String>,
}

/// The project's systems, and each one's predictions as a run.
async fn read_systems(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<(Vec<SystemInfo>, Vec<(String, Vec<RunRecord>)>)> {
    let rows: Vec<(i64, String, String, String, Option<f64>)> = sqlx::query_as(
        "SELECT id, name, role, description, negative_sampling_ratio FROM systems
         WHERE project_id = $1 AND ready = 1 ORDER BY name",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut systems = Vec::with_capacity(rows.len());
    let mut runs = Vec::with_capacity(rows.len());
    for (id, name, role_text, description, negative_sampling_ratio) in rows {
        let predictions: Vec<PredictionRow> = sqlx::query_as(
            "SELECT c.claim_id, d.doc_id, p.label, p.p_support, p.p_contradict, p.p_nei,
                    p.confidence, p.retrieval_rank, p.sentences
             FROM predictions p
             JOIN claims c ON c.id = p.claim_id
             JOIN documents d ON d.id = p.doc_id
             WHERE p.system_id = $1
             ORDER BY p.claim_id, p.doc_id",
        )
        .bind(id)
        .fetch_all(&mut *conn)
        .await?;
        let records = predictions
            .into_iter()
            .map(run_record)
            .collect::<StoreResult<Vec<_>>>()?;
        systems.push(SystemInfo {
            name: name.clone(),
            role: role(&role_text)?,
            description,
            negative_sampling_ratio,
        });
        runs.push((name, records));
    }
    Ok((systems, runs))
}

/// A stored prediction as a run record whose [`RunRecord::confidence`] is the stored
/// confidence. The confidence is written as `score` only when the record cannot tell it
/// otherwise: not when it is max(p_support, p_contradict), nor when it is what a label alone
/// gives (1 for SUPPORT/CONTRADICT, 0 for NEI or no label), so that label-only runs are not
/// published with made-up scores.
fn run_record(row: PredictionRow) -> StoreResult<RunRecord> {
    let mut record = RunRecord::bare(claim_id(&row.claim_id)?, doc_id(&row.doc_id)?);
    record.label = row
        .label
        .as_deref()
        .map(Label::parse)
        .transpose()
        .map_err(corrupt)?;
    record.p_support = probability(row.p_support)?;
    record.p_contradict = probability(row.p_contradict)?;
    record.p_nei = probability(row.p_nei)?;
    record.rank = row
        .retrieval_rank
        .map(|r| positive("retrieval rank", r))
        .transpose()?;
    record.sentences = row
        .sentences
        .as_deref()
        .map(|s| parse_json("predicted sentences", s))
        .transpose()?;
    if record.confidence() != row.confidence {
        record.score = Some(row.confidence);
    }
    Ok(record)
}

/// The time of the latest change to what a release holds.
async fn latest_change(conn: &mut AnyConnection, project_id: i64) -> StoreResult<i64> {
    let latest: Option<i64> = sqlx::query_scalar(
        "SELECT MAX(t) FROM (
            SELECT created_at AS t FROM projects WHERE id = $1
            UNION ALL SELECT imported_at FROM imports WHERE project_id = $1
            UNION ALL SELECT created_at FROM systems WHERE project_id = $1 AND ready = 1
            UNION ALL SELECT created_at FROM judgments WHERE project_id = $1
            UNION ALL SELECT r.retracted_at FROM judgment_retractions r
                      JOIN judgments j ON j.id = r.judgment_id WHERE j.project_id = $1
            UNION ALL SELECT decided_at FROM final_labels WHERE project_id = $1
            UNION ALL SELECT built_at FROM pool_builds WHERE project_id = $1) changes",
    )
    .bind(project_id)
    .fetch_one(conn)
    .await?;
    latest.ok_or_else(|| StoreError::NotFound(format!("project #{project_id}")))
}

/// How many pooled pairs are labelled, and how many are not.
pub async fn completeness(db: &Db, project_id: i64) -> StoreResult<Completeness> {
    let (pooled, unjudged, final_labels): (i64, i64, i64) = sqlx::query_as(&format!(
        "SELECT (SELECT COUNT(*) FROM pool_entries WHERE project_id = $1),
                (SELECT COUNT(*) {UNJUDGED_SQL}),
                (SELECT COUNT(*) FROM final_labels WHERE project_id = $1)"
    ))
    .bind(project_id)
    .fetch_one(db)
    .await?;
    Ok(Completeness {
        pooled,
        unjudged,
        final_labels,
    })
}

/// The latest release's number and manifest.
pub async fn latest(db: &Db, project_id: i64) -> StoreResult<Option<(u32, String)>> {
    let row: Option<(i64, String)> = sqlx::query_as(
        "SELECT number, manifest FROM releases WHERE project_id = $1 ORDER BY number DESC LIMIT 1",
    )
    .bind(project_id)
    .fetch_optional(db)
    .await?;
    row.map(|(n, manifest)| Ok((positive("release number", n)?, manifest)))
        .transpose()
}

/// A new release, built and hashed by the command layer, to record.
pub struct NewArchive<'a> {
    pub number: u32,
    /// Some pooled pairs have no final label.
    pub partial: bool,
    /// The manifest, which holds the SHA-256 of every file.
    pub manifest: &'a str,
    /// SHA-256 of the archive.
    pub sha256: &'a str,
    /// The `.tar.gz` archive.
    pub archive: &'a [u8],
    /// The user recorded as releasing it (None: the operator).
    pub actor_id: Option<i64>,
    /// The audit event's value.
    pub audit: serde_json::Value,
}

/// Records a new release of the project: its archive in parts, hidden until whole, then its
/// row and audit event together. Nothing stays of a release whose parts could not be written.
pub async fn record(db: &Db, project_id: i64, new: NewArchive<'_>) -> StoreResult<()> {
    let writing = release_parts::start(
        db,
        &NewRelease {
            project_id,
            number: new.number,
            partial: new.partial,
            manifest: new.manifest,
            sha256: new.sha256,
            archive_bytes: new.archive.len(),
            actor_id: new.actor_id,
        },
    )
    .await?;
    if let Err(e) = writing.write(db, new.archive).await {
        writing.abandon(db).await?;
        return Err(e);
    }
    let event = AuditEvent {
        project_id: Some(project_id),
        actor_id: new.actor_id,
        action: "release",
        entity: "release",
        entity_id: Some(new.number.to_string()),
        old_value: None,
        new_value: json(&new.audit),
    };
    let notice = serde_json::json!({
        "number": new.number,
        "partial": new.partial,
        "sha256": new.sha256,
        "archive_bytes": new.archive.len(),
    });
    writing.finish(db, event, Some((project_id, notice))).await
}

const RELEASE_COLUMNS: &str = "number, partial, manifest, created_at, sha256, archive_bytes";

#[derive(sqlx::FromRow)]
struct ReleaseRow {
    number: i64,
    partial: crate::flag::Flag,
    manifest: String,
    created_at: i64,
    sha256: String,
    archive_bytes: i64,
}

fn release(row: ReleaseRow) -> StoreResult<Release> {
    let head: ManifestHead = parse_json("release manifest", &row.manifest)?;
    Ok(Release {
        number: positive("release number", row.number)?,
        partial: row.partial.0,
        qrels_unjudged: head.qrels_unjudged,
        date: head.date,
        created_at: row.created_at,
        sha256: row.sha256,
        archive_bytes: row.archive_bytes,
        counts: head.counts,
    })
}

/// The project's releases, latest first.
pub async fn list(db: &Db, project_id: i64) -> StoreResult<Vec<Release>> {
    let rows: Vec<ReleaseRow> = sqlx::query_as(&format!(
        "SELECT {RELEASE_COLUMNS} FROM releases WHERE project_id = $1 ORDER BY number DESC"
    ))
    .bind(project_id)
    .fetch_all(db)
    .await?;
    rows.into_iter().map(release).collect()
}

/// One release of the project.
pub async fn get(db: &Db, project_id: i64, number: u32) -> StoreResult<Release> {
    let row: ReleaseRow = sqlx::query_as(&format!(
        "SELECT {RELEASE_COLUMNS} FROM releases WHERE project_id = $1 AND number = $2"
    ))
    .bind(project_id)
    .bind(i64::from(number))
    .fetch_optional(db)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("release {number}")))?;
    release(row)
}

/// A release's archive as a download sends it: part by part ([`release_parts::stream`]).
pub struct ArchiveDownload {
    /// `<project>-release-<number>.tar.gz`, as [`archive`] names it.
    pub file_name: String,
    /// The archive's size in bytes (the response's `Content-Length`).
    pub bytes: u64,
    /// The archive's parts in order; an error ends it early.
    pub parts: futures::stream::BoxStream<'static, StoreResult<Vec<u8>>>,
}

/// Release `number` of the project for a download: its name, size and parts, read one part at
/// a time as the client takes them (issue 35: a download no longer holds the whole archive).
pub async fn archive_download(
    db: &Db,
    project_id: i64,
    number: u32,
) -> StoreResult<ArchiveDownload> {
    use futures::{StreamExt, TryStreamExt};
    let (project, id, archive_bytes) = archive_row(db, project_id, number).await?;
    let parts = release_parts::stream(db.clone(), id, archive_bytes).inspect_err(move |e| {
        tracing::error!(error = %e, release = id, "a release download stopped");
    });
    Ok(ArchiveDownload {
        file_name: format!("{}-release-{number}.tar.gz", file_stem(&project)),
        bytes: u64::try_from(archive_bytes)
            .map_err(|_| corrupt(format!("release row {id}: {archive_bytes} bytes")))?,
        parts: parts.boxed(),
    })
}

/// The project name, row id and size of release `number` of the project.
async fn archive_row(db: &Db, project_id: i64, number: u32) -> StoreResult<(String, i64, i64)> {
    let row: Option<(String, i64, i64)> = sqlx::query_as(
        "SELECT p.name, r.id, r.archive_bytes FROM releases r JOIN projects p ON p.id = r.project_id
         WHERE r.project_id = $1 AND r.number = $2",
    )
    .bind(project_id)
    .bind(i64::from(number))
    .fetch_optional(db)
    .await?;
    row.ok_or_else(|| StoreError::NotFound(format!("release {number}")))
}

/// A release's archive, with the file name to download it as
/// (`<project>-release-<number>.tar.gz`, the name of the directory it unpacks into).
pub async fn archive(db: &Db, project_id: i64, number: u32) -> StoreResult<(String, Vec<u8>)> {
    let (project, id, archive_bytes) = archive_row(db, project_id, number).await?;
    let bytes = release_parts::read(db, id, archive_bytes).await?;
    Ok((
        format!("{}-release-{number}.tar.gz", file_stem(&project)),
        bytes,
    ))
}
