//! A pair's judgments and where they leave it in the protocol; the pooled pair itself.

use super::super::{StoreError, StoreResult};
use domain::annotation::{AnnotatorId, Judged, PairState, SecondPassMode, Stage, Verdict};
use domain::label::Label;
use domain::model::paper::PaperMeta;
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

/// A judgment row as read: its pair (claim and document row ids), then its columns.
type RawJudgment = (
    i64,
    i64,
    i64,
    String,
    Option<i64>,
    Option<String>,
    String,
    crate::flag::Flag,
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
        _claim,
        _doc,
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
    "j.claim_id, j.doc_id, j.id, j.stage, j.annotator_id, u.username, j.label, j.no_evidence, \
     j.rationale, j.specificity, j.revised_claim, j.note, j.created_at";

/// The pair's non-retracted judgments (`claim_id`, `doc_id`: row ids of project `project_id`)
/// and its state.
pub(crate) async fn pair_history(
    conn: &mut AnyConnection,
    project_id: i64,
    claim_id: i64,
    doc_id: i64,
) -> StoreResult<PairHistory> {
    pair_histories(conn, project_id, &[(claim_id, doc_id)])
        .await?
        .remove(&(claim_id, doc_id))
        .ok_or_else(|| StoreError::Fault(format!("claim {claim_id}, doc {doc_id}: no history")))
}

/// [`pair_history`] of each of `pairs` (claim and document row ids of project `project_id`), in
/// one statement (the project's id leads the index by pair): every pair asked for is in the map.
pub(crate) async fn pair_histories(
    conn: &mut AnyConnection,
    project_id: i64,
    pairs: &[(i64, i64)],
) -> StoreResult<HashMap<(i64, i64), PairHistory>> {
    let mut out: HashMap<(i64, i64), PairHistory> = HashMap::new();
    if pairs.is_empty() {
        return Ok(out);
    }
    let which = (0..pairs.len())
        .map(|i| {
            format!(
                "(j.claim_id = ${} AND j.doc_id = ${})",
                2 * i + 2,
                2 * i + 3
            )
        })
        .collect::<Vec<_>>()
        .join(" OR ");
    let sql = format!(
        "SELECT {JUDGMENT_COLUMNS} FROM judgments j LEFT JOIN users u ON u.id = j.annotator_id
         WHERE j.project_id = $1 AND ({which})
           AND NOT EXISTS (SELECT 1 FROM judgment_retractions r WHERE r.judgment_id = j.id)
         ORDER BY j.id"
    );
    let mut query = sqlx::query_as::<_, RawJudgment>(&sql).bind(project_id);
    for &(claim, doc) in pairs {
        query = query.bind(claim).bind(doc);
    }
    let raw = query.fetch_all(&mut *conn).await?;
    let mut judged: HashMap<(i64, i64), (Vec<JudgmentRow>, Vec<Judged>)> = HashMap::new();
    for r in raw {
        let pair = (r.0, r.1);
        let (row, j) = parse_row(r)?;
        let lists = judged.entry(pair).or_default();
        lists.0.push(row);
        lists.1.push(j);
    }
    for &pair in pairs {
        if out.contains_key(&pair) {
            continue;
        }
        let (rows, judged) = judged.remove(&pair).unwrap_or_default();
        let state = PairState::from_judgments(&judged)
            .map_err(|e| corrupt(format!("claim {}, doc {}: {e}", pair.0, pair.1)))?;
        out.insert(
            pair,
            PairHistory {
                rows,
                judged,
                state,
            },
        );
    }
    Ok(out)
}

/// `annotator`'s undone (retracted) judgments of `pairs` in project `project_id` at `stage`, the
/// newest of each pair: the answer an item put back by an undo had. One statement by the
/// pairs' index; a pair never undone reads no row.
pub(crate) async fn undone_answers(
    conn: &mut AnyConnection,
    project_id: i64,
    annotator: AnnotatorId,
    pairs: &[(i64, i64, Stage)],
) -> StoreResult<HashMap<(i64, i64), JudgmentRow>> {
    let mut out = HashMap::new();
    if pairs.is_empty() {
        return Ok(out);
    }
    let which = (0..pairs.len())
        .map(|i| {
            format!(
                "(j.claim_id = ${} AND j.doc_id = ${} AND j.stage = ${})",
                3 * i + 3,
                3 * i + 4,
                3 * i + 5
            )
        })
        .collect::<Vec<_>>()
        .join(" OR ");
    let sql = format!(
        "SELECT {JUDGMENT_COLUMNS} FROM judgments j LEFT JOIN users u ON u.id = j.annotator_id
         WHERE j.project_id = $1 AND j.annotator_id = $2 AND ({which})
           AND EXISTS (SELECT 1 FROM judgment_retractions r WHERE r.judgment_id = j.id)
         ORDER BY j.id"
    );
    let mut query = sqlx::query_as::<_, RawJudgment>(&sql)
        .bind(project_id)
        .bind(annotator.0);
    for &(claim, doc, stage) in pairs {
        query = query.bind(claim).bind(doc).bind(stage.as_str());
    }
    for raw in query.fetch_all(&mut *conn).await? {
        let pair = (raw.0, raw.1);
        let (row, _) = parse_row(raw)?;
        out.insert(pair, row);
    }
    Ok(out)
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
        no_evidence: crate::flag::Flag,
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
    /// What the corpus line tells of the paper (venue, year, authors, links).
    pub paper: PaperMeta,
}

/// The columns of an [`EntryRow`], for a query joining `pool_entries e`, `claims c` and
/// `documents d`.
pub(crate) const ENTRY_COLUMNS: &str =
    "e.id AS entry_id, e.project_id, e.claim_id, e.doc_id, c.claim_id AS claim_ext, \
     c.text AS claim_text, d.doc_id AS doc_ext, d.title, d.sentences, d.extra";

/// The pool entry `entry_id`, if it exists.
pub(crate) async fn entry(conn: &mut AnyConnection, entry_id: i64) -> StoreResult<Option<Entry>> {
    load_entry(
        conn,
        &format!(
            "SELECT {ENTRY_COLUMNS}
             FROM pool_entries e JOIN claims c ON c.id = e.claim_id
             JOIN documents d ON d.id = e.doc_id WHERE e.id = $1"
        ),
        entry_id,
    )
    .await
}

/// The pool entry `entry_id` with its project's second-pass mode, if it exists.
pub(crate) async fn entry_and_mode(
    conn: &mut AnyConnection,
    entry_id: i64,
) -> StoreResult<Option<(Entry, SecondPassMode)>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        entry: EntryRow,
        second_pass_mode: String,
    }
    let row: Option<Row> = sqlx::query_as(&format!(
        "SELECT {ENTRY_COLUMNS}, p.second_pass_mode
         FROM pool_entries e JOIN claims c ON c.id = e.claim_id
         JOIN documents d ON d.id = e.doc_id JOIN projects p ON p.id = e.project_id
         WHERE e.id = $1"
    ))
    .bind(entry_id)
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|r| {
        let mode = SecondPassMode::parse(&r.second_pass_mode).map_err(corrupt)?;
        Ok((r.entry.parse()?, mode))
    })
    .transpose()
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
                            AND e.claim_id = g.claim_id AND e.doc_id = g.doc_id), g.id) AS entry_id,
                g.project_id, g.claim_id, g.doc_id, c.claim_id AS claim_ext,
                c.text AS claim_text, d.doc_id AS doc_ext, d.title, d.sentences, d.extra
         FROM gold_items g JOIN claims c ON c.id = g.claim_id
         JOIN documents d ON d.id = g.doc_id WHERE g.id = $1",
        gold_item_id,
    )
    .await
}

