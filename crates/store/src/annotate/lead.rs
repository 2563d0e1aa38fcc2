//! The lead's side of annotation: progress, disagreements, flags, annotators joining and
//! leaving (their open items reassigned), items reassigned by hand, the second-pass mode.

use super::super::audit::AuditEvent;
use super::super::{now_ms, Db, StoreError, StoreResult};
use super::assign::{active_annotators, assign_pending, insert, loads};
use super::begin_write;
use super::history::{self, pair_history, project_states};
use super::judging;
use domain::annotation::{
    check_submission, reassign, AnnotatorId, OpenItem, PairState, PoolEntryId, SecondPassMode,
    Stage, Work, FRESH_POSITION,
};
use domain::model::annotate::{
    AnnotationOverview, AnnotatorProgress, DisagreementRow, OpenItemRow,
};
use sqlx::AnyConnection;
use std::collections::HashMap;

/// The median of `values` (None when empty).
fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    })
}

/// The open items of the project's pool, counted per annotator and per stage in one read.
/// Through the view `pool_entries`, so a pool build still being written does not show:
/// [`loads`] (what assignment counts by) includes its rows.
struct OpenCounts {
    by_annotator: HashMap<i64, i64>,
    by_stage: HashMap<String, i64>,
}

async fn open_counts(conn: &mut AnyConnection, project_id: i64) -> StoreResult<OpenCounts> {
    let rows: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT a.annotator_id, a.stage, COUNT(*) FROM assignments a
         JOIN pool_entries e ON e.id = a.pool_entry_id
         WHERE e.project_id = $1 AND a.status = 'open' GROUP BY a.annotator_id, a.stage",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut open = OpenCounts {
        by_annotator: HashMap::new(),
        by_stage: HashMap::new(),
    };
    for (annotator, stage, count) in rows {
        *open.by_annotator.entry(annotator).or_default() += count;
        *open.by_stage.entry(stage).or_default() += count;
    }
    Ok(open)
}

async fn annotator_progress(
    conn: &mut AnyConnection,
    project_id: i64,
    open: &HashMap<i64, i64>,
) -> StoreResult<Vec<AnnotatorProgress>> {
    let members: Vec<(i64, String, crate::flag::Flag)> = sqlx::query_as(
        "SELECT u.id, u.username, (m.active = 1 AND u.active = 1) FROM project_members m
         JOIN users u ON u.id = m.user_id
         WHERE m.project_id = $1 AND m.role = 'annotator' AND u.role = 'annotator'
         ORDER BY u.username",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let judged: Vec<(i64, String, Option<f64>)> = sqlx::query_as(
        "SELECT j.annotator_id, j.stage, j.seconds_spent FROM judgments j
         WHERE j.project_id = $1 AND j.provenance = 'pooling' AND j.annotator_id IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM judgment_retractions r WHERE r.judgment_id = j.id)",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut per: HashMap<i64, ([i64; 3], Vec<f64>)> = HashMap::new();
    for (annotator, stage, seconds) in judged {
        let (counts, times) = per.entry(annotator).or_default();
        match stage.as_str() {
            "first" => counts[0] += 1,
            "second" => counts[1] += 1,
            _ => counts[2] += 1,
        }
        if let Some(s) = seconds {
            times.push(s);
        }
    }
    Ok(members
        .into_iter()
        .map(|(id, username, active)| {
            let (counts, mut times) = per.remove(&id).unwrap_or_default();
            let total: f64 = times.iter().sum();
            let items_per_hour = (total > 0.0).then(|| times.len() as f64 * 3600.0 / total);
            AnnotatorProgress {
                user_id: id,
                username,
                active: active.0,
                open: open.get(&id).copied().unwrap_or(0),
                done_first: counts[0],
                done_second: counts[1],
                done_adjudication: counts[2],
                median_seconds: median(&mut times),
                items_per_hour,
            }
        })
        .collect())
}

