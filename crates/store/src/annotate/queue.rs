//! The annotator's queue and what each item shows; skip, flag and comments.

use super::super::audit::AuditEvent;
use super::super::{now_ms, Constraint, Db, Field, StoreError, StoreResult};
use super::history::{self, outcome_text, pair_history, Entry, JudgmentRow, PairHistory};
use super::{begin_write, not_yours, QueueTerms, LATEST_OWN_JUDGMENT, UNDO_WINDOW_MS};
use domain::annotation::{
    reveals_on_submit, shows_first_label, skip_position, visible_first_label, AnnotatorId,
    SecondPassMode, Stage,
};
use domain::model::annotate::{
    CommentView, DraftForm, ItemView, LastSubmission, OpinionView, QueueHead,
};
use sqlx::AnyConnection;

/// An open assignment as the queue lists it.
struct Open {
    id: i64,
    stage: Stage,
    flagged: bool,
    flag_note: Option<String>,
    /// The viewer's answer to it that they undid, if any.
    undone: Option<DraftForm>,
}

/// The answer of `row` as the form holds it (its evidence sets merged, as the form has one).
fn draft_of(row: &JudgmentRow) -> DraftForm {
    DraftForm {
        no_evidence: row.no_evidence,
        label: (!row.no_evidence).then(|| row.label.as_str().to_owned()),
        sentences: merged(&row.rationale),
        specificity: row.specificity.clone(),
        revised_claim: row.revised_claim.clone(),
        note: row.note.clone(),
    }
}

/// A judgment's rationale sentences, all evidence sets merged, in order.
fn merged(rationale: &[Vec<u32>]) -> Vec<u32> {
    let mut all: Vec<u32> = rationale.iter().flatten().copied().collect();
    all.sort_unstable();
    all.dedup();
    all
}

fn opinion(row: &JudgmentRow, viewer: AnnotatorId) -> OpinionView {
    OpinionView {
        stage: row.stage.as_str().to_owned(),
        annotator: row.annotator.clone().unwrap_or_else(|| "import".into()),
        label: row.label.as_str().to_owned(),
        no_evidence: row.no_evidence,
        sentences: merged(&row.rationale),
        specificity: row.specificity.clone(),
        revised_claim: row.revised_claim.clone(),
        note: row.note.clone(),
        mine: row.annotator_id == Some(viewer.0),
    }
}

/// The comments on a pair, oldest first.
async fn comments(
    conn: &mut AnyConnection,
    claim_id: i64,
    doc_id: i64,
) -> StoreResult<Vec<CommentView>> {
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT u.username, c.body, c.created_at FROM comments c JOIN users u ON u.id = c.author_id
         WHERE c.claim_id = $1 AND c.doc_id = $2 ORDER BY c.created_at, c.id",
    )
    .bind(claim_id)
    .bind(doc_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(author, body, at_ms)| CommentView {
            author,
            body,
            at_ms,
        })
        .collect())
}

/// Who looks at an item, and whether they see both annotations and the discussion at every stage
/// (the command's decision: a lead does), not only at adjudication.
#[derive(Clone, Copy)]
struct Viewer {
    id: AnnotatorId,
    shows_discussion: bool,
}