/// One pair with its claim and abstract, as read by [`ENTRY_COLUMNS`].
#[derive(sqlx::FromRow)]
pub(crate) struct EntryRow {
    entry_id: i64,
    project_id: i64,
    claim_id: i64,
    doc_id: i64,
    claim_ext: String,
    claim_text: String,
    doc_ext: String,
    title: String,
    sentences: String,
    extra: Option<String>,
}

impl EntryRow {
    /// The entry, its abstract's sentences parsed.
    pub(crate) fn parse(self) -> StoreResult<Entry> {
        let sentences: Vec<String> = serde_json::from_str(&self.sentences)
            .map_err(|e| corrupt(format!("document {}: sentences: {e}", self.doc_ext)))?;
        let paper = match &self.extra {
            Some(extra) => PaperMeta::from_extra(
                &serde_json::from_str(extra)
                    .map_err(|e| corrupt(format!("document {}: extra: {e}", self.doc_ext)))?,
            ),
            None => PaperMeta::default(),
        };
        Ok(Entry {
            id: self.entry_id,
            project_id: self.project_id,
            claim_id: self.claim_id,
            doc_id: self.doc_id,
            claim_ext: self.claim_ext,
            claim_text: self.claim_text,
            doc_ext: self.doc_ext,
            title: self.title,
            sentences,
            paper,
        })
    }
}

