//! Gold checks and qualification in the queue (issue 16). A gold item reaches an annotator as an
//! assignment like any other (the same ids, the same page); its answer goes to `gold_answers`,
//! never to the judgments, so that it can never become a final label or reach a release. The
//! rules (rate, placement, qualification steps, figures) are [`domain::gold_checks`]'s.

use super::super::audit::AuditEvent;
use super::super::{now_ms, Constraint, Db, StoreError, StoreResult};
use super::history::{self, outcome_text};
use super::{begin_write, UNDO_WINDOW_MS};
use domain::annotation::{
    Annotation, AnnotationDraft, AnnotatorId, Judged, PairState, Stage, Verdict, FRESH_POSITION,
};
use domain::gold_checks::{
    self, GoldResult, GoldSchedule, GoldSettings, Purpose, Qualification, Source, Step,
};
use domain::label::Label;
use domain::model::annotate::LastSubmission;
use domain::model::gold::{
    AnnotatorGold, Candidate, GoldFeedback, GoldOverview, QualificationStatus,
};
use sqlx::AnyConnection;
use std::collections::BTreeMap;

/// Answers per window of the drift figures.
pub const DRIFT_WINDOW: u32 = 10;

/// SQL condition on a member (`project_members m`, `users u`): they may get real items of
/// `m.project_id` — the project asks no qualification, or they passed it or were admitted by
/// a lead (their latest decision), or they judged real items before it was asked. The one
/// place that says who is admitted: assignment and the queue both read it.
pub(crate) const ADMITTED_SQL: &str = "(
    NOT EXISTS (SELECT 1 FROM projects qp WHERE qp.id = m.project_id AND qp.qualification_graded > 0)
    OR (SELECT qd.outcome FROM qualification_decisions qd
        WHERE qd.project_id = m.project_id AND qd.user_id = u.id ORDER BY qd.id DESC LIMIT 1) = 'admitted'
    OR EXISTS (SELECT 1 FROM judgments qj WHERE qj.project_id = m.project_id
               AND qj.annotator_id = u.id AND qj.provenance = 'pooling'))";

