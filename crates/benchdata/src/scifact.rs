//! Evaluation on SciFact: train on the train claims with several negative ratios, retrieve the
//! dev claims' top abstracts over the whole corpus, score them with each model and with the
//! BM25 scorer, and judge the runs with `domain::metrics` (abstract-level, label-only). The
//! pipeline crate's unit tests of the trained scorer include this file for its SciFact test (it
//! names the pipeline crate only by its public paths).

use domain::formats::{
    Claim, ClaimsReader, CorpusFormat, CorpusReader, Document, FormatError, ParseError,
};
use domain::ids::DocId;
use domain::metrics::{
    Confidence, ConfidenceError, Gold, JudgedRun, Metrics, MetricsError, Prediction, Run, RunPair,
};
use pipeline::trained::parallel::map_in_parallel;
use pipeline::trained::{train, TrainConfig, TrainedError, TrainedModel};
use pipeline::{build_index, Bm25Scorer, IndexDoc, PipelineError, Retriever, RunRow};
use std::collections::HashMap;
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Depth of the dev claims' retrieval (the pairs every scorer labels).
pub const EVAL_DEPTH: usize = 50;

/// What can go wrong in an evaluation.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    #[error(transparent)]
    Trained(#[from] TrainedError),
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    #[error("run row ({claim}, {doc}): {source}")]
    Confidence {
        claim: String,
        doc: String,
        #[source]
        source: ConfidenceError,
    },
    #[error("the corpus repeats doc id {0}")]
    DuplicateDoc(DocId),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// SciFact's train and dev claims and its corpus.
pub struct Scifact {
    pub train: Vec<Claim>,
    pub dev: Vec<Claim>,
    /// In file order.
    pub documents: Vec<Document>,
    pub corpus: HashMap<DocId, Document>,
}

/// Reads `claims_train.jsonl`, `claims_dev.jsonl` and `corpus.jsonl` from `dir`.
pub fn load_scifact(dir: &Path) -> Result<Scifact, BenchError> {
    let claims = |name: &str| -> Result<Vec<Claim>, BenchError> {
        ClaimsReader::open(&dir.join(name))?
            .map(|r| r.map(|located| located.record).map_err(BenchError::from))
            .collect()
    };
    let documents: Vec<Document> =
        CorpusReader::open(&dir.join("corpus.jsonl"), CorpusFormat::SciFact)?
            .map(|r| r.map(|located| located.record))
            .collect::<Result<_, _>>()?;
    let mut corpus = HashMap::with_capacity(documents.len());
    for doc in &documents {
        if corpus.insert(doc.doc_id.clone(), doc.clone()).is_some() {
            return Err(BenchError::DuplicateDoc(doc.doc_id.clone()));
        }
    }
    Ok(Scifact {
        train: claims("claims_train.jsonl")?,
        dev: claims("claims_dev.jsonl")?,
        documents,
        corpus,
    })
}

/// Builds a BM25 index of `documents` in `dir` (missing or empty) and opens it.
pub fn index_documents(dir: &Path, documents: &[Document]) -> Result<Retriever, PipelineError> {
    build_index(
        dir,
        documents.iter().map(|doc| {
            Ok::<_, Infallible>(IndexDoc {
                doc_id: doc.doc_id.clone(),
                title: doc.title.clone(),
                sentences: doc.sentences.clone(),
            })
        }),
        &|_| {},
    )?;
    Retriever::open(dir)
}

/// The model's rows for each claim's top `depth` abstracts (claims scored in parallel).
pub fn trained_run(
    model: &TrainedModel,
    claims: &[Claim],
    corpus: &HashMap<DocId, Document>,
    retriever: &Retriever,
    depth: usize,
) -> Result<Vec<RunRow>, BenchError> {
    let per_claim = map_in_parallel(claims, |claim| -> Result<Vec<RunRow>, PipelineError> {
        let hits = retriever.retrieve(&claim.text, depth)?;
        model.score_hits(&claim.id, &claim.text, &hits, corpus)
    });
    let mut rows = Vec::new();
    for claim_rows in per_claim {
        rows.extend(claim_rows?);
    }
    Ok(rows)
}

/// The BM25 scorer's rows for each claim's top `depth` abstracts.
pub fn bm25_run(
    scorer: &Bm25Scorer,
    claims: &[Claim],
    retriever: &Retriever,
    depth: usize,
) -> Result<Vec<RunRow>, BenchError> {
    let mut rows = Vec::new();
    for claim in claims {
        let ranking = retriever.search(&retriever.claim_terms(&claim.text), depth)?;
        rows.extend(scorer.score(&claim.id, &ranking)?);
    }
    Ok(rows)
}

/// Abstract-level, label-only metrics of `rows` against the claims' gold evidence; a pair's
/// confidence is max(p_support, p_contradict).
pub fn judge(rows: &[RunRow], claims: &[Claim]) -> Result<Metrics, BenchError> {
    let gold = Gold::new(
        claims.iter().map(|c| c.id.clone()),
        claims.iter().flat_map(|c| {
            c.evidence
                .iter()
                .map(|e| (c.id.clone(), e.doc_id.clone(), e.label))
        }),
    )?;
    let pairs = rows
        .iter()
        .map(|row| {
            let confidence = Confidence::new(row.p_support.get().max(row.p_contradict.get()))
                .map_err(|source| BenchError::Confidence {
                    claim: row.claim_id.to_string(),
                    doc: row.doc_id.to_string(),
                    source,
                })?;
            Ok(RunPair {
                claim: row.claim_id.clone(),
                doc: row.doc_id.clone(),
                prediction: Prediction::Scored {
                    label: row.predicted_label,
                    p_support: row.p_support,
                    p_contradict: row.p_contradict,
                },
                confidence,
            })
        })
        .collect::<Result<Vec<_>, BenchError>>()?;
    Ok(JudgedRun::new(&gold, &Run::new(pairs)?)?.metrics())
}

/// One scorer's figures on SciFact dev.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    pub metrics: Metrics,
    /// Pairs predicted SUPPORT or CONTRADICT.
    pub predicted_evidence: usize,
    /// Mean over the predicted-evidence pairs of the number of rationale sentences given.
    pub mean_rationale_sentences: f64,
}

