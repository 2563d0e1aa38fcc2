//! A pool build's rows written in chunks, hidden until its last transaction (issue 13): no
//! write transaction of a build writes more than [`CHUNK_ROWS`] rows, so annotators' submissions
//! wait milliseconds, not the length of a million-pair growth.
//!
//! While a build is written its `pool_build_rows` row says `writing` and names the token of a
//! lock file its writer holds ([`BuildLock`]); the views `pool_builds`, `pool_entries` and
//! `pool_ranks` hide that row and the entries and ranks it wrote, and the open assignments of
//! those entries are hidden with them (every reader of open items joins `pool_entries`). The
//! build's last transaction ([`super::finish`]) marks it `done`: the grown pool, its ranks and
//! its assignments appear together. One build of a project at a time: [`claim`] refuses a
//! second while the first's writer lives. A writer that fails removes its rows itself
//! ([`discard`]); one that died leaves its lock file unlocked, and [`reclaim_abandoned`] removes
//! its rows: every build calls it first, and `serve` at start.

use super::super::annotate::assign::{self, Made};
use super::super::write_gate::{self, WriteTx};
use super::super::writer_lock::{writer_is_gone, LockKind, WriterLock};
use super::super::{now_ms, Constraint, Db, StoreError, StoreResult};
use super::BuildOptions;
use crate::values::ValuesInsert;
use domain::pool::Strategy;
use std::collections::{BTreeSet, HashMap};

/// The most rows (entries, ranks, assignments) one write transaction of a build writes: a few
/// tens of milliseconds of SQLite's write lock.
pub const CHUNK_ROWS: usize = 5_000;

/// The most rows one write transaction of a build writes on PostgreSQL, whatever the options
/// say. PostgreSQL writes these rows several times slower than SQLite (a trigger checks each
/// foreign key of each row): in the pool_growth benchmark 5,000 rows held the writers' lock
/// for 60 to 180 ms (other writers waited p50 68 ms, p99 101 ms); 1,000 rows, p50 6.7 ms and
/// p99 19.3 ms, for a build 10% longer.
const PG_CHUNK_ROWS: usize = 1_000;

/// The most rows one write transaction of a build writes on `db`.
fn chunk_rows(db: &Db, options: &BuildOptions) -> usize {
    match crate::engine(db) {
        crate::Engine::Sqlite => options.chunk_rows,
        crate::Engine::Postgres => options.chunk_rows.min(PG_CHUNK_ROWS),
    }
}

/// Rows per INSERT statement (SQLite binds at most 32,766 parameters per statement).
const ROWS_PER_STATEMENT: usize = 1_000;

/// The lock of a live build ([`super::super::writer_lock`], in `<database>.pool-builds/`).
pub(super) struct BuildLock(WriterLock);

impl BuildLock {
    /// Takes a new lock for a build about to be written.
    pub(super) async fn take(db: &Db) -> StoreResult<BuildLock> {
        WriterLock::take(db, LockKind::PoolBuild)
            .await
            .map(BuildLock)
    }

    pub(super) fn token(&self) -> &str {
        self.0.token()
    }

    /// Frees the lock (after the build is done or discarded).
    pub(super) fn release(self) {
        self.0.release();
    }
}

/// Whether the build writer holding `token` is gone.
async fn build_writer_is_gone(db: &Db, token: Option<&str>) -> StoreResult<bool> {
    writer_is_gone(db, LockKind::PoolBuild, token).await
}

/// The settings a build starts with.
pub(super) struct NewBuild<'a> {
    pub project_id: i64,
    pub strategy: Strategy,
    pub depth: u32,
    pub actor_id: Option<i64>,
    pub lock_token: &'a str,
}