/// What `viewer` may see of a pair at `stage`, from its history `hist`: the first annotation on
/// a second pass only as the mode allows; both annotations and the discussion only at
/// adjudication (or everywhere, as [`Viewer::shows_discussion`] says); a model's suggested label only on an annotator's first or
/// second pass (not a re-annotation), when the lead has turned suggestions on; as `project`
/// is set.
async fn item_view(
    conn: &mut AnyConnection,
    viewer: Viewer,
    entry: Entry,
    hist: &PairHistory,
    stage: Stage,
    open: Option<&Open>,
    project: &QueueProject,
) -> StoreResult<ItemView> {
    let mode = project.mode;
    let PairHistory { rows, state, .. } = hist;
    let first_row = rows.iter().find(|r| r.stage == Stage::First);
    let first = match (stage, first_row) {
        (Stage::Second, Some(row)) if shows_first_label(stage, state) => {
            visible_first_label(mode, state, viewer.id).map(|_| opinion(row, viewer.id))
        }
        _ => None,
    };
    let discussing = stage == Stage::Adjudication || viewer.shows_discussion;
    let opinions = if discussing {
        rows.iter()
            .filter(|r| matches!(r.stage, Stage::First | Stage::Second | Stage::Adjudication))
            .map(|r| opinion(r, viewer.id))
            .collect()
    } else {
        Vec::new()
    };
    let comments = if discussing {
        comments(conn, entry.claim_id, entry.doc_id).await?
    } else {
        Vec::new()
    };
    // An annotator's first or second pass (a gold item's too, from its pair), not a
    // re-annotation of a disagreement (a second pass by a fresh annotator, blind): the lead's
    // chosen model's label, if suggestions are on; only the label.
    let reannotation = matches!(
        state,
        domain::annotation::PairState::NeedsAdjudication { .. }
    );
    let suggestion = if project.suggests
        && open.is_some()
        && (stage == Stage::First || (stage == Stage::Second && !reannotation))
    {
        crate::assessors::suggestion(conn, entry.project_id, entry.claim_id, entry.doc_id)
            .await?
            .map(|label| label.as_str().to_owned())
    } else {
        None
    };
    Ok(ItemView {
        assignment_id: open.map(|o| o.id),
        pool_entry_id: entry.id,
        stage: stage.as_str().to_owned(),
        claim_id: entry.claim_ext,
        claim: entry.claim_text,
        doc_id: entry.doc_ext,
        title: entry.title,
        sentences: entry.sentences,
        paper: entry.paper,
        first,
        opinions,
        comments,
        flagged: open.is_some_and(|o| o.flagged),
        flag_note: open.and_then(|o| o.flag_note.clone()),
        mode: mode.as_str().to_owned(),
        suggestion,
        undone: open.and_then(|o| o.undone.clone()),
    })
}

/// The caller's latest real judgment in the project while it may still be undone, as read;
/// [`LastJudgment::shown`] completes it with its pair's history.
struct LastJudgment {
    id: i64,
    claim: i64,
    doc: i64,
    stage: Stage,
    label: String,
    at: i64,
    claim_ext: String,
    doc_ext: String,
}

impl LastJudgment {
    /// The caller's latest real judgment in the project, if it may still be undone.
    async fn read(
        conn: &mut AnyConnection,
        annotator: AnnotatorId,
        project_id: i64,
    ) -> StoreResult<Option<LastJudgment>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            id: i64,
            claim: i64,
            doc: i64,
            stage: String,
            label: String,
            created_at: i64,
            claim_ext: String,
            doc_ext: String,
        }
        let row: Option<Row> = sqlx::query_as(&format!(
            "SELECT j.id, j.claim_id AS claim, j.doc_id AS doc, j.stage, j.label, j.created_at,
                    c.claim_id AS claim_ext, d.doc_id AS doc_ext
             FROM judgments j JOIN claims c ON c.id = j.claim_id JOIN documents d ON d.id = j.doc_id
             WHERE {LATEST_OWN_JUDGMENT}"
        ))
        .bind(project_id)
        .bind(annotator.0)
        .fetch_optional(&mut *conn)
        .await?;
        let Some(row) = row.filter(|r| now_ms() - r.created_at < UNDO_WINDOW_MS) else {
            return Ok(None);
        };
        Ok(Some(LastJudgment {
            id: row.id,
            claim: row.claim,
            doc: row.doc,
            stage: Stage::parse(&row.stage).map_err(StoreError::unreadable)?,
            label: row.label,
            at: row.created_at,
            claim_ext: row.claim_ext,
            doc_ext: row.doc_ext,
        }))
    }

    /// As the queue shows it, from its pair's history `hist` under the project's `mode`.
    fn shown(self, hist: &PairHistory, mode: SecondPassMode) -> LastSubmission {
        let first_label = (self.stage != Stage::First)
            .then(|| hist.state.first().map(|o| o.label.as_str().to_owned()))
            .flatten();
        // A re-annotation (a second second pass, after a disagreement) showed both labels:
        // final.
        let reannotation = self.stage == Stage::Second
            && hist
                .rows
                .iter()
                .filter(|r| r.stage == Stage::Second)
                .count()
                >= 2;
        LastSubmission {
            judgment_id: self.id,
            claim_id: self.claim_ext,
            doc_id: self.doc_ext,
            stage: self.stage.as_str().to_owned(),
            label: self.label,
            first_label,
            outcome: outcome_text(&hist.state),
            undo_until_ms: self.at + UNDO_WINDOW_MS,
            undoable: !reveals_on_submit(self.stage, mode) && !reannotation,
            feedback: None,
        }
    }
}

