//! The annotation pool in the database: building and growing it from the stored predictions
//! with `domain::pool`, its statistics and its listing. A build writes in short chunks, hidden
//! until its last transaction (see the `writer` module).

mod sample;
mod writer;

pub use sample::{build_sample, survey, Estimated, SampleReport, SampleRequest, MAX_STRATA};
pub use writer::{reclaim_abandoned, CHUNK_ROWS};

use super::annotate::assign;
use super::audit::{json, AuditEvent};
use super::snapshot::{read_snapshot, Reader};
use super::write_gate::WriteTx;
use super::{now_ms, Constraint, Db, StoreError, StoreResult};
use domain::ids::{ClaimId, DocId};
use domain::label::Label;
use domain::pool::{
    DepthStep, FxHashMap, Pair, PoolError, PoolStats, PriorEvidenceStats, Ranking, Role, Score,
    ScoredPair, Strategy, SystemRun,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use writer::NewEntry;

/// The text form of a strategy, as stored and as the CLI takes it.
pub fn strategy_name(strategy: Strategy) -> &'static str {
    strategy.as_str()
}

pub fn parse_strategy(text: &str) -> StoreResult<Strategy> {
    match text {
        "confidence" => Ok(Strategy::Confidence),
        "per-claim" => Ok(Strategy::PerClaim),
        other => Err(StoreError::invalid(
            None,
            format!("unknown pool strategy {other:?} (expected confidence or per-claim)"),
        )),
    }
}

fn pool_error(err: PoolError) -> StoreError {
    StoreError::invalid(None, err.to_string())
}

/// A project's predictions ranked by system, with the keys to map back to the database.
pub struct Loaded {
    pub ranking: Ranking<u32, u32>,
    /// Claim key (position in external-id order) → claims.id, and → external id.
    pub claims: Vec<(i64, ClaimId)>,
    pub docs: Vec<(i64, DocId)>,
    /// Ranking's system index → systems.id.
    pub systems: Vec<i64>,
    claim_keys: KeyIndex,
    doc_keys: KeyIndex,
}

impl Loaded {
    pub fn pair_key(&self, claim: i64, doc: i64) -> Option<Pair<u32, u32>> {
        Some(Pair {
            claim: self.claim_keys.get(claim)?,
            doc: self.doc_keys.get(doc)?,
        })
    }

    pub fn pair_ids(&self, pair: &Pair<u32, u32>) -> Option<(i64, i64)> {
        Some((
            self.claims.get(pair.claim as usize)?.0,
            self.docs.get(pair.doc as usize)?.0,
        ))
    }
}

/// Database key → position in external-id order, for the claims or documents of a project.
///
/// A project's keys are nearly always one compact range (a corpus or a claims file is imported
/// at once), so a table indexed by key serves the millions of lookups of [`load`] with one
/// memory access each; scattered keys fall back to a hash map.
enum KeyIndex {
    /// `slots[key - first]`, [`KeyIndex::ABSENT`] for keys of other projects.
    Dense {
        first: i64,
        slots: Vec<u32>,
    },
    Sparse(FxHashMap<i64, u32>),
}

impl KeyIndex {
    const ABSENT: u32 = u32::MAX;

    /// The index of `keys`, each mapped to its position in the slice.
    fn new<T>(keys: &[(i64, T)]) -> KeyIndex {
        let first = keys.iter().map(|k| k.0).min().unwrap_or(0);
        let last = keys.iter().map(|k| k.0).max().unwrap_or(-1);
        let span = usize::try_from(last.saturating_sub(first).saturating_add(1)).unwrap_or(0);
        let positions = keys
            .iter()
            .enumerate()
            .map(|(i, (key, _))| (*key, i as u32));
        if keys.len() < Self::ABSENT as usize && span <= 2 * keys.len() + 1024 {
            let mut slots = vec![Self::ABSENT; span];
            for (key, i) in positions {
                if let Some(slot) = usize::try_from(key - first)
                    .ok()
                    .and_then(|at| slots.get_mut(at))
                {
                    *slot = i;
                }
            }
            KeyIndex::Dense { first, slots }
        } else {
            KeyIndex::Sparse(positions.collect())
        }
    }

    fn get(&self, key: i64) -> Option<u32> {
        match self {
            KeyIndex::Dense { first, slots } => usize::try_from(key.checked_sub(*first)?)
                .ok()
                .and_then(|at| slots.get(at))
                .copied()
                .filter(|&i| i != Self::ABSENT),
            KeyIndex::Sparse(map) => map.get(&key).copied(),
        }
    }
}

