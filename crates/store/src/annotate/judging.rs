//! The project's judging order, live: its settings, the labels so far as the order reads them,
//! and the first pass an annotator takes when they ask for one.
//!
//! Under `depth` without a budget ([`FirstPasses::Preassigned`]) nothing here runs on the
//! queue's path: first passes are given out when the pool is built, as before. Otherwise an
//! annotator who holds no first pass takes one when their queue is read: the pair the
//! project's [`LiveSelector`] proposes given the pooled systems' rankings (as the pool's ranks
//! hold them) and the labels so far ([`label_so_far`]), among pairs nobody holds; within the
//! budget (first passes submitted plus those held). The choice happens inside the write
//! transaction that records it, so two annotators never take the same pair.
//!
//! Only pool entries some pooled system ranks are served live (the selector walks the pooled
//! systems' rankings); an entry no pooled system ranks is never chosen by a live order.
//!
//! The selector is kept per database file and project in memory, keyed by the pool's version
//! (builds, entries, pooled systems), the order and the seed, and synced with the labels at
//! each request ([`sync_labels`]): only the pairs whose judgments or final label changed since
//! it last synced are read again ([`Marks`]): new labels are recorded in O(1) each; only a
//! changed label rebuilds it. It is synced first outside the write transaction, so that the
//! transaction, which must sync again (someone may have submitted since), has little left to
//! read.

use super::super::audit::AuditEvent;
use super::super::{Db, Field, StoreError, StoreResult};
use super::assign::{self, active_annotators, assign_pending, insert};
use super::begin_write;
use super::cal::CalLive;
use super::history::{pair_history, project_states};
use crate::db::{engine_of, Engine};
use domain::annotation::{AnnotatorId, PoolEntryId, Stage, FRESH_POSITION};
use domain::judging::{
    label_so_far, FirstPasses, JudgingOrder, JudgingSettings, LivePlan, LiveSelector, Selector,
};
use domain::label::Label;
use domain::model::annotate::JudgingView;
use domain::pool::{FxHashMap, Pair, Strategy};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};

/// A pooled pair by its claim and document row ids.
type RowPair = Pair<i64, i64>;

fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(what.to_string())
}

/// The project's judging settings.
pub(crate) async fn settings(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<JudgingSettings> {
    let row: Option<(String, i64, Option<i64>, i64)> = sqlx::query_as(
        "SELECT judging_order, judging_seed, judging_budget, cal_candidates FROM projects WHERE id = $1",
    )
    .bind(project_id)
    .fetch_optional(&mut *conn)
    .await?;
    let (order, seed, budget, candidates) =
        row.ok_or_else(|| StoreError::NotFound(format!("project {project_id}")))?;
    let mut settings = settings_of(project_id, &order, seed, budget)?;
    settings.candidates = u32::try_from(candidates)
        .map_err(|e| corrupt(format!("project {project_id}: cal candidates: {e}")))?;
    Ok(settings)
}

/// Project `project_id`'s judging settings from its columns `judging_order`, `judging_seed`
/// and `judging_budget` (`cal`'s candidates per claim at their default).
pub(crate) fn settings_of(
    project_id: i64,
    order: &str,
    seed: i64,
    budget: Option<i64>,
) -> StoreResult<JudgingSettings> {
    Ok(JudgingSettings {
        order: JudgingOrder::parse(order)
            .map_err(|e| corrupt(format!("project {project_id}: {e}")))?,
        seed: seed.cast_unsigned(),
        budget: budget
            .map(u64::try_from)
            .transpose()
            .map_err(|e| corrupt(format!("project {project_id}: judging budget: {e}")))?,
        ..JudgingSettings::default()
    })
}

/// The project's judging settings, and the first passes submitted and held ([`first_passes`]).
pub async fn judging(db: &Db, project_id: i64) -> StoreResult<(JudgingSettings, u64, u64)> {
    let mut conn = db.acquire().await?;
    let settings = settings(&mut conn, project_id).await?;
    let (spent, held) = first_passes(&mut conn, project_id).await?;
    Ok((settings, spent, held))
}

/// The open first passes of project `?1`, as a `FROM` clause (`a`: the assignment, `e`: its
/// pool entry). Driven from the open assignments (the partial index `assignments_one_open`
/// holds only those, a few per annotator), not from the project's pool entries: joined the
/// other way SQLite walks every pool entry of the project (10,000 in the annotate bench) and
/// looks up each one's build, several times per request.
/// PostgreSQL's planner finds that order itself.
fn open_first_passes(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => {
            "assignments a INDEXED BY assignments_one_open
             CROSS JOIN pool_entries e
             WHERE e.id = a.pool_entry_id AND a.status = 'open' AND a.stage = 'first'
               AND e.project_id = $1"
        }
        Engine::Postgres => {
            "assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
             WHERE a.status = 'open' AND a.stage = 'first' AND e.project_id = $1"
        }
    }
}