/// Starts a build of the project: its row, `writing`, hidden. Refused with a conflict while
/// another build of the project is being written; a build whose writer died is removed first.
pub(super) async fn claim(db: &Db, build: NewBuild<'_>) -> StoreResult<i64> {
    loop {
        let mut tx = write_gate::begin(db).await?;
        let other: Option<(i64, Option<String>, i64)> = sqlx::query_as(
            "SELECT id, lock_token, built_at FROM pool_build_rows
             WHERE project_id = $1 AND state = 'writing' LIMIT 1",
        )
        .bind(build.project_id)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some((other, token, started)) = other {
            drop(tx);
            if !build_writer_is_gone(db, token.as_deref()).await? {
                let seconds = (now_ms() - started).max(0) / 1000;
                return Err(StoreError::conflict(Constraint::PoolBuilding, format!(
                    "the pool of this project is being built (build #{other}, started {seconds} s ago): try again when it ends"
                )));
            }
            discard(db, other).await?;
            tracing::warn!(
                build = other,
                "removed the rows of a pool build whose writer died"
            );
            continue;
        }
        let id = sqlx::query_scalar::<_, i64>(
            "INSERT INTO pool_build_rows (project_id, strategy, depth, systems, added, built_by, built_at, state, lock_token)
             VALUES ($1, $2, $3, '[]', 0, $4, $5, 'writing', $6) RETURNING id",
        )
        .bind(build.project_id)
        .bind(build.strategy.as_str())
        .bind(i64::from(build.depth))
        .bind(build.actor_id)
        .bind(now_ms())
        .bind(build.lock_token)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        return Ok(id);
    }
}

/// Removes the rows of every build whose writer died; returns how many builds it removed.
pub async fn reclaim_abandoned(db: &Db) -> StoreResult<usize> {
    let writing: Vec<(i64, Option<String>)> =
        sqlx::query_as("SELECT id, lock_token FROM pool_build_rows WHERE state = 'writing'")
            .fetch_all(db)
            .await?;
    let mut removed = 0;
    for (build, token) in writing {
        if build_writer_is_gone(db, token.as_deref()).await? {
            discard(db, build).await?;
            tracing::warn!(build, "removed the rows of a pool build whose writer died");
            removed += 1;
        }
    }
    Ok(removed)
}

/// Whether the build is still being written (it may have been removed, or be done).
async fn is_writing(tx: &mut WriteTx, build_id: i64) -> StoreResult<bool> {
    Ok(sqlx::query_scalar::<_, i64>(
        "SELECT 1 FROM pool_build_rows WHERE id = $1 AND state = 'writing'",
    )
    .bind(build_id)
    .fetch_optional(&mut **tx)
    .await?
    .is_some())
}