/// The caller's latest real judgment in the project while it may still be undone, as the queue
/// shows it (the one [`super::undo_last`] undoes): what their history page offers to undo.
pub async fn last_submission(
    db: &Db,
    annotator: AnnotatorId,
    project_id: i64,
) -> StoreResult<Option<LastSubmission>> {
    let mut conn = db.acquire().await?;
    let Some(last) = LastJudgment::read(&mut conn, annotator, project_id).await? else {
        return Ok(None);
    };
    let mode = history::mode(&mut conn, project_id).await?;
    let histories =
        history::pair_histories(&mut conn, project_id, &[(last.claim, last.doc)]).await?;
    let hist = histories
        .get(&(last.claim, last.doc))
        .ok_or_else(|| StoreError::Fault(format!("judgment {}: history not read", last.id)))?;
    Ok(Some(last.shown(hist, mode)))
}

/// The newer of the caller's latest real judgment and gold answer that may still be undone.
fn newer(real: Option<LastSubmission>, gold: Option<LastSubmission>) -> Option<LastSubmission> {
    match (real, gold) {
        (Some(r), Some(g)) => Some(if g.undo_until_ms >= r.undo_until_ms {
            g
        } else {
            r
        }),
        (r, g) => r.or(g),
    }
}

/// What the queue reads of its project, in one statement.
struct QueueProject {
    name: String,
    mode: SecondPassMode,
    judging: domain::judging::JudgingSettings,
    gold: domain::gold_checks::GoldSettings,
    /// Whether the lead turned model suggestions on.
    suggests: bool,
    /// Whether the project has gold items (without them, nobody has a gold item open or
    /// answered).
    has_gold: bool,
}

impl QueueProject {
    async fn read(conn: &mut AnyConnection, project_id: i64) -> StoreResult<QueueProject> {
        #[derive(sqlx::FromRow)]
        struct Row {
            name: String,
            second_pass_mode: String,
            judging_order: String,
            judging_seed: i64,
            judging_budget: Option<i64>,
            gold_every: Option<i64>,
            qualification_training: i64,
            qualification_graded: i64,
            qualification_pass: f64,
            suggests: crate::flag::Flag,
            has_gold: crate::flag::Flag,
        }
        let row: Row = sqlx::query_as(
            "SELECT name, second_pass_mode, judging_order, judging_seed, judging_budget,
                    gold_every, qualification_training, qualification_graded, qualification_pass,
                    p.suggest_from IS NOT NULL AS suggests,
                    EXISTS (SELECT 1 FROM gold_items g WHERE g.project_id = p.id) AS has_gold
             FROM projects p WHERE p.id = $1",
        )
        .bind(project_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("project #{project_id}")))?;
        let corrupt =
            |e: &dyn std::fmt::Display| StoreError::Corrupt(format!("project #{project_id}: {e}"));
        Ok(QueueProject {
            name: row.name,
            mode: SecondPassMode::parse(&row.second_pass_mode).map_err(|e| corrupt(&e))?,
            judging: super::judging::settings_of(
                project_id,
                &row.judging_order,
                row.judging_seed,
                row.judging_budget,
            )?,
            gold: domain::gold_checks::GoldSettings::from_columns(
                row.gold_every,
                row.qualification_training,
                row.qualification_graded,
                row.qualification_pass,
            )
            .map_err(|e| corrupt(&e))?,
            suggests: row.suggests.0,
            has_gold: row.has_gold.0,
        })
    }
}

