//! The `cal` judging order simulated on a project (`claimpool simulate --order cal`): its
//! candidates are every pair a pooled run ranked plus each claim's top BM25 retrievals over the
//! project's whole corpus, judged against the project's final labels (citation evidence
//! included) as the truth.
//!
//! The command orchestrates: the store reads the runs, labels, corpus and claims; the pipeline
//! indexes the corpus and retrieves; the domain builds the candidates and replays the order.

use super::Lead;
use crate::error::{CommandError, CommandResult};
use domain::ids::{ClaimId, DocId};
use domain::judging::{
    replay, replay_cal_stopping, replay_cal_with_search, CalCandidates, CalReplay, CalStop, Curve,
    Order, RecallTarget, Retrieved, Selector,
};
use domain::pool::{Pair, Strategy};
use pipeline::{generate, Retriever};
use std::collections::HashMap;
use std::path::Path;
use store::judging::{self, ReplayInputs};
use store::Db;

/// A replay of one order on a project.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Simulation {
    pub order: Order,
    /// The ranking the order walks: the project's pool strategy (confidence when never built).
    pub strategy: Strategy,
    pub budget: usize,
    /// The truth: pairs with a SUPPORT or CONTRADICT final label (citation evidence included).
    pub evidence_pairs: usize,
    /// Distinct pairs the pooled systems rank (what an order can propose).
    pub candidate_pairs: usize,
    pub curve: Curve,
}

/// Pairs in the lead's project's pool.
pub async fn pooled_pairs(db: &Db, lead: &Lead) -> CommandResult<usize> {
    Ok(judging::pooled_pairs(db, lead.project_id()).await?)
}

/// Replays `orders` over the lead's project's pooled systems' full rankings, each with the same
/// truth and budget; `seed` drives Thompson sampling. One load of the runs serves every order.
pub async fn simulate_orders(
    db: &Db,
    lead: &Lead,
    orders: &[Order],
    budget: usize,
    seed: u64,
) -> CommandResult<Vec<Simulation>> {
    let ReplayInputs {
        strategy,
        loaded,
        truth,
    } = judging::replay_inputs(db, lead.project_id()).await?;
    let ranking = loaded.ranking;
    let orders = orders.to_vec();
    tokio::task::spawn_blocking(move || {
        orders
            .into_iter()
            .map(|order| {
                let mut selector = Selector::from_ranking(&ranking, u32::MAX, order, seed)
                    .map_err(|e| CommandError::Internal(format!("stored data is corrupt: {e}")))?;
                let candidate_pairs = selector.len();
                let evidence_pairs = truth.len();
                let curve = replay(&mut selector, &truth, budget);
                Ok(Simulation {
                    order,
                    strategy,
                    budget,
                    evidence_pairs,
                    candidate_pairs,
                    curve,
                })
            })
            .collect()
    })
    .await
    .map_err(|e| CommandError::Internal(format!("the simulation stopped: {e}")))?
}

/// The corpus retrievals per claim the `cal` order adds when none is asked for.
pub const DEFAULT_CANDIDATES_PER_CLAIM: usize = 100;

/// A replay of the `cal` order on a project.
#[derive(Clone, Debug)]
pub struct CalSimulation {
    /// The ranking the project's pool uses (the other orders' replays walk it).
    pub strategy: Strategy,
    pub budget: usize,
    /// Corpus retrievals per claim among the candidates.
    pub candidates_per_claim: usize,
    /// The simulated searcher's results judged per claim (queries the claim text, judges the
    /// top N, claim by claim, taking turns with the order); None without a searcher.
    pub searcher_top: Option<u32>,
    /// Distinct candidate pairs, and how many of them no pooled run ranked.
    pub candidate_pairs: usize,
    pub candidates_outside_runs: usize,
    /// The truth: pairs with a SUPPORT or CONTRADICT final label.
    pub evidence_pairs: usize,
    pub replay: CalReplay,
    /// Where the stopping rule stopped, when one was asked for (judged apart from `replay`,
    /// without its budget).
    pub stopped_at: Option<CalStop>,
}

/// A stopping rule for the simulation: the order judges until `switch_after` judgments in a
/// row find no evidence, then a random sample of the unjudged candidates until the test of
/// `target` lets judging stop.
#[derive(Clone, Copy, Debug)]
pub struct Stopping {
    pub target: RecallTarget,
    pub switch_after: usize,
}

