//! The annotation pool in the database: building and growing it from the stored predictions
//! with `domain::pool`, its statistics and its listing.

use super::audit::{json, AuditEvent};
use super::raw_rows::{read_snapshot, RawConnection};
use super::{now_ms, Db, StoreError, StoreResult};
use crate::domain::ids::{ClaimId, DocId};
use crate::domain::label::Label;
use crate::domain::pool::{
    DepthStep, FxHashMap, Pair, PoolError, PoolStats, PriorEvidenceStats, Ranking, Role, Score,
    ScoredPair, Strategy, SystemRun,
};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The text form of a strategy, as stored and as the CLI takes it.
pub fn strategy_name(strategy: Strategy) -> &'static str {
    strategy.as_str()
}

pub fn parse_strategy(text: &str) -> StoreResult<Strategy> {
    match text {
        "confidence" => Ok(Strategy::Confidence),
        "per-claim" => Ok(Strategy::PerClaim),
        other => Err(StoreError::Invalid(format!(
            "unknown pool strategy {other:?} (expected confidence or per-claim)"
        ))),
    }
}

fn pool_error(err: PoolError) -> StoreError {
    StoreError::Invalid(err.to_string())
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
    conn: &RawConnection,
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
/// The predictions (millions of rows) are read through [`RawConnection::for_each_row`], all
/// in one snapshot of the database.
pub async fn load(db: &Db, project_id: i64, strategy: Strategy) -> StoreResult<Loaded> {
    read_snapshot(db, move |conn| load_from(conn, project_id, strategy)).await
}

fn load_from(conn: &RawConnection, project_id: i64, strategy: Strategy) -> StoreResult<Loaded> {
    let (claims, claim_keys) = ordered_keys(
        conn,
        "SELECT id, claim_id FROM claims WHERE project_id = ?",
        project_id,
        |s| ClaimId::parse(s).ok(),
    )?;
    let (docs, doc_keys) = ordered_keys(
        conn,
        "SELECT id, doc_id FROM documents WHERE project_id = ?",
        project_id,
        |s| DocId::parse(s).ok(),
    )?;
    let mut systems: Vec<(i64, String, Role)> = Vec::new();
    conn.for_each_row(
        "SELECT id, name, role FROM systems WHERE project_id = ? AND ready = 1 ORDER BY name",
        &[project_id],
        |row| {
            let role = if row.text(2)? == "pooled" {
                Role::Pooled
            } else {
                Role::EvaluationOnly
            };
            systems.push((row.integer(0)?, row.text(1)?.to_owned(), role));
            Ok(())
        },
    )?;
    let mut ranking = Ranking::new(strategy);
    let mut system_ids = Vec::with_capacity(systems.len());
    for (system_id, name, role) in systems {
        let mut pairs = Vec::new();
        conn.for_each_row(
            "SELECT claim_id, doc_id, confidence, retrieval_rank FROM predictions WHERE system_id = ?",
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
        sqlx::query_as("SELECT pool_strategy, pool_depth FROM projects WHERE id = ?")
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
        sqlx::query_as("SELECT claim_id, doc_id, label FROM final_labels WHERE project_id = ?")
            .bind(project_id)
            .fetch_all(db)
            .await?;
    let mut labels = HashMap::with_capacity(rows.len());
    for (claim, doc, label) in rows {
        let label = Label::parse(&label).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        if let Some(pair) = loaded.pair_key(claim, doc) {
            labels.insert(pair, label);
        }
    }
    Ok(labels)
}

async fn pool_pairs(db: &Db, project_id: i64, loaded: &Loaded) -> StoreResult<Vec<Pair<u32, u32>>> {
    let rows: Vec<(i64, i64)> =
        sqlx::query_as("SELECT claim_id, doc_id FROM pool_entries WHERE project_id = ?")
            .bind(project_id)
            .fetch_all(db)
            .await?;
    rows.into_iter()
        .map(|(c, d)| {
            loaded
                .pair_key(c, d)
                .ok_or_else(|| StoreError::Corrupt("pool entry of an unknown pair".into()))
        })
        .collect()
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
        Some((built, _)) if built != strategy => Err(StoreError::Conflict(format!(
            "the pool was built with the {} strategy; it grows with the same strategy",
            strategy_name(built)
        ))),
        _ => Ok(()),
    }
}

/// Builds the pool at `depth`, or grows it: pairs already pooled stay, judgments are untouched,
/// new pairs are added with the step that added them.
pub async fn build(
    db: &Db,
    project_id: i64,
    strategy: Strategy,
    depth: u32,
    actor_id: Option<i64>,
) -> StoreResult<BuildReport> {
    if depth == 0 {
        return Err(StoreError::Invalid("the pool depth is at least 1".into()));
    }
    let current = settings(db, project_id).await?;
    check_strategy(current, strategy)?;
    let loaded = load(db, project_id, strategy).await?;
    if loaded.ranking.pooled().next().is_none() {
        return Err(StoreError::Invalid(
            "the project has no pooled system: import a run with the pooled role first".into(),
        ));
    }
    let pool = loaded.ranking.pool(depth);
    let existing = pool_pairs(db, project_id, &loaded).await?;
    let added = pool
        .added_since(existing.iter().copied())
        .map_err(|e| match e {
            PoolError::Shrinks { .. } => StoreError::Conflict(format!(
            "the pool only grows: depth {depth} would drop pairs of the current pool (depth {})",
            current.map(|(_, d)| d).unwrap_or(0)
        )),
            other => pool_error(other),
        })?;
    let added_pairs: HashSet<Pair<u32, u32>> = added.iter().map(|p| p.pair).collect();
    let labels = final_labels(db, project_id, &loaded).await?;
    let to_annotate = added_pairs
        .iter()
        .filter(|p| !labels.contains_key(p))
        .count();
    let system_names: Vec<String> = pool.systems().iter().map(|s| s.name.clone()).collect();
    let pooled_names: Vec<String> = loaded
        .ranking
        .pooled()
        .map(|(_, run)| run.name().to_owned())
        .collect();

    let mut tx = super::annotate::begin_write(db).await?;
    let now = now_ms();
    let build_id = sqlx::query(
        "INSERT INTO pool_builds (project_id, strategy, depth, systems, added, built_by, built_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(project_id)
    .bind(strategy_name(strategy))
    .bind(i64::from(depth))
    .bind(serde_json::to_string(&pooled_names).unwrap_or_default())
    .bind(i64::try_from(added_pairs.len()).unwrap_or(i64::MAX))
    .bind(actor_id)
    .bind(now)
    .execute(&mut *tx)
    .await?
    .last_insert_rowid();
    sqlx::query("DELETE FROM pool_ranks WHERE pool_entry_id IN (SELECT id FROM pool_entries WHERE project_id = ?)")
        .bind(project_id)
        .execute(&mut *tx)
        .await?;
    for chunk in pool.pairs().chunks(500) {
        let mut q = sqlx::QueryBuilder::<sqlx::Sqlite>::new(
            "INSERT INTO pool_entries (project_id, claim_id, doc_id, entry_depth, build_id) ",
        );
        let mut any = false;
        let rows: Vec<(i64, i64, u32)> = chunk
            .iter()
            .filter_map(|p| loaded.pair_ids(&p.pair).map(|(c, d)| (c, d, p.entry_depth)))
            .collect();
        q.push_values(&rows, |mut b, (c, d, depth)| {
            any = true;
            b.push_bind(project_id)
                .push_bind(*c)
                .push_bind(*d)
                .push_bind(i64::from(*depth))
                .push_bind(build_id);
        });
        // Pairs already pooled keep their row and step; their entry depth follows the pool.
        q.push(" ON CONFLICT (project_id, claim_id, doc_id) DO UPDATE SET entry_depth = excluded.entry_depth");
        if any {
            q.build().execute(&mut *tx).await?;
        }
    }
    let entry_ids: HashMap<(i64, i64), i64> = sqlx::query_as::<_, (i64, i64, i64)>(
        "SELECT claim_id, doc_id, id FROM pool_entries WHERE project_id = ?",
    )
    .bind(project_id)
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|(c, d, id)| ((c, d), id))
    .collect();
    let mut ranks: Vec<(i64, i64, u32)> = Vec::new();
    for pooled in pool.pairs() {
        let Some(entry) = loaded
            .pair_ids(&pooled.pair)
            .and_then(|ids| entry_ids.get(&ids))
        else {
            continue;
        };
        for mr in &pooled.model_ranks {
            if let Some(&system) = loaded.systems.get(mr.system) {
                ranks.push((*entry, system, mr.rank));
            }
        }
    }
    for chunk in ranks.chunks(1000) {
        let mut q = sqlx::QueryBuilder::<sqlx::Sqlite>::new(
            "INSERT INTO pool_ranks (pool_entry_id, system_id, rank) ",
        );
        q.push_values(chunk, |mut b, (e, s, r)| {
            b.push_bind(*e).push_bind(*s).push_bind(i64::from(*r));
        });
        q.build().execute(&mut *tx).await?;
    }
    let old = current.map(|(s, d)| serde_json::json!({ "strategy": strategy_name(s), "depth": d }));
    sqlx::query("UPDATE projects SET pool_strategy = ?, pool_depth = ? WHERE id = ?")
        .bind(strategy_name(strategy))
        .bind(i64::from(depth))
        .bind(project_id)
        .execute(&mut *tx)
        .await?;
    let report = BuildReport {
        strategy: strategy_name(strategy).to_owned(),
        depth,
        pool_size: pool.len(),
        added: added_pairs.len(),
        to_annotate,
        systems: system_names,
    };
    super::annotate::assign_pending(&mut tx, project_id, actor_id).await?;
    AuditEvent {
        project_id: Some(project_id),
        actor_id,
        action: "build_pool",
        entity: "pool",
        entity_id: Some(build_id.to_string()),
        old_value: old,
        new_value: json(&report),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(report)
}

/// How many pairs each candidate depth would pool and add, without building.
pub async fn preview(
    db: &Db,
    project_id: i64,
    strategy: Strategy,
    depths: &[u32],
) -> StoreResult<Vec<DepthStep>> {
    check_strategy(settings(db, project_id).await?, strategy)?;
    let loaded = load(db, project_id, strategy).await?;
    let labels = final_labels(db, project_id, &loaded).await?;
    Ok(loaded.ranking.preview(depths, &labels))
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
        .ok_or_else(|| StoreError::Invalid("the project has no pool yet: build it first".into()))?;
    let loaded = load(db, project_id, strategy).await?;
    let labels = final_labels(db, project_id, &loaded).await?;
    let pool = loaded.ranking.pool(depth);
    let citation: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT claim_id, doc_id FROM final_labels WHERE project_id = ? AND provenance = 'citation' AND label != 'NEI'",
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
         WHERE e.project_id = ?",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    let ranks: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT r.pool_entry_id, s.name, r.rank FROM pool_ranks r
         JOIN pool_entries e ON e.id = r.pool_entry_id JOIN systems s ON s.id = r.system_id
         WHERE e.project_id = ?",
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
