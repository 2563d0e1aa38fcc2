//! The live `cal` order's side of the store: its candidates read from the pooled runs and the
//! corpus retrievals the lead made, the labels so far in its keys, and a pick that is no pool
//! entry yet written into the pool as a step of kind `cal`.
//!
//! The candidates are keyed as `claimpool simulate --order cal` keys them (the pool loader's
//! positions in external-id order, [`crate::pool::Loaded`]), so that the live order and its
//! simulation over the same runs, retrievals, seed and labels propose the same pairs.

use super::super::audit::AuditEvent;
use super::super::{now_ms, Db, StoreError, StoreResult};
use crate::pool::{load, Loaded};
use domain::annotation::AnnotatorId;
use domain::judging::{CalCandidates, CalPick, LiveCal, Retrieved};
use domain::pool::{FxHashMap, Pair, Strategy};
use sqlx::AnyConnection;
use std::sync::Arc;

/// A pair by its claim and document row ids.
type RowPair = Pair<i64, i64>;
/// A pair by the loader's keys.
type KeyPair = Pair<u32, u32>;

/// The project's one pool step of kind `cal`, which every pick joins (made by the first pick;
/// who and when of each pick are in `cal_picks`), its count of pairs added raised by one.
async fn cal_step(
    conn: &mut AnyConnection,
    project_id: i64,
    annotator: AnnotatorId,
) -> StoreResult<i64> {
    let step: Option<i64> = sqlx::query_scalar(
        "UPDATE pool_build_rows SET added = added + 1
         WHERE project_id = $1 AND kind = 'cal' RETURNING id",
    )
    .bind(project_id)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some(step) = step {
        return Ok(step);
    }
    let strategy: Option<String> =
        sqlx::query_scalar("SELECT pool_strategy FROM projects WHERE id = $1")
            .bind(project_id)
            .fetch_one(&mut *conn)
            .await?;
    Ok(sqlx::query_scalar(
        "INSERT INTO pool_build_rows (project_id, strategy, depth, systems, added, built_by, built_at, state, kind)
         VALUES ($1, $2, 1, '[\"cal\"]', 1, $3, $4, 'done', 'cal') RETURNING id",
    )
    .bind(project_id)
    .bind(strategy.as_deref().unwrap_or("per-claim"))
    .bind(annotator.0)
    .bind(now_ms())
    .fetch_one(&mut *conn)
    .await?)
}

/// The live `cal` order of a project and what it needs to write a pick into the pool.
pub(super) struct CalLive {
    pub(super) order: LiveCal<u32, u32>,
    keys: Loaded,
    /// Each candidate some pooled system ranked: (systems.id, rank) per system.
    ranks: FxHashMap<KeyPair, Vec<(i64, u32)>>,
    /// Each retrieved candidate's rank in its claim's retrieval.
    retrieved: FxHashMap<KeyPair, u32>,
    /// The id of the project's latest stopping sample, whose pairs the order serves first (0:
    /// none).
    sample: i64,
}

/// The project's corpus retrievals for `cal`, in the loader's keys (rows of claims or
/// documents it does not know are passed over).
async fn retrievals(
    conn: &mut AnyConnection,
    project_id: i64,
    keys: &Loaded,
) -> StoreResult<Vec<Retrieved<u32, u32>>> {
    let rows: Vec<(i64, i64, i64, f64)> = sqlx::query_as(
        "SELECT claim_id, doc_id, rank, share FROM cal_retrievals WHERE project_id = $1",
    )
    .bind(project_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(claim, doc, rank, share)| {
            Some(Retrieved {
                pair: keys.pair_key(claim, doc)?,
                rank: u32::try_from(rank).ok()?,
                share,
            })
        })
        .collect())
}

impl CalLive {
    /// The order over the pooled systems' whole rankings (within claims under `per-claim`)
    /// and the corpus retrievals, seeded.
    pub(super) async fn build(
        conn: &mut AnyConnection,
        db: &Db,
        project_id: i64,
        strategy: Strategy,
        seed: u64,
    ) -> StoreResult<CalLive> {
        let keys = load(db, project_id, strategy).await?;
        let retrieved = retrievals(conn, project_id, &keys).await?;
        let mut ranks: FxHashMap<KeyPair, Vec<(i64, u32)>> = FxHashMap::default();
        let mut rankings = Vec::new();
        for (index, run) in keys.ranking.pooled() {
            let system_id = *keys
                .systems
                .get(index)
                .ok_or_else(|| StoreError::Fault(format!("pooled system {index} has no row")))?;
            let mut ranking = Vec::new();
            for (rank, scored) in run.top(u32::MAX) {
                ranks
                    .entry(scored.pair)
                    .or_default()
                    .push((system_id, rank));
                ranking.push(scored.pair);
            }
            rankings.push(ranking);
        }
        let candidates = CalCandidates::new(&rankings, &retrieved)
            .map_err(|e| StoreError::Corrupt(format!("the cal order's candidates: {e}")))?;
        let retrieved = retrieved.iter().map(|hit| (hit.pair, hit.rank)).collect();
        Ok(CalLive {
            order: LiveCal::new(Arc::new(candidates), seed),
            keys,
            ranks,
            retrieved,
            sample: 0,
        })
    }