/// Keys ordered as the external ids, so the pool's claim/doc tie-break follows the ids.
///
/// `sql` selects (database key, external id) rows for the project given as its parameter.
fn ordered_keys<T: Ord>(
    conn: &Reader<'_>,
    sql: &str,
    project_id: i64,
    parse: impl Fn(&str) -> Option<T>,
) -> StoreResult<(Vec<(i64, T)>, KeyIndex)> {
    let mut parsed = Vec::new();
    conn.for_each_row(sql, &[project_id], |row| {
        let (key, ext) = (row.integer(0)?, row.text(1)?);
        let id = parse(ext).ok_or_else(|| StoreError::Corrupt(format!("stored id {ext:?}")))?;
        parsed.push((key, id));
        Ok(())
    })?;
    parsed.sort_by(|a, b| a.1.cmp(&b.1));
    let index = KeyIndex::new(&parsed);
    Ok((parsed, index))
}

/// Loads every system's predictions of a project and ranks them under `strategy`.
///
/// The predictions (millions of rows) are read through [`Reader::for_each_row`], all
/// in one snapshot of the database.
pub async fn load(db: &Db, project_id: i64, strategy: Strategy) -> StoreResult<Loaded> {
    read_snapshot(db, move |conn| load_from(conn, project_id, strategy)).await
}

fn load_from(conn: &Reader<'_>, project_id: i64, strategy: Strategy) -> StoreResult<Loaded> {
    let (claims, claim_keys) = ordered_keys(
        conn,
        "SELECT id, claim_id FROM claims WHERE project_id = $1",
        project_id,
        |s| ClaimId::parse(s).ok(),
    )?;
    let (docs, doc_keys) = ordered_keys(
        conn,
        "SELECT id, doc_id FROM documents WHERE project_id = $1",
        project_id,
        |s| DocId::parse(s).ok(),
    )?;
    let mut systems: Vec<(i64, String, Role)> = Vec::new();
    conn.for_each_row(
        "SELECT id, name, role FROM systems WHERE project_id = $1 AND ready = 1 ORDER BY name",
        &[project_id],
        |row| {
            let role = Role::parse(row.text(2)?).map_err(StoreError::unreadable)?;
            systems.push((row.integer(0)?, row.text(1)?.to_owned(), role));
            Ok(())
        },
    )?;
    let mut ranking = Ranking::new(strategy);
    let mut system_ids = Vec::with_capacity(systems.len());
    for (system_id, name, role) in systems {
        let mut pairs = Vec::new();
        conn.for_each_row(
            "SELECT claim_id, doc_id, confidence, retrieval_rank FROM predictions WHERE system_id = $1",
            &[system_id],
            |row| {
                let (claim, doc) = (row.integer(0)?, row.integer(1)?);
                let (Some(c), Some(d)) = (claim_keys.get(claim), doc_keys.get(doc)) else {
                    return Err(StoreError::Corrupt(format!(
                        "prediction of system {name} names an unknown pair"
                    )));
                };
                let score = Score::new(row.real(2)?).map_err(pool_error)?;
                let rank = row
                    .optional_integer(3)?
                    .and_then(|r| u32::try_from(r).ok());
                pairs.push(ScoredPair::new(c, d, score, rank));
                Ok(())
            },
        )?;
        ranking
            .add(SystemRun::new(name, role, pairs).map_err(pool_error)?)
            .map_err(pool_error)?;
        system_ids.push(system_id);
    }
    Ok(Loaded {
        ranking,
        claims,
        docs,
        systems: system_ids,
        claim_keys,
        doc_keys,
    })
}

/// The project's pool settings as last built.
pub async fn settings(db: &Db, project_id: i64) -> StoreResult<Option<(Strategy, u32)>> {
    let row: Option<(Option<String>, Option<i64>)> =
        sqlx::query_as("SELECT pool_strategy, pool_depth FROM projects WHERE id = $1")
            .bind(project_id)
            .fetch_optional(db)
            .await?;
    match row {
        Some((Some(strategy), Some(depth))) => Ok(Some((
            parse_strategy(&strategy)?,
            u32::try_from(depth).map_err(|_| StoreError::Corrupt("pool depth".into()))?,
        ))),
        Some(_) => Ok(None),
        None => Err(StoreError::NotFound(format!("project #{project_id}"))),
    }
}