/// The head of the caller's queue in a project: current and next item, counts, and the last
/// submission while it may be undone. Order: skipped items last, then shallowest entry depth.
/// Under a live judging order, an annotator holding no first pass takes the one the order
/// serves next first ([`super::judging`]). What it serves and shows follows `terms`.
pub async fn queue_head(
    db: &Db,
    annotator: AnnotatorId,
    project_id: i64,
    terms: QueueTerms,
) -> StoreResult<QueueHead> {
    {
        // The settings as they stand now decide whether anything is to be served: a queue
        // without live first passes or gold reads nothing more before its snapshot.
        let seen = QueueProject::read(&mut *db.acquire().await?, project_id).await?;
        super::judging::serve_first(db, annotator, project_id, &seen.judging).await?;
        if terms.serves_gold {
            super::gold::serve(db, annotator, project_id, &seen.gold).await?;
        }
    }
    // One snapshot: the items, the counts and the last submission agree.
    let mut pooled = db.acquire().await?;
    let mut conn = crate::db::begin_read_on(&mut pooled).await?;
    let project = QueueProject::read(&mut conn, project_id).await?;
    #[derive(sqlx::FromRow)]
    struct OpenRow {
        assignment_id: i64,
        stage: String,
        flagged: crate::flag::Flag,
        flag_note: Option<String>,
        #[sqlx(flatten)]
        entry: history::EntryRow,
    }
    // The first two open items (of visible pool entries) are chosen first; only they are
    // joined to their claim and abstract.
    let rows: Vec<OpenRow> = sqlx::query_as(&format!(
        "SELECT a.id AS assignment_id, a.stage, a.flagged, a.flag_note, {}
         FROM (SELECT a.id, a.stage, a.flagged, a.flag_note, a.pool_entry_id, a.queue_pos,
                      e.entry_depth
               FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
               WHERE a.annotator_id = $1 AND a.status = 'open' AND a.project_id = $2
               ORDER BY a.queue_pos, e.entry_depth, e.id LIMIT 2) a
         JOIN pool_entries e ON e.id = a.pool_entry_id
         JOIN claims c ON c.id = e.claim_id JOIN documents d ON d.id = e.doc_id
         ORDER BY a.queue_pos, a.entry_depth, e.id",
        history::ENTRY_COLUMNS
    ))
    .bind(annotator.0)
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let standing =
        super::gold::standing_under(&mut conn, annotator.0, project_id, &project.gold).await?;
    // A gold item comes first, looking like any other; a candidate sees nothing else.
    let mut open: Vec<(Open, Entry)> = Vec::with_capacity(2);
    let open_gold = if project.has_gold {
        super::gold::open_gold(&mut conn, annotator.0, project_id).await?
    } else {
        None
    };
    if let Some(gold) = open_gold {
        let pair = history::gold_entry(&mut conn, gold.item)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("gold item {} lost its pair", gold.item)))?;
        let item = Open {
            id: gold.id,
            stage: Stage::First,
            flagged: gold.flagged,
            flag_note: gold.flag_note,
            undone: None,
        };
        open.push((item, pair));
    }
    // A gold item's answers are not judgments: no undone judgment is its answer.
    let gold_items = open.len();
    let rows = if standing.admitted { rows } else { Vec::new() };
    for row in rows.into_iter().take(2 - open.len()) {
        let entry = row.entry.parse()?;
        let item = Open {
            id: row.assignment_id,
            stage: Stage::parse(&row.stage).map_err(StoreError::unreadable)?,
            flagged: row.flagged.0,
            flag_note: row.flag_note,
            undone: None,
        };
        open.push((item, entry));
    }
    // Gold checks count as items; a qualification's do not (the candidate sees their own
    // progress). With them, the guidelines the caller has yet to confirm.
    let (open_count, done, guidelines_to_confirm): (i64, i64, Option<i64>) =
        sqlx::query_as(&format!(
            // Two branches, each from its index: one condition over both joins would read
            // the whole pool.
            "SELECT COALESCE(SUM(CASE WHEN a.status = 'open' THEN 1 ELSE 0 END), 0),
                    COALESCE(SUM(CASE WHEN a.status = 'done' THEN 1 ELSE 0 END), 0),
                    ({}) AS guidelines
             FROM (SELECT a.status FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
                   WHERE a.annotator_id = $1 AND a.project_id = $2
                   UNION ALL
                   SELECT a.status FROM assignments a JOIN gold_items g ON g.id = a.gold_item_id
                   WHERE a.annotator_id = $1 AND g.project_id = $2 AND a.gold_purpose = 'check') a",
            crate::guidelines::to_confirm_sql("$2", "$1")
        ))
        .bind(annotator.0)
        .bind(project_id)
        .fetch_one(&mut *conn)
        .await?;
    let last_real = LastJudgment::read(&mut conn, annotator, project_id).await?;
    let last_gold = if project.has_gold {
        super::gold::last_answer(&mut conn, annotator, project_id).await?
    } else {
        None
    };
    // Every pair shown, and the last judgment's, in one read.
    let mut pairs: Vec<(i64, i64)> = open
        .iter()
        .map(|(_, entry)| (entry.claim_id, entry.doc_id))
        .collect();
    pairs.extend(last_real.as_ref().map(|l| (l.claim, l.doc)));
    let histories = history::pair_histories(&mut conn, project_id, &pairs).await?;
    let history_of = |claim: i64, doc: i64| {
        histories
            .get(&(claim, doc))
            .ok_or_else(|| StoreError::Fault(format!("claim {claim}, doc {doc}: history not read")))
    };
    let viewer = Viewer {
        id: annotator,
        shows_discussion: terms.shows_discussion,
    };
    let shown: Vec<(i64, i64, Stage)> = open
        .iter()
        .skip(gold_items)
        .map(|(item, entry)| (entry.claim_id, entry.doc_id, item.stage))
        .collect();
    let mut undone = history::undone_answers(&mut conn, project_id, annotator, &shown).await?;
    let mut items = Vec::with_capacity(open.len());
    for (i, (mut item, entry)) in open.into_iter().enumerate() {
        item.undone = (i >= gold_items)
            .then(|| undone.remove(&(entry.claim_id, entry.doc_id)))
            .flatten()
            .map(|row| draft_of(&row));
        let hist = history_of(entry.claim_id, entry.doc_id)?;
        let stage = item.stage;
        items.push(item_view(&mut conn, viewer, entry, hist, stage, Some(&item), &project).await?);
    }
    let last_real = match last_real {
        Some(last) => {
            let hist = history_of(last.claim, last.doc)?;
            Some(last.shown(hist, project.mode))
        }
        None => None,
    };
    conn.commit().await?;
    let mut items = items.into_iter();
    Ok(QueueHead {
        project: project.name,
        current: items.next(),
        next: items.next(),
        open: open_count,
        done,
        last: newer(last_real, last_gold),
        guidelines_to_confirm,
        qualification: standing.status(),
        server_ms: now_ms(),
    })
}

