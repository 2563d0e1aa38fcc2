//! Giving pooled pairs to annotators: the first pass on pool build, the next stage after a
//! submission, and anything left waiting when annotators join or return.

use super::super::audit::AuditEvent;
use super::super::{now_ms, StoreResult};
use super::history::{self, project_states};
use super::judging;
use domain::annotation::{
    assign_adjudication, assign_first, assign_reannotation, assign_second, AnnotatorId, Loads,
    PairState, PoolEntryId, PoolPair, Stage, FRESH_POSITION,
};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, HashMap};

/// The project's active annotators: active members with the annotator role and an active account,
/// admitted to real items (past the project's qualification, if it asks one).
pub(crate) async fn active_annotators(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<Vec<AnnotatorId>> {
    let ids: Vec<i64> = sqlx::query_scalar(&format!(
        "SELECT u.id FROM project_members m JOIN users u ON u.id = m.user_id
         WHERE m.project_id = $1 AND m.active = 1 AND m.role = 'annotator' AND u.active = 1
           AND u.role = 'annotator' AND {}
         ORDER BY u.id",
        super::gold::ADMITTED_SQL
    ))
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(ids.into_iter().map(AnnotatorId).collect())
}

/// Open assignments of pooled pairs per annotator in the project (the pairs of a pool build
/// still being written included), counted from the index `assignments_open_by_project`.
pub(crate) async fn loads(conn: &mut AnyConnection, project_id: i64) -> StoreResult<Loads> {
    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT annotator_id, COUNT(*) FROM assignments
         WHERE project_id = $1 AND status = 'open' AND pool_entry_id IS NOT NULL
         GROUP BY annotator_id",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(a, n)| (AnnotatorId(a), usize::try_from(n).unwrap_or(0)))
        .collect())
}

/// Writes one open assignment of a pooled pair of the project.
pub(crate) async fn insert(
    conn: &mut AnyConnection,
    project_id: i64,
    entry: PoolEntryId,
    annotator: AnnotatorId,
    stage: Stage,
    queue_pos: i64,
) -> StoreResult<i64> {
    Ok(sqlx::query_scalar::<_, i64>(
        "INSERT INTO assignments (pool_entry_id, project_id, annotator_id, stage, status, queue_pos,
                                  created_at)
         VALUES ($1, $2, $3, $4, 'open', $5, $6) RETURNING id",
    )
    .bind(entry.0)
    .bind(project_id)
    .bind(annotator.0)
    .bind(stage.as_str())
    .bind(queue_pos)
    .bind(now_ms())
    .fetch_one(&mut *conn)
    .await?)
}

/// The queue position before every open item of `annotator`: an item put there is served next
/// (an undone submission, a pair found by search).
pub(crate) async fn front_of_queue(
    conn: &mut AnyConnection,
    annotator: AnnotatorId,
) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COALESCE(MIN(queue_pos), 0) - 1 FROM assignments WHERE annotator_id = $1 AND status = 'open'",
    )
    .bind(annotator.0)
    .fetch_one(&mut *conn)
    .await?)
}

/// Who takes a pair's second pass or adjudication (None for other states, or when nobody
/// active may).
fn pick_later(
    entry: PoolEntryId,
    state: &PairState,
    annotators: &[AnnotatorId],
    loads: &mut Loads,
    seed: u64,
    reannotate: bool,
) -> Option<(AnnotatorId, Stage)> {
    // A disagreement goes to a fresh annotator first where the project asks for it (and
    // someone fresh is active); otherwise to adjudication.
    if let PairState::NeedsAdjudication {
        first,
        second,
        third: None,
    } = state
    {
        if reannotate {
            if let Ok(a) = assign_reannotation(
                entry,
                first.annotator,
                second.annotator,
                annotators,
                loads,
                seed,
            ) {
                return Some((a, Stage::Second));
            }
        }
    }
    match state {
        PairState::NeedsSecond { first } => {
            assign_second(entry, first.annotator, annotators, loads, seed)
                .ok()
                .map(|a| (a, Stage::Second))
        }
        PairState::NeedsAdjudication { first, second, .. } => assign_adjudication(
            entry,
            first.annotator,
            second.annotator,
            annotators,
            loads,
            seed,
        )
        .ok()
        .map(|a| (a, Stage::Adjudication)),
        PairState::NeedsFirst | PairState::Final(_) => None,
    }
}