impl Figures {
    fn of(rows: &[RunRow], claims: &[Claim]) -> Result<Figures, BenchError> {
        let evidence: Vec<&RunRow> = rows
            .iter()
            .filter(|r| r.predicted_label.is_evidence())
            .collect();
        let sentences: usize = evidence.iter().map(|r| r.sentences.len()).sum();
        Ok(Figures {
            metrics: judge(rows, claims)?,
            predicted_evidence: evidence.len(),
            mean_rationale_sentences: sentences as f64 / evidence.len().max(1) as f64,
        })
    }
}

/// A trained model's figures on SciFact dev, with its cost.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainedFigures {
    pub config: TrainConfig,
    pub figures: Figures,
    /// Wall time of [`train`].
    pub train_time: Duration,
    /// Size of the saved model file.
    pub model_bytes: u64,
    /// Wall time of scoring every dev pair.
    pub score_time: Duration,
}

/// The BM25 scorer and each trained model on the same dev retrieval.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub dev_pairs: usize,
    pub bm25: Figures,
    pub trained: Vec<TrainedFigures>,
}

/// Trains one model per entry of `negatives` (the rest of the configuration from `base`) on
/// SciFact train, saves each to `model_dir` (`trained-r{R}.json`) and evaluates it on the dev
/// claims' top [`EVAL_DEPTH`] abstracts, against the BM25 scorer on the same pairs.
/// `index_dir` must be missing or empty; the corpus is indexed there.
pub fn compare_on_scifact(
    data: &Scifact,
    index_dir: &Path,
    model_dir: &Path,
    negatives: &[u32],
    base: TrainConfig,
) -> Result<Comparison, BenchError> {
    let retriever = index_documents(index_dir, &data.documents)?;
    let bm25_rows = bm25_run(
        &Bm25Scorer::SCIFACT_TRAIN,
        &data.dev,
        &retriever,
        EVAL_DEPTH,
    )?;
    let bm25 = Figures::of(&bm25_rows, &data.dev)?;
    let mut trained = Vec::new();
    for &r in negatives {
        let config = TrainConfig {
            negatives: r,
            ..base
        };
        let start = Instant::now();
        let model = train(&data.train, &data.corpus, &retriever, config)?;
        let train_time = start.elapsed();
        let path = model_dir.join(format!("trained-r{r}.json"));
        model.save(&path)?;
        let model_bytes = std::fs::metadata(&path)
            .map_err(|source| BenchError::Io {
                path: path.clone(),
                source,
            })?
            .len();
        let start = Instant::now();
        let rows = trained_run(&model, &data.dev, &data.corpus, &retriever, EVAL_DEPTH)?;
        let score_time = start.elapsed();
        trained.push(TrainedFigures {
            config,
            figures: Figures::of(&rows, &data.dev)?,
            train_time,
            model_bytes,
            score_time,
        });
    }
    Ok(Comparison {
        dev_pairs: bm25_rows.len(),
        bm25,
        trained,
    })
}