/// A project's gold settings and its seed.
pub(crate) async fn settings(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<(GoldSettings, u64)> {
    let row: Option<(Option<i64>, i64, i64, f64, i64)> = sqlx::query_as(
        "SELECT gold_every, qualification_training, qualification_graded, qualification_pass,
                assignment_seed FROM projects WHERE id = $1",
    )
    .bind(project_id)
    .fetch_optional(&mut *conn)
    .await?;
    let (every, training, graded, pass, seed) =
        row.ok_or_else(|| StoreError::NotFound(format!("project #{project_id}")))?;
    let settings = GoldSettings::from_columns(every, training, graded, pass)
        .map_err(|e| StoreError::Corrupt(format!("project #{project_id}: {e}")))?;
    Ok((settings, seed as u64))
}

/// Sets how the project uses gold (a lead's change, audited). Turning a qualification on
/// admits the project's annotators of the moment: it is asked of those who join later.
pub async fn set_settings(
    db: &Db,
    actor_id: Option<i64>,
    project_id: i64,
    new: GoldSettings,
) -> StoreResult<()> {
    let mut tx = begin_write(db).await?;
    let (old, _) = settings(&mut tx, project_id).await?;
    let (every, training, graded, pass) = new.columns();
    sqlx::query(
        "UPDATE projects SET gold_every = $1, qualification_training = $2, qualification_graded = $3,
                qualification_pass = $4 WHERE id = $5",
    )
    .bind(every)
    .bind(training)
    .bind(graded)
    .bind(pass)
    .bind(project_id)
    .execute(&mut *tx)
    .await?;
    if old.qualification.is_none() && new.qualification.is_some() {
        // The qualification is for new annotators: members already there keep their items.
        sqlx::query(
            "INSERT INTO qualification_decisions (project_id, user_id, outcome, correct, graded,
                                                  by_hand, decided_by, decided_at)
             SELECT m.project_id, m.user_id, 'admitted', NULL, NULL, 0, $1, $2
             FROM project_members m WHERE m.project_id = $3 AND m.role = 'annotator'",
        )
        .bind(actor_id)
        .bind(now_ms())
        .bind(project_id)
        .execute(&mut *tx)
        .await?;
    }
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "gold settings",
        entity: "project",
        entity_id: Some(project_id.to_string()),
        old_value: serde_json::to_value(old).ok(),
        new_value: serde_json::to_value(new).ok(),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Turns re-annotation on or off: whether a disagreement goes to a fresh annotator before
/// adjudication (a lead's change, audited). Pairs already waiting keep their assignment.
pub async fn set_reannotation(
    db: &Db,
    actor_id: Option<i64>,
    project_id: i64,
    on: bool,
) -> StoreResult<()> {
    let mut tx = begin_write(db).await?;
    let old = history::reannotates(&mut tx, project_id).await?;
    sqlx::query("UPDATE projects SET reannotate = $1 WHERE id = $2")
        .bind(i64::from(on))
        .bind(project_id)
        .execute(&mut *tx)
        .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "reannotation",
        entity: "project",
        entity_id: Some(project_id.to_string()),
        old_value: Some(serde_json::json!({ "reannotate": old })),
        new_value: Some(serde_json::json!({ "reannotate": on })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Adds up to `count` (None: all) of the project's decided pairs from `source` as gold items,
/// drawn in an order fixed by `seed`; pairs already gold are left out. Returns how many were
/// added.
pub async fn add_items(
    db: &Db,
    actor_id: Option<i64>,
    project_id: i64,
    source: Source,
    count: Option<usize>,
    seed: u64,
) -> StoreResult<usize> {
    let mut tx = begin_write(db).await?;
    let mut rows: Vec<(i64, i64, i64, String, String)> = sqlx::query_as(
        "SELECT f.claim_id, f.doc_id, f.judgment_id, f.label, j.rationale
         FROM final_labels f JOIN judgments j ON j.id = f.judgment_id
         WHERE f.project_id = $1 AND f.provenance = $2
           AND NOT EXISTS (SELECT 1 FROM gold_items g WHERE g.project_id = f.project_id
                           AND g.claim_id = f.claim_id AND g.doc_id = f.doc_id)
         ORDER BY f.judgment_id",
    )
    .bind(project_id)
    .bind(source.provenance())
    .fetch_all(&mut *tx)
    .await?;
    rows.sort_by_key(|r| gold_checks::draw_order(seed, r.2));
    rows.truncate(count.unwrap_or(usize::MAX));
    let now = now_ms();
    for (claim, doc, judgment, label, rationale) in &rows {
        sqlx::query(
            "INSERT INTO gold_items (project_id, claim_id, doc_id, judgment_id, label, rationale,
                                     source, added_by, added_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(project_id)
        .bind(claim)
        .bind(doc)
        .bind(judgment)
        .bind(label)
        .bind(rationale)
        .bind(source.as_str())
        .bind(actor_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "gold add",
        entity: "project",
        entity_id: Some(project_id.to_string()),
        old_value: None,
        new_value: Some(serde_json::json!({
            "source": source.as_str(), "added": rows.len(), "seed": seed,
        })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(rows.len())
}

/// An open gold assignment.
pub(crate) struct OpenGold {
    pub id: i64,
    pub item: i64,
    pub flagged: bool,
    pub flag_note: Option<String>,
}

/// The annotator's open gold assignment in the project, if any.
pub(crate) async fn open_gold(
    conn: &mut AnyConnection,
    annotator: i64,
    project_id: i64,
) -> StoreResult<Option<OpenGold>> {
    let row: Option<(i64, i64, crate::flag::Flag, Option<String>)> = sqlx::query_as(
        "SELECT a.id, a.gold_item_id, a.flagged, a.flag_note
         FROM assignments a JOIN gold_items g ON g.id = a.gold_item_id
         WHERE a.annotator_id = $1 AND g.project_id = $2 AND a.status = 'open'
         ORDER BY a.id LIMIT 1",
    )
    .bind(annotator)
    .bind(project_id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|(id, item, flagged, flag_note)| OpenGold {
        id,
        item,
        flagged: flagged.0,
        flag_note,
    }))
}

/// Where a member stands in the project's qualification.
pub(crate) struct Standing {
    pub qualification: Option<Qualification>,
    pub admitted: bool,
    pub training_done: u32,
    pub graded_done: u32,
    pub correct: u32,
    /// The latest decision: admitted or failed.
    pub decision: Option<String>,
}

impl Standing {
    /// What the queue tells a candidate; None once admitted.
    pub fn status(&self) -> Option<QualificationStatus> {
        let q = self.qualification?;
        if self.admitted {
            return None;
        }
        let phase = match (
            self.decision.as_deref(),
            q.next_step(self.training_done, self.graded_done),
        ) {
            (Some("failed"), _) | (_, Step::Decide) => "failed",
            (_, Step::Training { .. }) => "training",
            (_, Step::Graded { .. }) => "graded",
        };
        Some(QualificationStatus {
            phase: phase.to_owned(),
            training_done: self.training_done.min(q.training),
            training: q.training,
            graded_done: self.graded_done.min(q.graded),
            graded: q.graded,
            pass: q.pass.get(),
            correct: (phase == "failed").then_some(self.correct),
        })
    }
}

/// `user`'s standing in the project's qualification.
pub(crate) async fn standing(
    conn: &mut AnyConnection,
    user: i64,
    project_id: i64,
) -> StoreResult<Standing> {
    let (settings, _) = settings(conn, project_id).await?;
    standing_under(conn, user, project_id, &settings).await
}

/// [`standing`] under the project's gold `settings`.
pub(crate) async fn standing_under(
    conn: &mut AnyConnection,
    user: i64,
    project_id: i64,
    settings: &GoldSettings,
) -> StoreResult<Standing> {
    if settings.qualification.is_none() {
        // No qualification: everyone is admitted (ADMITTED_SQL's first clause), and nobody has
        // qualification items to count. Every queue load asks, so it ends here.
        return Ok(Standing {
            qualification: None,
            admitted: true,
            training_done: 0,
            graded_done: 0,
            correct: 0,
            decision: None,
        });
    }
    let admitted: Option<crate::flag::Flag> = sqlx::query_scalar(&format!(
        "SELECT {ADMITTED_SQL} FROM project_members m JOIN users u ON u.id = m.user_id
         WHERE m.project_id = $1 AND m.user_id = $2"
    ))
    .bind(project_id)
    .bind(user)
    .fetch_optional(&mut *conn)
    .await?;
    let (training_done, graded_done): (i64, i64) = sqlx::query_as(
        "SELECT COALESCE(SUM(CASE WHEN a.gold_purpose = 'training' THEN 1 ELSE 0 END), 0),
                COALESCE(SUM(CASE WHEN a.gold_purpose = 'graded' THEN 1 ELSE 0 END), 0)
         FROM assignments a JOIN gold_items g ON g.id = a.gold_item_id
         WHERE a.annotator_id = $1 AND g.project_id = $2 AND a.status = 'done'",
    )
    .bind(user)
    .bind(project_id)
    .fetch_one(&mut *conn)
    .await?;
    let correct: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM gold_results WHERE annotator_id = $1 AND project_id = $2
           AND purpose = 'graded' AND label = reference_label",
    )
    .bind(user)
    .bind(project_id)
    .fetch_one(&mut *conn)
    .await?;
    let decision: Option<String> = sqlx::query_scalar(
        "SELECT outcome FROM qualification_decisions WHERE project_id = $1 AND user_id = $2
         ORDER BY id DESC LIMIT 1",
    )
    .bind(project_id)
    .bind(user)
    .fetch_optional(&mut *conn)
    .await?;
    let count = |n: i64| u32::try_from(n).unwrap_or(u32::MAX);
    Ok(Standing {
        qualification: settings.qualification,
        // Not a member (a lead looking on): nothing to qualify for.
        admitted: admitted.is_none_or(|a| a.0),
        training_done: count(training_done),
        graded_done: count(graded_done),
        correct: count(correct),
        decision,
    })
}

/// Items the annotator finished in the project that count for the check schedule: real items
/// and gold checks.
async fn worked(conn: &mut AnyConnection, annotator: i64, project_id: i64) -> StoreResult<u64> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignments a
         LEFT JOIN pool_entries e ON e.id = a.pool_entry_id
         LEFT JOIN gold_items g ON g.id = a.gold_item_id
         WHERE a.annotator_id = $1 AND a.status = 'done'
           AND (e.project_id = $2 OR (g.project_id = $3 AND a.gold_purpose = 'check'))",
    )
    .bind(annotator)
    .bind(project_id)
    .bind(project_id)
    .fetch_one(&mut *conn)
    .await?;
    Ok(n.max(0) as u64)
}

/// The gold item (and its use) the annotator should be given now, if any.
async fn wanted(
    conn: &mut AnyConnection,
    annotator: i64,
    project_id: i64,
) -> StoreResult<Option<(Purpose, i64)>> {
    let (settings, seed) = settings(conn, project_id).await?;
    if !settings.uses_gold() {
        return Ok(None);
    }
    if open_gold(conn, annotator, project_id).await?.is_some() {
        return Ok(None);
    }
    let standing = standing(conn, annotator, project_id).await?;
    let (purpose, worked) = match (standing.admitted, standing.qualification) {
        (false, Some(q)) => {
            if standing.decision.is_some() {
                return Ok(None);
            }
            match q.next_step(standing.training_done, standing.graded_done) {
                Step::Training { done } => (Purpose::Training, u64::from(done)),
                Step::Graded { done } => (Purpose::Graded, u64::from(q.training + done)),
                Step::Decide => return Ok(None),
            }
        }
        (false, None) => return Ok(None),
        (true, _) => {
            let Some(schedule) = settings
                .every
                .and_then(|every| GoldSchedule::new(every, seed))
            else {
                return Ok(None);
            };
            // A check only beside real work: alone in a queue, it would stand out.
            let has_real: crate::flag::Flag = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
                   WHERE a.annotator_id = $1 AND a.status = 'open' AND e.project_id = $2)",
            )
            .bind(annotator)
            .bind(project_id)
            .fetch_one(&mut *conn)
            .await?;
            let worked = worked(conn, annotator, project_id).await?;
            if !has_real.0 || !schedule.is_gold_slot(annotator, worked) {
                return Ok(None);
            }
            (Purpose::Check, worked)
        }
    };
    // Items the annotator never had, and not the pair of one of their open real items.
    let candidates: Vec<i64> = sqlx::query_scalar(
        "SELECT g.id FROM gold_items g WHERE g.project_id = $1
           AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.gold_item_id = g.id AND a.annotator_id = $2)
           AND NOT EXISTS (SELECT 1 FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
                           WHERE a.annotator_id = $3 AND a.status = 'open'
                             AND e.claim_id = g.claim_id AND e.doc_id = g.doc_id)
         ORDER BY g.id",
    )
    .bind(project_id)
    .bind(annotator)
    .bind(annotator)
    .fetch_all(&mut *conn)
    .await?;
    Ok(gold_checks::pick(seed, annotator, worked, &candidates).map(|item| (purpose, item)))
}

