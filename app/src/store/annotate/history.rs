//! A pair's judgments and where they leave it in the protocol; the pooled pair itself.

use super::super::{StoreError, StoreResult};
use crate::domain::annotation::{AnnotatorId, Judged, PairState, SecondPassMode, Stage, Verdict};
use crate::domain::label::Label;
use sqlx::AnyConnection;
use std::collections::HashMap;

/// One non-retracted judgment row.
#[derive(Clone, Debug)]
pub(crate) struct JudgmentRow {
    pub id: i64,
    pub stage: Stage,
    pub annotator_id: Option<i64>,
    pub annotator: Option<String>,
    pub label: Label,
    pub no_evidence: bool,
    pub rationale: Vec<Vec<u32>>,
    pub specificity: Option<String>,
    pub revised_claim: Option<String>,
    pub note: Option<String>,
}

/// A pair's judgments in submission order, as the protocol reads them, and its state.
pub(crate) struct PairHistory {
    pub rows: Vec<JudgmentRow>,
    pub judged: Vec<Judged>,
    pub state: PairState,
}

type RawJudgment = (
    i64,
    String,
    Option<i64>,
    Option<String>,
    String,
    crate::store::flag::Flag,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    i64,
);

fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(what.to_string())
}

/// A judgment's columns as the protocol reads them, and its label.
fn judged_of(
    id: i64,
    stage: &str,
    annotator: Option<i64>,
    label: &str,
    no_evidence: bool,
) -> StoreResult<(Judged, Label)> {
    let bad = |e: &dyn std::fmt::Display| corrupt(format!("judgment {id}: {e}"));
    let stage = Stage::parse(stage).map_err(|e| bad(&e))?;
    let label = Label::parse(label).map_err(|e| bad(&e))?;
    let verdict = Verdict::from_columns(label, no_evidence).map_err(|e| bad(&e))?;
    let judged = Judged::new(stage, annotator.map(AnnotatorId), verdict).map_err(|e| bad(&e))?;
    Ok((judged, label))
}

fn parse_row(raw: RawJudgment) -> StoreResult<(JudgmentRow, Judged)> {
    let (
        id,
        stage,
        annotator_id,
        annotator,
        label,
        no_evidence,
        rationale,
        spec,
        revised,
        note,
        _at,
    ) = raw;
    let (judged, label) = judged_of(id, &stage, annotator_id, &label, no_evidence.0)?;
    let stage = judged.stage();
    let rationale: Vec<Vec<u32>> = serde_json::from_str(&rationale)
        .map_err(|e| corrupt(format!("judgment {id}: rationale: {e}")))?;
    Ok((
        JudgmentRow {
            id,
            stage,
            annotator_id,
            annotator,
            label,
            no_evidence: no_evidence.0,
            rationale,
            specificity: spec,
            revised_claim: revised,
            note,
        },
        judged,
    ))
}

const JUDGMENT_COLUMNS: &str =
    "j.id, j.stage, j.annotator_id, u.username, j.label, j.no_evidence, j.rationale, \
     j.specificity, j.revised_claim, j.note, j.created_at";

/// The pair's non-retracted judgments (`claim_id`, `doc_id`: row ids) and its state.
pub(crate) async fn pair_history(
    conn: &mut AnyConnection,
    claim_id: i64,
    doc_id: i64,
) -> StoreResult<PairHistory> {
    let raw: Vec<RawJudgment> = sqlx::query_as(&format!(
        "SELECT {JUDGMENT_COLUMNS} FROM judgments j LEFT JOIN users u ON u.id = j.annotator_id
         WHERE j.claim_id = $1 AND j.doc_id = $2
           AND NOT EXISTS (SELECT 1 FROM judgment_retractions r WHERE r.judgment_id = j.id)
         ORDER BY j.id"
    ))
    .bind(claim_id)
    .bind(doc_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut rows = Vec::with_capacity(raw.len());
    let mut judged = Vec::with_capacity(raw.len());
    for r in raw {
        let (row, j) = parse_row(r)?;
        rows.push(row);
        judged.push(j);
    }
    let state = PairState::from_judgments(&judged)
        .map_err(|e| corrupt(format!("claim {claim_id}, doc {doc_id}: {e}")))?;
    Ok(PairHistory {
        rows,
        judged,
        state,
    })
}

/// The protocol state of every pair of the project that has judgments; pairs absent need their
/// first pass.
pub(crate) async fn project_states(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<HashMap<(i64, i64), PairState>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        claim_id: i64,
        doc_id: i64,
        stage: String,
        annotator_id: Option<i64>,
        label: String,
        no_evidence: crate::store::flag::Flag,
        id: i64,
    }
    let raw: Vec<Row> = sqlx::query_as(
        "SELECT j.claim_id, j.doc_id, j.stage, j.annotator_id, j.label, j.no_evidence, j.id
         FROM judgments j
         WHERE j.project_id = $1
           AND NOT EXISTS (SELECT 1 FROM judgment_retractions r WHERE r.judgment_id = j.id)
         ORDER BY j.claim_id, j.doc_id, j.id",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut judged: HashMap<(i64, i64), Vec<Judged>> = HashMap::new();
    for Row {
        claim_id: claim,
        doc_id: doc,
        stage,
        annotator_id: annotator,
        label,
        no_evidence,
        id,
    } in raw
    {
        let (j, _) = judged_of(id, &stage, annotator, &label, no_evidence.0)?;
        judged.entry((claim, doc)).or_default().push(j);
    }
    judged
        .into_iter()
        .map(|(pair, list)| {
            PairState::from_judgments(&list)
                .map(|state| (pair, state))
                .map_err(|e| corrupt(format!("claim {}, doc {}: {e}", pair.0, pair.1)))
        })
        .collect()
}

/// A pooled pair with what an annotator reads.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub id: i64,
    pub project_id: i64,
    pub claim_id: i64,
    pub doc_id: i64,
    pub claim_ext: String,
    pub claim_text: String,
    pub doc_ext: String,
    pub title: String,
    pub sentences: Vec<String>,
}