/// Annotation in a project at a glance: counts per stage, each annotator's progress and
/// throughput, the disagreements waiting for adjudication, and flagged items.
pub async fn overview(db: &Db, project_id: i64) -> StoreResult<AnnotationOverview> {
    let mut conn = db.acquire().await?;
    let mode = history::mode(&mut conn, project_id).await?;
    let (pooled, finished): (i64, i64) = sqlx::query_as(
        "SELECT COUNT(*), COALESCE(SUM(CASE WHEN EXISTS (SELECT 1 FROM final_labels f WHERE f.claim_id = e.claim_id AND f.doc_id = e.doc_id) THEN 1 ELSE 0 END), 0)
         FROM pool_entries e WHERE e.project_id = $1",
    )
    .bind(project_id)
    .fetch_one(&mut *conn)
    .await?;
    let open = open_counts(&mut conn, project_id).await?;
    let unassigned: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pool_entries e WHERE e.project_id = $1
           AND NOT EXISTS (SELECT 1 FROM final_labels f WHERE f.claim_id = e.claim_id AND f.doc_id = e.doc_id)
           AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.pool_entry_id = e.id AND a.status = 'open')",
    )
    .bind(project_id)
    .fetch_one(&mut *conn)
    .await?;
    let annotators = annotator_progress(&mut conn, project_id, &open.by_annotator).await?;
    let states = project_states(&mut conn, project_id).await?;
    #[derive(sqlx::FromRow)]
    struct EntryRow {
        id: i64,
        claim_id: i64,
        doc_id: i64,
        claim_ext: String,
        doc_ext: String,
        text: String,
        adjudicator: Option<String>,
        comments: i64,
    }
    let entries: Vec<EntryRow> = sqlx::query_as(
        "SELECT e.id, e.claim_id, e.doc_id, c.claim_id AS claim_ext, d.doc_id AS doc_ext, c.text,
                (SELECT u.username FROM assignments a JOIN users u ON u.id = a.annotator_id
                  WHERE a.pool_entry_id = e.id AND a.stage = 'adjudication' AND a.status = 'open') AS adjudicator,
                (SELECT COUNT(*) FROM comments k WHERE k.claim_id = e.claim_id AND k.doc_id = e.doc_id) AS comments
         FROM pool_entries e JOIN claims c ON c.id = e.claim_id JOIN documents d ON d.id = e.doc_id
         WHERE e.project_id = $1 ORDER BY e.entry_depth, e.id",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let names: HashMap<i64, String> = sqlx::query_as("SELECT id, username FROM users")
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .collect();
    let name = |a: AnnotatorId| names.get(&a.0).cloned().unwrap_or_else(|| a.to_string());
    let disagreements = entries
        .into_iter()
        .filter_map(|e| match states.get(&(e.claim_id, e.doc_id)) {
            Some(PairState::NeedsAdjudication { first, second, .. }) => Some(DisagreementRow {
                pool_entry_id: e.id,
                claim_id: e.claim_ext,
                doc_id: e.doc_ext,
                claim: e.text,
                first: format!("{} ({})", first.label.as_str(), name(first.annotator)),
                second: format!("{} ({})", second.label.as_str(), name(second.annotator)),
                adjudicator: e.adjudicator,
                comments: e.comments,
            }),
            _ => None,
        })
        .collect();
    let flagged = open_items(&mut conn, project_id, true).await?;
    let candidates: Vec<String> = sqlx::query_scalar(
        "SELECT username FROM users WHERE role = 'annotator' AND active = 1
           AND id NOT IN (SELECT user_id FROM project_members WHERE project_id = $1)
         ORDER BY username",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(AnnotationOverview {
        mode: mode.as_str().to_owned(),
        pooled,
        finished,
        open_first: open.by_stage.get("first").copied().unwrap_or(0),
        open_second: open.by_stage.get("second").copied().unwrap_or(0),
        open_adjudication: open.by_stage.get("adjudication").copied().unwrap_or(0),
        unassigned,
        annotators,
        disagreements,
        flagged,
        candidates,
        judging: judging::view(&mut conn, db, project_id).await?,
    })
}

/// Open items of the project (only flagged ones when `flagged_only`), shallowest first.
pub(crate) async fn open_items(
    conn: &mut AnyConnection,
    project_id: i64,
    flagged_only: bool,
) -> StoreResult<Vec<OpenItemRow>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        assignment_id: i64,
        pool_entry_id: i64,
        claim_id: String,
        doc_id: String,
        stage: String,
        annotator: String,
        entry_depth: i64,
        flagged: crate::flag::Flag,
        flag_note: Option<String>,
    }
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT a.id AS assignment_id, e.id AS pool_entry_id, c.claim_id, d.doc_id, a.stage,
                u.username AS annotator, e.entry_depth, a.flagged, a.flag_note
         FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
         JOIN claims c ON c.id = e.claim_id JOIN documents d ON d.id = e.doc_id
         JOIN users u ON u.id = a.annotator_id
         WHERE e.project_id = $1 AND a.status = 'open' AND ($2 = 0 OR a.flagged = 1)
         ORDER BY e.entry_depth, e.id",
    )
    .bind(project_id)
    .bind(i64::from(flagged_only))
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| OpenItemRow {
            assignment_id: r.assignment_id,
            pool_entry_id: r.pool_entry_id,
            claim_id: r.claim_id,
            doc_id: r.doc_id,
            stage: r.stage,
            annotator: r.annotator,
            entry_depth: u32::try_from(r.entry_depth).unwrap_or(u32::MAX),
            flagged: r.flagged.0,
            flag_note: r.flag_note,
        })
        .collect())
}