/// Pairs that have a final label (citation evidence included), with their labels.
pub(super) async fn final_labels(
    db: &Db,
    project_id: i64,
    loaded: &Loaded,
) -> StoreResult<HashMap<Pair<u32, u32>, Label>> {
    let rows: Vec<(i64, i64, String)> =
        sqlx::query_as("SELECT claim_id, doc_id, label FROM final_labels WHERE project_id = $1")
            .bind(project_id)
            .fetch_all(db)
            .await?;
    let mut labels = HashMap::with_capacity(rows.len());
    for (claim, doc, label) in rows {
        let label = Label::parse(&label).map_err(StoreError::unreadable)?;
        if let Some(pair) = loaded.pair_key(claim, doc) {
            labels.insert(pair, label);
        }
    }
    Ok(labels)
}

/// The project's pool as readers see it: each pair's entry (key, entry depth), and the ranks
/// of those entries, (entry, system, rank) sorted.
struct Existing {
    entries: FxHashMap<Pair<u32, u32>, (i64, u32)>,
    ranks: Vec<(i64, i64, u32)>,
}

impl Existing {
    /// The stored ranks of `entry`, by system.
    fn ranks_of(&self, entry: i64) -> &[(i64, i64, u32)] {
        let from = self.ranks.partition_point(|r| r.0 < entry);
        let to = self.ranks.partition_point(|r| r.0 <= entry);
        self.ranks.get(from..to).unwrap_or_default()
    }
}

/// Reads the project's visible pool, in one snapshot.
async fn existing(db: &Db, project_id: i64, loaded: &Loaded) -> StoreResult<Existing> {
    type Rows = (Vec<(i64, i64, i64, i64)>, Vec<(i64, i64, u32)>);
    let (entries, mut ranks): Rows = read_snapshot(db, move |conn| {
        let mut entries = Vec::new();
        conn.for_each_row(
            "SELECT id, claim_id, doc_id, entry_depth FROM pool_entries WHERE project_id = $1",
            &[project_id],
            |row| {
                entries.push((
                    row.integer(0)?,
                    row.integer(1)?,
                    row.integer(2)?,
                    row.integer(3)?,
                ));
                Ok(())
            },
        )?;
        let mut ranks = Vec::new();
        conn.for_each_row(
            "SELECT r.pool_entry_id, r.system_id, r.rank FROM pool_entries e
             JOIN pool_ranks r ON r.pool_entry_id = e.id WHERE e.project_id = $1",
            &[project_id],
            |row| {
                let rank = u32::try_from(row.integer(2)?)
                    .map_err(|_| StoreError::Corrupt("a pool rank out of range".into()))?;
                ranks.push((row.integer(0)?, row.integer(1)?, rank));
                Ok(())
            },
        )?;
        Ok((entries, ranks))
    })
    .await?;
    ranks.sort_unstable();
    let entries = entries
        .into_iter()
        .map(|(id, claim, doc, depth)| {
            let pair = loaded
                .pair_key(claim, doc)
                .ok_or_else(|| StoreError::Corrupt("pool entry of an unknown pair".into()))?;
            let depth = u32::try_from(depth)
                .map_err(|_| StoreError::Corrupt("a pool entry depth out of range".into()))?;
            Ok((pair, (id, depth)))
        })
        .collect::<StoreResult<_>>()?;
    Ok(Existing { entries, ranks })
}

/// What a build changes, against the pool readers see.
#[derive(Default)]
struct Growth {
    /// Pairs new to the pool, with their ranks: written in chunks, hidden.
    entries: Vec<NewEntry>,
    /// Ranks of old entries by a system that had none for them (a system pooled since):
    /// (entry, system, rank), written in chunks, hidden.
    ranks: Vec<(i64, i64, u32)>,
    /// Old entries whose entry depth changes (a system pooled since ranks them shallower):
    /// written by the last transaction.
    depths: Vec<(i64, u32)>,
    /// Old ranks that change or go (a system no longer pooled): the last transaction's.
    rank_changes: Vec<(i64, i64, u32)>,
    rank_drops: Vec<(i64, i64)>,
}