/// First passes submitted in the project (through annotation, not imported; undone ones do
/// not count) and first passes given out and not yet submitted.
pub(crate) async fn first_passes(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<(u64, u64)> {
    let (spent, held): (i64, i64) = sqlx::query_as(&format!(
        "SELECT
           (SELECT COUNT(*) FROM judgments j WHERE j.project_id = $1 AND j.stage = 'first'
              AND j.provenance = 'pooling'
              AND NOT EXISTS (SELECT 1 FROM judgment_retractions r WHERE r.judgment_id = j.id)),
           (SELECT COUNT(*) FROM {})",
        open_first_passes(engine_of(conn))
    ))
    .bind(project_id)
    .fetch_one(&mut *conn)
    .await?;
    Ok((
        u64::try_from(spent).unwrap_or(0),
        u64::try_from(held).unwrap_or(0),
    ))
}

/// What the lead's annotation page shows of the settings, on a connection of its own.
pub async fn judging_view(db: &Db, project_id: i64) -> StoreResult<JudgingView> {
    let mut conn = db.acquire().await?;
    view(&mut conn, db, project_id).await
}

/// What the lead's annotation page shows of the settings.
pub(crate) async fn view(
    conn: &mut AnyConnection,
    db: &Db,
    project_id: i64,
) -> StoreResult<JudgingView> {
    let settings = settings(conn, project_id).await?;
    let (spent, held) = first_passes(conn, project_id).await?;
    let mut cal = cal_view(conn, project_id).await?;
    if let Some(cal) = cal.as_mut() {
        cal.stopping = super::stopping::stop_view(conn, db, project_id, &settings).await?;
    }
    Ok(JudgingView {
        cal,
        order: settings.order.as_str().to_owned(),
        seed: settings.seed,
        budget: settings.budget,
        spent,
        held,
        live: settings.first_passes() != FirstPasses::Preassigned,
        orders: JudgingOrder::ALL
            .iter()
            .map(|o| o.as_str().to_owned())
            .collect(),
        candidates: settings.candidates,
    })
}

/// The `cal` order's retrievals and picks, once its retrievals were made.
pub(crate) async fn cal_view(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<Option<domain::model::annotate::CalView>> {
    #[allow(clippy::type_complexity)]
    let row: Option<(i64, String, i64, i64, i64, i64, crate::flag::Flag)> = sqlx::query_as(
        "SELECT s.per_claim, s.retriever, s.claims, s.made_at,
                (SELECT COUNT(*) FROM cal_picks p WHERE p.project_id = s.project_id),
                (SELECT COUNT(*) FROM cal_picks p WHERE p.project_id = s.project_id AND p.in_runs = 0),
                EXISTS (SELECT 1 FROM imports i WHERE i.project_id = s.project_id
                          AND i.kind IN ('corpus', 'claims') AND i.imported_at > s.made_at)
         FROM cal_retrieval_sets s WHERE s.project_id = $1",
    )
    .bind(project_id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(
        |(per_claim, retriever, claims, made_at, picks, outside, stale)| {
            domain::model::annotate::CalView {
                per_claim: u32::try_from(per_claim).unwrap_or(u32::MAX),
                retriever,
                claims: u64::try_from(claims).unwrap_or(0),
                made_at,
                picks: u64::try_from(picks).unwrap_or(0),
                outside_runs: u64::try_from(outside).unwrap_or(0),
                stopping: None,
                stale: stale.0,
            }
        },
    ))
}

/// What changing the settings did to the queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct JudgingChange {
    /// Pre-assigned first passes taken back when first passes became live (each annotator
    /// keeps the first one of their queue).
    pub withdrawn: usize,
    /// First passes given out when they became pre-assigned again.
    pub assigned: usize,
}

impl JudgingChange {
    /// One line for the lead: the settings now, and what moved.
    pub fn describe(&self, settings: &JudgingSettings) -> String {
        let budget = settings.budget.map_or_else(
            || "no budget".to_owned(),
            |b| format!("a budget of {b} first passes"),
        );
        let mut text = format!(
            "Judging order {} (seed {}), {budget}.",
            settings.order, settings.seed
        );
        if settings.order == JudgingOrder::Cal {
            text.push_str(&format!(
                " Its candidates: every pair a pooled run ranked, and each claim's top {} from the corpus.",
                settings.candidates
            ));
        }
        if self.withdrawn > 0 {
            text.push_str(&format!(
                " {} pre-assigned first passes went back to the order.",
                self.withdrawn
            ));
        }
        if self.assigned > 0 {
            text.push_str(&format!(" {} first passes were assigned.", self.assigned));
        }
        text
    }
}

/// Sets the project's judging order, seed and budget, with its audit event. Going live takes
/// back the pre-assigned first passes nobody has started (each annotator keeps the first of
/// their queue); going back to `depth` without a budget pre-assigns the waiting pairs again.
pub async fn set_judging(
    db: &Db,
    project_id: i64,
    new: JudgingSettings,
    actor_id: Option<i64>,
) -> StoreResult<JudgingChange> {
    let budget = new
        .budget
        .map(i64::try_from)
        .transpose()
        .map_err(|_| StoreError::invalid(Field::Budget, "too large"))?;
    let mut tx = begin_write(db).await?;
    let old = settings(&mut tx, project_id).await?;
    sqlx::query(
        "UPDATE projects SET judging_order = $1, judging_seed = $2, judging_budget = $3,
                             cal_candidates = $4
         WHERE id = $5",
    )
    .bind(new.order.as_str())
    .bind(new.seed.cast_signed())
    .bind(budget)
    .bind(i64::from(new.candidates))
    .bind(project_id)
    .execute(&mut *tx)
    .await?;
    let change = match (old.first_passes(), new.first_passes()) {
        (FirstPasses::Preassigned, FirstPasses::Live(_)) => JudgingChange {
            withdrawn: withdraw_preassigned(&mut tx, project_id).await?,
            assigned: 0,
        },
        (FirstPasses::Live(_), FirstPasses::Preassigned) => JudgingChange {
            withdrawn: 0,
            assigned: assign_pending(&mut tx, project_id, actor_id).await?,
        },
        _ => JudgingChange {
            withdrawn: 0,
            assigned: 0,
        },
    };
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "set_judging",
        entity: "project",
        entity_id: Some(project_id.to_string()),
        old_value: Some(serde_json::json!(old)),
        new_value: Some(serde_json::json!({ "settings": new, "change": change })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(change)
}

/// Withdraws the open first passes of the project but the first of each annotator's queue.
async fn withdraw_preassigned(conn: &mut AnyConnection, project_id: i64) -> StoreResult<usize> {
    let open: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT a.id, a.annotator_id FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
         WHERE e.project_id = $1 AND a.stage = 'first' AND a.status = 'open'
         ORDER BY a.annotator_id, a.queue_pos, e.entry_depth, e.id",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut kept: HashSet<i64> = HashSet::new();
    let withdraw: Vec<i64> = open
        .into_iter()
        .filter(|(_, annotator)| !kept.insert(*annotator))
        .map(|(id, _)| id)
        .collect();
    let now = super::super::now_ms();
    for chunk in withdraw.chunks(500) {
        let sql = format!(
            "UPDATE assignments SET status = 'withdrawn', closed_at = $1 WHERE id IN ({})",
            crate::dialect::params(2, chunk.len())
        );
        let mut query = sqlx::query(&sql).bind(now);
        for id in chunk {
            query = query.bind(*id);
        }
        query.execute(&mut *conn).await?;
    }
    Ok(withdraw.len())
}

/// The labels so far of the project's pairs, as the order reads them.
pub(crate) async fn labels_so_far(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<FxHashMap<RowPair, bool>> {
    let states = project_states(conn, project_id).await?;
    let mut labels: FxHashMap<RowPair, bool> = FxHashMap::default();
    labels.reserve(states.len());
    for ((claim, doc), state) in &states {
        if let Some(evidence) = label_so_far(state) {
            labels.insert(Pair::new(*claim, *doc), evidence);
        }
    }
    // Final labels win (they agree with the judgments that made them).
    let finals: Vec<(i64, i64, String)> =
        sqlx::query_as("SELECT claim_id, doc_id, label FROM final_labels WHERE project_id = $1")
            .bind(project_id)
            .fetch_all(&mut *conn)
            .await?;
    for (claim, doc, label) in finals {
        let label = Label::parse(&label).map_err(|e| corrupt(format!("final label: {e}")))?;
        labels.insert(Pair::new(claim, doc), label.is_evidence());
    }
    Ok(labels)
}

/// What identifies the rankings a live selector was built from.
///
/// The pool entries are counted on `pool_entry_rows` (its index on the project covers the
/// count and the largest id) rather than through the `pool_entries` view, which looks up every
/// row's build: the view is those rows but the ones of builds being written, and rows are only
/// ever added, so the view changes only if the rows' count or largest id, the builds being
/// written or the finished builds change, all in the key. The selector itself is built through
/// the views.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct RankingsKey {
    project: i64,
    strategy: Option<String>,
    builds: i64,
    entries: i64,
    last_entry: i64,
    /// The builds being written.
    writing: String,
    pooled: String,
    /// When `cal`'s corpus retrievals were made (0: never).
    retrievals: i64,
    order: JudgingOrder,
    seed: u64,
}

/// The end of both keys' query: the pooled systems, `cal`'s retrievals and its latest
/// stopping sample.
macro_rules! key_tail {
    () => {
        "(SELECT string_agg(CAST(s.id AS TEXT), ',' ORDER BY s.id)
           FROM systems s WHERE s.project_id = p.id AND s.role = 'pooled'),
        (SELECT COALESCE(MAX(c.made_at), 0) FROM cal_retrieval_sets c
           WHERE c.project_id = p.id),
        (SELECT COALESCE(MAX(t.id), 0) FROM cal_stop_samples t
           WHERE t.project_id = p.id)
 FROM projects p WHERE p.id = $1"
    };
}

/// What [`rankings_key`] reads under the runs' orders: the pool's builds and entries, then
/// [`key_tail`].
const RUNS_KEY: &str = concat!(
    "SELECT p.pool_strategy,
        (SELECT COALESCE(MAX(b.id), 0) FROM pool_builds b WHERE b.project_id = p.id),
        (SELECT COUNT(*) FROM pool_entry_rows e WHERE e.project_id = p.id),
        (SELECT COALESCE(MAX(e.id), 0) FROM pool_entry_rows e WHERE e.project_id = p.id),
        (SELECT string_agg(CAST(b.id AS TEXT), ',' ORDER BY b.id)
           FROM pool_build_rows b WHERE b.project_id = p.id AND b.state = 'writing'),
        ",
    key_tail!()
);

/// [`RUNS_KEY`] under `cal`, without the pool's counts (the most of its time: every entry
/// counted, twice per first pass served).
const CAL_KEY: &str = concat!(
    "SELECT p.pool_strategy, CAST(0 AS BIGINT), CAST(0 AS BIGINT), CAST(0 AS BIGINT),
        CAST(NULL AS TEXT),
        ",
    key_tail!()
);

/// The key of the project's rankings under `plan`, and the id of its latest stopping sample
/// (0: none), which `cal` serves first without being rebuilt for it.
async fn rankings_key(
    conn: &mut AnyConnection,
    project_id: i64,
    plan: LivePlan,
) -> StoreResult<(RankingsKey, i64)> {
    #[allow(clippy::type_complexity)]
    let (strategy, builds, entries, last_entry, writing, pooled, retrievals, stop_sample): (
        Option<String>,
        i64,
        i64,
        i64,
        Option<String>,
        Option<String>,
        i64,
        i64,
    ) = sqlx::query_as(if plan.order == JudgingOrder::Cal {
        // `cal`'s key leaves the pool out (it adds to the pool itself): not counted.
        CAL_KEY
    } else {
        RUNS_KEY
    })
    .bind(project_id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("project {project_id}")))?;
    let key = RankingsKey {
        project: project_id,
        strategy,
        builds,
        entries,
        last_entry,
        writing: writing.unwrap_or_default(),
        pooled: pooled.unwrap_or_default(),
        retrievals,
        order: plan.order,
        seed: plan.seed,
    };
    let key = match plan.order {
        // The runs' orders walk the pool's ranks; `cal` walks the runs and its retrievals, and
        // the pool it adds to must not rebuild it.
        JudgingOrder::Runs(_) => RankingsKey {
            retrievals: 0,
            ..key
        },
        JudgingOrder::Cal => RankingsKey {
            builds: 0,
            entries: 0,
            last_entry: 0,
            writing: String::new(),
            ..key
        },
    };
    Ok((key, stop_sample))
}

