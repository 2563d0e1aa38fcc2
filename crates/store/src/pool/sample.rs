//! Sampled pools (issue 15): a seeded stratified random sample of the pairs beyond the pool's
//! depth ([`build_sample`]), added to the pool as entries of a build of its own, written in
//! chunks and hidden until that build is done, like every build; and the survey read back
//! from it ([`survey`]): the rows `domain::report::survey` computes estimates, the stopping
//! test and the planner from.
//!
//! Tables (migration `20261125300001_pool_sample`): `pool_sample_rows` (one sample: depth,
//! reach, strata, size, seed, pooled systems), `pool_sample_stratum_rows` (the design) and
//! `pool_sample_pair_rows` (each drawn pair with its stratum, draw position and inclusion
//! probability; the pairs beyond the depth already judged, with probability 1); readers read
//! the views `pool_samples`, `pool_sample_strata` and `pool_sample_pairs`.

use super::super::write_gate;
use super::super::{Constraint, Db, StoreError, StoreResult};
use super::writer::{self, NewEntry};
use super::{
    existing, final_labels, finish, in_build, load, plan, settings, strategy_name, BuildOptions,
    BuildReport, Finish, Growth, Loaded, NewStep, Step,
};
use domain::ids::{ClaimId, DocId};
use domain::judging::{
    beyond_depth, stratified_sample, Allocation, JudgingError, RecallTarget, Sample, StratumDesign,
};
use domain::pool::{FxHashMap, Pair};
use domain::report::survey::{self, StoredSample, Survey, SurveyError, SurveyInput};
use serde::Serialize;
use std::collections::HashSet;

/// The most rank bands a sample may have (its reach is `depth · 2^strata`).
pub const MAX_STRATA: u32 = 16;

/// A sample asked for: `size` draws over `strata` rank bands beyond the depth, from `seed`.
/// Valid by construction: at least one draw, 1 to [`MAX_STRATA`] bands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleRequest {
    size: usize,
    strata: u32,
    seed: u64,
}

impl SampleRequest {
    pub fn new(size: usize, strata: u32, seed: u64) -> StoreResult<SampleRequest> {
        if size == 0 {
            return Err(StoreError::invalid(
                None,
                "--sample: a sample draws at least one pair",
            ));
        }
        if !(1..=MAX_STRATA).contains(&strata) {
            return Err(StoreError::invalid(
                None,
                format!("--strata: {strata} rank bands; a sample has 1 to {MAX_STRATA}"),
            ));
        }
        Ok(SampleRequest { size, strata, seed })
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn strata(&self) -> u32 {
        self.strata
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }
}

/// What a sampled build did: the build, and the sample's design.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SampleReport {
    #[serde(flatten)]
    pub build: BuildReport,
    pub sample_build: i64,
    pub seed: u64,
    /// The largest best rank the sample covers.
    pub reach: u32,
    pub strata: Vec<StratumDesign>,
    /// Pairs beyond the depth within reach already judged (certain, not drawn).
    pub judged_beyond: usize,
}

fn judging_error(e: JudgingError) -> StoreError {
    StoreError::invalid(None, format!("--sample: {e}"))
}

/// Adds a stratified random sample of the unjudged pairs beyond the pool's depth to the pool:
/// `request.size` draws, allocated in proportion to the rank bands' sizes, deterministic for
/// the seed. The drawn pairs become pool entries (annotated like any pooled pair); each drawn
/// pair's stratum and inclusion probability is stored. All or nothing: written in chunks,
/// hidden until the build's last transaction. Refused before the first pool build, while a
/// sample drawn earlier has pairs without a final label, or for a design the candidates
/// cannot meet.
pub async fn build_sample(
    db: &Db,
    project_id: i64,
    request: SampleRequest,
    actor_id: Option<i64>,
    options: &BuildOptions,
) -> StoreResult<SampleReport> {
    let (strategy, depth) = settings(db, project_id).await?.ok_or_else(|| {
        StoreError::invalid(
            None,
            "the project has no pool yet: build it at a depth first",
        )
    })?;
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
    in_build(db, build, "sample", async |step: &Step<'_>| {
        draw(db, step, request, options).await
    })
    .await
}