/// Replays the `cal` order on the lead's project for `budget` judgments, seeded, once per
/// entry of `searchers`: alone (None), or beside a simulated searcher who judges each claim's
/// top N results (Some(N)). The corpus is exported, indexed and searched once for all of them.
/// With `stopping`, each also judges with that rule until it stops.
pub async fn simulate_cal(
    db: &Db,
    lead: &Lead,
    candidates_per_claim: usize,
    searchers: &[Option<u32>],
    budget: usize,
    seed: u64,
    stopping: Option<Stopping>,
) -> CommandResult<Vec<CalSimulation>> {
    let project = lead.project_id();
    let ReplayInputs {
        strategy,
        loaded,
        truth,
    } = judging::replay_inputs(db, project).await?;
    let rankings: Vec<Vec<Pair<u32, u32>>> = loaded
        .ranking
        .pooled()
        .map(|(_, run)| run.top(u32::MAX).map(|(_, scored)| scored.pair).collect())
        .collect();
    let claim_keys: HashMap<ClaimId, u32> = keys(loaded.claims.iter().map(|(_, id)| id.clone()));
    let doc_keys: HashMap<DocId, u32> = keys(loaded.docs.iter().map(|(_, id)| id.clone()));

    let dir = tempfile::tempdir()
        .map_err(|e| CommandError::Internal(format!("a temporary directory for the index: {e}")))?;
    let crate::export::Exported { corpus, claims, .. } =
        crate::export::corpus_and_claims(db, lead, dir.path()).await?;
    let work = dir.path().to_path_buf();
    let searchers = searchers.to_vec();
    tokio::task::spawn_blocking(move || {
        let retrieved = retrieve(
            &work,
            &corpus,
            &claims,
            candidates_per_claim,
            &claim_keys,
            &doc_keys,
        )?;
        let candidates = CalCandidates::new(&rankings, &retrieved)
            .map_err(|e| CommandError::Internal(format!("the CAL candidates: {e}")))?;
        let simulation = |searcher_top: Option<u32>| {
            // The searcher's results are the same BM25 ranking's top, claim by claim.
            let searched: Vec<Pair<u32, u32>> = match searcher_top {
                Some(top) => retrieved
                    .iter()
                    .filter(|hit| hit.rank <= top)
                    .map(|hit| hit.pair)
                    .collect(),
                None => Vec::new(),
            };
            let stopped_at = stopping
                .map(|rule| {
                    replay_cal_stopping(
                        &candidates,
                        &truth,
                        rule.target,
                        rule.switch_after,
                        seed,
                        &searched,
                    )
                })
                .transpose()
                .map_err(|e| CommandError::Internal(format!("the stopping rule: {e}")))?;
            Ok(CalSimulation {
                strategy,
                budget,
                candidates_per_claim,
                searcher_top,
                candidate_pairs: candidates.len(),
                candidates_outside_runs: candidates.outside_runs(),
                evidence_pairs: truth.len(),
                replay: replay_cal_with_search(&candidates, &truth, budget, seed, &searched),
                stopped_at,
            })
        };
        searchers.into_iter().map(simulation).collect()
    })
    .await
    .map_err(|e| CommandError::Internal(format!("the CAL simulation stopped: {e}")))?
}

/// Keys in the store's order (a key is a position, as the loaded ranking's).
fn keys<K: std::hash::Hash + Eq>(ids: impl Iterator<Item = K>) -> HashMap<K, u32> {
    ids.zip(0u32..).collect()
}

/// Each claim's top `per_claim` abstracts by BM25 over the exported corpus, indexed in `work`.
fn retrieve(
    work: &Path,
    corpus: &Path,
    claims: &Path,
    per_claim: usize,
    claim_keys: &HashMap<ClaimId, u32>,
    doc_keys: &HashMap<DocId, u32>,
) -> CommandResult<Vec<Retrieved<u32, u32>>> {
    let failed =
        |what: &str, e: &dyn std::fmt::Display| CommandError::Internal(format!("{what}: {e}"));
    let index = work.join("index");
    generate::index_corpus(corpus, &index, &|_| {})
        .map_err(|e| failed("indexing the corpus", &e))?;
    let retriever = Retriever::open(&index).map_err(|e| failed("opening the index", &e))?;
    let mut retrieved = Vec::new();
    for claim in generate::read_claims(claims).map_err(|e| failed("reading the claims", &e))? {
        let Some(&claim_key) = claim_keys.get(&claim.id) else {
            continue;
        };
        let ranking = retriever
            .search(&retriever.claim_terms(&claim.text), per_claim)
            .map_err(|e| failed("retrieving", &e))?;
        for hit in ranking.hits {
            let Some(&doc) = doc_keys.get(&hit.doc_id) else {
                continue;
            };
            let share = if ranking.ceiling > 0.0 {
                f64::from(hit.score / ranking.ceiling)
            } else {
                0.0
            };
            retrieved.push(Retrieved {
                pair: Pair::new(claim_key, doc),
                rank: hit.rank,
                share,
            });
        }
    }
    Ok(retrieved)
}