/// Opens the gold item the annotator should work now, if any (a read first, so that a queue
/// without gold takes no write lock; none at all when the project's settings as the caller
/// read them, `seen`, use no gold). Whom gold is served to is the caller's decision
/// ([`super::QueueTerms::serves_gold`]).
pub(crate) async fn serve(
    db: &Db,
    annotator: AnnotatorId,
    project_id: i64,
    seen: &GoldSettings,
) -> StoreResult<()> {
    if !seen.uses_gold() {
        return Ok(());
    }
    {
        let mut conn = db.acquire().await?;
        if wanted(&mut conn, annotator.0, project_id).await?.is_none() {
            return Ok(());
        }
    }
    let mut tx = begin_write(db).await?;
    let Some((purpose, item)) = wanted(&mut tx, annotator.0, project_id).await? else {
        return Ok(());
    };
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO assignments (gold_item_id, gold_purpose, annotator_id, stage, status,
                                  queue_pos, created_at)
         VALUES ($1, $2, $3, 'first', 'open', $4, $5) RETURNING id",
    )
    .bind(item)
    .bind(purpose.as_str())
    .bind(annotator.0)
    .bind(FRESH_POSITION)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id: Some(annotator.0),
        action: "gold assign",
        entity: "assignment",
        entity_id: Some(id.to_string()),
        old_value: None,
        new_value: Some(serde_json::json!({ "gold_item": item, "purpose": purpose.as_str() })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// A gold assignment being answered.
pub(crate) struct GoldTarget {
    id: i64,
    item: i64,
    purpose: Purpose,
}

impl GoldTarget {
    /// The caller's open gold assignment `id` of gold item `item`, for `purpose` as stored.
    pub(crate) fn new(id: i64, item: i64, purpose: &str) -> StoreResult<GoldTarget> {
        let purpose = Purpose::parse(purpose).map_err(StoreError::unreadable)?;
        Ok(GoldTarget { id, item, purpose })
    }
}

/// The reference of gold item `item`: label and rationale sentences.
async fn reference(conn: &mut AnyConnection, item: i64) -> StoreResult<(Label, Vec<u32>)> {
    let (label, rationale): (String, String) =
        sqlx::query_as("SELECT label, rationale FROM gold_items WHERE id = $1")
            .bind(item)
            .fetch_one(&mut *conn)
            .await?;
    let label = Label::parse(&label).map_err(StoreError::unreadable)?;
    let sentences = gold_checks::sentences_of(&rationale)
        .ok_or_else(|| StoreError::Corrupt(format!("gold item {item}: rationale")))?;
    Ok((label, sentences.into_iter().collect()))
}

/// A gold answer as the queue reports it.
struct Answered<'a> {
    purpose: Purpose,
    item: i64,
    answer_id: i64,
    entry: &'a history::Entry,
    label: Label,
    verdict: Verdict,
    annotator: i64,
    at: i64,
}

