//! A generated project for the report (seeded): claims, pooled and evaluation-only systems,
//! final labels and annotation records of any shape, SciFact-Open's size by default. It feeds
//! the report's benchmark ([`crate::report_timing`], `cargo bench -p server --bench report`)
//! and the report's randomized tests (the domain crate's unit tests include this file: it names
//! the domain crate only by its public paths).

use domain::ids::{ClaimId, DocId, IdError};
use domain::label::{Label, Probability, ProbabilityError};
use domain::metrics::{BootstrapSamplesError, Confidence, ConfidenceError, Prediction};
use domain::pool::{Pair, PoolError, Ranking, Role, Score, ScoredPair, Strategy, SystemRun};
use domain::report::ReportError;
use domain::report::{
    AnnotationRecord, FinalLabel, LabelledPair, PairId, PoolSetting, Provenance, Rationale,
    SecondPassMode, Seconds, SecondsError, Snapshot, Specificity, SpecificityNote, Stage,
    SystemPrediction, SystemSnapshot,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet};
use std::num::NonZeroU32;

/// Shape of a generated project.
#[derive(Clone, Copy, Debug)]
pub struct GenShape {
    /// Claims of the project.
    pub claims: u32,
    /// Documents a claim's predictions are drawn from (its candidates).
    pub candidates_per_claim: u32,
    /// Share of candidates that are evidence (SUPPORT or CONTRADICT) in truth.
    pub evidence_share: f64,
    /// Predictions per claim and system (at most `candidates_per_claim`).
    pub predictions_per_claim: u32,
    /// Pooled systems.
    pub pooled: u32,
    /// Evaluation-only systems.
    pub evaluation_only: u32,
    /// Whether the last evaluation-only system gives no labels (a ranking).
    pub label_less: bool,
    /// The pooling strategy.
    pub strategy: Strategy,
    /// The current pool depth (0: no pool yet).
    pub depth: u32,
    /// Confidences are multiples of 1 / `score_steps`: fewer steps, more ties.
    pub score_steps: u32,
    /// Share of the pool's non-prior pairs annotated (first pass).
    pub annotated_share: f64,
    /// Judgments imported for pairs chosen among all predictions.
    pub imports: u32,
    /// Whether the second annotator sees the first label.
    pub second_pass_mode: SecondPassMode,
    /// Seed of the generator (and of the report's bootstrap in [`run`]).
    pub seed: u64,
}

impl GenShape {
    /// SciFact-Open's size: 300 claims, 5 pooled systems × 10,200 predictions (51,000), depth
    /// 250 by confidence.
    pub const SCIFACT_OPEN: GenShape = GenShape {
        claims: 300,
        candidates_per_claim: 60,
        evidence_share: 0.04,
        predictions_per_claim: 34,
        pooled: 5,
        evaluation_only: 0,
        label_less: false,
        strategy: Strategy::Confidence,
        depth: 250,
        score_steps: 1_000,
        annotated_share: 0.95,
        imports: 20,
        second_pass_mode: SecondPassMode::Confirm,
        seed: 2022,
    };
}