/// Gives the stage `state` needs next to an eligible active annotator, if there is one; the pair
/// otherwise waits (for a lead, or for assign_pending when someone eligible becomes active).
pub(crate) async fn assign_next(
    conn: &mut AnyConnection,
    project_id: i64,
    entry: PoolEntryId,
    state: &PairState,
) -> StoreResult<Option<(AnnotatorId, Stage)>> {
    let annotators = active_annotators(conn, project_id).await?;
    let mut loads = loads(conn, project_id).await?;
    let seed = history::seed(conn, project_id).await?;
    let chosen = match state {
        // Live first passes are taken when asked for, not given out.
        PairState::NeedsFirst if !judging::preassigns(conn, project_id).await? => None,
        PairState::NeedsFirst => assign_first(
            &[PoolPair {
                entry,
                entry_depth: 1,
            }],
            &annotators,
            &mut loads,
            seed,
        )
        .ok()
        .and_then(|list| list.first().map(|a| (a.annotator, Stage::First))),
        state => {
            let reannotate = history::reannotates(conn, project_id).await?;
            pick_later(entry, state, &annotators, &mut loads, seed, reannotate)
        }
    };
    if let Some((annotator, stage)) = chosen {
        insert(conn, project_id, entry, annotator, stage, FRESH_POSITION).await?;
    }
    Ok(chosen)
}

/// A pooled pair waiting for work: pool entry, claim and document keys, entry depth.
pub(crate) type Pending = (i64, i64, i64, i64);

/// One assignment to make: the pair, who, which stage.
pub(crate) type Made = (PoolEntryId, AnnotatorId, Stage);

/// Pooled pairs of the project (visible ones, see `pool_entries`) with no final label and no
/// open assignment, shallowest first; only those among `among` when given.
pub(crate) async fn pending(
    conn: &mut AnyConnection,
    project_id: i64,
    among: Option<&[i64]>,
) -> StoreResult<Vec<Pending>> {
    let among: Option<std::collections::HashSet<i64>> =
        among.map(|ids| ids.iter().copied().collect());
    let pending: Vec<Pending> = sqlx::query_as(
        "SELECT e.id, e.claim_id, e.doc_id, e.entry_depth FROM pool_entries e
         WHERE e.project_id = $1
           AND NOT EXISTS (SELECT 1 FROM final_labels f WHERE f.claim_id = e.claim_id AND f.doc_id = e.doc_id)
           AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.pool_entry_id = e.id AND a.status = 'open')
         ORDER BY e.entry_depth, e.id",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(match among {
        Some(among) => pending
            .into_iter()
            .filter(|p| among.contains(&p.0))
            .collect(),
        None => pending,
    })
}

/// What assigning reads: the pairs' protocol states, the active annotators, their loads, the
/// project's seed and whether it pre-assigns first passes.
pub(crate) struct Roster {
    states: HashMap<(i64, i64), PairState>,
    pub(crate) annotators: Vec<AnnotatorId>,
    loads: Loads,
    seed: u64,
    /// False under a live judging order: first passes are then taken when asked for.
    preassigns_first: bool,
    /// Disagreements go to a fresh annotator before adjudication.
    reannotate: bool,
}

impl Roster {
    /// The project's roster as `conn` sees it.
    pub(crate) async fn read(conn: &mut AnyConnection, project_id: i64) -> StoreResult<Roster> {
        Ok(Roster {
            states: project_states(conn, project_id).await?,
            annotators: active_annotators(conn, project_id).await?,
            loads: loads(conn, project_id).await?,
            seed: history::seed(conn, project_id).await?,
            preassigns_first: judging::preassigns(conn, project_id).await?,
            reannotate: history::reannotates(conn, project_id).await?,
        })
    }

