//! Submitting a judgment, and undoing one's last within the window.

use super::super::audit::AuditEvent;
use super::super::webhooks;
use super::super::{now_ms, Constraint, Db, Field, OnConstraint, StoreError, StoreResult};
use super::assign::assign_next;
use super::history::{self, outcome_text, pair_history};
use super::{begin_write, not_yours, LATEST_OWN_JUDGMENT, UNDO_WINDOW_MS};
use domain::annotation::confirmation::{Answer, AnswerField, Confirmation};
use domain::annotation::{
    check_new_judgment, check_not_revealed, plan_undo, reveals_on_submit, Annotation,
    AnnotationDraft, Judged, PairState, PoolEntryId, Stage, Verdict,
};
use domain::annotation::{AnnotatorId, SecondPassMode, SubmissionKey};
use domain::model::annotate::LastSubmission;
use domain::webhooks::Event;
use sqlx::AnyConnection;

/// What a submission is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// One's own open assignment `id`. `adjudicates_any`: whether its annotator may adjudicate a
    /// pair neither of whose passes is theirs (the command's decision: a project's lead may).
    Assignment { id: i64, adjudicates_any: bool },
    /// A lead adjudicating a pair that needs it, whoever holds it (the command checked that the
    /// caller leads the pair's project).
    LeadAdjudication { entry_id: i64 },
}

impl Target {
    /// Whether the submitter may adjudicate a pair neither of whose passes is theirs.
    fn adjudicates_any(self) -> bool {
        match self {
            Target::Assignment {
                adjudicates_any, ..
            } => adjudicates_any,
            Target::LeadAdjudication { .. } => true,
        }
    }
}

/// What a submission answers.
enum Resolved {
    /// The caller's open gold assignment.
    Gold(super::gold::GoldTarget),
    /// A pooled pair: the assignment being answered (if any), its stage and its pool entry.
    Pair {
        assignment: Option<i64>,
        stage: Stage,
        entry: i64,
    },
}

/// What `target` answers, checked to be the caller's and open (one read of the assignment).
async fn resolve(
    conn: &mut AnyConnection,
    annotator: AnnotatorId,
    target: Target,
) -> StoreResult<Resolved> {
    match target {
        Target::Assignment { id, .. } => {
            #[derive(sqlx::FromRow)]
            struct Row {
                pool_entry_id: Option<i64>,
                annotator_id: i64,
                stage: String,
                status: String,
                gold_item_id: Option<i64>,
                gold_purpose: Option<String>,
            }
            let row: Option<Row> = sqlx::query_as(
                "SELECT pool_entry_id, annotator_id, stage, status, gold_item_id, gold_purpose
                 FROM assignments WHERE id = $1",
            )
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
            let item = format!("item #{id}");
            let row = row.ok_or_else(|| not_yours(&item))?;
            if row.annotator_id != annotator.0 {
                return Err(not_yours(&item));
            }
            if row.status != "open" {
                return Err(super::no_longer_open(&item, &row.status));
            }
            let corrupt = |what: &str| StoreError::Corrupt(format!("assignment {id}: {what}"));
            match (row.gold_item_id, row.pool_entry_id) {
                (Some(gold), _) => Ok(Resolved::Gold(super::gold::GoldTarget::new(
                    id,
                    gold,
                    row.gold_purpose.as_deref().unwrap_or_default(),
                )?)),
                (None, Some(entry)) => Ok(Resolved::Pair {
                    assignment: Some(id),
                    stage: Stage::parse(&row.stage).map_err(|e| corrupt(&e.to_string()))?,
                    entry,
                }),
                (None, None) => Err(corrupt("neither a pair nor a gold item")),
            }
        }
        Target::LeadAdjudication { entry_id } => {
            let held: Option<i64> = sqlx::query_scalar(
                "SELECT id FROM assignments WHERE pool_entry_id = $1 AND stage = 'adjudication' AND status = 'open'",
            )
            .bind(entry_id)
            .fetch_optional(&mut *conn)
            .await?;
            Ok(Resolved::Pair {
                assignment: held,
                stage: Stage::Adjudication,
                entry: entry_id,
            })
        }
    }
}