/// One pair with its claim and abstract, read by `sql` (selecting the columns of
/// [`EntryRow`]) for `id`.
async fn load_entry(conn: &mut AnyConnection, sql: &str, id: i64) -> StoreResult<Option<Entry>> {
    let row: Option<EntryRow> = sqlx::query_as(sql)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    row.map(EntryRow::parse).transpose()
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
    let reannotate: crate::flag::Flag =
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_db::TestDb;

    /// Runs the `INSERT ... RETURNING id` statement `sql` with `project` and `ext` bound.
    async fn insert(conn: &mut AnyConnection, sql: &str, project: i64, ext: &str) -> i64 {
        sqlx::query_scalar(sql)
            .bind(project)
            .bind(ext)
            .fetch_one(&mut *conn)
            .await
            .expect(sql)
    }

    async fn user(conn: &mut AnyConnection, name: &str) -> i64 {
        sqlx::query_scalar(
            "INSERT INTO users (username, role, password_hash, created_at)
             VALUES ($1, 'annotator', '$argon2id$x', 1) RETURNING id",
        )
        .bind(name)
        .fetch_one(&mut *conn)
        .await
        .expect("a user")
    }

    async fn judge(
        conn: &mut AnyConnection,
        project: i64,
        (claim, doc): (i64, i64),
        annotator: i64,
        stage: &str,
        label: &str,
    ) -> i64 {
        sqlx::query_scalar(
            "INSERT INTO judgment_rows (project_id, claim_id, doc_id, annotator_id, stage, label,
                                        rationale, provenance, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, '[[0]]', 'pooling', 1) RETURNING id",
        )
        .bind(project)
        .bind(claim)
        .bind(doc)
        .bind(annotator)
        .bind(stage)
        .bind(label)
        .fetch_one(&mut *conn)
        .await
        .expect("a judgment")
    }

    /// The batched read gives every pair asked for exactly what reading it alone gives, and
    /// keeps to its project: pairs disagreeing, waiting for a second pass (one judgment
    /// retracted), never judged, and a pair of another project.
    #[tokio::test]
    async fn pair_histories_read_together_equal_each_read_alone() {
        let test = TestDb::fresh().await;
        let p = crate::projects::create(&test.db, "p", "", None)
            .await
            .unwrap();
        let q = crate::projects::create(&test.db, "q", "", None)
            .await
            .unwrap();
        let mut conn = test.db.acquire().await.unwrap();
        let (ann, bea) = (user(&mut conn, "ann").await, user(&mut conn, "bea").await);
        let claim = "INSERT INTO claim_rows (project_id, claim_id, text)
                     VALUES ($1, $2, 'a claim') RETURNING id";
        let doc = "INSERT INTO document_rows (project_id, doc_id, title, sentences)
                   VALUES ($1, $2, 'a title', '[\"one.\"]') RETURNING id";
        let (c1, c2) = (
            insert(&mut conn, claim, p, "1").await,
            insert(&mut conn, claim, p, "2").await,
        );
        let (d1, d2) = (
            insert(&mut conn, doc, p, "10").await,
            insert(&mut conn, doc, p, "20").await,
        );
        let (qc, qd) = (
            insert(&mut conn, claim, q, "1").await,
            insert(&mut conn, doc, q, "10").await,
        );
        let (disagree, waiting, fresh, other) = ((c1, d1), (c1, d2), (c2, d1), (qc, qd));
        judge(&mut conn, p, disagree, ann, "first", "SUPPORT").await;
        judge(&mut conn, p, disagree, bea, "second", "CONTRADICT").await;
        judge(&mut conn, p, waiting, ann, "first", "SUPPORT").await;
        let retracted = judge(&mut conn, p, waiting, bea, "second", "SUPPORT").await;
        sqlx::query(
            "INSERT INTO judgment_retractions (judgment_id, retracted_by, retracted_at)
             VALUES ($1, $2, 2)",
        )
        .bind(retracted)
        .bind(bea)
        .execute(&mut *conn)
        .await
        .unwrap();
        judge(&mut conn, q, other, ann, "first", "SUPPORT").await;

        let pairs = [disagree, waiting, fresh, other];
        let together = pair_histories(&mut conn, p, &pairs).await.unwrap();
        assert_eq!(together.len(), pairs.len());
        let ids = |h: &PairHistory| h.rows.iter().map(|r| r.id).collect::<Vec<_>>();
        for pair in pairs {
            let alone = pair_history(&mut conn, p, pair.0, pair.1).await.unwrap();
            let read = &together[&pair];
            assert_eq!(ids(read), ids(&alone), "{pair:?}");
            assert_eq!(read.state, alone.state, "{pair:?}");
            assert_eq!(read.judged, alone.judged, "{pair:?}");
        }
        let states: Vec<_> = pairs.iter().map(|p| &together[p].state).collect();
        assert!(
            matches!(states[0], PairState::NeedsAdjudication { .. }),
            "{:?}",
            states[0]
        );
        assert!(
            matches!(states[1], PairState::NeedsSecond { .. }),
            "{:?}",
            states[1]
        );
        assert_eq!(
            together[&waiting].rows.len(),
            1,
            "the retraction is left out"
        );
        assert_eq!(states[2], &PairState::NeedsFirst);
        assert_eq!(
            states[3],
            &PairState::NeedsFirst,
            "another project's judgment is not this project's"
        );
        assert!(pair_histories(&mut conn, p, &[]).await.unwrap().is_empty());
    }
}