/// Compares the pool computed at the build's depth with the stored one.
fn growth(
    pool: &domain::pool::Pool<u32, u32>,
    loaded: &Loaded,
    existing: &Existing,
) -> StoreResult<Growth> {
    let mut out = Growth::default();
    for pooled in pool.pairs() {
        let mut ranks: Vec<(i64, u32)> = pooled
            .model_ranks
            .iter()
            .filter_map(|mr| loaded.systems.get(mr.system).map(|&s| (s, mr.rank)))
            .collect();
        ranks.sort_unstable();
        let Some(&(entry, depth)) = existing.entries.get(&pooled.pair) else {
            let (claim_id, doc_id) = loaded
                .pair_ids(&pooled.pair)
                .ok_or_else(|| StoreError::Corrupt("a pooled pair of no claim".into()))?;
            out.entries.push(NewEntry {
                claim_id,
                doc_id,
                entry_depth: pooled.entry_depth,
                ranks,
            });
            continue;
        };
        if depth != pooled.entry_depth {
            out.depths.push((entry, pooled.entry_depth));
        }
        let stored = existing.ranks_of(entry);
        for &(system, rank) in &ranks {
            match stored.iter().find(|r| r.1 == system) {
                None => out.ranks.push((entry, system, rank)),
                Some(r) if r.2 != rank => out.rank_changes.push((entry, system, rank)),
                Some(_) => {}
            }
        }
        for r in stored {
            if !ranks.iter().any(|&(system, _)| system == r.1) {
                out.rank_drops.push((entry, r.1));
            }
        }
    }
    Ok(out)
}

/// What a build or growth step did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BuildReport {
    pub strategy: String,
    pub depth: u32,
    pub pool_size: usize,
    pub added: usize,
    /// Of the added pairs, those with no final label yet: the new annotation work.
    pub to_annotate: usize,
    pub systems: Vec<String>,
}

fn check_strategy(current: Option<(Strategy, u32)>, strategy: Strategy) -> StoreResult<()> {
    match current {
        Some((built, _)) if built != strategy => Err(StoreError::conflict(
            Constraint::PoolStrategy,
            format!(
                "the pool was built with the {} strategy; it grows with the same strategy",
                strategy_name(built)
            ),
        )),
        _ => Ok(()),
    }
}

/// What a test does between two chunks of a build (it may hold the build there).
pub type ChunkHook =
    std::sync::Arc<dyn Fn() -> futures::future::BoxFuture<'static, ()> + Send + Sync>;

/// How a build writes: rows per transaction, and a hook between chunks (tests).
#[derive(Clone)]
pub struct BuildOptions {
    /// The most rows one write transaction of the build writes (entries, ranks, assignments).
    pub chunk_rows: usize,
    /// Awaited after each chunk's transaction commits.
    pub after_chunk: Option<ChunkHook>,
}

impl Default for BuildOptions {
    fn default() -> BuildOptions {
        BuildOptions {
            chunk_rows: writer::CHUNK_ROWS,
            after_chunk: None,
        }
    }
}

/// Builds the pool at `depth`, or grows it: pairs already pooled stay, judgments are untouched,
/// new pairs are added with the step that added them, and the pairs without a final label are
/// given to the active annotators.
///
/// Written in chunks of at most [`CHUNK_ROWS`] rows (new entries with their ranks, ranks a
/// newly pooled system adds to old entries, the new pairs' assignments), each its own short
/// transaction, hidden until the last one (see the `writer` module). The last transaction
/// writes only rows readers already see, and the build's `done`: the entry depth of each old
/// pair a newly pooled system ranks shallower (none when the pool grows deeper under the same
/// systems), the assignments of old pairs that became assignable since the last assignment
/// (normally none), the reassignment of work given to an annotator who left during the build
/// (none unless one left), the project's settings and two audit events. Growing deeper under
/// the same systems and annotators, it writes four rows (the build, the project, two audit
/// events).
pub async fn build(
    db: &Db,
    project_id: i64,
    strategy: Strategy,
    depth: u32,
    actor_id: Option<i64>,
) -> StoreResult<BuildReport> {
    build_with(
        db,
        project_id,
        strategy,
        depth,
        actor_id,
        &BuildOptions::default(),
    )
    .await
}

/// [`build`] with the chunk size and the hook of `options`.
pub async fn build_with(
    db: &Db,
    project_id: i64,
    strategy: Strategy,
    depth: u32,
    actor_id: Option<i64>,
    options: &BuildOptions,
) -> StoreResult<BuildReport> {
    if depth == 0 {
        return Err(StoreError::invalid(None, "the pool depth is at least 1"));
    }
    if options.chunk_rows == 0 {
        return Err(StoreError::invalid(
            None,
            "a build writes at least one row per chunk",
        ));
    }
    let build = NewStep {
        project_id,
        strategy,
        depth,
        actor_id,
    };
    in_build(db, build, "pool build", async |step: &Step<'_>| {
        grow(db, step, options).await
    })
    .await
}