    /// Who takes each of `pending` (by the stage it needs): first passes balanced and
    /// shallowest first (none under a live judging order), then second passes and
    /// adjudications. Pairs nobody active may take are left out; the loads count what is given.
    pub(crate) fn plan(&mut self, pending: &[Pending]) -> Vec<Made> {
        let mut firsts = Vec::new();
        let mut later = Vec::new();
        for &(entry, claim, doc, depth) in pending {
            let entry = PoolEntryId(entry);
            match self.states.get(&(claim, doc)) {
                None | Some(PairState::NeedsFirst) if !self.preassigns_first => {}
                None | Some(PairState::NeedsFirst) => firsts.push(PoolPair {
                    entry,
                    entry_depth: u32::try_from(depth).unwrap_or(u32::MAX),
                }),
                Some(PairState::Final(_)) => {}
                Some(state) => later.push((entry, *state)),
            }
        }
        let mut made: Vec<Made> = Vec::new();
        if !self.annotators.is_empty() {
            if let Ok(list) = assign_first(&firsts, &self.annotators, &mut self.loads, self.seed) {
                made.extend(list.into_iter().map(|a| (a.entry, a.annotator, a.stage)));
            }
        }
        for (entry, state) in later {
            if let Some((annotator, stage)) = pick_later(
                entry,
                &state,
                &self.annotators,
                &mut self.loads,
                self.seed,
                self.reannotate,
            ) {
                made.push((entry, annotator, stage));
            }
        }
        made
    }
}

/// Writes `made`, pairs of the project, as open assignments at the front position.
pub(crate) async fn write(
    conn: &mut AnyConnection,
    project_id: i64,
    made: &[Made],
) -> StoreResult<()> {
    let now = now_ms();
    for chunk in made.chunks(1000) {
        let rows = crate::values::ValuesInsert::new(
            crate::db::engine_of(conn),
            "INSERT INTO assignments (pool_entry_id, project_id, annotator_id, stage, status, \
             queue_pos, created_at) ",
            chunk,
            |b, (entry, annotator, stage)| {
                b.bind(entry.0)
                    .bind(project_id)
                    .bind(annotator.0)
                    .bind(stage.as_str())
                    .bind("open")
                    .bind(FRESH_POSITION)
                    .bind(now);
            },
        );
        if let Some((sql, args)) = rows.finish()? {
            sqlx::query_with(&sql, args).execute(&mut *conn).await?;
        }
    }
    Ok(())
}

/// Records the audit event of assignments made (none when nothing was).
pub(crate) async fn record(
    conn: &mut AnyConnection,
    project_id: i64,
    actor_id: Option<i64>,
    made: &[Made],
) -> StoreResult<()> {
    if made.is_empty() {
        return Ok(());
    }
    let mut per: BTreeMap<String, BTreeMap<i64, usize>> = BTreeMap::new();
    for (_, annotator, stage) in made {
        *per.entry(stage.as_str().to_owned())
            .or_default()
            .entry(annotator.0)
            .or_insert(0) += 1;
    }
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "assign",
        entity: "assignments",
        entity_id: None,
        old_value: None,
        new_value: Some(
            serde_json::json!({ "assigned": made.len(), "per_stage_and_annotator": per }),
        ),
    }
    .record(conn)
    .await
}

/// [`assign_pending`] for the pairs among `entries` only, without its audit event: returns the
/// assignments made, for the caller to record.
pub(crate) async fn assign_pending_among(
    conn: &mut AnyConnection,
    project_id: i64,
    entries: &[i64],
) -> StoreResult<Vec<Made>> {
    let pending = pending(conn, project_id, Some(entries)).await?;
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    let made = Roster::read(conn, project_id).await?.plan(&pending);
    write(conn, project_id, &made).await?;
    Ok(made)
}

/// Assigns every pooled pair of the project that has no final label and no open assignment to
/// an eligible active annotator, by the stage it needs: first passes balanced and shallowest
/// first, then second passes and adjudications. Pairs nobody active may take wait. Returns how
/// many assignments were made.
pub async fn assign_pending(
    conn: &mut AnyConnection,
    project_id: i64,
    actor_id: Option<i64>,
) -> StoreResult<usize> {
    let pending = pending(conn, project_id, None).await?;
    if pending.is_empty() {
        return Ok(0);
    }
    let made = Roster::read(conn, project_id).await?.plan(&pending);
    write(conn, project_id, &made).await?;
    record(conn, project_id, actor_id, &made).await?;
    Ok(made.len())
}