/// What a submission shows about a gold answer: as a real first pass would for a check; the
/// reference for a training item.
async fn shown(conn: &mut AnyConnection, a: Answered<'_>) -> StoreResult<LastSubmission> {
    let judged = Judged::new(
        Stage::First,
        Some(domain::annotation::AnnotatorId(a.annotator)),
        a.verdict,
    )
    .map_err(|e| StoreError::invalid(None, e.to_string()))?;
    let (outcome, feedback) = match a.purpose {
        Purpose::Check => (
            outcome_text(
                &PairState::NeedsFirst
                    .after(0, &judged)
                    .map_err(StoreError::unreadable)?,
            ),
            None,
        ),
        Purpose::Training => {
            let (label, sentences) = reference(conn, a.item).await?;
            (
                "training item: the reference is below".to_owned(),
                Some(GoldFeedback {
                    label: label.as_str().to_owned(),
                    sentences,
                    agrees: label == a.label,
                }),
            )
        }
        Purpose::Graded => ("qualification answer recorded".to_owned(), None),
    };
    Ok(LastSubmission {
        judgment_id: a.answer_id,
        claim_id: a.entry.claim_ext.clone(),
        doc_id: a.entry.doc_ext.clone(),
        stage: Stage::First.as_str().to_owned(),
        label: a.label.as_str().to_owned(),
        first_label: None,
        outcome,
        undo_until_ms: a.at + UNDO_WINDOW_MS,
        // A qualification's answers are final: the training's reference was shown.
        undoable: a.purpose == Purpose::Check,
        feedback,
    })
}