/// The pool entry `entry_id`, if it exists.
pub(crate) async fn entry(conn: &mut AnyConnection, entry_id: i64) -> StoreResult<Option<Entry>> {
    load_entry(
        conn,
        "SELECT e.id, e.project_id, e.claim_id, e.doc_id, c.claim_id AS claim_ext,
                c.text AS claim_text, d.doc_id AS doc_ext, d.title, d.sentences
         FROM pool_entries e JOIN claims c ON c.id = e.claim_id
         JOIN documents d ON d.id = e.doc_id WHERE e.id = $1",
        entry_id,
    )
    .await
}

/// The pair of gold item `gold_item_id` as an entry: its id is the pair's pool entry when the
/// pair is pooled, else the gold item's, so that a page shows a gold item as any other.
pub(crate) async fn gold_entry(
    conn: &mut AnyConnection,
    gold_item_id: i64,
) -> StoreResult<Option<Entry>> {
    load_entry(
        conn,
        "SELECT COALESCE((SELECT e.id FROM pool_entries e WHERE e.project_id = g.project_id
                            AND e.claim_id = g.claim_id AND e.doc_id = g.doc_id), g.id) AS id,
                g.project_id, g.claim_id, g.doc_id, c.claim_id AS claim_ext,
                c.text AS claim_text, d.doc_id AS doc_ext, d.title, d.sentences
         FROM gold_items g JOIN claims c ON c.id = g.claim_id
         JOIN documents d ON d.id = g.doc_id WHERE g.id = $1",
        gold_item_id,
    )
    .await
}

/// One pair with its claim and abstract, read by `sql` (selecting the columns of `Row`) for
/// `id`.
async fn load_entry(
    conn: &mut AnyConnection,
    sql: &'static str,
    id: i64,
) -> StoreResult<Option<Entry>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        id: i64,
        project_id: i64,
        claim_id: i64,
        doc_id: i64,
        claim_ext: String,
        claim_text: String,
        doc_ext: String,
        title: String,
        sentences: String,
    }
    let row: Option<Row> = sqlx::query_as(sql)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    row.map(|r| {
        let sentences: Vec<String> = serde_json::from_str(&r.sentences)
            .map_err(|e| corrupt(format!("document {}: sentences: {e}", r.doc_ext)))?;
        Ok(Entry {
            id: r.id,
            project_id: r.project_id,
            claim_id: r.claim_id,
            doc_id: r.doc_id,
            claim_ext: r.claim_ext,
            claim_text: r.claim_text,
            doc_ext: r.doc_ext,
            title: r.title,
            sentences,
        })
    })
    .transpose()
}

/// The project's second-pass mode.
pub(crate) async fn mode(conn: &mut AnyConnection, project_id: i64) -> StoreResult<SecondPassMode> {
    let text: String = sqlx::query_scalar("SELECT second_pass_mode FROM projects WHERE id = $1")
        .bind(project_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("project {project_id}")))?;
    SecondPassMode::parse(&text).map_err(corrupt)
}

/// The project's seed for assignment.
pub(crate) async fn seed(conn: &mut AnyConnection, project_id: i64) -> StoreResult<u64> {
    let seed: i64 = sqlx::query_scalar("SELECT assignment_seed FROM projects WHERE id = $1")
        .bind(project_id)
        .fetch_one(&mut *conn)
        .await?;
    Ok(seed.cast_unsigned())
}

/// Whether the project sends disagreements to a fresh annotator before adjudication.
pub(crate) async fn reannotates(conn: &mut AnyConnection, project_id: i64) -> StoreResult<bool> {
    let reannotate: crate::store::flag::Flag =
        sqlx::query_scalar("SELECT reannotate FROM projects WHERE id = $1")
            .bind(project_id)
            .fetch_one(&mut *conn)
            .await?;
    Ok(reannotate.0)
}

/// One line describing where a pair stands, for people.
pub(crate) fn outcome_text(state: &PairState) -> String {
    match state {
        PairState::NeedsFirst => "waiting for its first pass".into(),
        PairState::NeedsSecond { .. } => "waiting for a second annotator".into(),
        PairState::NeedsAdjudication { third: Some(_), .. } => {
            "the re-annotation agrees with neither pass: sent to adjudication".into()
        }
        PairState::NeedsAdjudication { .. } => "the passes disagree: sent to adjudication".into(),
        PairState::Final(done) => format!("final: {}", done.label.as_str()),
    }
}
