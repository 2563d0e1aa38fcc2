//! Benchmark of releasing and evaluating on generated data: call [`generate`], then
//! [`time_release`] and [`time_evaluation`] from a bench binary or an example.

use domain::annotation::Provenance;
use domain::formats::{
    decompressed, ClaimsReader, Document, RunFormat, RunReadOptions, RunReader, RunRecord,
};
use domain::ids::{ClaimId, DocId, IdError};
use domain::label::{Label, Probability, ProbabilityError};
use domain::metrics::{BootstrapSamples, BootstrapSamplesError};
use domain::pool::{Role, Strategy};
use domain::release::ReleaseFiles;
use domain::release::{evaluate, gold_from_claims, run_from_records, BootstrapRequest};
use domain::release::{
    ClaimText, FinalLabel, PoolSettings, ReleaseDate, ReleaseInput, ReleaseOptions, SystemInfo,
};
use domain::release::{EvalError, ReleaseError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

/// Why a benchmark step failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("generated id: {0}")]
    Id(#[from] IdError),
    #[error("generated probability: {0}")]
    Probability(#[from] ProbabilityError),
    #[error("generated settings: {0}")]
    Settings(String),
    #[error(transparent)]
    Release(#[from] ReleaseError),
    #[error(transparent)]
    Eval(#[from] EvalError),
    #[error(transparent)]
    Samples(#[from] BootstrapSamplesError),
    #[error("archive: {0}")]
    Io(#[from] std::io::Error),
    #[error("file {0} missing from the release")]
    Missing(&'static str),
}

/// The size of a generated collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchShape {
    pub claims: u32,
    /// Judged pairs per claim (about a third of them evidence).
    pub judged_per_claim: u32,
    pub systems: u32,
    /// Pairs per claim in each system's run.
    pub run_pairs_per_claim: u32,
}

/// Generates a release input of `shape` from `seed`: 10-sentence abstracts, judged pairs with
/// rationales and model ranks, and scored runs.
pub fn generate(seed: u64, shape: BenchShape) -> Result<ReleaseInput, BenchError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let bad = |what: &str| BenchError::Settings(what.to_owned());
    let mut claims = Vec::new();
    let mut final_labels = Vec::new();
    let mut documents = Vec::new();
    let system_names: Vec<String> = (0..shape.systems).map(|s| format!("system-{s}")).collect();
    let mut runs: Vec<(String, Vec<RunRecord>)> = system_names
        .iter()
        .map(|name| (name.clone(), Vec::new()))
        .collect();
    let mut next_doc = 0u64;
    for c in 0..shape.claims {
        let claim = ClaimId::parse(c.to_string())?;
        claims.push(ClaimText {
            id: claim.clone(),
            text: format!("Generated claim number {c} about a treatment and an outcome."),
        });
        let first_doc = next_doc;
        for _ in 0..shape.judged_per_claim {
            let doc = DocId::parse(next_doc.to_string())?;
            next_doc += 1;
            documents.push(Document {
                doc_id: doc.clone(),
                title: format!("Title of abstract {doc}"),
                sentences: (0..10)
                    .map(|s| format!("Sentence {s} of abstract {doc}, with some words."))
                    .collect(),
                extra: serde_json::Map::new(),
            });
            let label = match rng.gen_range(0..3) {
                0 => Label::Support,
                1 => Label::Contradict,
                _ => Label::Nei,
            };
            let ranks: BTreeMap<String, u32> = system_names
                .iter()
                .map(|name| (name.clone(), rng.gen_range(1..10_000)))
                .collect();
            final_labels.push(FinalLabel {
                claim: claim.clone(),
                doc,
                label,
                provenance: Provenance::Pooling,
                sentences: if label.is_evidence() {
                    vec![vec![rng.gen_range(0..10)], vec![rng.gen_range(0..10)]]
                } else {
                    Vec::new()
                },
                model_ranks: Some(ranks),
            });
        }
        for (_, records) in &mut runs {
            for k in 0..shape.run_pairs_per_claim {
                let doc = DocId::parse((first_doc + u64::from(k)).to_string())?;
                let p_support: f64 = rng.gen();
                let p_contradict: f64 = rng.gen::<f64>() * (1.0 - p_support);
                let p_nei = 1.0 - p_support - p_contradict;
                let label = if p_nei >= p_support.max(p_contradict) {
                    Label::Nei
                } else if p_support >= p_contradict {
                    Label::Support
                } else {
                    Label::Contradict
                };
                records.push(RunRecord {
                    label: Some(label),
                    p_support: Some(Probability::new(p_support)?),
                    p_contradict: Some(Probability::new(p_contradict)?),
                    p_nei: Some(Probability::new(p_nei.clamp(0.0, 1.0))?),
                    rank: Some(k + 1),
                    ..RunRecord::bare(claim.clone(), doc)
                });
            }
        }
    }
    Ok(ReleaseInput {
        project: "bench".to_owned(),
        number: NonZeroU32::new(1).ok_or_else(|| bad("release number"))?,
        date: ReleaseDate::parse("2026-01-01").map_err(|e| bad(&e.to_string()))?,
        partial: false,
        pool: Some(PoolSettings {
            strategy: Strategy::Confidence,
            depth: NonZeroU32::new(1000).ok_or_else(|| bad("depth"))?,
        }),
        systems: system_names
            .into_iter()
            .map(|name| SystemInfo {
                name,
                role: Role::Pooled,
                description: "A generated system.".to_owned(),
                negative_sampling_ratio: Some(0.5),
            })
            .collect(),
        claims,
        final_labels,
        unjudged_pooled: Vec::new(),
        specificity: Vec::new(),
        documents,
        runs,
        model_labels: Vec::new(),
        recall: Default::default(),
    })
}

/// Timings and sizes of one release.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReleaseTimings {
    /// Checking the input and writing every file in memory.
    pub build: Duration,
    /// Packing them as `.tar.gz`.
    pub archive: Duration,
    /// Bytes of all files.
    pub bytes: u64,
    pub archive_bytes: u64,
}

/// Builds the release of `input` and packs it, timing each step.
pub fn time_release(input: &ReleaseInput) -> Result<(ReleaseFiles, ReleaseTimings), BenchError> {
    let start = Instant::now();
    let files = ReleaseFiles::build(input, &ReleaseOptions::default())?;
    let build = start.elapsed();
    let start = Instant::now();
    let archive = files.to_tar_gz()?;
    let timings = ReleaseTimings {
        build,
        archive: start.elapsed(),
        bytes: files.files().iter().map(|f| f.bytes.len() as u64).sum(),
        archive_bytes: archive.len() as u64,
    };
    Ok((files, timings))
}

/// Timings of evaluating a released run against the release's `claims.jsonl`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalTimings {
    /// Parsing `claims.jsonl` into the gold.
    pub gold: Duration,
    /// Parsing the run file into a run.
    pub run: Duration,
    /// The metrics, with `samples` bootstrap resamples.
    pub evaluate: Duration,
    pub pairs: u64,
    pub samples: u32,
}

/// Reads `claims.jsonl` and `runs/system-0.jsonl` of `files` back and evaluates the run with
/// `samples` bootstrap resamples.
pub fn time_evaluation(files: &ReleaseFiles, samples: u32) -> Result<EvalTimings, BenchError> {
    let bytes = |path: &'static str| {
        files
            .get(path)
            .map(<[u8]>::to_vec)
            .ok_or(BenchError::Missing(path))
    };
    let claims = bytes("claims.jsonl")?;
    let run_file = bytes("runs/system-0.jsonl")?;
    let start = Instant::now();
    let reader = ClaimsReader::from_input(decompressed(std::io::Cursor::new(claims))?, "claims");
    let gold = gold_from_claims(reader)?;
    let gold_time = start.elapsed();
    let start = Instant::now();
    let reader = RunReader::from_input(
        decompressed(std::io::Cursor::new(run_file))?,
        "run",
        RunFormat::Canonical,
        &RunReadOptions::default(),
    )
    .map_err(EvalError::from)?;
    let run = run_from_records(reader, "run", None)?;
    let run_time = start.elapsed();
    let start = Instant::now();
    let request = BootstrapRequest {
        samples: BootstrapSamples::new(samples)?,
        seed: 1,
    };
    evaluate(&gold, &run, Some(request), true)?;
    Ok(EvalTimings {
        gold: gold_time,
        run: run_time,
        evaluate: start.elapsed(),
        pairs: run.len() as u64,
        samples,
    })
}