/// Records the caller's answer to a gold assignment, in the caller's transaction: the answer,
/// the assignment closed, and after the last graded item the qualification's verdict (an
/// admitted candidate then gets real items).
pub(crate) async fn submit(
    tx: &mut AnyConnection,
    annotator: AnnotatorId,
    target: GoldTarget,
    draft: &AnnotationDraft,
    seconds_spent: f64,
) -> StoreResult<LastSubmission> {
    let entry = history::gold_entry(tx, target.item)
        .await?
        .ok_or_else(|| StoreError::Corrupt(format!("gold item {} lost its pair", target.item)))?;
    let annotation = Annotation::parse(draft, entry.sentences.len())
        .map_err(|e| StoreError::invalid(e.input(), e.to_string()))?;
    let now = now_ms();
    let answer_id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO gold_answers (assignment_id, label, no_evidence, rationale, specificity,
                                   revised_claim, note, seconds_spent, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(target.id)
    .bind(annotation.label().as_str())
    .bind(i64::from(annotation.no_evidence()))
    .bind(annotation.rationale_json())
    .bind(annotation.specificity().map(|s| s.as_str()))
    .bind(annotation.revised_claim())
    .bind(annotation.note())
    .bind(seconds_spent)
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query("UPDATE assignments SET status = 'done', closed_at = $1 WHERE id = $2")
        .bind(now)
        .bind(target.id)
        .execute(&mut *tx)
        .await?;
    AuditEvent {
        project_id: Some(entry.project_id),
        actor_id: Some(annotator.0),
        action: "gold answer",
        entity: "assignment",
        entity_id: Some(target.id.to_string()),
        old_value: None,
        new_value: Some(serde_json::json!({
            "answer": answer_id,
            "gold_item": target.item,
            "purpose": target.purpose.as_str(),
            "label": annotation.label().as_str(),
            "no_evidence": annotation.no_evidence(),
            "rationale": annotation.rationale_json(),
            "seconds_spent": seconds_spent,
        })),
    }
    .record(tx)
    .await?;
    if target.purpose == Purpose::Graded {
        decide(tx, annotator.0, entry.project_id).await?;
    }
    shown(
        tx,
        Answered {
            purpose: target.purpose,
            item: target.item,
            answer_id,
            entry: &entry,
            label: annotation.label(),
            verdict: Verdict::from(&annotation),
            annotator: annotator.0,
            at: now,
        },
    )
    .await
}

/// After a graded answer: once every graded item is answered, the pass mark decides.
async fn decide(tx: &mut AnyConnection, user: i64, project_id: i64) -> StoreResult<()> {
    let standing = standing(tx, user, project_id).await?;
    let Some(q) = standing.qualification else {
        return Ok(());
    };
    if standing.admitted
        || standing.decision.is_some()
        || q.next_step(standing.training_done, standing.graded_done) != Step::Decide
    {
        return Ok(());
    }
    let passed = q
        .pass
        .passed(standing.correct as usize, standing.graded_done as usize);
    let outcome = if passed { "admitted" } else { "failed" };
    sqlx::query(
        "INSERT INTO qualification_decisions (project_id, user_id, outcome, correct, graded,
                                              by_hand, decided_by, decided_at)
         VALUES ($1, $2, $3, $4, $5, 0, NULL, $6)",
    )
    .bind(project_id)
    .bind(user)
    .bind(outcome)
    .bind(i64::from(standing.correct))
    .bind(i64::from(standing.graded_done))
    .bind(now_ms())
    .execute(&mut *tx)
    .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id: None,
        action: "qualification",
        entity: "user",
        entity_id: Some(user.to_string()),
        old_value: None,
        new_value: Some(serde_json::json!({
            "outcome": outcome, "correct": standing.correct, "graded": standing.graded_done,
            "pass": q.pass.get(),
        })),
    }
    .record(tx)
    .await?;
    if passed {
        super::assign::assign_pending(tx, project_id, None).await?;
    }
    Ok(())
}