/// What a build of the project starts with.
struct NewStep {
    project_id: i64,
    strategy: Strategy,
    depth: u32,
    actor_id: Option<i64>,
}

/// Runs `write` on a new build of the project, hidden while it is written: removes the rows of
/// builds whose writers died, takes a writer lock, claims the build's row (a conflict while
/// another build of the project lives), and removes what `write` wrote when it fails (`what`
/// names the build in the log).
async fn in_build<T>(
    db: &Db,
    build: NewStep,
    what: &str,
    write: impl AsyncFnOnce(&Step<'_>) -> StoreResult<T>,
) -> StoreResult<T> {
    // A build whose writer died no longer stands in the way.
    writer::reclaim_abandoned(db).await?;
    let lock = writer::BuildLock::take(db).await?;
    let claimed = writer::claim(
        db,
        writer::NewBuild {
            project_id: build.project_id,
            strategy: build.strategy,
            depth: build.depth,
            actor_id: build.actor_id,
            lock_token: lock.token(),
        },
    )
    .await;
    let result = match claimed {
        Ok(build_id) => {
            let step = Step {
                build_id,
                project_id: build.project_id,
                strategy: build.strategy,
                depth: build.depth,
                actor_id: build.actor_id,
                lock_token: lock.token(),
            };
            let result = write(&step).await;
            if result.is_err() {
                if let Err(e) = writer::discard(db, build_id).await {
                    // The lock is released below: the next build or `serve` removes the rows.
                    tracing::warn!(build_id, error = %e, "could not remove a failed {what}'s rows");
                }
            }
            result
        }
        Err(e) => Err(e),
    };
    lock.release();
    result
}

/// One build being written.
struct Step<'a> {
    build_id: i64,
    project_id: i64,
    strategy: Strategy,
    depth: u32,
    actor_id: Option<i64>,
    lock_token: &'a str,
}

/// Computes the pool, writes what is new in hidden chunks, then makes it visible.
async fn grow(db: &Db, step: &Step<'_>, options: &BuildOptions) -> StoreResult<BuildReport> {
    let (project_id, strategy, depth) = (step.project_id, step.strategy, step.depth);
    let current = settings(db, project_id).await?;
    check_strategy(current, strategy)?;
    let loaded = load(db, project_id, strategy).await?;
    if loaded.ranking.pooled().next().is_none() {
        return Err(StoreError::invalid(
            None,
            "the project has no pooled system: import a run with the pooled role first",
        ));
    }
    let pool = loaded.ranking.pool(depth);
    let existing = existing(db, project_id, &loaded).await?;
    // Pairs a sample drew beyond the depth are entries the depth-`depth` pool need not hold.
    let mut drawn = sample::drawn_pairs(db, project_id, &loaded).await?;
    // So are the pairs found by search (issue 38), at whatever rank the search gave them.
    drawn.extend(
        super::search::found_pairs(db, project_id)
            .await?
            .into_iter()
            .filter_map(|(claim, doc)| loaded.pair_key(claim, doc)),
    );
    let added = pool
        .added_since(
            existing
                .entries
                .keys()
                .copied()
                .filter(|pair| !drawn.contains(pair)),
        )
        .map_err(|e| match e {
            PoolError::Shrinks { .. } => StoreError::conflict(
                Constraint::PoolGrowsOnly,
                format!(
            "the pool only grows: depth {depth} would drop pairs of the current pool (depth {})",
            current.map(|(_, d)| d).unwrap_or(0)
        ),
            ),
            other => pool_error(other),
        })?;
    let added_pairs: HashSet<Pair<u32, u32>> = added
        .iter()
        .map(|p| p.pair)
        .filter(|pair| !existing.entries.contains_key(pair))
        .collect();
    let labels = final_labels(db, project_id, &loaded).await?;
    let to_annotate = added_pairs
        .iter()
        .filter(|p| !labels.contains_key(p))
        .count();
    let report = BuildReport {
        strategy: strategy_name(strategy).to_owned(),
        depth,
        pool_size: pool.len(),
        added: added_pairs.len(),
        to_annotate,
        systems: pool.systems().iter().map(|s| s.name.clone()).collect(),
    };
    let pooled_names: Vec<String> = loaded
        .ranking
        .pooled()
        .map(|(_, run)| run.name().to_owned())
        .collect();
    let changes = growth(&pool, &loaded, &existing)?;
    drop(existing);
    let ids =
        writer::write_entries(db, project_id, step.build_id, &changes.entries, options).await?;
    writer::write_ranks(db, step.build_id, &changes.ranks, options).await?;
    // The new pairs without a final label, with the old ones waiting, planned as
    // `assign_pending` would; the new pairs' work is written now, hidden with them.
    let new_pending: Vec<assign::Pending> = changes
        .entries
        .iter()
        .filter_map(|e| {
            let id = *ids.get(&(e.claim_id, e.doc_id))?;
            let pair = loaded.pair_key(e.claim_id, e.doc_id)?;
            (!labels.contains_key(&pair)).then_some((
                id,
                e.claim_id,
                e.doc_id,
                i64::from(e.entry_depth),
            ))
        })
        .collect();
    let (new_made, old_entries) = plan(db, project_id, new_pending).await?;
    let (written, left) = writer::write_assignments(db, project_id, &new_made, options).await?;
    finish(
        db,
        step,
        Finish {
            changes: &changes,
            written,
            to_assign: old_entries.into_iter().chain(left).collect(),
            pooled_names: &pooled_names,
            old: current,
            report: &report,
        },
    )
    .await?;
    Ok(report)
}