/// Where the labels a live selector holds were read, by what only grows as labels change.
///
/// Every change to a pair's label so far comes with a judgment row of the pair or a
/// retraction of one: a submission writes its judgment (and a final label it makes, in the
/// same transaction); an undo writes a retraction (and deletes the final label the judgment
/// made, in the same transaction); an import writes judgment rows, hidden while the import is
/// being written, and its final labels in the transaction that makes it `done`. Judgment rows
/// are never updated, nor deleted unless hidden (an import's that never finished);
/// retractions are never deleted. So, read in one snapshot:
///
/// - rows written after a snapshot have ids above the largest id it saw (visible rows are
///   never deleted, so ids are not reused below it);
/// - rows hidden at a snapshot become visible (or go away) only when their import stops being
///   written, which changes the imports being written (by id and their writer's lock token:
///   an import's id can be reused after a failed one is removed, its token cannot);
/// - a new retraction raises the count of retractions.
///
/// A sync reads the pairs of the judgments above the last largest id and, if the count moved,
/// of the retractions not seen before, and reads those pairs' labels again; any other change
/// of the marks (the imports being written, a mark going down) reads every label again.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Marks {
    /// The largest judgment row id, of any project, visible or not.
    judgment: i64,
    /// Retractions, of any project.
    retractions: i64,
    /// The imports being written (any kind, any project): `id:token`, by id.
    writing: String,
}