/// Why generated data could not be built (never expected: the generator makes valid values).
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// An id (never: generated ids are digits).
    #[error("id: {0}")]
    Id(#[from] IdError),
    /// A probability out of range.
    #[error("probability: {0}")]
    Probability(#[from] ProbabilityError),
    /// A non-finite confidence.
    #[error("confidence: {0}")]
    Confidence(#[from] ConfidenceError),
    /// A negative duration.
    #[error("seconds: {0}")]
    Seconds(#[from] SecondsError),
    /// Fewer than 2 bootstrap samples.
    #[error("bootstrap samples: {0}")]
    Samples(#[from] BootstrapSamplesError),
    /// A run the pool refuses.
    #[error("pool: {0}")]
    Pool(#[from] PoolError),
    /// A snapshot the report refuses.
    #[error("report: {0}")]
    Report(#[from] ReportError),
    /// The report could not be serialized.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
}

/// Documents are drawn from this many.
const CORPUS: u32 = 500_000;

/// A claim's candidate document with its hidden truth.
#[derive(Clone, Copy)]
struct Candidate {
    doc: u32,
    /// Uniform in [0, 1): evidence in its top `evidence_share`.
    relevance: f64,
    truth: Label,
}

/// A random SUPPORT or CONTRADICT, SUPPORT twice as likely.
fn evidence_label(rng: &mut ChaCha8Rng) -> Label {
    if rng.gen_bool(2.0 / 3.0) {
        Label::Support
    } else {
        Label::Contradict
    }
}

/// A rationale for a generated label, drawn from its own stream (the pair and the time) so that
/// the rest of the generated data does not depend on it: an abstract of 3 to 9 sentences (by
/// document), and for SUPPORT/CONTRADICT 1 to 3 of its sentences, often the same ones.
fn rationale(pair: &PairId, label: Label, at_ms: i64) -> Rationale {
    let doc = numeric(pair.doc.as_str());
    let abstract_sentences = 3 + doc % 7;
    let mut rng = ChaCha8Rng::seed_from_u64(u64::from(doc) ^ (at_ms as u64).rotate_left(32));
    let mut sentences: Vec<u32> = if label.is_evidence() {
        let first = (doc / 7) % abstract_sentences;
        (0..rng.gen_range(1..=3))
            .map(|_| {
                if rng.gen_bool(0.6) {
                    first
                } else {
                    rng.gen_range(0..abstract_sentences)
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    sentences.sort_unstable();
    sentences.dedup();
    Rationale {
        sentences,
        abstract_sentences,
    }
}

fn any_label(rng: &mut ChaCha8Rng) -> Label {
    Label::ALL[rng.gen_range(0..3)]
}

fn pair_id(claim: u32, doc: u32) -> Result<PairId, BenchError> {
    Ok(Pair::new(
        ClaimId::parse(claim.to_string())?,
        DocId::parse(doc.to_string())?,
    ))
}

fn candidates(shape: &GenShape, rng: &mut ChaCha8Rng) -> Vec<Vec<Candidate>> {
    (0..shape.claims)
        .map(|_| {
            let mut docs = HashSet::new();
            while docs.len() < shape.candidates_per_claim as usize {
                docs.insert(rng.gen_range(0..CORPUS));
            }
            let mut docs: Vec<u32> = docs.into_iter().collect();
            docs.sort_unstable();
            docs.into_iter()
                .map(|doc| {
                    let relevance: f64 = rng.gen();
                    let truth = if relevance > 1.0 - shape.evidence_share {
                        evidence_label(rng)
                    } else {
                        Label::Nei
                    };
                    Candidate {
                        doc,
                        relevance,
                        truth,
                    }
                })
                .collect()
        })
        .collect()
}

/// A system's predictions: per claim, a random subset of the candidates, scored by relevance
/// plus noise. Kind by `system % 3`: probabilities, labels only, probabilities; a label-less
/// system gives neither.
fn system_predictions(
    shape: &GenShape,
    system: u32,
    label_less: bool,
    candidates: &[Vec<Candidate>],
    rng: &mut ChaCha8Rng,
) -> Result<Vec<SystemPrediction>, BenchError> {
    let mut predictions = Vec::new();
    for (claim, cands) in (0_u32..).zip(candidates) {
        let mut chosen: Vec<&Candidate> = cands.iter().collect();
        chosen.shuffle(rng);
        chosen.truncate(shape.predictions_per_claim as usize);
        for (position, c) in (1_u32..).zip(&chosen) {
            let noise: f64 = rng.gen();
            let steps = f64::from(shape.score_steps.max(1));
            let score = ((0.6 * c.relevance + 0.4 * noise) * steps).round() / steps;
            let label = if score > 0.85 {
                if c.truth.is_evidence() && rng.gen_bool(0.8) {
                    c.truth
                } else {
                    evidence_label(rng)
                }
            } else {
                Label::Nei
            };
            let (p_support, p_contradict) = match label {
                Label::Support => (score, (1.0 - score) * 0.3),
                Label::Contradict => ((1.0 - score) * 0.3, score),
                Label::Nei => (score * 0.5, score * 0.4),
            };
            let prediction = if label_less {
                Prediction::Unlabelled
            } else if system % 3 == 1 {
                Prediction::Labelled { label }
            } else {
                Prediction::Scored {
                    label,
                    p_support: Probability::new(p_support)?,
                    p_contradict: Probability::new(p_contradict)?,
                }
            };
            predictions.push(SystemPrediction {
                pair: pair_id(claim, c.doc)?,
                prediction,
                confidence: Confidence::new(score)?,
                retrieval_rank: rng.gen_bool(0.9).then_some(position),
            });
        }
    }
    Ok(predictions)
}

/// The pairs of the generated pool (numeric ids, so `u32` keys keep the id order).
fn pool_pairs(
    shape: &GenShape,
    systems: &[SystemSnapshot],
) -> Result<Vec<Pair<u32, u32>>, BenchError> {
    let mut ranking = Ranking::new(shape.strategy);
    for system in systems.iter().filter(|s| s.role == Role::Pooled) {
        let pairs = system
            .predictions
            .iter()
            .map(|p| {
                Ok(ScoredPair::new(
                    numeric(p.pair.claim.as_str()),
                    numeric(p.pair.doc.as_str()),
                    Score::new(p.confidence.get())?,
                    p.retrieval_rank,
                ))
            })
            .collect::<Result<Vec<_>, BenchError>>()?;
        ranking.add(SystemRun::new(system.name.clone(), Role::Pooled, pairs)?)?;
    }
    Ok(ranking
        .pool(shape.depth)
        .pairs()
        .iter()
        .map(|p| p.pair)
        .collect())
}

fn numeric(id: &str) -> u32 {
    id.parse().unwrap_or(u32::MAX)
}

/// Annotation of one pool pair: records and the final label, if decided.
struct Annotated {
    records: Vec<AnnotationRecord>,
    final_label: Option<Label>,
}

const ANNOTATORS: [&str; 3] = ["ann1", "ann2", "ann3"];

fn annotate(
    pair: &PairId,
    truth: Label,
    mode: SecondPassMode,
    clock: &mut i64,
    rng: &mut ChaCha8Rng,
) -> Result<Annotated, BenchError> {
    let mut records = Vec::new();
    let mut record = |stage: Stage, annotator: &str, label: Label, rng: &mut ChaCha8Rng| {
        *clock += rng.gen_range(1_000..60_000);
        let seconds = if rng.gen_bool(0.95) {
            Some(Seconds::new(rng.gen_range(10.0..300.0))?)
        } else {
            None
        };
        records.push(AnnotationRecord {
            pair: pair.clone(),
            stage,
            annotator: annotator.to_owned(),
            label,
            seconds,
            at_ms: *clock,
            rationale: rationale(pair, label, *clock),
        });
        Ok::<(), BenchError>(())
    };
    let a = rng.gen_range(0..ANNOTATORS.len());
    let b = (a + rng.gen_range(1..ANNOTATORS.len())) % ANNOTATORS.len();
    let mut first = if rng.gen_bool(0.9) {
        truth
    } else {
        any_label(rng)
    };
    record(Stage::First, ANNOTATORS[a], first, rng)?;
    if rng.gen_bool(0.05) {
        // An edit: a second record by the same annotator replaces the label.
        first = any_label(rng);
        record(Stage::First, ANNOTATORS[a], first, rng)?;
    }
    if rng.gen_bool(0.1) {
        return Ok(Annotated {
            records,
            final_label: None,
        });
    }
    let keep = match mode {
        SecondPassMode::Confirm => 0.9,
        SecondPassMode::Blind => 0.75,
    };
    let second = if rng.gen_bool(keep) {
        first
    } else {
        any_label(rng)
    };
    record(Stage::Second, ANNOTATORS[b], second, rng)?;
    if first == second {
        return Ok(Annotated {
            records,
            final_label: Some(first),
        });
    }
    if rng.gen_bool(0.5) {
        record(Stage::Adjudication, "lead", truth, rng)?;
        return Ok(Annotated {
            records,
            final_label: Some(truth),
        });
    }
    Ok(Annotated {
        records,
        final_label: None,
    })
}

/// A project of `shape`: claims, candidates with hidden truth, systems, citation evidence,
/// the pool at `shape.depth` partly annotated in two passes, imported judgments and
/// specificity notes.
pub fn generate(shape: &GenShape) -> Result<Snapshot, BenchError> {
    let mut rng = ChaCha8Rng::seed_from_u64(shape.seed);
    let candidates = candidates(shape, &mut rng);
    let truth: HashMap<(u32, u32), Label> = (0_u32..)
        .zip(&candidates)
        .flat_map(|(claim, cands)| cands.iter().map(move |c| ((claim, c.doc), c.truth)))
        .collect();
    let claims = (0..shape.claims)
        .map(|c| ClaimId::parse(c.to_string()))
        .collect::<Result<Vec<_>, _>>()?;

    let mut citation_evidence = Vec::new();
    for (claim, cands) in (0_u32..).zip(&candidates) {
        if let Some(c) = cands.iter().find(|c| c.truth.is_evidence()) {
            if rng.gen_bool(0.8) {
                citation_evidence.push(LabelledPair {
                    pair: pair_id(claim, c.doc)?,
                    label: c.truth,
                });
            }
        }
    }

    let total = shape.pooled + shape.evaluation_only;
    let mut systems = Vec::with_capacity(total as usize);
    for system in 0..total {
        let pooled = system < shape.pooled;
        let label_less = shape.label_less && system + 1 == total && !pooled;
        systems.push(SystemSnapshot {
            name: if pooled {
                format!("pooled-{system}")
            } else {
                format!("eval-{system}")
            },
            role: if pooled {
                Role::Pooled
            } else {
                Role::EvaluationOnly
            },
            predictions: system_predictions(shape, system, label_less, &candidates, &mut rng)?,
        });
    }

    let mut final_labels: Vec<FinalLabel> = citation_evidence
        .iter()
        .map(|c| FinalLabel {
            pair: c.pair.clone(),
            label: c.label,
            provenance: Provenance::Citation,
        })
        .collect();
    let mut labelled: HashSet<PairId> = final_labels.iter().map(|f| f.pair.clone()).collect();
    // Imports first: they are prior judgments, so annotation skips them.
    let all: Vec<&SystemPrediction> = systems.iter().flat_map(|s| &s.predictions).collect();
    for _ in 0..shape.imports {
        if let Some(p) = all.choose(&mut rng) {
            if labelled.insert(p.pair.clone()) {
                let key = (numeric(p.pair.claim.as_str()), numeric(p.pair.doc.as_str()));
                final_labels.push(FinalLabel {
                    pair: p.pair.clone(),
                    label: truth.get(&key).copied().unwrap_or(Label::Nei),
                    provenance: Provenance::Import,
                });
            }
        }
    }

    let mut annotations = Vec::new();
    let mut specificity = Vec::new();
    let mut clock: i64 = 1_700_000_000_000;
    for pair in pool_pairs(shape, &systems)? {
        let id = pair_id(pair.claim, pair.doc)?;
        if labelled.contains(&id) || !rng.gen_bool(shape.annotated_share) {
            continue;
        }
        let truth = truth
            .get(&(pair.claim, pair.doc))
            .copied()
            .unwrap_or(Label::Nei);
        let annotated = annotate(&id, truth, shape.second_pass_mode, &mut clock, &mut rng)?;
        annotations.extend(annotated.records);
        if let Some(label) = annotated.final_label {
            if label.is_evidence() && rng.gen_bool(0.6) {
                specificity.push(SpecificityNote {
                    pair: id.clone(),
                    relation: Specificity::ALL[rng.gen_range(0..Specificity::ALL.len())],
                });
            }
            labelled.insert(id.clone());
            final_labels.push(FinalLabel {
                pair: id,
                label,
                provenance: Provenance::Pooling,
            });
        }
    }
    // The database hands rows in no particular order.
    annotations.shuffle(&mut rng);
    final_labels.shuffle(&mut rng);

    Ok(Snapshot {
        claims,
        citation_evidence,
        systems,
        pool: NonZeroU32::new(shape.depth).map(|depth| PoolSetting {
            strategy: shape.strategy,
            depth,
        }),
        final_labels,
        specificity,
        annotations,
        second_pass_mode: shape.second_pass_mode,
    })
}