/// Plans the assignments of the new pairs `new_pending` (hidden) and of the old pairs waiting,
/// as one [`assign::assign_pending`] would, from one read of the annotators, their loads and
/// the pairs' states (no write lock held). Returns the new pairs' assignments and the old
/// pairs the plan gives to someone (the last transaction assigns those afresh).
async fn plan(
    db: &Db,
    project_id: i64,
    new_pending: Vec<assign::Pending>,
) -> StoreResult<(Vec<assign::Made>, Vec<i64>)> {
    let mut tx = super::db::begin_read(db).await?;
    let mut pending = assign::pending(&mut tx, project_id, None).await?;
    let old: HashSet<i64> = pending.iter().map(|p| p.0).collect();
    pending.extend(new_pending);
    if pending.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let made = assign::Roster::read(&mut tx, project_id)
        .await?
        .plan(&pending);
    tx.rollback().await?;
    let (old_made, new_made): (Vec<assign::Made>, Vec<assign::Made>) =
        made.into_iter().partition(|m| old.contains(&m.0 .0));
    Ok((new_made, old_made.into_iter().map(|m| m.0 .0).collect()))
}

/// What the last transaction of a build writes.
struct Finish<'a> {
    changes: &'a Growth,
    /// The new pairs' assignments written in chunks.
    written: Vec<assign::Made>,
    /// Pairs to assign now: old ones waiting, new ones whose planned annotator left.
    to_assign: Vec<i64>,
    pooled_names: &'a [String],
    old: Option<(Strategy, u32)>,
    report: &'a BuildReport,
}