async fn marks(conn: &mut AnyConnection) -> StoreResult<Marks> {
    let (judgment, retractions, writing): (i64, i64, Option<String>) = sqlx::query_as(
        "SELECT (SELECT COALESCE(MAX(id), 0) FROM judgment_rows),
                (SELECT COUNT(*) FROM judgment_retractions),
                (SELECT string_agg(CAST(id AS TEXT) || ':' || COALESCE(lock_token, ''), ',' ORDER BY id)
                   FROM imports WHERE state = 'writing')",
    )
    .fetch_one(&mut *conn)
    .await?;
    Ok(Marks {
        judgment,
        retractions,
        writing: writing.unwrap_or_default(),
    })
}

/// Past this many pairs to read again, a sync reads every label instead (one query).
const MAX_TOUCHED: usize = 200;

/// A live selector over a project's pool, with each pair's pool entry, and where its labels
/// were read.
struct Live {
    key: RankingsKey,
    order: LiveOrder,
    /// The marks when the selector's labels were read; `None` before the first sync.
    synced: Option<Marks>,
    /// The project's retracted judgments then.
    retracted: HashSet<i64>,
}

/// The order a live project plays.
enum LiveOrder {
    /// One of the runs' orders over the pool's ranks, with each pair's pool entry.
    Runs {
        selector: Box<LiveSelector<i64, i64>>,
        entries: Arc<FxHashMap<RowPair, i64>>,
    },
    Cal(Box<CalLive>),
}