/// Removes what a `writing` build wrote, in chunks, each its own short transaction: its
/// entries with their assignments and ranks, the ranks it added to older entries, then its row.
/// A `done` build is never touched.
pub(super) async fn discard(db: &Db, build_id: i64) -> StoreResult<()> {
    // Entries found through the build's index leave it as they go: each chunk is the next.
    let per_chunk = i64::try_from(CHUNK_ROWS / 5).unwrap_or(1_000);
    loop {
        let mut tx = write_gate::begin(db).await?;
        if !is_writing(&mut tx, build_id).await? {
            return Ok(());
        }
        // The chunk: the build's entries up to the `per_chunk`-th smallest id.
        let last: Option<i64> = sqlx::query_scalar(
            "SELECT MAX(id) FROM (SELECT id FROM pool_entry_rows WHERE build_id = $1
                                  ORDER BY id LIMIT $2) chunk",
        )
        .bind(build_id)
        .bind(per_chunk)
        .fetch_one(&mut *tx)
        .await?;
        let Some(last) = last else {
            break;
        };
        for sql in [
            "DELETE FROM assignments WHERE pool_entry_id IN
               (SELECT id FROM pool_entry_rows WHERE build_id = $1 AND id <= $2)",
            "DELETE FROM pool_rank_rows WHERE pool_entry_id IN
               (SELECT id FROM pool_entry_rows WHERE build_id = $1 AND id <= $2)",
            "DELETE FROM pool_entry_rows WHERE build_id = $1 AND id <= $2",
        ] {
            sqlx::query(sql)
                .bind(build_id)
                .bind(last)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
    }
    loop {
        let mut tx = write_gate::begin(db).await?;
        let deleted = sqlx::query(
            "DELETE FROM pool_rank_rows WHERE (pool_entry_id, system_id) IN
               (SELECT pool_entry_id, system_id FROM pool_rank_rows WHERE build_id = $1 LIMIT $2)",
        )
        .bind(build_id)
        .bind(i64::try_from(CHUNK_ROWS).unwrap_or(5_000))
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        if deleted == 0 {
            break;
        }
    }
    let mut tx = write_gate::begin(db).await?;
    if !is_writing(&mut tx, build_id).await? {
        return Ok(());
    }
    super::sample::discard_rows(&mut tx, build_id).await?;
    sqlx::query("DELETE FROM pool_build_rows WHERE id = $1 AND state = 'writing'")
        .bind(build_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// A pair new to the pool, as written: claim and document keys, entry depth, and its ranks
/// (system key, rank).
pub(super) struct NewEntry {
    pub claim_id: i64,
    pub doc_id: i64,
    pub entry_depth: u32,
    pub ranks: Vec<(i64, u32)>,
}

/// Groups consecutive items into chunks of at most [`BuildOptions::chunk_rows`] rows, each
/// item weighing `rows(item)` (an item heavier than a chunk makes a chunk of its own).
fn chunks<'a, T>(
    items: &'a [T],
    limit: usize,
    rows: impl Fn(&T) -> usize + 'a,
) -> impl Iterator<Item = &'a [T]> + 'a {
    let mut rest = items;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut taken = 0;
        let mut weight = 0;
        while let Some(item) = rest.get(taken) {
            let w = rows(item);
            if taken > 0 && weight + w > limit {
                break;
            }
            weight += w;
            taken += 1;
        }
        let (chunk, tail) = rest.split_at(taken);
        rest = tail;
        Some(chunk)
    })
}

/// Commits a chunk's transaction, then lets the test hook run, if any.
async fn commit_chunk(
    tx: WriteTx,
    options: &BuildOptions,
    started: std::time::Instant,
) -> StoreResult<()> {
    tx.commit().await?;
    tracing::debug!(
        ms = started.elapsed().as_secs_f64() * 1000.0,
        "pool build chunk written"
    );
    if let Some(hook) = &options.after_chunk {
        hook().await;
    }
    Ok(())
}

/// Writes the build's new entries and their ranks, hidden, in chunks; returns each written
/// entry's key with its pair's claim and document keys.
pub(super) async fn write_entries(
    db: &Db,
    project_id: i64,
    build_id: i64,
    entries: &[NewEntry],
    options: &BuildOptions,
) -> StoreResult<HashMap<(i64, i64), i64>> {
    let mut ids = HashMap::with_capacity(entries.len());
    for chunk in chunks(entries, chunk_rows(db, options), |e| 1 + e.ranks.len()) {
        let started = std::time::Instant::now();
        let mut tx = write_gate::begin(db).await?;
        for batch in chunk.chunks(ROWS_PER_STATEMENT) {
            let rows = ValuesInsert::new(
                crate::db::engine_of(&tx),
                "INSERT INTO pool_entry_rows (project_id, claim_id, doc_id, entry_depth, build_id) ",
                batch,
                |b, e| {
                    b.bind(project_id)
                        .bind(e.claim_id)
                        .bind(e.doc_id)
                        .bind(i64::from(e.entry_depth))
                        .bind(build_id);
                },
            )
            .push(" RETURNING claim_id, doc_id, id");
            if let Some((sql, args)) = rows.finish()? {
                let written: Vec<(i64, i64, i64)> =
                    sqlx::query_as_with(&sql, args).fetch_all(&mut *tx).await?;
                ids.extend(written.into_iter().map(|(c, d, id)| ((c, d), id)));
            }
        }
        let mut ranks = Vec::new();
        for e in chunk {
            let entry = ids
                .get(&(e.claim_id, e.doc_id))
                .copied()
                .ok_or_else(|| StoreError::Fault("a pool entry just written is missing".into()))?;
            ranks.extend(e.ranks.iter().map(|&(system, rank)| (entry, system, rank)));
        }
        insert_ranks(&mut tx, build_id, &ranks).await?;
        commit_chunk(tx, options, started).await?;
    }
    Ok(ids)
}

