//! Benchmark of the lead dashboard's workload on generated data: several systems, each with
//! thousands of scored pairs over hundreds of claims, judged, scored and bootstrapped.
//! Call [`generate`] then [`time_dashboard`] from a bench binary or an example.

use domain::ids::{ClaimId, DocId, IdError};
use domain::label::{Label, Probability, ProbabilityError};
use domain::metrics::Gold;
use domain::metrics::JudgedRun;
use domain::metrics::MetricsError;
use domain::metrics::{bootstrap, BootstrapSamples, MetricsWithSd};
use domain::metrics::{Confidence, ConfidenceError, Prediction, Run, RunPair};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Documents the generated pairs are drawn from.
const CORPUS_SIZE: u32 = 100_000;

/// Why generating the benchmark data failed (it does not, unless the generator is broken).
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("generated id: {0}")]
    Id(#[from] IdError),
    #[error("generated probability: {0}")]
    Probability(#[from] ProbabilityError),
    #[error("generated confidence: {0}")]
    Confidence(#[from] ConfidenceError),
    #[error(transparent)]
    Metrics(#[from] MetricsError),
}

/// A generated gold and the runs of several systems.
#[derive(Clone, Debug)]
pub struct Collection {
    pub gold: Gold,
    pub runs: Vec<Run>,
}

/// Generates, from `seed`, `claims` claims (about 40% without evidence, the others with 1 to 4
/// SUPPORT/CONTRADICT docs) and `systems` runs of about `pairs_per_system` scored pairs each.
/// System `s` retrieves each gold doc with probability 0.5 + 0.1 s and leans towards the gold
/// label (NEI for other docs) by 0.2 + 0.15 s; confidences are max(p_support, p_contradict) rounded to 2 decimals, so
/// many pairs tie.
pub fn generate(
    seed: u64,
    claims: u32,
    systems: u32,
    pairs_per_system: u32,
) -> Result<Collection, BenchError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let claim_ids = (1..=claims)
        .map(|c| ClaimId::parse(c.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut evidence: Vec<Vec<(u32, Label)>> = Vec::with_capacity(claim_ids.len());
    for _ in &claim_ids {
        let count = if rng.gen_bool(0.4) {
            0
        } else {
            rng.gen_range(1..=4)
        };
        let mut docs = HashSet::new();
        while docs.len() < count {
            docs.insert(rng.gen_range(0..CORPUS_SIZE));
        }
        let mut docs: Vec<u32> = docs.into_iter().collect();
        docs.sort_unstable();
        evidence.push(
            docs.into_iter()
                .map(|d| (d, pick(&mut rng, [Label::Support, Label::Contradict])))
                .collect(),
        );
    }
    let mut gold_labels = Vec::new();
    for (claim, docs) in claim_ids.iter().zip(&evidence) {
        for &(doc, label) in docs {
            gold_labels.push((claim.clone(), DocId::parse(doc.to_string())?, label));
        }
    }
    let gold = Gold::new(claim_ids.iter().cloned(), gold_labels)?;

    let per_claim = pairs_per_system / claims.max(1);
    let mut runs = Vec::new();
    for system in 0..systems {
        let recall = (0.5 + 0.1 * f64::from(system)).min(0.95);
        let skill = 0.2 + 0.15 * f64::from(system);
        let mut pairs = Vec::new();
        for (claim, docs) in claim_ids.iter().zip(&evidence) {
            let mut chosen: Vec<(u32, Label)> = docs
                .iter()
                .copied()
                .filter(|_| rng.gen_bool(recall))
                .collect();
            let mut seen: HashSet<u32> = docs.iter().map(|&(d, _)| d).collect();
            while chosen.len() < per_claim as usize {
                let doc = rng.gen_range(0..CORPUS_SIZE);
                if seen.insert(doc) {
                    chosen.push((doc, Label::Nei));
                }
            }
            for (doc, gold_label) in chosen {
                pairs.push(scored_pair(&mut rng, claim, doc, gold_label, skill)?);
            }
        }
        runs.push(Run::new(pairs)?);
    }
    Ok(Collection { gold, runs })
}

fn pick<const N: usize>(rng: &mut ChaCha8Rng, labels: [Label; N]) -> Label {
    labels[rng.gen_range(0..N)]
}

/// A pair whose probabilities lean towards `gold_label` by `skill`.
fn scored_pair(
    rng: &mut ChaCha8Rng,
    claim: &ClaimId,
    doc: u32,
    gold_label: Label,
    skill: f64,
) -> Result<RunPair, BenchError> {
    let mut raw = [rng.gen::<f64>(), rng.gen::<f64>(), rng.gen::<f64>()];
    let lean = match gold_label {
        Label::Support => 0,
        Label::Contradict => 1,
        Label::Nei => 2,
    };
    raw[lean] += skill;
    let total: f64 = raw.iter().sum();
    let [p_support, p_contradict, p_nei] = raw.map(|x| x / total);
    let label = if p_nei >= p_support.max(p_contradict) {
        Label::Nei
    } else if p_support >= p_contradict {
        Label::Support
    } else {
        Label::Contradict
    };
    Ok(RunPair {
        claim: claim.clone(),
        doc: DocId::parse(doc.to_string())?,
        prediction: Prediction::Scored {
            label,
            p_support: Probability::new(p_support)?,
            p_contradict: Probability::new(p_contradict)?,
        },
        confidence: Confidence::new((p_support.max(p_contradict) * 100.0).round() / 100.0)?,
    })
}

/// Wall-clock time of each step of the dashboard workload.
#[derive(Clone, Copy, Debug)]
pub struct DashboardTiming {
    /// Judging every run (one sort each).
    pub judge: Duration,
    /// Plain metrics and per-claim figures of every run.
    pub metrics: Duration,
    /// The paired bootstrap of all runs.
    pub bootstrap: Duration,
}

/// Runs the dashboard workload on `collection` and times it.
pub fn time_dashboard(
    collection: &Collection,
    samples: BootstrapSamples,
    seed: u64,
) -> Result<(DashboardTiming, Vec<MetricsWithSd>), MetricsError> {
    let start = Instant::now();
    let judged = collection
        .runs
        .iter()
        .map(|run| JudgedRun::new(&collection.gold, run))
        .collect::<Result<Vec<_>, _>>()?;
    let judge = start.elapsed();

    let start = Instant::now();
    let claims_seen: usize = judged
        .iter()
        .map(|run| {
            std::hint::black_box(run.metrics());
            run.by_claim().len()
        })
        .sum();
    std::hint::black_box(claims_seen);
    let metrics = start.elapsed();

    let start = Instant::now();
    let refs: Vec<&JudgedRun> = judged.iter().collect();
    let results = bootstrap(&refs, samples, seed)?;
    let bootstrap = start.elapsed();
    Ok((
        DashboardTiming {
            judge,
            metrics,
            bootstrap,
        },
        results,
    ))
}