/// Draws the sample, writes its entries, assignments and rows hidden, then makes it visible.
async fn draw(
    db: &Db,
    step: &Step<'_>,
    request: SampleRequest,
    options: &BuildOptions,
) -> StoreResult<SampleReport> {
    let (project_id, depth) = (step.project_id, step.depth);
    let loaded = load(db, project_id, step.strategy).await?;
    if loaded.ranking.pooled().next().is_none() {
        return Err(StoreError::invalid(
            None,
            "the project has no pooled system: import a run with the pooled role first",
        ));
    }
    let reach = depth
        .checked_mul(1 << request.strata)
        .filter(|r| *r < u32::MAX)
        .ok_or_else(|| {
            StoreError::invalid(
                None,
                format!(
                    "--strata: depth {depth} · 2^{} is beyond the largest rank",
                    request.strata
                ),
            )
        })?;
    let labels = final_labels(db, project_id, &loaded).await?;
    let unjudged_earlier = earlier_unjudged(db, project_id).await?;
    if unjudged_earlier > 0 {
        return Err(StoreError::conflict(Constraint::SampleUnjudged, format!(
            "{unjudged_earlier} pair(s) of an earlier sample lack a final label: judge them before drawing another sample"
        )));
    }
    let existing = existing(db, project_id, &loaded).await?;
    let judged: HashSet<Pair<u32, u32>> = labels
        .keys()
        .chain(existing.entries.keys())
        .copied()
        .collect();
    let candidates = beyond_depth(&loaded.ranking, depth, reach, &judged);
    let sample = stratified_sample(
        candidates,
        &Allocation::Proportional {
            total: request.size,
        },
        request.seed,
    )
    .map_err(judging_error)?;
    let within = loaded.ranking.pool(reach);
    let judged_beyond: Vec<Pair<u32, u32>> = within
        .pairs()
        .iter()
        .filter(|p| p.entry_depth > depth && judged.contains(&p.pair))
        .map(|p| p.pair)
        .collect();
    let by_pair: FxHashMap<Pair<u32, u32>, usize> = within
        .pairs()
        .iter()
        .enumerate()
        .map(|(i, p)| (p.pair, i))
        .collect();
    let mut entries = Vec::with_capacity(sample.len());
    for unit in sample.pairs() {
        let pooled = by_pair
            .get(&unit.pair)
            .and_then(|&i| within.pairs().get(i))
            .ok_or_else(|| StoreError::Fault("a drawn pair is not ranked within reach".into()))?;
        let (claim_id, doc_id) = loaded
            .pair_ids(&unit.pair)
            .ok_or_else(|| StoreError::Corrupt("a drawn pair of no claim".into()))?;
        let mut ranks: Vec<(i64, u32)> = pooled
            .model_ranks
            .iter()
            .filter_map(|mr| loaded.systems.get(mr.system).map(|&s| (s, mr.rank)))
            .collect();
        ranks.sort_unstable();
        entries.push(NewEntry {
            claim_id,
            doc_id,
            entry_depth: pooled.entry_depth,
            ranks,
        });
    }
    let pool_size = existing.entries.len();
    drop(existing);
    let pooled_names: Vec<String> = loaded
        .ranking
        .pooled()
        .map(|(_, run)| run.name().to_owned())
        .collect();
    let ids = writer::write_entries(db, project_id, step.build_id, &entries, options).await?;
    let new_pending: Vec<super::assign::Pending> = entries
        .iter()
        .filter_map(|e| {
            let id = *ids.get(&(e.claim_id, e.doc_id))?;
            Some((id, e.claim_id, e.doc_id, i64::from(e.entry_depth)))
        })
        .collect();
    let (new_made, old_entries) = plan(db, project_id, new_pending).await?;
    let (written, left) = writer::write_assignments(db, project_id, &new_made, options).await?;
    write_rows(
        db,
        step,
        SampleRows {
            request,
            reach,
            systems: &pooled_names,
            sample: &sample,
            judged_beyond: &judged_beyond,
            loaded: &loaded,
        },
        options,
    )
    .await?;
    let report = BuildReport {
        strategy: strategy_name(step.strategy).to_owned(),
        depth,
        pool_size: pool_size + sample.len(),
        added: sample.len(),
        to_annotate: sample.len(),
        systems: pooled_names.clone(),
    };
    let changes = Growth::default();
    finish(
        db,
        step,
        Finish {
            changes: &changes,
            written,
            to_assign: old_entries.into_iter().chain(left).collect(),
            pooled_names: &pooled_names,
            old: Some((step.strategy, depth)),
            report: &report,
        },
    )
    .await?;
    Ok(SampleReport {
        build: report,
        sample_build: step.build_id,
        seed: request.seed,
        reach,
        strata: sample.strata().to_vec(),
        judged_beyond: judged_beyond.len(),
    })
}

