//! What a bulk judgments import stores (`claimpool import judgments`; the import command,
//! `commands::import::judgments`, reads the file and decides what each line may be): the reads
//! it checks the file against, in one snapshot, and its judgments, written in short
//! transactions hidden until the last, which fails, writing nothing, if someone judged the
//! file's pairs meanwhile.

use super::super::import::{finish_import, ImportReport};
use super::super::write_gate;
use super::super::{now_ms, Db, StoreError, StoreResult};
use super::assign::assign_pending;
use super::begin_write;
use super::history::project_states;
use domain::annotation::{PairState, Stage, Verdict};
use domain::label::Label;
use std::collections::HashMap;

/// A user a judgments import names as the annotator: their key, and whether they are active.
pub async fn annotator(db: &Db, username: &str) -> StoreResult<Option<(i64, bool)>> {
    let row: Option<(i64, crate::flag::Flag)> =
        sqlx::query_as("SELECT id, active FROM users WHERE username = $1")
            .bind(username)
            .fetch_optional(db)
            .await?;
    Ok(row.map(|(id, active)| (id, active.0)))
}

/// A pooled pair, by its keys and its external ids.
pub struct PooledPair {
    pub entry: i64,
    pub claim: i64,
    pub doc: i64,
    pub claim_id: String,
    pub doc_id: String,
    /// How many sentences the abstract has.
    pub sentences: usize,
}

/// The project's pooled pairs.
pub async fn pooled_pairs(db: &Db, project_id: i64) -> StoreResult<Vec<PooledPair>> {
    let pooled: Vec<(i64, i64, i64, String, String, String)> = sqlx::query_as(
        "SELECT e.id, e.claim_id, e.doc_id, c.claim_id, d.doc_id, d.sentences FROM pool_entries e
         JOIN claims c ON c.id = e.claim_id JOIN documents d ON d.id = e.doc_id WHERE e.project_id = $1",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    Ok(pooled
        .into_iter()
        .map(
            |(entry, claim, doc, claim_id, doc_id, sentences)| PooledPair {
                entry,
                claim,
                doc,
                claim_id,
                doc_id,
                sentences: serde_json::from_str::<Vec<serde_json::Value>>(&sentences)
                    .map(|s| s.len())
                    .unwrap_or(0),
            },
        )
        .collect())
}

/// What a judgments import checks its file against, read in one snapshot.
pub struct JudgingSnapshot {
    /// The protocol state of every pair that has judgments (pairs absent need their first pass).
    pub states: HashMap<(i64, i64), PairState>,
    /// The last judgment's id: the import's last transaction refuses if any came after it.
    pub watermark: i64,
    /// Whether the project asks for re-annotations.
    pub reannotates: bool,
}

/// The project's pairs' states and the last judgment, in one snapshot.
pub async fn judging_snapshot(db: &Db, project_id: i64) -> StoreResult<JudgingSnapshot> {
    let mut read = crate::db::begin_read(db).await?;
    let states = project_states(&mut read, project_id).await?;
    let watermark: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM judgment_rows")
        .fetch_one(&mut *read)
        .await?;
    let reannotates = super::history::reannotates(&mut read, project_id).await?;
    read.rollback().await?;
    Ok(JudgingSnapshot {
        states,
        watermark,
        reannotates,
    })
}

/// A judgment a judgments import writes: the pair's keys, what it says, and the pair's state
/// after it.
pub struct ImportedJudgment {
    pub claim: i64,
    pub doc: i64,
    pub verdict: Verdict,
    pub rationale: Vec<Vec<u32>>,
    pub after: PairState,
}

/// Judgments per write transaction of a judgments import.
const JUDGMENTS_CHUNK: usize = 2_000;
/// Final labels per INSERT of the last transaction (7 values each, under SQLite's 32,766).
const FINALS_PER_STATEMENT: usize = 1_000;

/// A final label the last transaction of a judgments import writes.
pub struct FinalRow {
    claim: i64,
    doc: i64,
    judgment: i64,
    label: Label,
}