/// A lead admits a candidate by hand, whatever their score; they get real items at once.
pub async fn admit(
    db: &Db,
    lead_id: Option<i64>,
    project_id: i64,
    username: &str,
) -> StoreResult<()> {
    let mut tx = begin_write(db).await?;
    let user: Option<i64> = sqlx::query_scalar(
        "SELECT u.id FROM project_members m JOIN users u ON u.id = m.user_id
         WHERE m.project_id = $1 AND u.username = $2 AND m.role = 'annotator'",
    )
    .bind(project_id)
    .bind(username)
    .fetch_optional(&mut *tx)
    .await?;
    let user =
        user.ok_or_else(|| StoreError::NotFound(format!("annotator {username} in this project")))?;
    let standing = standing(&mut tx, user, project_id).await?;
    if standing.admitted {
        return Err(StoreError::conflict(
            Constraint::Admitted,
            format!("{username} is already admitted"),
        ));
    }
    sqlx::query(
        "INSERT INTO qualification_decisions (project_id, user_id, outcome, correct, graded,
                                              by_hand, decided_by, decided_at)
         VALUES ($1, $2, 'admitted', $3, $4, 1, $5, $6)",
    )
    .bind(project_id)
    .bind(user)
    .bind(i64::from(standing.correct))
    .bind(i64::from(standing.graded_done))
    .bind(lead_id)
    .bind(now_ms())
    .execute(&mut *tx)
    .await?;
    // Their unanswered qualification item goes away.
    sqlx::query(
        "UPDATE assignments SET status = 'withdrawn', closed_at = $1
         WHERE annotator_id = $2 AND status = 'open' AND gold_purpose IN ('training', 'graded')
           AND gold_item_id IN (SELECT id FROM gold_items WHERE project_id = $3)",
    )
    .bind(now_ms())
    .bind(user)
    .bind(project_id)
    .execute(&mut *tx)
    .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id: lead_id,
        action: "qualification",
        entity: "user",
        entity_id: Some(user.to_string()),
        old_value: standing
            .decision
            .map(|d| serde_json::json!({ "outcome": d })),
        new_value: Some(serde_json::json!({ "outcome": "admitted", "by_hand": true })),
    }
    .record(&mut tx)
    .await?;
    super::assign::assign_pending(&mut tx, project_id, lead_id).await?;
    tx.commit().await?;
    Ok(())
}