/// Drawn pairs of earlier samples without a final label.
async fn earlier_unjudged(db: &Db, project_id: i64) -> StoreResult<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM pool_sample_pairs p
         JOIN pool_samples s ON s.build_id = p.build_id
         WHERE s.project_id = $1 AND p.stratum IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM final_labels f WHERE f.claim_id = p.claim_id AND f.doc_id = p.doc_id)",
    )
    .bind(project_id)
    .fetch_one(db)
    .await?)
}

/// The pairs drawn by the project's samples (pool entries beyond the depth: a build at the
/// same depth keeps them).
pub(super) async fn drawn_pairs(
    db: &Db,
    project_id: i64,
    loaded: &Loaded,
) -> StoreResult<HashSet<Pair<u32, u32>>> {
    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT p.claim_id, p.doc_id FROM pool_sample_pairs p
         JOIN pool_samples s ON s.build_id = p.build_id
         WHERE s.project_id = $1 AND p.stratum IS NOT NULL",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(c, d)| loaded.pair_key(c, d))
        .collect())
}

/// What a sample's rows are written from.
struct SampleRows<'a> {
    request: SampleRequest,
    reach: u32,
    systems: &'a [String],
    sample: &'a Sample<u32, u32>,
    judged_beyond: &'a [Pair<u32, u32>],
    loaded: &'a Loaded,
}

/// One pair row: claim, doc, stratum, draw, inclusion probability.
type PairRow = (i64, i64, Option<i64>, Option<i64>, f64);