/// Writes the import's judgments in short transactions, each in its turn, hidden (the view
/// `judgments`) while the import is `writing`; returns the final labels they make, which
/// [`complete_judgments`] writes.
pub async fn write_judgments(
    db: &Db,
    project_id: i64,
    import_id: i64,
    annotator: i64,
    stage: Stage,
    rows: &[ImportedJudgment],
) -> StoreResult<Vec<FinalRow>> {
    let now = now_ms();
    let mut finals = Vec::new();
    for chunk in rows.chunks(JUDGMENTS_CHUNK) {
        let mut tx = write_gate::begin(db).await?;
        for row in chunk {
            let id = sqlx::query_scalar::<_, i64>(
                "INSERT INTO judgment_rows (project_id, claim_id, doc_id, annotator_id, stage, label, no_evidence,
                                        rationale, provenance, import_id, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'import', $9, $10) RETURNING id",
            )
            .bind(project_id)
            .bind(row.claim)
            .bind(row.doc)
            .bind(annotator)
            .bind(stage.as_str())
            .bind(row.verdict.label().as_str())
            .bind(i64::from(row.verdict.no_evidence()))
            .bind(serde_json::to_string(&row.rationale).unwrap_or_else(|_| "[]".into()))
            .bind(import_id)
            .bind(now)
            .fetch_one(&mut *tx)
            .await?;
            if let PairState::Final(done) = row.after {
                finals.push(FinalRow {
                    claim: row.claim,
                    doc: row.doc,
                    judgment: id,
                    label: done.label,
                });
            }
        }
        tx.commit().await?;
    }
    Ok(finals)
}

/// The last transaction of a judgments import: nobody judged its pairs since the snapshot
/// (`watermark`; otherwise a conflict naming the file, and nothing is imported); the labels
/// that are final become final, the pairs' open items close, and the import appears whole.
/// `report` (its `judgments`: the final labels written) goes into the import's record.
pub async fn complete_judgments(
    db: &Db,
    project_id: i64,
    import_id: i64,
    watermark: i64,
    finals: &[FinalRow],
    actor_id: Option<i64>,
    report: &ImportReport,
) -> StoreResult<()> {
    let mut tx = begin_write(db).await?;
    let meanwhile: Option<(String, String)> = sqlx::query_as(
        "SELECT c.claim_id, d.doc_id FROM judgments j
         JOIN judgment_rows mine ON mine.claim_id = j.claim_id AND mine.doc_id = j.doc_id
         JOIN claims c ON c.id = j.claim_id JOIN documents d ON d.id = j.doc_id
         WHERE mine.import_id = $1 AND j.id > $2 AND j.import_id IS DISTINCT FROM $1 LIMIT 1",
    )
    .bind(import_id)
    .bind(watermark)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some((claim, doc)) = meanwhile {
        return Err(StoreError::conflict(crate::Constraint::JudgedMeanwhile, format!(
            "{}: claim {claim} / doc {doc} was judged while the file was imported; nothing was imported, import it again",
            report.file
        )));
    }
    let now = now_ms();
    for chunk in finals.chunks(FINALS_PER_STATEMENT) {
        let rows = crate::values::ValuesInsert::new(
            crate::db::engine_of(&tx),
            "INSERT INTO final_label_rows (project_id, claim_id, doc_id, judgment_id, label, provenance, decided_at) ",
            chunk,
            |b, f| {
                b.bind(project_id)
                    .bind(f.claim)
                    .bind(f.doc)
                    .bind(f.judgment)
                    .bind(f.label.as_str())
                    .bind("import")
                    .bind(now);
            },
        );
        if let Some((sql, args)) = rows.finish()? {
            sqlx::query_with(&sql, args).execute(&mut *tx).await?;
        }
    }
    // The work the import did is no longer anyone's open item.
    sqlx::query(
        "UPDATE assignments SET status = 'withdrawn', closed_at = $1
         WHERE status = 'open' AND pool_entry_id IN
           (SELECT e.id FROM pool_entries e JOIN judgment_rows j
              ON j.claim_id = e.claim_id AND j.doc_id = e.doc_id
            WHERE j.import_id = $2 AND e.project_id = $3)",
    )
    .bind(now)
    .bind(import_id)
    .bind(project_id)
    .execute(&mut *tx)
    .await?;
    finish_import(&mut tx, project_id, import_id, actor_id, report).await?;
    // After the import is done (in this transaction), so the pairs' new states count.
    assign_pending(&mut tx, project_id, actor_id).await?;
    tx.commit().await?;
    Ok(())
}
