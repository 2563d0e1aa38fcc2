//! What can go wrong while training, saving or loading a trained scorer.

use crate::PipelineError;
use domain::ids::{ClaimId, DocId};
use std::path::PathBuf;

/// An error of the trained scorer, with the claim, document or file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum TrainedError {
    /// A [`super::TrainConfig`] field is out of range.
    #[error("invalid training configuration: {field} {problem}")]
    Config {
        field: &'static str,
        problem: String,
    },
    /// Retrieving a training claim's abstracts failed.
    #[error("retrieving abstracts for training claim {claim}: {source}")]
    Retrieval {
        claim: ClaimId,
        #[source]
        source: PipelineError,
    },
    /// A gold rationale points past the end of its abstract.
    #[error(
        "claim {claim}, doc {doc}: rationale sentence {sentence} is past the abstract's \
         {sentences} sentences"
    )]
    RationaleOutOfRange {
        claim: ClaimId,
        doc: DocId,
        sentence: u32,
        sentences: usize,
    },
    /// The training claims lack what a model needs.
    #[error("cannot train: {0}")]
    NotEnoughData(String),
    /// The model file could not be written.
    #[error("writing model {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The model file could not be read.
    #[error("reading model {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The model file is not a model's JSON.
    #[error("model {path}: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// The model file parses but does not make a usable model.
    #[error("model {path}: {problem}")]
    Invalid { path: PathBuf, problem: String },
}