impl LiveOrder {
    /// [`LiveSelector::apply`] or [`domain::judging::LiveCal::apply`].
    fn apply(&mut self, changes: Vec<(RowPair, Option<bool>)>) -> StoreResult<()> {
        match self {
            LiveOrder::Runs { selector, .. } => selector
                .apply(changes)
                .map_err(|e| corrupt(format!("the judging order: {e}"))),
            LiveOrder::Cal(cal) => {
                let keyed = cal.keyed(changes);
                cal.order.apply(keyed);
                Ok(())
            }
        }
    }

    /// [`LiveSelector::sync`] or [`domain::judging::LiveCal::sync`].
    fn sync(&mut self, labels: &FxHashMap<RowPair, bool>) -> StoreResult<()> {
        match self {
            LiveOrder::Runs { selector, .. } => selector
                .sync(labels)
                .map_err(|e| corrupt(format!("the judging order: {e}"))),
            LiveOrder::Cal(cal) => {
                let keyed: FxHashMap<_, bool> = cal
                    .keyed(labels.iter().map(|(p, l)| (*p, *l)))
                    .into_iter()
                    .collect();
                cal.order.sync(&keyed);
                Ok(())
            }
        }
    }
}

/// A project's live selector, if built: one request at a time syncs it or chooses with it.
type Slot = Arc<tokio::sync::Mutex<Option<Live>>>;

/// The live selectors, by database (file or URL) and project.
static LIVE: LazyLock<Mutex<HashMap<(PathBuf, i64), Slot>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The slot of `db`'s project (the selectors of two databases never mix).
fn slot(db: &Db, project_id: i64) -> StoreResult<Slot> {
    let file = crate::db::identity(db);
    let mut slots = LIVE
        .lock()
        .map_err(|_| StoreError::Fault("the judging order's memory was poisoned".into()))?;
    Ok(Arc::clone(slots.entry((file, project_id)).or_default()))
}