    /// The id of the stopping sample the order serves first (0: none).
    pub(super) fn sample(&self) -> i64 {
        self.sample
    }

    /// Serves the pairs of stopping sample `id` (in draw order) before the order's proposals.
    pub(super) fn set_sample(&mut self, id: i64, pairs: &[RowPair]) {
        let keyed: Vec<KeyPair> = pairs.iter().filter_map(|pair| self.key(pair)).collect();
        self.order.set_sample(&keyed);
        self.sample = id;
    }

    /// `pair`, of the order's keys, by its claim and document row ids.
    pub(super) fn row_pair(&self, pair: &KeyPair) -> Option<RowPair> {
        let (claim, doc) = self.keys.pair_ids(pair)?;
        Some(Pair::new(claim, doc))
    }

    /// `pair` in the order's keys (None: a pair of claims or documents it does not know).
    pub(super) fn key(&self, pair: &RowPair) -> Option<KeyPair> {
        self.keys.pair_key(pair.claim, pair.doc)
    }

    /// Labels by row ids, in the order's keys.
    pub(super) fn keyed<V: Copy>(
        &self,
        labels: impl IntoIterator<Item = (RowPair, V)>,
    ) -> Vec<(KeyPair, V)> {
        labels
            .into_iter()
            .filter_map(|(pair, v)| Some((self.key(&pair)?, v)))
            .collect()
    }

    /// The pool entry of `pick`, written into the pool (in the step of kind `cal`, with each
    /// pooled system's rank and the pick's record) if it is none yet. None if a pool build
    /// still being written holds the pair: it comes through the queue when that build is done.
    pub(super) async fn entry_of(
        &self,
        conn: &mut AnyConnection,
        project_id: i64,
        pick: CalPick<u32, u32>,
        annotator: AnnotatorId,
    ) -> StoreResult<Option<i64>> {
        let (claim, doc) = self
            .keys
            .pair_ids(&pick.pair)
            .ok_or_else(|| StoreError::Fault("the cal order picked an unknown pair".into()))?;
        // The pair's entry row if it has one: visible, or of a build still being written.
        let row: Option<Option<i64>> = sqlx::query_scalar(
            "SELECT e.id FROM pool_entry_rows r LEFT JOIN pool_entries e ON e.id = r.id
             WHERE r.project_id = $1 AND r.claim_id = $2 AND r.doc_id = $3",
        )
        .bind(project_id)
        .bind(claim)
        .bind(doc)
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(visible) = row {
            return Ok(visible);
        }
        let ranks = self.ranks.get(&pick.pair).map(Vec::as_slice).unwrap_or(&[]);
        let depth = ranks
            .iter()
            .map(|&(_, rank)| rank)
            .min()
            .or_else(|| self.retrieved.get(&pick.pair).copied())
            .unwrap_or(1)
            .max(1);
        let step = cal_step(conn, project_id, annotator).await?;
        let now = now_ms();
        let entry =
            crate::search::insert_entry_row(conn, project_id, (claim, doc), i64::from(depth), step)
                .await?;
        for &(system, rank) in ranks {
            sqlx::query(
                "INSERT INTO pool_rank_rows (pool_entry_id, system_id, rank, build_id)
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(entry)
            .bind(system)
            .bind(i64::from(rank))
            .bind(step)
            .execute(&mut *conn)
            .await?;
        }
        let round = i64::try_from(pick.round).unwrap_or(i64::MAX);
        sqlx::query(
            "INSERT INTO cal_picks (pool_entry_id, project_id, served_to, round, in_runs, picked_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(entry)
        .bind(project_id)
        .bind(annotator.0)
        .bind(round)
        .bind(i64::from(pick.in_runs))
        .bind(now)
        .execute(&mut *conn)
        .await?;
        AuditEvent {
            project_id: Some(project_id),
            actor_id: Some(annotator.0),
            action: "cal_pick",
            entity: "pool_entry",
            entity_id: Some(entry.to_string()),
            old_value: None,
            new_value: Some(serde_json::json!({
                "round": pick.round,
                "in_runs": pick.in_runs,
                "stopping_sample": pick.sampled.then_some(self.sample),
                "entry_depth": depth,
            })),
        }
        .record(conn)
        .await?;
        Ok(Some(entry))
    }
}