/// A pair as a lead sees it (any stage, both annotations, the discussion), to adjudicate;
/// `lead` is the viewer (the command checked that they lead the pair's project).
pub async fn item_for_lead(db: &Db, lead: AnnotatorId, entry_id: i64) -> StoreResult<ItemView> {
    let mut conn = db.acquire().await?;
    let entry = history::entry(&mut conn, entry_id)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("pair #{entry_id}")))?;
    let project = QueueProject::read(&mut conn, entry.project_id).await?;
    let hist = pair_history(&mut conn, entry.project_id, entry.claim_id, entry.doc_id).await?;
    let stage = hist.state.next_stage().unwrap_or(Stage::Final);
    let viewer = Viewer {
        id: lead,
        shows_discussion: true,
    };
    item_view(&mut conn, viewer, entry, &hist, stage, None, &project).await
}

/// The caller's open assignment `id`: its project, flag and note, and whether it is a gold
/// item.
async fn own_open(
    conn: &mut AnyConnection,
    annotator: AnnotatorId,
    id: i64,
) -> StoreResult<(i64, bool, Option<String>, bool)> {
    #[derive(sqlx::FromRow)]
    struct Row {
        annotator_id: i64,
        project_id: Option<i64>,
        flagged: crate::flag::Flag,
        flag_note: Option<String>,
        gold: crate::flag::Flag,
    }
    let row: Option<Row> = sqlx::query_as(
        "SELECT a.annotator_id, COALESCE(e.project_id, g.project_id) AS project_id, a.flagged,
                a.flag_note, a.gold_item_id IS NOT NULL AS gold
         FROM assignments a
         LEFT JOIN pool_entries e ON e.id = a.pool_entry_id
         LEFT JOIN gold_items g ON g.id = a.gold_item_id
         WHERE a.id = $1 AND a.status = 'open'",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    match row {
        Some(Row {
            annotator_id,
            project_id: Some(project),
            flagged,
            flag_note,
            gold,
        }) if annotator_id == annotator.0 => Ok((project, flagged.0, flag_note, gold.0)),
        _ => Err(not_yours(&format!("item #{id}"))),
    }
}

