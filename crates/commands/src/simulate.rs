//! The `cal` judging order simulated on a project (`claimpool simulate --order cal`): its
//! candidates are every pair a pooled run ranked plus each claim's top BM25 retrievals over the
//! project's whole corpus, judged against the project's final labels (citation evidence
//! included) as the truth.
//!
//! The command orchestrates: the store reads the runs, labels, corpus and claims; the pipeline
//! indexes the corpus and retrieves; the domain builds the candidates and replays the order.

use super::Lead;
use crate::error::{CommandError, CommandResult, Field};
use domain::ids::{ClaimId, DocId};
use domain::judging::{
    replay, replay_cal_stopping, replay_cal_with_search, CalCandidates, CalReplay, CalStop, Curve,
    Order, RecallTarget, Retrieved, Selector,
};
use domain::label::Label;
use domain::metrics::{Gold, JudgedRun, Run, RunPair};
use domain::pool::{Pair, Strategy};
use pipeline::trained::parallel::map_in_parallel;
use pipeline::{generate, CandidateRetriever, Embedder, HybridReranker, Retriever};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
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

/// Where the `cal` order's candidates from the whole corpus come from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CorpusRetrieval {
    /// Each claim's top abstracts by BM25 over title + abstract.
    #[default]
    Bm25,
    /// BM25's top abstracts re-ranked by the hybrid retriever (reciprocal-rank fusion with
    /// MiniLM similarities, `pipeline::hybrid`), the model read from `embedder_dir`: a ranking
    /// that differs from a BM25 run's, so that its top holds pairs the run missed.
    Hybrid { embedder_dir: PathBuf },
}

impl CorpusRetrieval {
    /// The retriever a command line names (`bm25` or `hybrid`), the hybrid's model in
    /// `embedder_dir`.
    pub fn parse(name: &str, embedder_dir: Option<PathBuf>) -> Result<CorpusRetrieval, String> {
        match (name, embedder_dir) {
            ("bm25", _) => Ok(CorpusRetrieval::Bm25),
            ("hybrid", Some(embedder_dir)) => Ok(CorpusRetrieval::Hybrid { embedder_dir }),
            ("hybrid", None) => Err("--retriever hybrid needs --embedder-dir DIR".to_owned()),
            (other, _) => Err(format!(
                "--retriever: unknown retriever {other:?} (bm25 or hybrid)"
            )),
        }
    }

    /// `bm25` or `hybrid`.
    pub fn name(&self) -> &'static str {
        match self {
            CorpusRetrieval::Bm25 => "bm25",
            CorpusRetrieval::Hybrid { .. } => "hybrid",
        }
    }

    /// The hybrid's re-ranker, its model loaded (None for BM25 alone): what
    /// [`CandidateRetriever::hybrid`] takes.
    pub fn reranker(&self) -> Result<Option<HybridReranker>, pipeline::embed::EmbedError> {
        match self {
            CorpusRetrieval::Bm25 => Ok(None),
            CorpusRetrieval::Hybrid { embedder_dir } => {
                Ok(Some(HybridReranker::new(Embedder::load(embedder_dir)?)))
            }
        }
    }
}