/// Builds the selector of `key` from the pool's ranks: each pooled system's pooled pairs by
/// its rank (within claims under `per-claim`).
async fn build(conn: &mut AnyConnection, db: &Db, key: RankingsKey) -> StoreResult<Live> {
    let strategy = match key.strategy.as_deref() {
        None => Strategy::Confidence,
        Some(text) if text == Strategy::Confidence.as_str() => Strategy::Confidence,
        Some(text) if text == Strategy::PerClaim.as_str() => Strategy::PerClaim,
        Some(text) => return Err(corrupt(format!("pool strategy: {text:?}"))),
    };
    let order = match key.order {
        JudgingOrder::Runs(order) => order,
        JudgingOrder::Cal => {
            let cal = CalLive::build(conn, db, key.project, strategy, key.seed).await?;
            return Ok(Live {
                key,
                order: LiveOrder::Cal(Box::new(cal)),
                synced: None,
                retracted: HashSet::new(),
            });
        }
    };
    let rows: Vec<(i64, i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT r.system_id, e.id, e.claim_id, e.doc_id, r.rank
         FROM pool_ranks r JOIN pool_entries e ON e.id = r.pool_entry_id
         JOIN systems s ON s.id = r.system_id
         WHERE e.project_id = $1 AND s.role = 'pooled'",
    )
    .bind(key.project)
    .fetch_all(&mut *conn)
    .await?;
    let mut per_system: BTreeMap<i64, Vec<(i64, i64, i64)>> = BTreeMap::new();
    let mut entries: FxHashMap<RowPair, i64> = FxHashMap::default();
    for (system, entry, claim, doc, rank) in rows {
        per_system
            .entry(system)
            .or_default()
            .push((claim, doc, rank));
        entries.insert(Pair::new(claim, doc), entry);
    }
    let rankings: Vec<Vec<RowPair>> = per_system
        .into_values()
        .map(|mut list| {
            match strategy {
                Strategy::Confidence => list.sort_unstable_by_key(|&(c, d, r)| (r, c, d)),
                Strategy::PerClaim => list.sort_unstable_by_key(|&(c, d, r)| (c, r, d)),
            }
            list.into_iter().map(|(c, d, _)| Pair::new(c, d)).collect()
        })
        .collect();
    let selector = Selector::new(strategy, rankings, order, key.seed)
        .map_err(|e| corrupt(format!("the pool's rankings: {e}")))?;
    Ok(Live {
        key,
        order: LiveOrder::Runs {
            selector: Box::new(LiveSelector::new(selector)),
            entries: Arc::new(entries),
        },
        synced: None,
        retracted: HashSet::new(),
    })
}

/// The project's retracted judgments, with their pairs. Driven from the retractions (few),
/// not from the project's judgments.
async fn retractions(
    conn: &mut AnyConnection,
    project_id: i64,
) -> StoreResult<FxHashMap<i64, RowPair>> {
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT r.judgment_id, j.claim_id, j.doc_id
         FROM judgment_retractions r CROSS JOIN judgment_rows j
         WHERE j.id = r.judgment_id AND j.project_id = $1",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, claim, doc)| (id, Pair::new(claim, doc)))
        .collect())
}

/// The label so far of each of `pairs` (`None`: none), as [`labels_so_far`] reads it.
async fn labels_of(
    conn: &mut AnyConnection,
    project_id: i64,
    pairs: impl IntoIterator<Item = RowPair>,
) -> StoreResult<Vec<(RowPair, Option<bool>)>> {
    let mut labels = Vec::new();
    for pair in pairs {
        let finale: Option<String> = sqlx::query_scalar(
            "SELECT label FROM final_labels WHERE claim_id = $1 AND doc_id = $2 AND project_id = $3",
        )
        .bind(pair.claim)
        .bind(pair.doc)
        .bind(project_id)
        .fetch_optional(&mut *conn)
        .await?;
        let label = match finale {
            Some(text) => Some(
                Label::parse(&text)
                    .map_err(|e| corrupt(format!("final label: {e}")))?
                    .is_evidence(),
            ),
            None => label_so_far(
                &pair_history(conn, project_id, pair.claim, pair.doc)
                    .await?
                    .state,
            ),
        };
        labels.push((pair, label));
    }
    Ok(labels)
}

/// Brings `live`'s selector to the labels so far as `conn` reads them: only the pairs changed
/// since it last synced, or every label (see [`Marks`]).
async fn sync_labels(
    conn: &mut AnyConnection,
    project_id: i64,
    live: &mut Live,
) -> StoreResult<()> {
    let now = marks(conn).await?;
    let then = match &live.synced {
        Some(then) if *then == now => return Ok(()),
        Some(then)
            if then.writing == now.writing
                && then.judgment <= now.judgment
                && then.retractions <= now.retractions =>
        {
            then.clone()
        }
        _ => return sync_all(conn, project_id, live, now).await,
    };
    let mut touched: HashSet<RowPair> = sqlx::query_as::<_, (i64, i64)>(
        // `+`: by the row id range, not by the project's index (every judgment of the project).
        "SELECT DISTINCT claim_id, doc_id FROM judgments
         WHERE id > $1 AND id <= $2 AND +project_id = $3",
    )
    .bind(then.judgment)
    .bind(now.judgment)
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|(claim, doc)| Pair::new(claim, doc))
    .collect();
    if now.retractions != then.retractions {
        let retracted = retractions(conn, project_id).await?;
        if !live.retracted.iter().all(|id| retracted.contains_key(id)) {
            return sync_all(conn, project_id, live, now).await;
        }
        touched.extend(
            retracted
                .iter()
                .filter(|(id, _)| !live.retracted.contains(id))
                .map(|(_, pair)| *pair),
        );
        live.retracted = retracted.into_keys().collect();
    }
    if touched.len() > MAX_TOUCHED {
        return sync_all(conn, project_id, live, now).await;
    }
    let changes = labels_of(conn, project_id, touched).await?;
    live.order.apply(changes)?;
    live.synced = Some(now);
    Ok(())
}