/// Sends the caller's open item to the end of their queue.
pub async fn skip(db: &Db, annotator: AnnotatorId, assignment_id: i64) -> StoreResult<()> {
    let mut tx = begin_write(db).await?;
    let (project, _, _, gold) = own_open(&mut tx, annotator, assignment_id).await?;
    if gold {
        // A gold item always comes first: skipping it gives it up (another is served instead).
        sqlx::query("UPDATE assignments SET status = 'withdrawn', closed_at = $1 WHERE id = $2")
            .bind(now_ms())
            .bind(assignment_id)
            .execute(&mut *tx)
            .await?;
        AuditEvent {
            project_id: Some(project),
            actor_id: Some(annotator.0),
            action: "skip",
            entity: "assignment",
            entity_id: Some(assignment_id.to_string()),
            old_value: Some(serde_json::json!({ "status": "open" })),
            new_value: Some(serde_json::json!({ "status": "withdrawn" })),
        }
        .record(&mut tx)
        .await?;
        tx.commit().await?;
        return Ok(());
    }
    let positions: Vec<i64> = sqlx::query_scalar(
        "SELECT queue_pos FROM assignments WHERE annotator_id = $1 AND status = 'open'",
    )
    .bind(annotator.0)
    .fetch_all(&mut *tx)
    .await?;
    let old: i64 = sqlx::query_scalar("SELECT queue_pos FROM assignments WHERE id = $1")
        .bind(assignment_id)
        .fetch_one(&mut *tx)
        .await?;
    let pos = skip_position(positions)
        .map_err(|e| StoreError::conflict(Constraint::QueueFull, e.to_string()))?;
    sqlx::query("UPDATE assignments SET queue_pos = $1 WHERE id = $2")
        .bind(pos)
        .bind(assignment_id)
        .execute(&mut *tx)
        .await?;
    AuditEvent {
        project_id: Some(project),
        actor_id: Some(annotator.0),
        action: "skip",
        entity: "assignment",
        entity_id: Some(assignment_id.to_string()),
        old_value: Some(serde_json::json!({ "queue_pos": old })),
        new_value: Some(serde_json::json!({ "queue_pos": pos })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Flags the caller's open item "needs attention" with a note (blank clears the flag).
pub async fn flag(
    db: &Db,
    annotator: AnnotatorId,
    assignment_id: i64,
    note: &str,
) -> StoreResult<()> {
    let note = note.trim();
    if note.chars().count() > domain::annotation::MAX_NOTE_CHARS {
        return Err(StoreError::invalid(Field::FlagNote, "too long"));
    }
    let mut tx = begin_write(db).await?;
    let (project, flagged, old_note, _) = own_open(&mut tx, annotator, assignment_id).await?;
    let (new_flag, new_note) = if note.is_empty() {
        (false, None)
    } else {
        (true, Some(note.to_owned()))
    };
    sqlx::query("UPDATE assignments SET flagged = $1, flag_note = $2 WHERE id = $3")
        .bind(i64::from(new_flag))
        .bind(&new_note)
        .bind(assignment_id)
        .execute(&mut *tx)
        .await?;
    AuditEvent {
        project_id: Some(project),
        actor_id: Some(annotator.0),
        action: "flag",
        entity: "assignment",
        entity_id: Some(assignment_id.to_string()),
        old_value: Some(serde_json::json!({ "flagged": flagged, "note": old_note })),
        new_value: Some(serde_json::json!({ "flagged": new_flag, "note": new_note })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// A comment's text as stored: trimmed, not empty, at most
/// [`domain::annotation::MAX_NOTE_CHARS`] characters.
pub fn check_comment(body: &str) -> StoreResult<&str> {
    let body = body.trim();
    if body.is_empty() {
        return Err(StoreError::invalid(Field::Comment, "write something first"));
    }
    if body.chars().count() > domain::annotation::MAX_NOTE_CHARS {
        return Err(StoreError::invalid(Field::Comment, "too long"));
    }
    Ok(body)
}

/// Whether `annotator` judged pair `entry_id` (a judgment not retracted); false for a pair that
/// does not exist.
pub async fn has_judged(db: &Db, annotator: AnnotatorId, entry_id: i64) -> StoreResult<bool> {
    let judged: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pool_entries e JOIN judgments j
           ON j.claim_id = e.claim_id AND j.doc_id = e.doc_id AND j.annotator_id = $2
         WHERE e.id = $1
           AND NOT EXISTS (SELECT 1 FROM judgment_retractions r WHERE r.judgment_id = j.id)",
    )
    .bind(entry_id)
    .bind(annotator.0)
    .fetch_one(db)
    .await?;
    Ok(judged > 0)
}

/// Adds `author`'s comment to a pair's discussion (the command checked that they may: see
/// `commands::annotate::add_comment`); returns the pair's comments.
pub async fn add_comment(
    db: &Db,
    author: AnnotatorId,
    entry_id: i64,
    body: &str,
) -> StoreResult<Vec<CommentView>> {
    let body = check_comment(body)?;
    let mut tx = begin_write(db).await?;
    let entry = history::entry(&mut tx, entry_id)
        .await?
        .ok_or_else(|| not_yours(&format!("pair #{entry_id}")))?;
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO comments (project_id, claim_id, doc_id, author_id, body, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(entry.project_id)
    .bind(entry.claim_id)
    .bind(entry.doc_id)
    .bind(author.0)
    .bind(body)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await?;
    AuditEvent {
        project_id: Some(entry.project_id),
        actor_id: Some(author.0),
        action: "comment",
        entity: "pair",
        entity_id: Some(format!("{}/{}", entry.claim_ext, entry.doc_ext)),
        old_value: None,
        new_value: Some(serde_json::json!({ "comment": id, "body": body })),
    }
    .record(&mut tx)
    .await?;
    let list = comments(&mut tx, entry.claim_id, entry.doc_id).await?;
    tx.commit().await?;
    Ok(list)
}