async fn user_id(conn: &mut AnyConnection, username: &str) -> StoreResult<(i64, String)> {
    sqlx::query_as("SELECT id, role FROM users WHERE username = $1")
        .bind(username)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("user {username}")))
}

/// Adds `username` to the project as an active annotator (or reactivates them) and hands them
/// waiting work; or deactivates them and hands their open items to the other active annotators
/// by the same rules (items nobody may take wait, for a lead). Returns how many items moved.
pub async fn set_active(
    db: &Db,
    project_id: i64,
    username: &str,
    active: bool,
    actor_id: Option<i64>,
) -> StoreResult<usize> {
    let mut tx = begin_write(db).await?;
    let (user, role) = user_id(&mut tx, username).await?;
    if role != "annotator" {
        return Err(StoreError::invalid(
            None,
            format!("{username} is a {role}; only annotators are given items"),
        ));
    }
    let moved = if active {
        sqlx::query(
            "INSERT INTO project_members (project_id, user_id, active, added_at) VALUES ($1, $2, 1, $3)
             ON CONFLICT (project_id, user_id) DO UPDATE SET active = 1",
        )
        .bind(project_id)
        .bind(user)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        assign_pending(&mut tx, project_id, actor_id).await?
    } else {
        let changed = sqlx::query(
            "UPDATE project_members SET active = 0
             WHERE project_id = $1 AND user_id = $2 AND role = 'annotator'",
        )
        .bind(project_id)
        .bind(user)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 0 {
            return Err(StoreError::NotFound(format!(
                "{username} is not a member of the project"
            )));
        }
        hand_over(&mut tx, project_id, AnnotatorId(user)).await?
    };
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: if active {
            "activate_annotator"
        } else {
            "deactivate_annotator"
        },
        entity: "user",
        entity_id: Some(user.to_string()),
        old_value: None,
        new_value: Some(serde_json::json!({ "active": active, "items_moved": moved })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(moved)
}

/// Reassigns the open items of `from` (no longer active) in the project.
async fn hand_over(
    conn: &mut AnyConnection,
    project_id: i64,
    from: AnnotatorId,
) -> StoreResult<usize> {
    let open: Vec<(i64, i64, i64, i64, i64, String)> = sqlx::query_as(
        "SELECT a.id, e.id, e.claim_id, e.doc_id, e.entry_depth, a.stage FROM assignments a
         JOIN pool_entries e ON e.id = a.pool_entry_id
         WHERE e.project_id = $1 AND a.annotator_id = $2 AND a.status = 'open'",
    )
    .bind(project_id)
    .bind(from.0)
    .fetch_all(&mut *conn)
    .await?;
    let states = project_states(conn, project_id).await?;
    // Live first passes go back to the order, for whoever asks next.
    let preassigns = judging::preassigns(conn, project_id).await?;
    let mut items = Vec::new();
    let mut assignment_of = HashMap::new();
    for (assignment, entry, claim, doc, depth, stage) in &open {
        let work = match states.get(&(*claim, *doc)) {
            None | Some(PairState::NeedsFirst) if !preassigns => continue,
            None | Some(PairState::NeedsFirst) => Work::First,
            Some(PairState::NeedsSecond { first }) => Work::Second {
                first: first.annotator,
            },
            Some(PairState::NeedsAdjudication { first, second, .. }) if stage == "second" => {
                Work::Reannotation {
                    first: first.annotator,
                    second: second.annotator,
                }
            }
            Some(PairState::NeedsAdjudication { first, second, .. }) => Work::Adjudication {
                first: first.annotator,
                second: second.annotator,
            },
            Some(PairState::Final(_)) => continue,
        };
        assignment_of.insert((*entry, work.stage()), *assignment);
        items.push(OpenItem {
            entry: PoolEntryId(*entry),
            entry_depth: u32::try_from(*depth).unwrap_or(u32::MAX),
            work,
        });
    }
    sqlx::query(
        "UPDATE assignments SET status = 'withdrawn', closed_at = $1 WHERE annotator_id = $2 AND status = 'open'
           AND pool_entry_id IN (SELECT id FROM pool_entries WHERE project_id = $3)",
    )
    .bind(now_ms())
    .bind(from.0)
    .bind(project_id)
    .execute(&mut *conn)
    .await?;
    let annotators = active_annotators(conn, project_id).await?;
    let mut loads = loads(conn, project_id).await?;
    let seed = history::seed(conn, project_id).await?;
    let mut moved = 0;
    for r in reassign(from, &items, &annotators, &mut loads, seed) {
        if let Ok(to) = r.outcome {
            insert(conn, project_id, r.entry, to, r.stage, FRESH_POSITION).await?;
            moved += 1;
        }
    }
    Ok(moved)
}

/// Hands one open item to another active annotator of the project, by the protocol's rules
/// (never the first annotator for a second pass; adjudication only by one of the two).
pub async fn reassign_item(
    db: &Db,
    project_id: i64,
    assignment_id: i64,
    to: &str,
    actor_id: Option<i64>,
) -> StoreResult<()> {
    let mut tx = begin_write(db).await?;
    let row: Option<(i64, i64, String)> = sqlx::query_as(
        "SELECT a.pool_entry_id, a.annotator_id, a.stage FROM assignments a
         JOIN pool_entries e ON e.id = a.pool_entry_id
         WHERE a.id = $1 AND a.status = 'open' AND e.project_id = $2",
    )
    .bind(assignment_id)
    .bind(project_id)
    .fetch_optional(&mut *tx)
    .await?;
    let (entry_id, from, stage) =
        row.ok_or_else(|| StoreError::NotFound(format!("open item #{assignment_id}")))?;
    let stage = Stage::parse(&stage).map_err(StoreError::unreadable)?;
    let (to_id, _) = user_id(&mut tx, to).await?;
    let active = active_annotators(&mut tx, project_id).await?;
    if !active.contains(&AnnotatorId(to_id)) {
        return Err(StoreError::invalid(
            None,
            format!("{to} is not an active annotator of the project"),
        ));
    }
    let entry = history::entry(&mut tx, entry_id)
        .await?
        .ok_or_else(|| StoreError::Corrupt(format!("item #{assignment_id} lost its pair")))?;
    let hist = pair_history(&mut tx, entry.project_id, entry.claim_id, entry.doc_id).await?;
    check_submission(&hist.state, stage, AnnotatorId(to_id), false).map_err(|e| {
        StoreError::invalid(
            None,
            format!("cannot give item #{assignment_id} to {to}: {e}"),
        )
    })?;
    let now = now_ms();
    sqlx::query("UPDATE assignments SET status = 'withdrawn', closed_at = $1 WHERE id = $2")
        .bind(now)
        .bind(assignment_id)
        .execute(&mut *tx)
        .await?;
    let new_id = insert(
        &mut tx,
        project_id,
        PoolEntryId(entry_id),
        AnnotatorId(to_id),
        stage,
        FRESH_POSITION,
    )
    .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "reassign",
        entity: "assignment",
        entity_id: Some(assignment_id.to_string()),
        old_value: Some(serde_json::json!({ "annotator": from, "assignment": assignment_id })),
        new_value: Some(serde_json::json!({ "annotator": to_id, "assignment": new_id })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Sets the project's second-pass mode (confirm or blind).
pub async fn set_mode(
    db: &Db,
    project_id: i64,
    mode: SecondPassMode,
    actor_id: Option<i64>,
) -> StoreResult<()> {
    let mut tx = begin_write(db).await?;
    let old = history::mode(&mut tx, project_id).await?;
    sqlx::query("UPDATE projects SET second_pass_mode = $1 WHERE id = $2")
        .bind(mode.as_str())
        .bind(project_id)
        .execute(&mut *tx)
        .await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "set_second_pass_mode",
        entity: "project",
        entity_id: Some(project_id.to_string()),
        old_value: Some(serde_json::json!(old.as_str())),
        new_value: Some(serde_json::json!(mode.as_str())),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}
