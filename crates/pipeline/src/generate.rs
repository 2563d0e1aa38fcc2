//! Generating a run: index a corpus file, then retrieve and score the top k abstracts of every
//! claim of a claims file, in parallel, writing canonical run JSONL in claim order.

use super::external::{run_external, ExternalCommand, ExternalError, ExternalSummary};
use super::{
    build_index, Bm25Scorer, CandidateRetriever, IndexDoc, IndexSummary, PipelineError, Retriever,
    RunRow,
};
use domain::formats::Document;
use domain::formats::{Claim, ClaimsReader, CorpusFormat, CorpusReader, FormatError, ParseError};
use domain::ids::DocId;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// A problem of a pipeline command, with the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    #[error(transparent)]
    Trained(#[from] super::trained::TrainedError),
    #[error(transparent)]
    Embed(#[from] super::embed::EmbedError),
    #[error(transparent)]
    External(Box<ExternalError>),
    #[error("writing the run: {0}")]
    Write(#[from] std::io::Error),
    #[error("writing the run {file}: {error}")]
    OutFile {
        file: std::path::PathBuf,
        error: std::io::Error,
    },
}

impl From<ExternalError> for GenerateError {
    fn from(error: ExternalError) -> Self {
        GenerateError::External(Box::new(error))
    }
}

/// Writes a run through `write` into a temporary file beside `out`, which replaces `out` only
/// when `write` succeeds: a failed run leaves `out` as it was (and no partial file).
pub fn write_run_file<T>(
    out: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<T, GenerateError>,
) -> Result<T, GenerateError> {
    let out_file = |error: std::io::Error| GenerateError::OutFile {
        file: out.to_path_buf(),
        error,
    };
    let dir = match out.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let temp = tempfile::Builder::new()
        .prefix(".claimpool-run-")
        .tempfile_in(dir)
        .map_err(out_file)?;
    let mut writer = std::io::BufWriter::new(temp);
    let value = write(&mut writer)?;
    let temp = writer.into_inner().map_err(|e| out_file(e.into_error()))?;
    temp.persist(out).map_err(|e| out_file(e.error))?;
    Ok(value)
}

/// The abstracts of a corpus file (SciFact or BEIR, plain or gzip) as the index takes them, read
/// as they are consumed.
pub fn corpus_index_docs(
    corpus: &Path,
) -> Result<impl Iterator<Item = Result<IndexDoc, ParseError>>, GenerateError> {
    let format = CorpusFormat::detect_file(corpus)?;
    Ok(CorpusReader::open(corpus, format)?.map(|item| {
        item.map(|located| IndexDoc {
            doc_id: located.record.doc_id,
            title: located.record.title,
            sentences: located.record.sentences,
        })
    }))
}

/// Indexes a corpus file (SciFact or BEIR, plain or gzip) into an empty directory.
pub fn index_corpus(
    corpus: &Path,
    index: &Path,
    progress: &dyn Fn(u64),
) -> Result<IndexSummary, GenerateError> {
    Ok(build_index(index, corpus_index_docs(corpus)?, progress)?)
}

/// Reads a whole corpus file into a map by document id (the trained scorer reads abstracts).
pub fn read_corpus(path: &Path) -> Result<HashMap<DocId, Document>, GenerateError> {
    let format = CorpusFormat::detect_file(path)?;
    CorpusReader::open(path, format)?
        .map(|item| {
            item.map(|located| (located.record.doc_id.clone(), located.record))
                .map_err(GenerateError::from)
        })
        .collect()
}

/// Trains the claim/sentence model on a claims file with evidence (SciFact train) over its corpus,
/// sampling `negatives` NEI abstracts per claim from the index's BM25 ranking.
pub fn train_model(
    claims: &Path,
    corpus: &Path,
    index: &Path,
    config: super::trained::TrainConfig,
) -> Result<super::trained::TrainedModel, GenerateError> {
    let claims = read_claims(claims)?;
    let corpus = read_corpus(corpus)?;
    let retriever = Retriever::open(index)?;
    Ok(super::trained::train(&claims, &corpus, &retriever, config)?)
}

/// Reads every claim of a claims file (SciFact or SciFact-Open), refusing the first bad line.
pub fn read_claims(path: &Path) -> Result<Vec<Claim>, GenerateError> {
    ClaimsReader::open(path)?
        .map(|item| {
            item.map(|located| located.record)
                .map_err(GenerateError::from)
        })
        .collect()
}

/// How each retrieved pair is scored.
pub enum Scorer {
    /// Retrieval only: a calibrated probability of evidence from the BM25 score.
    Bm25(Bm25Scorer),
    /// The trained claim/sentence model over the retrieved abstracts, read from the corpus.
    Trained {
        model: Box<super::trained::TrainedModel>,
        corpus: HashMap<DocId, Document>,
    },
}

impl Scorer {
    fn score(
        &self,
        retriever: &CandidateRetriever<'_>,
        claim: &Claim,
        k: usize,
    ) -> Result<Vec<RunRow>, PipelineError> {
        let ranking = retriever.ranking(&claim.text, k)?;
        match self {
            Scorer::Bm25(scorer) => scorer.score(&claim.id, &ranking),
            Scorer::Trained { model, corpus } => {
                model.score_hits(&claim.id, &claim.text, &ranking.hits, corpus)
            }
        }
    }
}

/// Scores the BM25 top `k` abstracts of every claim; see [`generate_run_with`].
pub fn generate_run(
    retriever: &Retriever,
    claims: &[Claim],
    k: usize,
    scorer: &Scorer,
    threads: usize,
    out: &mut dyn Write,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64, GenerateError> {
    let retriever = CandidateRetriever::bm25(retriever);
    generate_run_with(&retriever, claims, k, scorer, threads, out, progress)
}

/// Runs an external scorer command over the top `k` candidates of every claim and writes its
/// checked predictions; see [`run_external`] (`stop` kills the command).
pub fn generate_external_run(
    retriever: &CandidateRetriever<'_>,
    claims: &[Claim],
    k: usize,
    command: &ExternalCommand,
    out: &mut dyn Write,
    progress: &(dyn Fn(u64) + Sync),
    stop: &std::sync::atomic::AtomicBool,
) -> Result<ExternalSummary, GenerateError> {
    Ok(run_external(
        retriever, claims, k, command, out, progress, stop,
    )?)
}

/// A writer that fails once `stop` is set: a run being written stops at its next claim.
pub struct StopWriter<'a> {
    inner: &'a mut dyn Write,
    stop: &'a std::sync::atomic::AtomicBool,
}

impl<'a> StopWriter<'a> {
    pub fn new(inner: &'a mut dyn Write, stop: &'a std::sync::atomic::AtomicBool) -> Self {
        StopWriter { inner, stop }
    }
}

impl Write for StopWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(std::io::Error::other("the job was stopped"));
        }
        self.inner.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Scores the top `k` abstracts of every claim on `threads` threads and writes the rows as
/// canonical run JSONL, claims in file order. `progress` gets the number of claims done.
pub fn generate_run_with(
    retriever: &CandidateRetriever<'_>,
    claims: &[Claim],
    k: usize,
    scorer: &Scorer,
    threads: usize,
    out: &mut dyn Write,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64, GenerateError> {
    let done = AtomicU64::new(0);
    let threads = threads.clamp(1, 64);
    let chunk = claims.len().div_ceil(threads).max(1);
    let results: Vec<Result<Vec<Vec<RunRow>>, PipelineError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = claims
            .chunks(chunk)
            .map(|part| {
                let done = &done;
                scope.spawn(move || {
                    part.iter()
                        .map(|claim| {
                            let rows = scorer.score(retriever, claim, k);
                            progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                            rows
                        })
                        .collect::<Result<Vec<_>, _>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Ok(Vec::new())))
            .collect()
    });
    let mut written = 0u64;
    for part in results {
        for rows in part? {
            for row in rows {
                serde_json::to_writer(&mut *out, &row).map_err(std::io::Error::from)?;
                out.write_all(b"\n")?;
                written += 1;
            }
        }
    }
    out.flush()?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::formats::{RunFormat, RunReadOptions, RunReader};

    /// Index a tiny corpus, generate a run, and read it back with the canonical run reader.
    #[test]
    fn a_generated_run_reads_back_as_a_canonical_run() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus.jsonl");
        std::fs::write(
            &corpus,
            "{\"doc_id\": 1, \"title\": \"Vitamin D and bone density\", \"abstract\": [\"Vitamin D raises bone density in adults.\"]}\n\
             {\"doc_id\": 2, \"title\": \"Statins\", \"abstract\": [\"Statins lower cholesterol.\", \"Muscle pain is common.\"]}\n\
             {\"doc_id\": 3, \"title\": \"Sleep\", \"abstract\": [\"Sleep loss impairs memory (p < 0.01).\"]}\n",
        )
        .unwrap();
        let claims = dir.path().join("claims.jsonl");
        std::fs::write(
            &claims,
            "{\"id\": 7, \"claim\": \"Vitamin D increases bone density.\"}\n{\"id\": 8, \"claim\": \"Statins: lower (cholesterol)!\"}\n{\"id\": 9, \"claim\": \"the of and\"}\n",
        )
        .unwrap();
        let index = dir.path().join("index");
        let summary = index_corpus(&corpus, &index, &|_| {}).unwrap();
        assert_eq!(summary.documents, 3);
        let retriever = Retriever::open(&index).unwrap();
        let claims = read_claims(&claims).unwrap();
        let mut out = Vec::new();
        let seen = AtomicU64::new(0);
        let written = generate_run(
            &retriever,
            &claims,
            2,
            &Scorer::Bm25(Bm25Scorer::SCIFACT_TRAIN),
            2,
            &mut out,
            &|n| {
                seen.fetch_max(n, Ordering::Relaxed);
            },
        )
        .unwrap();
        assert_eq!(
            seen.load(Ordering::Relaxed),
            3,
            "progress reaches every claim"
        );
        let run = dir.path().join("run.jsonl");
        std::fs::write(&run, &out).unwrap();
        let records: Vec<_> =
            RunReader::open(&run, RunFormat::Canonical, &RunReadOptions::default())
                .unwrap()
                .map(|r| r.unwrap().record)
                .collect();
        assert_eq!(records.len() as u64, written);
        // Claim 7 finds document 1 first; claim 9 has no content words and gets nothing.
        assert_eq!(
            (
                records[0].claim_id.as_str(),
                records[0].doc_id.as_str(),
                records[0].rank
            ),
            ("7", "1", Some(1))
        );
        assert!(records.iter().all(|r| r.claim_id.as_str() != "9"));
        assert!(records
            .iter()
            .any(|r| r.claim_id.as_str() == "8" && r.doc_id.as_str() == "2"));
        // Claims come out in file order.
        let order: Vec<&str> = records.iter().map(|r| r.claim_id.as_str()).collect();
        let mut sorted = order.clone();
        sorted.sort_by_key(|c| c.parse::<u32>().unwrap());
        assert_eq!(order, sorted);
    }
}