/// A replay of the `cal` order on a project.
#[derive(Clone, Debug)]
pub struct CalSimulation {
    /// The ranking the project's pool uses (the other orders' replays walk it).
    pub strategy: Strategy,
    pub budget: usize,
    /// Corpus retrievals per claim among the candidates.
    pub candidates_per_claim: usize,
    /// The retriever of those: `bm25` or `hybrid`.
    pub retrieval: &'static str,
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
/// top N results (Some(N)). The corpus is exported, indexed and searched once for all of them,
/// its candidates retrieved by `retrieval`. With `stopping`, each also judges with that rule
/// until it stops.
#[allow(clippy::too_many_arguments)]
pub async fn simulate_cal(
    db: &Db,
    lead: &Lead,
    candidates_per_claim: usize,
    retrieval: &CorpusRetrieval,
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
    let retrieved = corpus_retrievals(db, lead, &loaded, retrieval, candidates_per_claim).await?;
    let searchers = searchers.to_vec();
    let retrieval = retrieval.name();
    tokio::task::spawn_blocking(move || {
        let candidates = CalCandidates::new(&rankings, &retrieved)
            .map_err(|e| CommandError::Internal(format!("the CAL candidates: {e}")))?;
        let simulation = |searcher_top: Option<u32>| {
            // The searcher's results are the corpus retrieval's top, claim by claim.
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
                retrieval,
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

/// Makes the project's `cal` corpus retrievals: each claim's top `per_claim` abstracts by
/// `retrieval` over the project's corpus, stored for the live order (replacing any before).
/// Returns the pairs retrieved.
pub async fn make_cal_retrievals(
    db: &Db,
    lead: &Lead,
    retrieval: &CorpusRetrieval,
    per_claim: u32,
) -> CommandResult<usize> {
    let project = lead.project_id();
    let strategy = store::pool::settings(db, project)
        .await?
        .map_or(Strategy::Confidence, |(strategy, _)| strategy);
    let loaded = store::pool::load(db, project, strategy).await?;
    let per = usize::try_from(per_claim).unwrap_or(usize::MAX);
    let retrieved = corpus_retrievals(db, lead, &loaded, retrieval, per).await?;
    let rows: Vec<store::judging::CalRetrievalRow> = retrieved
        .iter()
        .filter_map(|hit| {
            let (claim, doc) = loaded.pair_ids(&hit.pair)?;
            Some((claim, doc, hit.rank, hit.share))
        })
        .collect();
    let set = store::judging::CalRetrievalSet {
        per_claim,
        retriever: retrieval.name(),
        claims: u64::try_from(loaded.claims.len()).unwrap_or(u64::MAX),
        made_by: lead.audit_id(),
    };
    store::judging::replace_cal_retrievals(db, project, &set, &rows).await?;
    Ok(rows.len())
}

/// Each claim's top `per_claim` abstracts by `retrieval` over the lead's project's corpus,
/// keyed as `loaded`: the corpus and claims exported to a temporary directory, indexed and
/// searched on a blocking thread.
async fn corpus_retrievals(
    db: &Db,
    lead: &Lead,
    loaded: &store::pool::Loaded,
    retrieval: &CorpusRetrieval,
    per_claim: usize,
) -> CommandResult<Vec<Retrieved<u32, u32>>> {
    let claim_keys: HashMap<ClaimId, u32> = keys(loaded.claims.iter().map(|(_, id)| id.clone()));
    let doc_keys: HashMap<DocId, u32> = keys(loaded.docs.iter().map(|(_, id)| id.clone()));
    let dir = tempfile::tempdir()
        .map_err(|e| CommandError::Internal(format!("a temporary directory for the index: {e}")))?;
    let crate::export::Exported { corpus, claims, .. } =
        crate::export::corpus_and_claims(db, lead, dir.path()).await?;
    let retrieval = retrieval.clone();
    tokio::task::spawn_blocking(move || {
        retrieve(
            dir.path(),
            &corpus,
            &claims,
            (&retrieval, per_claim),
            &claim_keys,
            &doc_keys,
        )
    })
    .await
    .map_err(|e| CommandError::Internal(format!("the corpus retrieval stopped: {e}")))?
}

/// Keys in the store's order (a key is a position, as the loaded ranking's).
fn keys<K: std::hash::Hash + Eq>(ids: impl Iterator<Item = K>) -> HashMap<K, u32> {
    ids.zip(0u32..).collect()
}

/// Each claim's top `per_claim` abstracts by `retrieval` over the exported corpus, indexed in
/// `work`; the claims are retrieved on every core. A hit's share is its BM25 score over the
/// claim's ceiling, its rank its place in the retrieval's ranking (fused, for the hybrid).
fn retrieve(
    work: &Path,
    corpus: &Path,
    claims: &Path,
    (retrieval, per_claim): (&CorpusRetrieval, usize),
    claim_keys: &HashMap<ClaimId, u32>,
    doc_keys: &HashMap<DocId, u32>,
) -> CommandResult<Vec<Retrieved<u32, u32>>> {
    let failed =
        |what: &str, e: &dyn std::fmt::Display| CommandError::Internal(format!("{what}: {e}"));
    let index = work.join("index");
    generate::index_corpus(corpus, &index, &|_| {})
        .map_err(|e| failed("indexing the corpus", &e))?;
    let retriever = Retriever::open(&index).map_err(|e| failed("opening the index", &e))?;
    let reranker = retrieval
        .reranker()
        .map_err(|e| failed("loading the MiniLM model", &e))?;
    let candidates = match &reranker {
        Some(reranker) => CandidateRetriever::hybrid(&retriever, reranker),
        None => CandidateRetriever::bm25(&retriever),
    };
    let claims: Vec<(u32, String)> = generate::read_claims(claims)
        .map_err(|e| failed("reading the claims", &e))?
        .into_iter()
        .filter_map(|claim| claim_keys.get(&claim.id).map(|&key| (key, claim.text)))
        .collect();
    let rankings = map_in_parallel(&claims, |(_, text)| candidates.ranking(text, per_claim));
    let mut retrieved = Vec::new();
    for ((claim_key, _), ranking) in claims.iter().zip(rankings) {
        let ranking = ranking.map_err(|e| failed("retrieving", &e))?;
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
                pair: Pair::new(*claim_key, doc),
                rank: hit.rank,
                share,
            });
        }
    }
    Ok(retrieved)
}

/// One pooled system left out: its F1 against the truth as each way of judging would have
/// known it (`domain::judging::leave_one_out`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct LeftOutRow {
    pub system: String,
    /// Judgments of both ways: the other systems' depth-`depth` pool.
    pub judgments: usize,
    /// F1 against the whole truth (every evidence pair known).
    pub f1_truth: f64,
    /// F1 against the truth in the depth pool of every pooled system (the system included).
    pub f1_pooled: f64,
    /// F1 against the truth in the others' depth pool.
    pub f1_depth: f64,
    /// F1 against the truth among `cal`'s judgments over every pooled system's candidates
    /// (the system included), as many judgments as the depth pool of every system: `cal`'s
    /// counterpart of `f1_pooled`.
    pub f1_pooled_cal: f64,
    /// F1 against the truth among `cal`'s judgments over the others' candidates.
    pub f1_cal: f64,
    /// `f1_pooled − f1_depth`: what leaving it out of depth pooling costs it.
    pub drop_depth: f64,
    /// `f1_pooled_cal − f1_cal`: what leaving it out of `cal` costs it, each side at the
    /// judgments of depth pooling's side (SciFact-Open Table 6's drop, for qrels from `cal`).
    pub drop_cal: f64,
    /// `f1_pooled − f1_cal`: `cal` without the system against depth pooling with it. Finding
    /// evidence the depth pool missed counts here as a drop (or a rise) though it is no bias.
    pub drop_cal_from_depth_pool: f64,
    /// Evidence each way found: in the others' depth pool, among cal's judgments, and of
    /// those outside every other system's ranking.
    pub evidence_depth: usize,
    pub evidence_cal: usize,
    pub cal_outside_runs: usize,
}

/// The leave-one-out comparison of a project (SciFact-Open Table 6): per pooled system, its
/// F1 under qrels from depth pooling of the others, and under qrels from `cal` over the
/// others' candidates at the same number of judgments.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LeaveOneOut {
    /// The pool strategy, as the command line spells it (`confidence`, `per-claim`).
    pub strategy: &'static str,
    pub depth: u32,
    pub candidates_per_claim: usize,
    pub retriever: &'static str,
    pub seed: u64,
    /// Pairs with a SUPPORT or CONTRADICT final label: the truth.
    pub evidence_pairs: usize,
    /// The depth pool of every pooled system, and the evidence in it.
    pub pooled_pairs: usize,
    pub pooled_evidence: usize,
    /// The evidence `cal` over every pooled system finds at as many judgments.
    pub pooled_cal_evidence: usize,
    pub systems: Vec<LeftOutRow>,
    pub mean_drop_depth: f64,
    pub mean_drop_cal: f64,
    pub mean_drop_cal_from_depth_pool: f64,
    /// Mean |f1_truth − f1_depth| and |f1_truth − f1_cal|: how far each way of judging puts
    /// a left-out system's F1 from its F1 against the whole truth.
    pub mean_error_depth: f64,
    pub mean_error_cal: f64,
}