/// The longest time one item may be said to have taken: a page left open overnight is stored as
/// a day, so that one stray timer cannot dominate the report's times.
pub const MAX_SECONDS_SPENT: f64 = 86_400.0;

/// What a submission did.
#[derive(Debug)]
pub enum Submitted {
    /// Stored: the judgment, as the page shows the last submission.
    Stored(Box<LastSubmission>),
    /// Its key had been used already by the same annotator (the same submission sent again
    /// after its reply was lost): nothing was written.
    Repeated,
}

/// Records `draft` as `annotator`'s judgment for `target`: parsed and checked against the
/// protocol, written with the time spent (at most [`MAX_SECONDS_SPENT`]), the assignment closed,
/// and then the pair made final or handed to the next stage. One transaction; refused with
/// nothing written on any error.
///
/// With a `key`, the judgment is stored once per key and annotator: a submission whose key has
/// stored a judgment (or a qualification item's answer) already writes nothing and is
/// [`Submitted::Repeated`].
pub async fn submit(
    db: &Db,
    annotator: AnnotatorId,
    target: Target,
    draft: &AnnotationDraft,
    seconds_spent: f64,
    key: Option<&SubmissionKey>,
) -> StoreResult<Submitted> {
    if !seconds_spent.is_finite() || seconds_spent < 0.0 {
        return Err(StoreError::invalid(
            Field::SecondsSpent,
            format!("{seconds_spent} is not a duration"),
        ));
    }
    let seconds_spent = seconds_spent.min(MAX_SECONDS_SPENT);
    let mut tx = begin_write(db).await?;
    if let Some(key) = key {
        let stored: Option<i64> = sqlx::query_scalar(
            "SELECT judgment_id FROM submission_keys WHERE annotator_id = $1 AND submission_key = $2
             UNION ALL
             SELECT gold_answer_id FROM gold_submission_keys
             WHERE annotator_id = $1 AND submission_key = $2",
        )
        .bind(annotator.0)
        .bind(key.as_str())
        .fetch_optional(&mut *tx)
        .await?;
        if stored.is_some() {
            return Ok(Submitted::Repeated);
        }
    }
    let (assignment, stage, entry_id) = match resolve(&mut tx, annotator, target).await? {
        Resolved::Gold(gold) => {
            let shown = super::gold::submit(&mut tx, annotator, gold, draft, seconds_spent).await?;
            if let Some(key) = key {
                let recorded = sqlx::query(
                    "INSERT INTO gold_submission_keys (annotator_id, submission_key, gold_answer_id,
                                                       created_at)
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(annotator.0)
                .bind(key.as_str())
                .bind(shown.judgment_id)
                .bind(now_ms())
                .execute(&mut *tx)
                .await;
                match recorded {
                    Ok(_) => {}
                    // As for a pair's key below: a concurrent request stored it first.
                    Err(e) if super::super::is_unique_violation(&e) => {
                        return Ok(Submitted::Repeated)
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            tx.commit().await?;
            return Ok(Submitted::Stored(Box::new(shown)));
        }
        Resolved::Pair {
            assignment,
            stage,
            entry,
        } => (assignment, stage, entry),
    };
    let (entry, mode) = history::entry_and_mode(&mut tx, entry_id)
        .await?
        .ok_or_else(|| not_yours(&format!("pair #{entry_id}")))?;
    let annotation = Annotation::parse(draft, entry.sentences.len())
        .map_err(|e| StoreError::invalid(e.input(), e.to_string()))?;
    let hist = pair_history(&mut tx, entry.project_id, entry.claim_id, entry.doc_id).await?;
    // A re-annotation is one the project gave out (its assignment, made under its setting).
    check_new_judgment(
        &hist.state,
        stage,
        annotator,
        target.adjudicates_any(),
        assignment.is_some(),
    )
    .map_err(|e| StoreError::conflict(Constraint::Protocol, e.to_string()))?;
    let verdict = Verdict::from(&annotation);
    let judged = Judged::new(stage, Some(annotator), verdict)
        .map_err(|e| StoreError::invalid(None, e.to_string()))?;
    let after = hist
        .state
        .after(hist.judged.len(), &judged)
        .map_err(|e| StoreError::conflict(Constraint::Protocol, e.to_string()))?;
    let now = now_ms();
    let judgment_id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO judgment_rows (project_id, claim_id, doc_id, assignment_id, annotator_id, stage, label,
                                no_evidence, rationale, specificity, revised_claim, note, seconds_spent,
                                provenance, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'pooling', $14) RETURNING id",
    )
    .bind(entry.project_id)
    .bind(entry.claim_id)
    .bind(entry.doc_id)
    .bind(assignment)
    .bind(annotator.0)
    .bind(stage.as_str())
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
    if let Some(key) = key {
        let recorded = sqlx::query(
            "INSERT INTO submission_keys (annotator_id, submission_key, judgment_id, created_at)
             VALUES ($1, $2, $3, $4)",
        )
        .bind(annotator.0)
        .bind(key.as_str())
        .bind(judgment_id)
        .bind(now)
        .execute(&mut *tx)
        .await;
        match recorded {
            Ok(_) => {}
            // The same key committed meanwhile by a concurrent request (PostgreSQL: both read
            // no key above): that one stored the judgment; this one writes nothing.
            Err(e) if super::super::is_unique_violation(&e) => return Ok(Submitted::Repeated),
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(id) = assignment {
        let status = match target {
            Target::Assignment { .. } => "done",
            // A lead decided a pair someone else held: their item goes away.
            Target::LeadAdjudication { .. } => "withdrawn",
        };
        sqlx::query("UPDATE assignments SET status = $1, closed_at = $2 WHERE id = $3")
            .bind(status)
            .bind(now)
            .bind(id)
            .execute(&mut *tx)
            .await?;
    }
    let mut assigned = None;
    match &after {
        PairState::Final(done) => {
            sqlx::query(
                "INSERT INTO final_label_rows (project_id, claim_id, doc_id, judgment_id, label, provenance, decided_at)
                 VALUES ($1, $2, $3, $4, $5, 'pooling', $6)",
            )
            .bind(entry.project_id)
            .bind(entry.claim_id)
            .bind(entry.doc_id)
            .bind(judgment_id)
            .bind(done.label.as_str())
            .bind(now)
            .execute(&mut *tx)
            .await
            .on_unique(Constraint::FinalLabel, || {
                "the pair already has a final label".into()
            })?;
            let data = serde_json::json!({
                "claim": entry.claim_ext,
                "doc": entry.doc_ext,
                "label": done.label.as_str(),
                "stage": stage.as_str(),
                "judgment": judgment_id,
            });
            webhooks::enqueue(&mut tx, entry.project_id, Event::LabelFinal, data).await?;
        }
        state => {
            if matches!(state, PairState::NeedsAdjudication { .. })
                && !matches!(hist.state, PairState::NeedsAdjudication { .. })
            {
                let data = serde_json::json!({
                    "claim": entry.claim_ext,
                    "doc": entry.doc_ext,
                    "judgment": judgment_id,
                });
                webhooks::enqueue(&mut tx, entry.project_id, Event::Disagreement, data).await?;
            }
            assigned = assign_next(&mut tx, entry.project_id, PoolEntryId(entry.id), state)
                .await?
                .map(|(_, stage)| stage);
        }
    }
    let outcome = match (&after, assigned) {
        (PairState::NeedsAdjudication { .. }, Some(Stage::Second)) => {
            "the passes disagree: sent to a fresh annotator".to_owned()
        }
        _ => outcome_text(&after),
    };
    // A re-annotation shows the two labels it was asked to settle: final for its author.
    let reannotation = stage == Stage::Second && hist.state.may_reannotate();
    // Confirm mode: what the second annotator kept of the first annotation shown to them, and
    // what they changed.
    let confirmation = (stage == Stage::Second && mode == SecondPassMode::Confirm && !reannotation)
        .then(|| hist.rows.iter().find(|r| r.stage == Stage::First))
        .flatten()
        .map(|first| {
            let shown = Answer {
                label: first.label,
                sentences: first.rationale.iter().flatten().copied().collect(),
                specificity: first.specificity.as_deref(),
                revised_claim: first.revised_claim.as_deref(),
            };
            let given = Answer {
                label: annotation.label(),
                sentences: annotation
                    .rationale()
                    .iter()
                    .flat_map(|set| set.sentences().iter().copied())
                    .collect(),
                specificity: annotation.specificity().map(|s| s.as_str()),
                revised_claim: annotation.revised_claim(),
            };
            (first.id, Confirmation::of(&shown, &given))
        });
    if let Some((first_id, confirmed)) = &confirmation {
        let names = |fields: &[AnswerField]| {
            serde_json::to_string(fields).map_err(|e| StoreError::Fault(format!("fields: {e}")))
        };
        sqlx::query(
            "INSERT INTO confirmations (judgment_id, first_judgment_id, kept, edited)
             VALUES ($1, $2, $3, $4)",
        )
        .bind(judgment_id)
        .bind(first_id)
        .bind(names(&confirmed.kept)?)
        .bind(names(&confirmed.edited)?)
        .execute(&mut *tx)
        .await?;
    }
    let first_label = match stage {
        Stage::First => None,
        _ => hist.state.first().map(|o| o.label.as_str().to_owned()),
    };
    AuditEvent {
        project_id: Some(entry.project_id),
        actor_id: Some(annotator.0),
        action: "submit",
        entity: "pair",
        entity_id: Some(format!("{}/{}", entry.claim_ext, entry.doc_ext)),
        old_value: Some(serde_json::json!({ "state": outcome_text(&hist.state) })),
        new_value: Some(serde_json::json!({
            "judgment": judgment_id,
            "assignment": assignment,
            "stage": stage.as_str(),
            "label": annotation.label().as_str(),
            "no_evidence": annotation.no_evidence(),
            "rationale": annotation.rationale_json(),
            "specificity": annotation.specificity().map(|s| s.as_str()),
            "revised_claim": annotation.revised_claim(),
            "confirmation": confirmation.as_ref().map(|(_, c)| c),
            "note": annotation.note(),
            "seconds_spent": seconds_spent,
            "state": outcome,
        })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(Submitted::Stored(Box::new(LastSubmission {
        judgment_id,
        claim_id: entry.claim_ext,
        doc_id: entry.doc_ext,
        stage: stage.as_str().to_owned(),
        label: annotation.label().as_str().to_owned(),
        first_label,
        outcome,
        undo_until_ms: now + UNDO_WINDOW_MS,
        undoable: !reveals_on_submit(stage, mode) && !reannotation,
        feedback: None,
    })))
}

/// Undoes the caller's latest judgment in the project, within [`UNDO_WINDOW_MS`] and while no
/// later judgment depends on it: the judgment stays, marked retracted; a final label it made is
/// withdrawn; the item goes back to the front of the caller's queue. Returns what was undone.
pub async fn undo_last(db: &Db, annotator: AnnotatorId, project_id: i64) -> StoreResult<String> {
    let mut tx = begin_write(db).await?;
    let latest: Option<(i64, i64, i64, Option<i64>, i64)> = sqlx::query_as(&format!(
        "SELECT j.id, j.claim_id, j.doc_id, j.assignment_id, j.created_at FROM judgments j
         WHERE {LATEST_OWN_JUDGMENT}"
    ))
    .bind(project_id)
    .bind(annotator.0)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(what) =
        super::gold::undo_if_latest(&mut tx, annotator, project_id, latest.map(|l| l.4)).await?
    {
        tx.commit().await?;
        return Ok(what);
    }
    let (judgment_id, claim, doc, assignment, created_at) = latest
        .ok_or_else(|| StoreError::conflict(Constraint::Undo, "you have no submission to undo"))?;
    let stage: String = sqlx::query_scalar("SELECT stage FROM judgments WHERE id = $1")
        .bind(judgment_id)
        .fetch_one(&mut *tx)
        .await?;
    let stage = Stage::parse(&stage).map_err(StoreError::unreadable)?;
    check_not_revealed(stage, history::mode(&mut tx, project_id).await?)
        .map_err(|e| StoreError::conflict(Constraint::Undo, format!("cannot undo: {e}")))?;
    let hist = pair_history(&mut tx, project_id, claim, doc).await?;
    let position = hist
        .rows
        .iter()
        .position(|r| r.id == judgment_id)
        .ok_or_else(|| StoreError::Corrupt(format!("judgment {judgment_id} lost its pair")))?;
    let now = now_ms();
    let plan = plan_undo(
        &hist.judged,
        position,
        annotator,
        created_at,
        now,
        UNDO_WINDOW_MS,
    )
    .map_err(|e| StoreError::conflict(Constraint::Undo, format!("cannot undo: {e}")))?;
    if stage == Stage::Second && plan.after.may_reannotate() {
        return Err(StoreError::conflict(
            Constraint::Undo,
            "cannot undo: a re-annotation showed both labels it settled",
        ));
    }
    sqlx::query(
        "INSERT INTO judgment_retractions (judgment_id, retracted_by, retracted_at) VALUES ($1, $2, $3)",
    )
    .bind(judgment_id)
    .bind(annotator.0)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    if plan.withdraws_final_label() {
        sqlx::query(
            "DELETE FROM final_label_rows WHERE claim_id = $1 AND doc_id = $2 AND judgment_id = $3",
        )
        .bind(claim)
        .bind(doc)
        .bind(judgment_id)
        .execute(&mut *tx)
        .await?;
    }
    let entry: i64 =
        sqlx::query_scalar("SELECT id FROM pool_entries WHERE claim_id = $1 AND doc_id = $2")
            .bind(claim)
            .bind(doc)
            .fetch_one(&mut *tx)
            .await?;
    // The next stage's item, made by the submission, goes away.
    sqlx::query(
        "UPDATE assignments SET status = 'withdrawn', closed_at = $1 WHERE pool_entry_id = $2 AND status = 'open'",
    )
    .bind(now)
    .bind(entry)
    .execute(&mut *tx)
    .await?;
    match assignment {
        Some(id) => {
            let front = super::assign::front_of_queue(&mut tx, annotator).await?;
            sqlx::query(
                "UPDATE assignments SET status = 'open', closed_at = NULL, queue_pos = $1 WHERE id = $2",
            )
            .bind(front)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        None => {
            assign_next(&mut tx, project_id, PoolEntryId(entry), &plan.after).await?;
        }
    }
    let row = &hist.rows[position];
    let (claim_ext, doc_ext) = pair_ext(&mut tx, claim, doc).await?;
    if plan.withdraws_final_label() {
        let data = serde_json::json!({
            "claim": claim_ext,
            "doc": doc_ext,
            "label": row.label.as_str(),
            "judgment": judgment_id,
        });
        webhooks::enqueue(&mut tx, project_id, Event::LabelWithdrawn, data).await?;
    }
    let what = format!(
        "undid your {} ({}) of claim {claim_ext} / doc {doc_ext}",
        row.stage.human().to_lowercase(),
        row.label.as_str(),
    );
    AuditEvent {
        project_id: Some(project_id),
        actor_id: Some(annotator.0),
        action: "undo",
        entity: "judgment",
        entity_id: Some(judgment_id.to_string()),
        old_value: Some(serde_json::json!({
            "label": row.label.as_str(),
            "stage": row.stage.as_str(),
            "state": outcome_text(&plan.before),
        })),
        new_value: Some(
            serde_json::json!({ "retracted": true, "state": outcome_text(&plan.after) }),
        ),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(what)
}

/// The external ids of a pair.
async fn pair_ext(conn: &mut AnyConnection, claim: i64, doc: i64) -> StoreResult<(String, String)> {
    Ok(sqlx::query_as(
        "SELECT c.claim_id, d.doc_id FROM claims c, documents d WHERE c.id = $1 AND d.id = $2",
    )
    .bind(claim)
    .bind(doc)
    .fetch_one(&mut *conn)
    .await?)
}