/// Brings `live`'s selector to every label so far, read at `now` or later.
async fn sync_all(
    conn: &mut AnyConnection,
    project_id: i64,
    live: &mut Live,
    now: Marks,
) -> StoreResult<()> {
    let labels = labels_so_far(conn, project_id).await?;
    let retracted = retractions(conn, project_id).await?;
    live.order.sync(&labels)?;
    live.retracted = retracted.into_keys().collect();
    live.synced = Some(now);
    Ok(())
}

/// Brings the project's live selector in `cached` up to date: built (again) if absent or its
/// rankings changed, and synced with the labels so far. Whatever fails leaves `cached` empty,
/// so that the next request starts afresh.
async fn update(
    conn: &mut AnyConnection,
    db: &Db,
    project_id: i64,
    plan: LivePlan,
    cached: &mut Option<Live>,
) -> StoreResult<()> {
    let result = async {
        let (key, stop_sample) = rankings_key(conn, project_id, plan).await?;
        let live = match cached.take() {
            Some(live) if live.key == key => live,
            _ => build(conn, db, key).await?,
        };
        let live = cached.insert(live);
        if let LiveOrder::Cal(cal) = &mut live.order {
            if cal.sample() != stop_sample {
                let pairs = super::stopping::sample_pairs(conn, stop_sample).await?;
                cal.set_sample(stop_sample, &pairs);
            }
        }
        sync_labels(conn, project_id, live).await
    }
    .await;
    if result.is_err() {
        *cached = None;
    }
    result
}

/// The project's live `cal` order under its lock, built if need be and synced with the labels
/// so far as `conn` reads them; None when the project's order is not `cal`.
pub(super) async fn with_cal<T>(
    conn: &mut AnyConnection,
    db: &Db,
    project_id: i64,
    settings: &JudgingSettings,
    read: impl FnOnce(&mut CalLive) -> T,
) -> StoreResult<Option<T>> {
    let FirstPasses::Live(plan) = settings.first_passes() else {
        return Ok(None);
    };
    if plan.order != JudgingOrder::Cal {
        return Ok(None);
    }
    let slot = slot(db, project_id)?;
    let mut cached = slot.lock().await;
    update(conn, db, project_id, plan, &mut cached).await?;
    Ok(match cached.as_mut().map(|live| &mut live.order) {
        Some(LiveOrder::Cal(cal)) => Some(read(cal)),
        _ => None,
    })
}

/// Syncs the project's live selector outside the write transaction (in one read snapshot), so
/// that the choice inside it has only what changed since to read. Skipped while another
/// request uses the selector: the choice syncs anyway.
async fn prepare(
    conn: &mut AnyConnection,
    db: &Db,
    project_id: i64,
    plan: LivePlan,
) -> StoreResult<()> {
    let slot = slot(db, project_id)?;
    let Ok(mut cached) = slot.try_lock() else {
        return Ok(());
    };
    let mut read = crate::db::begin_read_on(conn).await?;
    update(&mut read, db, project_id, plan, &mut cached).await?;
    read.rollback().await?;
    // cal trains its next round here, when its batch is all labelled, rather than inside the
    // write transaction.
    if let Some(Live {
        order: LiveOrder::Cal(cal),
        ..
    }) = cached.as_mut()
    {
        cal.order.advance();
    }
    Ok(())
}