/// Leaves each pooled system of the lead's project out in turn: its F1 with the truth as known
/// to depth pooling of the others at `depth` and to `cal` (seeded, its corpus candidates the
/// top `candidates_per_claim` of `retrieval`) at as many judgments, against its F1 with every
/// system pooled. F1 is the evaluation's (`metrics`, labels matched) on every claim.
pub async fn leave_one_out(
    db: &Db,
    lead: &Lead,
    depth: u32,
    candidates_per_claim: usize,
    retrieval: &CorpusRetrieval,
    seed: u64,
) -> CommandResult<LeaveOneOut> {
    if depth == 0 {
        return Err(CommandError::field(Field::Depth, "the depth is 1 or more"));
    }
    let project = lead.project_id();
    let ReplayInputs {
        strategy,
        loaded,
        truth,
    } = judging::replay_inputs(db, project).await?;
    let snapshot = store::report::snapshot(db, project).await?.snapshot;
    let retrieved = corpus_retrievals(db, lead, &loaded, retrieval, candidates_per_claim).await?;
    let retriever = retrieval.name();
    tokio::task::spawn_blocking(move || {
        let corrupt =
            |what: &str, e: &dyn std::fmt::Display| CommandError::Internal(format!("{what}: {e}"));
        let left = domain::judging::leave_one_out(&loaded.ranking, depth, &retrieved, &truth, seed)
            .map_err(|e| corrupt("leaving systems out", &e))?;
        // The truth with its labels, by external ids.
        let mut labels: HashMap<(ClaimId, DocId), Label> = HashMap::new();
        for pair in &snapshot.citation_evidence {
            labels.insert((pair.pair.claim.clone(), pair.pair.doc.clone()), pair.label);
        }
        for pair in &snapshot.final_labels {
            if pair.label.is_evidence() {
                labels.insert((pair.pair.claim.clone(), pair.pair.doc.clone()), pair.label);
            }
        }
        let ids = |pair: &Pair<u32, u32>| -> Option<(ClaimId, DocId)> {
            let claim = loaded.claims.get(pair.claim as usize)?.1.clone();
            let doc = loaded.docs.get(pair.doc as usize)?.1.clone();
            Some((claim, doc))
        };
        // The gold a set of judged pairs gives: the truth's evidence among them.
        let gold_of = |judged: &mut dyn Iterator<Item = (ClaimId, DocId)>| {
            let known: Vec<(ClaimId, DocId, Label)> = judged
                .filter_map(|key| labels.get(&key).map(|&label| (key.0, key.1, label)))
                .collect();
            Gold::new(snapshot.claims.iter().cloned(), known).map_err(|e| corrupt("the qrels", &e))
        };
        let whole = gold_of(&mut labels.keys().cloned())?;
        let all_pool = domain::judging::pool_of(&loaded.ranking, 0..left.len(), depth);
        let pooled = gold_of(&mut all_pool.iter().filter_map(&ids))?;
        let (all_cal, _) = domain::judging::cal_pool(
            &loaded.ranking,
            0..left.len(),
            &retrieved,
            &truth,
            all_pool.len(),
            seed,
        )
        .map_err(|e| corrupt("cal over every system", &e))?;
        let pooled_cal = gold_of(&mut all_cal.iter().filter_map(&ids))?;
        let mut systems = Vec::with_capacity(left.len());
        for out in &left {
            let run = snapshot
                .systems
                .iter()
                .find(|s| s.name == out.system)
                .ok_or_else(|| {
                    CommandError::Internal(format!("system {} is not in the report", out.system))
                })?;
            let run = Run::new(run.predictions.iter().map(|p| RunPair {
                claim: p.pair.claim.clone(),
                doc: p.pair.doc.clone(),
                prediction: p.prediction,
                confidence: p.confidence,
            }))
            .map_err(|e| corrupt(&format!("system {}", out.system), &e))?;
            let f1 = |gold: &Gold| -> CommandResult<f64> {
                Ok(JudgedRun::new(gold, &run)
                    .map_err(|e| corrupt(&format!("scoring {}", out.system), &e))?
                    .metrics()
                    .f1)
            };
            let by_depth = gold_of(&mut out.depth_pool.iter().filter_map(&ids))?;
            let by_cal = gold_of(&mut out.cal.iter().filter_map(&ids))?;
            let (f1_pooled, f1_depth, f1_cal) = (f1(&pooled)?, f1(&by_depth)?, f1(&by_cal)?);
            let f1_pooled_cal = f1(&pooled_cal)?;
            systems.push(LeftOutRow {
                system: out.system.clone(),
                judgments: out.depth_pool.len(),
                f1_truth: f1(&whole)?,
                f1_pooled,
                f1_depth,
                f1_pooled_cal,
                f1_cal,
                drop_depth: f1_pooled - f1_depth,
                drop_cal: f1_pooled_cal - f1_cal,
                drop_cal_from_depth_pool: f1_pooled - f1_cal,
                evidence_depth: by_depth.evidence_count(),
                evidence_cal: by_cal.evidence_count(),
                cal_outside_runs: out.cal_outside_runs,
            });
        }
        let mean = |f: &dyn Fn(&LeftOutRow) -> f64| {
            if systems.is_empty() {
                0.0
            } else {
                systems.iter().map(f).sum::<f64>() / systems.len() as f64
            }
        };
        Ok(LeaveOneOut {
            strategy: strategy.as_str(),
            depth,
            candidates_per_claim,
            retriever,
            seed,
            evidence_pairs: truth.len(),
            pooled_pairs: all_pool.len(),
            pooled_evidence: pooled.evidence_count(),
            pooled_cal_evidence: pooled_cal.evidence_count(),
            mean_drop_depth: mean(&|r| r.drop_depth),
            mean_drop_cal: mean(&|r| r.drop_cal),
            mean_drop_cal_from_depth_pool: mean(&|r| r.drop_cal_from_depth_pool),
            mean_error_depth: mean(&|r| (r.f1_truth - r.f1_depth).abs()),
            mean_error_cal: mean(&|r| (r.f1_truth - r.f1_cal).abs()),
            systems,
        })
    })
    .await
    .map_err(|e| CommandError::Internal(format!("the leave-one-out comparison stopped: {e}")))?
}