/// Writes the changes to old entries and ranks (their new entry depths, changed or dropped
/// ranks), in the build's last transaction.
async fn apply(tx: &mut WriteTx, changes: &Growth) -> StoreResult<()> {
    for &(entry, depth) in &changes.depths {
        sqlx::query("UPDATE pool_entry_rows SET entry_depth = $1 WHERE id = $2")
            .bind(i64::from(depth))
            .bind(entry)
            .execute(&mut **tx)
            .await?;
    }
    for &(entry, system, rank) in &changes.rank_changes {
        sqlx::query(
            "UPDATE pool_rank_rows SET rank = $1 WHERE pool_entry_id = $2 AND system_id = $3",
        )
        .bind(i64::from(rank))
        .bind(entry)
        .bind(system)
        .execute(&mut **tx)
        .await?;
    }
    for &(entry, system) in &changes.rank_drops {
        sqlx::query("DELETE FROM pool_rank_rows WHERE pool_entry_id = $1 AND system_id = $2")
            .bind(entry)
            .bind(system)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Takes back the build's (hidden) work given to annotators no longer active (they left during
/// the build), drops it from `written` and returns its pairs, to assign afresh.
async fn take_back(
    tx: &mut WriteTx,
    project_id: i64,
    build_id: i64,
    written: &mut Vec<assign::Made>,
) -> StoreResult<Vec<i64>> {
    let active: HashSet<_> = assign::active_annotators(tx, project_id)
        .await?
        .into_iter()
        .collect();
    let gone: BTreeSet<i64> = written
        .iter()
        .filter(|m| !active.contains(&m.1))
        .map(|m| m.1 .0)
        .collect();
    let mut freed = Vec::new();
    for annotator in &gone {
        let entries: Vec<i64> = sqlx::query_scalar(
            "DELETE FROM assignments WHERE annotator_id = $1 AND status = 'open'
               AND pool_entry_id IN (SELECT id FROM pool_entry_rows WHERE build_id = $2)
             RETURNING pool_entry_id",
        )
        .bind(annotator)
        .bind(build_id)
        .fetch_all(&mut **tx)
        .await?;
        freed.extend(entries);
    }
    written.retain(|m| !gone.contains(&m.1 .0));
    Ok(freed)
}

/// The build's last transaction: the changes to rows readers see, then the build `done` (its
/// rows appear), the project's settings, the assignments left, and the audit events.
async fn finish(db: &Db, step: &Step<'_>, f: Finish<'_>) -> StoreResult<()> {
    let Finish {
        changes,
        mut written,
        mut to_assign,
        pooled_names,
        old,
        report,
    } = f;
    let (build_id, project_id) = (step.build_id, step.project_id);
    let mut tx = super::annotate::begin_write(db).await?;
    let token: Option<Option<String>> = sqlx::query_scalar(
        "SELECT lock_token FROM pool_build_rows WHERE id = $1 AND state = 'writing'",
    )
    .bind(build_id)
    .fetch_optional(&mut *tx)
    .await?;
    if token.flatten().as_deref() != Some(step.lock_token) {
        return Err(StoreError::Fault(format!(
            "pool build #{build_id} was removed while it was written"
        )));
    }
    apply(&mut tx, changes).await?;
    to_assign.extend(take_back(&mut tx, project_id, build_id, &mut written).await?);
    sqlx::query(
        "UPDATE pool_build_rows SET state = 'done', lock_token = NULL, systems = $1, added = $2, built_at = $3
         WHERE id = $4",
    )
    .bind(serde_json::to_string(pooled_names).unwrap_or_default())
    .bind(i64::try_from(report.added).unwrap_or(i64::MAX))
    .bind(now_ms())
    .bind(build_id)
    .execute(&mut *tx)
    .await?;
    sqlx::query("UPDATE projects SET pool_strategy = $1, pool_depth = $2 WHERE id = $3")
        .bind(strategy_name(step.strategy))
        .bind(i64::from(step.depth))
        .bind(project_id)
        .execute(&mut *tx)
        .await?;
    if !to_assign.is_empty() {
        to_assign.sort_unstable();
        to_assign.dedup();
        written.extend(assign::assign_pending_among(&mut tx, project_id, &to_assign).await?);
    }
    assign::record(&mut tx, project_id, step.actor_id, &written).await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id: step.actor_id,
        action: "build_pool",
        entity: "pool",
        entity_id: Some(build_id.to_string()),
        old_value: old
            .map(|(s, d)| serde_json::json!({ "strategy": strategy_name(s), "depth": d })),
        new_value: json(report),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// What a build at each candidate depth would do to the pool as it is, without building: the
/// pool's size after it, the pairs it adds and those of them that go to annotators, as the build
/// then reports them.
pub async fn preview(
    db: &Db,
    project_id: i64,
    strategy: Strategy,
    depths: &[u32],
) -> StoreResult<Vec<DepthStep>> {
    check_strategy(settings(db, project_id).await?, strategy)?;
    let loaded = load(db, project_id, strategy).await?;
    let labels = final_labels(db, project_id, &loaded).await?;
    let rows: Vec<(i64, i64)> =
        sqlx::query_as("SELECT claim_id, doc_id FROM pool_entries WHERE project_id = $1")
            .bind(project_id)
            .fetch_all(db)
            .await?;
    let current: HashSet<Pair<u32, u32>> = rows
        .iter()
        .filter_map(|&(claim, doc)| loaded.pair_key(claim, doc))
        .collect();
    Ok(loaded
        .ranking
        .preview_growth(depths, &labels, &current, rows.len()))
}

/// The pool's statistics: SciFact-Open Table 2b (by number of systems) and 2c (prior evidence).
#[derive(Clone, Debug, Serialize)]
pub struct StatsReport {
    pub strategy: String,
    #[serde(flatten)]
    pub stats: PoolStats,
    pub prior_evidence: PriorEvidenceStats,
}

pub async fn stats(db: &Db, project_id: i64, top_k: u32) -> StoreResult<StatsReport> {
    let (strategy, depth) = settings(db, project_id)
        .await?
        .ok_or_else(|| StoreError::invalid(None, "the project has no pool yet: build it first"))?;
    let loaded = load(db, project_id, strategy).await?;
    let labels = final_labels(db, project_id, &loaded).await?;
    let pool = loaded.ranking.pool(depth);
    let citation: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT claim_id, doc_id FROM final_labels WHERE project_id = $1 AND provenance = 'citation' AND label != 'NEI'",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    let prior: HashSet<Pair<u32, u32>> = citation
        .into_iter()
        .filter_map(|(c, d)| loaded.pair_key(c, d))
        .collect();
    Ok(StatsReport {
        strategy: strategy_name(strategy).to_owned(),
        stats: pool.stats(&labels),
        prior_evidence: loaded.ranking.prior_evidence_stats(&prior, depth, top_k),
    })
}

/// One pooled pair, as `pool list` prints it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PoolRow {
    pub claim_id: String,
    pub doc_id: String,
    pub entry_depth: u32,
    pub model_ranks: BTreeMap<String, u32>,
    pub final_label: Option<String>,
}

pub async fn list(db: &Db, project_id: i64) -> StoreResult<Vec<PoolRow>> {
    let rows: Vec<(i64, String, String, i64, Option<String>)> = sqlx::query_as(
        "SELECT e.id, c.claim_id, d.doc_id, e.entry_depth, f.label
         FROM pool_entries e
         JOIN claims c ON c.id = e.claim_id
         JOIN documents d ON d.id = e.doc_id
         LEFT JOIN final_labels f ON f.claim_id = e.claim_id AND f.doc_id = e.doc_id
         WHERE e.project_id = $1",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    let ranks: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT r.pool_entry_id, s.name, r.rank FROM pool_ranks r
         JOIN pool_entries e ON e.id = r.pool_entry_id JOIN systems s ON s.id = r.system_id
         WHERE e.project_id = $1
         UNION ALL
         SELECT f.pool_entry_id, 'search', f.result_rank FROM search_finds f WHERE f.project_id = $1",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    let mut by_entry: HashMap<i64, BTreeMap<String, u32>> = HashMap::new();
    for (entry, system, rank) in ranks {
        by_entry
            .entry(entry)
            .or_default()
            .insert(system, u32::try_from(rank).unwrap_or(u32::MAX));
    }
    let mut out: Vec<(ClaimId, DocId, PoolRow)> = rows
        .into_iter()
        .filter_map(|(entry, claim, doc, depth, label)| {
            let row = PoolRow {
                claim_id: claim.clone(),
                doc_id: doc.clone(),
                entry_depth: u32::try_from(depth).ok()?,
                model_ranks: by_entry.remove(&entry).unwrap_or_default(),
                final_label: label,
            };
            Some((ClaimId::parse(claim).ok()?, DocId::parse(doc).ok()?, row))
        })
        .collect();
    out.sort_by(|a, b| (a.2.entry_depth, &a.0, &a.1).cmp(&(b.2.entry_depth, &b.0, &b.1)));
    Ok(out.into_iter().map(|(_, _, row)| row).collect())
}

#[cfg(test)]
mod tests {
    use super::KeyIndex;
    use std::collections::HashMap;

    #[test]
    fn key_index_agrees_with_a_map_for_compact_and_scattered_keys() {
        let compact: Vec<(i64, ())> = [7, 3, 4, 9, 5].iter().map(|&k| (k, ())).collect();
        let scattered: Vec<(i64, ())> = [i64::MIN, -5, 0, 1 << 40, i64::MAX]
            .iter()
            .map(|&k| (k, ()))
            .collect();
        for (keys, dense) in [(compact, true), (scattered, false), (Vec::new(), true)] {
            let index = KeyIndex::new(&keys);
            assert_eq!(matches!(index, KeyIndex::Dense { .. }), dense);
            let want: HashMap<i64, u32> = keys
                .iter()
                .enumerate()
                .map(|(i, (k, ()))| (*k, i as u32))
                .collect();
            for probe in [
                i64::MIN,
                -6,
                -5,
                0,
                1,
                2,
                3,
                4,
                5,
                6,
                7,
                8,
                9,
                10,
                1 << 40,
                i64::MAX,
            ] {
                assert_eq!(index.get(probe), want.get(&probe).copied(), "{probe}");
            }
        }
    }
}