/// The caller's latest gold answer in the project while it may be undone (or, for a training
/// item, while its reference is worth showing), as the queue shows it.
pub(crate) async fn last_answer(
    conn: &mut AnyConnection,
    annotator: AnnotatorId,
    project_id: i64,
) -> StoreResult<Option<LastSubmission>> {
    let row: Option<(i64, i64, String, String, crate::flag::Flag, i64)> = sqlx::query_as(
        "SELECT answer_id, gold_item_id, purpose, label, no_evidence, created_at FROM gold_results
         WHERE annotator_id = $1 AND project_id = $2 ORDER BY answer_id DESC LIMIT 1",
    )
    .bind(annotator.0)
    .bind(project_id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some((answer_id, item, purpose, label, no_evidence, at)) = row else {
        return Ok(None);
    };
    if now_ms() - at >= UNDO_WINDOW_MS {
        return Ok(None);
    }
    let purpose = Purpose::parse(&purpose).map_err(StoreError::unreadable)?;
    let label = Label::parse(&label).map_err(StoreError::unreadable)?;
    let verdict = Verdict::from_columns(label, no_evidence.0).map_err(StoreError::unreadable)?;
    let entry = history::gold_entry(conn, item)
        .await?
        .ok_or_else(|| StoreError::Corrupt(format!("gold item {item} lost its pair")))?;
    Ok(Some(
        shown(
            conn,
            Answered {
                purpose,
                item,
                answer_id,
                entry: &entry,
                label,
                verdict,
                annotator: annotator.0,
                at,
            },
        )
        .await?,
    ))
}

/// Undoes the caller's latest gold answer in the project when it is their latest submission
/// (newer than `latest_judgment_at`, the creation time of their latest real judgment): the answer
/// stays, marked retracted, and the item comes back. None when their latest submission is a
/// real judgment.
pub(crate) async fn undo_if_latest(
    tx: &mut AnyConnection,
    annotator: AnnotatorId,
    project_id: i64,
    latest_judgment_at: Option<i64>,
) -> StoreResult<Option<String>> {
    let row: Option<(i64, i64, String, String, i64)> = sqlx::query_as(
        "SELECT answer_id, assignment_id, purpose, label, created_at FROM gold_results
         WHERE annotator_id = $1 AND project_id = $2 ORDER BY answer_id DESC LIMIT 1",
    )
    .bind(annotator.0)
    .bind(project_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((answer_id, assignment, purpose, label, at)) = row else {
        return Ok(None);
    };
    if latest_judgment_at.is_some_and(|j| j > at) {
        return Ok(None);
    }
    let now = now_ms();
    if purpose != Purpose::Check.as_str() {
        return Err(StoreError::conflict(
            Constraint::Undo,
            "cannot undo: a qualification answer is final",
        ));
    }
    if now - at >= UNDO_WINDOW_MS {
        return Err(StoreError::conflict(
            Constraint::Undo,
            "cannot undo: the undo window has passed",
        ));
    }
    sqlx::query(
        "INSERT INTO gold_answer_retractions (answer_id, retracted_by, retracted_at) VALUES ($1, $2, $3)",
    )
    .bind(answer_id)
    .bind(annotator.0)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    // Whatever the queue served since goes back behind it: the item is current again.
    sqlx::query(
        "UPDATE assignments SET status = 'withdrawn', closed_at = $1
         WHERE annotator_id = $2 AND status = 'open' AND id != $3
           AND gold_item_id IN (SELECT id FROM gold_items WHERE project_id = $4)",
    )
    .bind(now)
    .bind(annotator.0)
    .bind(assignment)
    .bind(project_id)
    .execute(&mut *tx)
    .await?;
    sqlx::query("UPDATE assignments SET status = 'open', closed_at = NULL WHERE id = $1")
        .bind(assignment)
        .execute(&mut *tx)
        .await?;
    let entry_item: i64 = sqlx::query_scalar("SELECT gold_item_id FROM assignments WHERE id = $1")
        .bind(assignment)
        .fetch_one(&mut *tx)
        .await?;
    let entry = history::gold_entry(tx, entry_item)
        .await?
        .ok_or_else(|| StoreError::Corrupt(format!("gold item {entry_item} lost its pair")))?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id: Some(annotator.0),
        action: "undo",
        entity: "gold answer",
        entity_id: Some(answer_id.to_string()),
        old_value: Some(serde_json::json!({ "label": label })),
        new_value: Some(serde_json::json!({ "retracted": true })),
    }
    .record(tx)
    .await?;
    Ok(Some(format!(
        "undid your {} ({label}) of claim {} / doc {}",
        Stage::First.human().to_lowercase(),
        entry.claim_ext,
        entry.doc_ext,
    )))
}

/// The project's gold at a glance: settings, items, every annotator's figures and the
/// qualification's candidates (leads).
pub async fn overview(db: &Db, project_id: i64) -> StoreResult<GoldOverview> {
    let mut conn = db.acquire().await?;
    let (settings, _) = settings(&mut conn, project_id).await?;
    let project: String = sqlx::query_scalar("SELECT name FROM projects WHERE id = $1")
        .bind(project_id)
        .fetch_one(&mut *conn)
        .await?;
    let count_items = |source: Source| {
        sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM gold_items WHERE project_id = $1 AND source = $2",
        )
        .bind(project_id)
        .bind(source.as_str())
    };
    let items_citation = count_items(Source::Citation).fetch_one(&mut *conn).await?;
    let items_final = count_items(Source::Final).fetch_one(&mut *conn).await?;
    let count_available = |source: Source| {
        sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM final_labels f WHERE f.project_id = $1 AND f.provenance = $2
               AND NOT EXISTS (SELECT 1 FROM gold_items g WHERE g.project_id = f.project_id
                               AND g.claim_id = f.claim_id AND g.doc_id = f.doc_id)",
        )
        .bind(project_id)
        .bind(source.provenance())
    };
    let available_citation = count_available(Source::Citation)
        .fetch_one(&mut *conn)
        .await?;
    let available_final = count_available(Source::Final).fetch_one(&mut *conn).await?;

    #[derive(sqlx::FromRow)]
    struct Row {
        annotator_id: i64,
        username: String,
        purpose: String,
        reference_label: String,
        reference_rationale: String,
        label: String,
        rationale: String,
        created_at: i64,
    }
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT r.annotator_id, u.username, r.purpose, r.reference_label, r.reference_rationale,
                r.label, r.rationale, r.created_at
         FROM gold_results r JOIN users u ON u.id = r.annotator_id
         WHERE r.project_id = $1 AND r.purpose IN ('check', 'graded')
         ORDER BY r.annotator_id, r.created_at, r.answer_id",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut by_annotator: BTreeMap<(String, i64), (Vec<GoldResult>, Vec<GoldResult>)> =
        BTreeMap::new();
    for r in rows {
        let parse = |l: &str| Label::parse(l).map_err(StoreError::unreadable);
        let sentences = |json: &str| {
            gold_checks::sentences_of(json)
                .ok_or_else(|| StoreError::Corrupt(format!("gold rationale {json}")))
        };
        let result = GoldResult {
            reference: parse(&r.reference_label)?,
            reference_sentences: sentences(&r.reference_rationale)?,
            answer: parse(&r.label)?,
            answer_sentences: sentences(&r.rationale)?,
            at_ms: r.created_at,
        };
        let slot = by_annotator
            .entry((r.username, r.annotator_id))
            .or_default();
        if r.purpose == Purpose::Check.as_str() {
            slot.0.push(result);
        } else {
            slot.1.push(result);
        }
    }
    let annotators = by_annotator
        .into_iter()
        .map(|((username, user_id), (checks, graded))| AnnotatorGold {
            user_id,
            username,
            drift: gold_checks::drift(&checks, DRIFT_WINDOW as usize),
            checks: gold_checks::score(&checks),
            graded: gold_checks::score(&graded),
        })
        .collect();

    let mut candidates = Vec::new();
    if settings.qualification.is_some() {
        let members: Vec<(i64, String)> = sqlx::query_as(
            "SELECT u.id, u.username FROM project_members m JOIN users u ON u.id = m.user_id
             WHERE m.project_id = $1 AND m.role = 'annotator' ORDER BY u.username",
        )
        .bind(project_id)
        .fetch_all(&mut *conn)
        .await?;
        for (user_id, username) in members {
            let s = standing(&mut conn, user_id, project_id).await?;
            let tried = s.training_done + s.graded_done > 0 || s.decision.is_some();
            if s.admitted && !tried {
                continue;
            }
            let latest: Option<(crate::flag::Flag, Option<String>)> = sqlx::query_as(
                "SELECT d.by_hand, u.username FROM qualification_decisions d
                 LEFT JOIN users u ON u.id = d.decided_by
                 WHERE d.project_id = $1 AND d.user_id = $2 ORDER BY d.id DESC LIMIT 1",
            )
            .bind(project_id)
            .bind(user_id)
            .fetch_optional(&mut *conn)
            .await?;
            let admitted_by = match latest {
                Some((crate::flag::Flag(true), by)) => {
                    Some(by.unwrap_or_else(|| "the operator".to_owned()))
                }
                _ => None,
            };
            let standing = if s.admitted {
                "admitted".to_owned()
            } else {
                s.status()
                    .map_or_else(|| "admitted".to_owned(), |st| st.phase)
            };
            candidates.push(Candidate {
                user_id,
                username,
                training_done: u64::from(s.training_done),
                graded_done: u64::from(s.graded_done),
                correct: u64::from(s.correct),
                standing,
                admitted_by,
            });
        }
    }
    let q = settings.qualification;
    let reannotate = history::reannotates(&mut conn, project_id).await?;
    Ok(GoldOverview {
        project,
        reannotate,
        every: settings.every,
        training: q.map_or(0, |q| q.training),
        graded: q.map_or(0, |q| q.graded),
        pass: q.map_or(0.8, |q| q.pass.get()),
        items_citation: items_citation.max(0) as u64,
        items_final: items_final.max(0) as u64,
        available_citation: available_citation.max(0) as u64,
        available_final: available_final.max(0) as u64,
        drift_window: DRIFT_WINDOW,
        annotators,
        candidates,
    })
}