/// Writes the sample's row, design and pairs, hidden with the build, in chunks.
async fn write_rows(
    db: &Db,
    step: &Step<'_>,
    rows: SampleRows<'_>,
    options: &BuildOptions,
) -> StoreResult<()> {
    let key = |pair: &Pair<u32, u32>| {
        rows.loaded
            .pair_ids(pair)
            .ok_or_else(|| StoreError::Corrupt("a sampled pair of no claim".into()))
    };
    let mut pair_rows: Vec<PairRow> = Vec::new();
    let mut draw_in_stratum: FxHashMap<u32, i64> = FxHashMap::default();
    for unit in rows.sample.pairs() {
        let (claim, doc) = key(&unit.pair)?;
        let draw = draw_in_stratum.entry(unit.stratum).or_insert(0);
        pair_rows.push((
            claim,
            doc,
            Some(i64::from(unit.stratum)),
            Some(*draw),
            unit.inclusion_probability,
        ));
        *draw += 1;
    }
    for pair in rows.judged_beyond {
        let (claim, doc) = key(pair)?;
        pair_rows.push((claim, doc, None, None, 1.0));
    }
    let mut tx = write_gate::begin(db).await?;
    sqlx::query(
        "INSERT INTO pool_sample_rows (build_id, project_id, depth, reach, strata, size, seed, systems)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(step.build_id)
    .bind(step.project_id)
    .bind(i64::from(step.depth))
    .bind(i64::from(rows.reach))
    .bind(i64::from(rows.request.strata))
    .bind(i64::try_from(rows.request.size).unwrap_or(i64::MAX))
    // SQLite integers are signed: the seed's bits are stored as they are.
    .bind(rows.request.seed as i64)
    .bind(serde_json::to_string(rows.systems).unwrap_or_default())
    .execute(&mut *tx)
    .await?;
    for s in rows.sample.strata() {
        sqlx::query(
            "INSERT INTO pool_sample_stratum_rows (build_id, stratum, population, sampled) VALUES ($1, $2, $3, $4)",
        )
        .bind(step.build_id)
        .bind(i64::from(s.stratum))
        .bind(i64::try_from(s.population).unwrap_or(i64::MAX))
        .bind(i64::try_from(s.sampled).unwrap_or(i64::MAX))
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    for chunk in pair_rows.chunks(options.chunk_rows.min(writer::CHUNK_ROWS)) {
        let mut tx = write_gate::begin(db).await?;
        for batch in chunk.chunks(1_000) {
            let rows = crate::values::ValuesInsert::new(
                crate::db::engine_of(&tx),
                "INSERT INTO pool_sample_pair_rows (build_id, claim_id, doc_id, stratum, draw, inclusion_probability) ",
                batch,
                |b, (claim, doc, stratum, draw, pi)| {
                    b.bind(step.build_id)
                        .bind(*claim)
                        .bind(*doc)
                        .bind(*stratum)
                        .bind(*draw)
                        .bind(*pi);
                },
            );
            if let Some((sql, args)) = rows.finish()? {
                sqlx::query_with(&sql, args).execute(&mut *tx).await?;
            }
        }
        tx.commit().await?;
        if let Some(hook) = &options.after_chunk {
            hook().await;
        }
    }
    Ok(())
}

/// Removes a `writing` build's sample rows (its pairs, design and row).
pub(super) async fn discard_rows(tx: &mut write_gate::WriteTx, build_id: i64) -> StoreResult<()> {
    for sql in [
        "DELETE FROM pool_sample_pair_rows WHERE build_id = $1",
        "DELETE FROM pool_sample_stratum_rows WHERE build_id = $1",
        "DELETE FROM pool_sample_rows WHERE build_id = $1",
    ] {
        sqlx::query(sql).bind(build_id).execute(&mut **tx).await?;
    }
    Ok(())
}

/// Whose predictions a survey estimates.
pub enum Estimated {
    /// Every system of the project (pairs predicted SUPPORT or CONTRADICT, or every pair of a
    /// run without labels).
    Project,
    /// One run: its name and the pairs it predicts as evidence, by external ids.
    Run {
        name: String,
        pairs: Vec<(ClaimId, DocId)>,
    },
}

/// One stored sample, as read: its design and pairs, by database keys.
struct SampleRead {
    depth: u32,
    reach: u32,
    systems: Vec<String>,
    strata: Vec<StratumDesign>,
    /// (claim, doc, stratum, draw), drawn pairs by stratum then draw.
    drawn: Vec<(i64, i64, u32)>,
    certain: Vec<(i64, i64)>,
}

async fn latest_sample(db: &Db, project_id: i64) -> StoreResult<Option<SampleRead>> {
    let head: Option<(i64, i64, i64, String)> = sqlx::query_as(
        "SELECT build_id, depth, reach, systems FROM pool_samples WHERE project_id = $1
         ORDER BY build_id DESC LIMIT 1",
    )
    .bind(project_id)
    .fetch_optional(db)
    .await?;
    let Some((build, depth, reach, systems)) = head else {
        return Ok(None);
    };
    let int = |v: i64, what: &str| {
        u32::try_from(v).map_err(|_| StoreError::Corrupt(format!("sample #{build}: {what} {v}")))
    };
    let usize_of = |v: i64, what: &str| {
        usize::try_from(v).map_err(|_| StoreError::Corrupt(format!("sample #{build}: {what} {v}")))
    };
    let strata_rows: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT stratum, population, sampled FROM pool_sample_strata WHERE build_id = $1 ORDER BY stratum",
    )
    .bind(build)
    .fetch_all(db)
    .await?;
    let mut strata = Vec::with_capacity(strata_rows.len());
    for (stratum, population, sampled) in strata_rows {
        strata.push(StratumDesign {
            stratum: int(stratum, "stratum")?,
            population: usize_of(population, "population")?,
            sampled: usize_of(sampled, "sampled")?,
        });
    }
    let pairs: Vec<(i64, i64, Option<i64>)> = sqlx::query_as(
        "SELECT claim_id, doc_id, stratum FROM pool_sample_pairs WHERE build_id = $1
         ORDER BY stratum, draw",
    )
    .bind(build)
    .fetch_all(db)
    .await?;
    let mut drawn = Vec::new();
    let mut certain = Vec::new();
    for (claim, doc, stratum) in pairs {
        match stratum {
            Some(h) => drawn.push((claim, doc, int(h, "stratum")?)),
            None => certain.push((claim, doc)),
        }
    }
    Ok(Some(SampleRead {
        depth: int(depth, "depth")?,
        reach: int(reach, "reach")?,
        systems: serde_json::from_str(&systems)
            .map_err(|e| StoreError::Corrupt(format!("sample #{build}: systems: {e}")))?,
        strata,
        drawn,
        certain,
    }))
}

/// The survey of the project's latest sample: estimates (of every system, or of one run), the
/// stopping test for `target` and the planner. Refused before the first pool build; a conflict
/// when the pooled systems changed since the sample was drawn.
pub async fn survey(
    db: &Db,
    project_id: i64,
    target: RecallTarget,
    estimated: Estimated,
) -> StoreResult<Survey> {
    let (strategy, depth) = settings(db, project_id).await?.ok_or_else(|| {
        StoreError::invalid(
            None,
            "the project has no pool yet: build it at a depth first",
        )
    })?;
    let loaded = load(db, project_id, strategy).await?;
    let read = latest_sample(db, project_id).await?;
    let pooled: Vec<String> = loaded
        .ranking
        .pooled()
        .map(|(_, run)| run.name().to_owned())
        .collect();
    let key = |claim: i64, doc: i64| {
        loaded
            .pair_key(claim, doc)
            .ok_or_else(|| StoreError::Corrupt("a sampled pair of no claim".into()))
    };
    let stored = match &read {
        None => None,
        Some(r) => {
            if r.systems != pooled {
                return Err(StoreError::conflict(Constraint::SampleStale, format!(
                    "the sample was drawn from the pooled systems {:?}, the project now pools {:?}: draw a new sample",
                    r.systems, pooled
                )));
            }
            let drawn = r
                .drawn
                .iter()
                .map(|&(c, d, h)| Ok((key(c, d)?, h)))
                .collect::<StoreResult<Vec<_>>>()?;
            let sample = Sample::from_parts(r.strata.clone(), drawn)
                .map_err(|e| StoreError::Corrupt(format!("the stored sample: {e}")))?;
            Some(StoredSample {
                depth: r.depth,
                reach: r.reach,
                sample,
                judged_beyond: r
                    .certain
                    .iter()
                    .map(|&(c, d)| key(c, d))
                    .collect::<StoreResult<Vec<_>>>()?,
            })
        }
    };
    let horizon = stored
        .as_ref()
        .map_or(0, |s| s.reach)
        .max(depth.saturating_mul(2));
    let ranked: Vec<(Pair<u32, u32>, u32)> = loaded
        .ranking
        .pool(horizon)
        .pairs()
        .iter()
        .map(|p| (p.pair, p.entry_depth))
        .collect();
    let labels: std::collections::HashMap<Pair<u32, u32>, bool> =
        final_labels(db, project_id, &loaded)
            .await?
            .into_iter()
            .map(|(pair, label)| (pair, label.is_evidence()))
            .collect();
    let systems = match estimated {
        Estimated::Project => project_predictions(db, project_id, &loaded).await?,
        Estimated::Run { name, pairs } => {
            let keys: FxHashMap<&ClaimId, u32> = loaded
                .claims
                .iter()
                .enumerate()
                .map(|(i, (_, id))| (id, i as u32))
                .collect();
            let docs: FxHashMap<&DocId, u32> = loaded
                .docs
                .iter()
                .enumerate()
                .map(|(i, (_, id))| (id, i as u32))
                .collect();
            let mut known: Vec<Pair<u32, u32>> = pairs
                .iter()
                .filter_map(|(c, d)| Some(Pair::new(*keys.get(c)?, *docs.get(d)?)))
                .collect();
            known.sort_unstable();
            known.dedup();
            vec![(name, known)]
        }
    };
    let seconds: Vec<f64> = sqlx::query_scalar(
        // A pair found by search cost its finder's first pass the search too (issue 38).
        "SELECT j.seconds_spent + COALESCE((SELECT f.seconds_searching FROM search_finds f
                  WHERE f.project_id = j.project_id AND f.claim_id = j.claim_id
                    AND f.doc_id = j.doc_id AND f.found_by = j.annotator_id AND j.stage = 'first'), 0)
         FROM judgments j WHERE j.project_id = $1 AND j.seconds_spent IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM judgment_retractions r WHERE r.judgment_id = j.id)",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    survey::survey(SurveyInput {
        depth,
        sample: stored,
        ranked: &ranked,
        labels: &labels,
        systems,
        seconds,
        target,
    })
    .map_err(|e| match e {
        SurveyError::Changed(_) => StoreError::conflict(Constraint::SampleStale, e.to_string()),
        SurveyError::Judging(e) => StoreError::invalid(None, e.to_string()),
    })
}

/// Each system's predicted evidence pairs (SUPPORT or CONTRADICT, or every pair of a run
/// without labels), by name.
async fn project_predictions(
    db: &Db,
    project_id: i64,
    loaded: &Loaded,
) -> StoreResult<Vec<(String, Vec<Pair<u32, u32>>)>> {
    let systems: Vec<(i64, String)> = sqlx::query_as(
        "SELECT id, name FROM systems WHERE project_id = $1 AND ready = 1 ORDER BY name",
    )
    .bind(project_id)
    .fetch_all(db)
    .await?;
    let mut out = Vec::with_capacity(systems.len());
    for (id, name) in systems {
        let rows: Vec<(i64, i64)> = sqlx::query_as(
            "SELECT claim_id, doc_id FROM predictions
             WHERE system_id = $1 AND (label IS NULL OR label IN ('SUPPORT', 'CONTRADICT'))",
        )
        .bind(id)
        .fetch_all(db)
        .await?;
        let mut pairs: Vec<Pair<u32, u32>> = rows
            .into_iter()
            .filter_map(|(c, d)| loaded.pair_key(c, d))
            .collect();
        pairs.sort_unstable();
        out.push((name, pairs));
    }
    Ok(out)
}