/// The pool entry the order serves next to someone who holds no first pass, if any: the
/// selector is built or taken from memory, synced with the labels so far and asked for its
/// next pair that nobody holds. Runs inside the caller's write transaction.
async fn choose(
    conn: &mut AnyConnection,
    db: &Db,
    project_id: i64,
    plan: LivePlan,
    annotator: AnnotatorId,
) -> StoreResult<Option<i64>> {
    let slot = slot(db, project_id)?;
    let mut cached = slot.lock().await;
    update(conn, db, project_id, plan, &mut cached).await?;
    let held: HashSet<RowPair> = sqlx::query_as::<_, (i64, i64)>(&format!(
        "SELECT e.claim_id, e.doc_id FROM {}",
        open_first_passes(engine_of(conn))
    ))
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|(c, d)| Pair::new(c, d))
    .collect();
    let live = cached
        .as_mut()
        .ok_or_else(|| StoreError::Fault("the judging order was not built".into()))?;
    match &mut live.order {
        LiveOrder::Runs { selector, entries } => {
            let pair = selector.next_untaken(|pair| held.contains(pair));
            Ok(pair.and_then(|pair| entries.get(&pair).copied()))
        }
        LiveOrder::Cal(cal) => {
            let held: HashSet<_> = held.iter().filter_map(|pair| cal.key(pair)).collect();
            let Some(pick) = cal.order.next_untaken(|pair| held.contains(pair)) else {
                return Ok(None);
            };
            cal.entry_of(conn, project_id, pick, annotator).await
        }
    }
}

/// Gives `annotator` the first pass the project's order serves next, if first passes are live,
/// the annotator is active in the project and holds none, the budget allows and a pair is
/// left. Returns the pool entry given. `seen` are the project's settings as the caller read
/// them (re-read under the write lock before anything is given).
pub(crate) async fn serve_first(
    db: &Db,
    annotator: AnnotatorId,
    project_id: i64,
    seen: &JudgingSettings,
) -> StoreResult<Option<i64>> {
    // A read first, so that the queue of `depth` (or of someone holding a first pass, or past
    // the budget) takes no write lock; under `depth` it reads nothing.
    if !matches!(seen.first_passes(), FirstPasses::Live(_)) {
        return Ok(None);
    }
    {
        let mut conn = db.acquire().await?;
        let Some(plan) = wants_first_under(&mut conn, annotator, project_id, seen).await? else {
            return Ok(None);
        };
        if !may_serve(&mut conn, project_id, plan).await? {
            return Ok(None);
        }
        prepare(&mut conn, db, project_id, plan).await?;
    }
    let mut tx = begin_write(db).await?;
    let Some(plan) = wants_first(&mut tx, annotator, project_id).await? else {
        return Ok(None);
    };
    if !may_serve(&mut tx, project_id, plan).await? {
        return Ok(None);
    }
    let Some(entry) = choose(&mut tx, db, project_id, plan, annotator).await? else {
        return Ok(None);
    };
    insert(
        &mut tx,
        project_id,
        PoolEntryId(entry),
        annotator,
        Stage::First,
        FRESH_POSITION,
    )
    .await?;
    let made = [(PoolEntryId(entry), annotator, Stage::First)];
    assign::record(&mut tx, project_id, Some(annotator.0), &made).await?;
    tx.commit().await?;
    Ok(Some(entry))
}

/// Whether the budget allows one more first pass ([`LivePlan::may_serve`]); without a budget
/// nothing is counted.
async fn may_serve(conn: &mut AnyConnection, project_id: i64, plan: LivePlan) -> StoreResult<bool> {
    if plan.budget.is_none() {
        return Ok(true);
    }
    let (spent, held) = first_passes(conn, project_id).await?;
    Ok(plan.may_serve(spent, held))
}

/// The live plan when `annotator` should take a first pass now: first passes are live, the
/// annotator is active in the project and holds none.
async fn wants_first(
    conn: &mut AnyConnection,
    annotator: AnnotatorId,
    project_id: i64,
) -> StoreResult<Option<LivePlan>> {
    let settings = settings(conn, project_id).await?;
    wants_first_under(conn, annotator, project_id, &settings).await
}

/// [`wants_first`] under the project's judging `settings`.
async fn wants_first_under(
    conn: &mut AnyConnection,
    annotator: AnnotatorId,
    project_id: i64,
    settings: &JudgingSettings,
) -> StoreResult<Option<LivePlan>> {
    let FirstPasses::Live(plan) = settings.first_passes() else {
        return Ok(None);
    };
    let holds: crate::flag::Flag = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id
           WHERE a.annotator_id = $1 AND e.project_id = $2 AND a.stage = 'first' AND a.status = 'open')",
    )
    .bind(annotator.0)
    .bind(project_id)
    .fetch_one(&mut *conn)
    .await?;
    if holds.0
        || !active_annotators(conn, project_id)
            .await?
            .contains(&annotator)
    {
        return Ok(None);
    }
    Ok(Some(plan))
}

/// Whether the project pre-assigns first passes (`depth` without a budget).
pub(crate) async fn preassigns(conn: &mut AnyConnection, project_id: i64) -> StoreResult<bool> {
    Ok(settings(conn, project_id).await?.first_passes() == FirstPasses::Preassigned)
}