async fn insert_ranks(
    tx: &mut WriteTx,
    build_id: i64,
    ranks: &[(i64, i64, u32)],
) -> StoreResult<()> {
    for batch in ranks.chunks(ROWS_PER_STATEMENT) {
        let rows = ValuesInsert::new(
            crate::db::engine_of(tx),
            "INSERT INTO pool_rank_rows (pool_entry_id, system_id, rank, build_id) ",
            batch,
            |b, (entry, system, rank)| {
                b.bind(*entry)
                    .bind(*system)
                    .bind(i64::from(*rank))
                    .bind(build_id);
            },
        );
        if let Some((sql, args)) = rows.finish()? {
            sqlx::query_with(&sql, args).execute(&mut **tx).await?;
        }
    }
    Ok(())
}

/// Writes ranks the build adds to entries already pooled (a system pooled since), hidden, in
/// chunks: (entry, system, rank).
pub(super) async fn write_ranks(
    db: &Db,
    build_id: i64,
    ranks: &[(i64, i64, u32)],
    options: &BuildOptions,
) -> StoreResult<()> {
    for chunk in chunks(ranks, chunk_rows(db, options), |_| 1) {
        let started = std::time::Instant::now();
        let mut tx = write_gate::begin(db).await?;
        insert_ranks(&mut tx, build_id, chunk).await?;
        commit_chunk(tx, options, started).await?;
    }
    Ok(())
}

/// Writes the planned assignments of the build's new entries, hidden with them, in chunks.
/// Each chunk gives work only to annotators active when it is written; the entries of the
/// others are returned, for the last transaction to assign. Returns what was written too.
pub(super) async fn write_assignments(
    db: &Db,
    project_id: i64,
    made: &[Made],
    options: &BuildOptions,
) -> StoreResult<(Vec<Made>, Vec<i64>)> {
    let mut written = Vec::with_capacity(made.len());
    let mut left = Vec::new();
    for chunk in chunks(made, chunk_rows(db, options), |_| 1) {
        let started = std::time::Instant::now();
        let mut tx = write_gate::begin(db).await?;
        let active: BTreeSet<_> = assign::active_annotators(&mut tx, project_id)
            .await?
            .into_iter()
            .collect();
        let (keep, away): (Vec<Made>, Vec<Made>) =
            chunk.iter().partition(|(_, who, _)| active.contains(who));
        assign::write(&mut tx, project_id, &keep).await?;
        commit_chunk(tx, options, started).await?;
        written.extend(keep);
        left.extend(away.into_iter().map(|(entry, _, _)| entry.0));
    }
    Ok((written, left))
}

#[cfg(test)]
mod tests {
    use super::chunks;

    #[test]
    fn chunks_hold_at_most_the_limit_and_keep_every_item_once_in_order() {
        let items: Vec<usize> = vec![1, 4, 2, 2, 7, 1, 1, 3];
        let got: Vec<Vec<usize>> = chunks(&items, 5, |&w| w).map(<[usize]>::to_vec).collect();
        assert_eq!(got, vec![vec![1, 4], vec![2, 2], vec![7], vec![1, 1, 3]]);
        assert_eq!(chunks(&[] as &[usize], 5, |&w| w).count(), 0);
    }
}
