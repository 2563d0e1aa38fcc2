//! Why a release cannot be written, and why an evaluation cannot run.

use crate::formats::{FormatError, ParseError};
use crate::ids::{ClaimId, DocId};
use crate::metrics::MetricsError;
use std::path::PathBuf;

/// A [`super::ReleaseInput`] that does not describe a consistent collection.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    #[error("claim {claim} is listed twice")]
    DuplicateClaim { claim: ClaimId },
    #[error("document {doc} is listed twice")]
    DuplicateDocument { doc: DocId },
    #[error("system {name:?} is listed twice")]
    DuplicateSystem { name: String },
    #[error("system {name:?}: negative sampling ratio {value} is not a number of at least 0")]
    NegativeSamplingRatio { name: String, value: f64 },
    #[error("{what} for ({claim}, {doc}): claim {claim} is not a claim of the release")]
    UnknownClaim {
        what: &'static str,
        claim: ClaimId,
        doc: DocId,
    },
    #[error("final label for ({claim}, {doc}) is given twice")]
    DuplicateLabel { claim: ClaimId, doc: DocId },
    #[error("pair ({claim}, {doc}) is both judged and listed as unjudged")]
    UnjudgedPairIsJudged { claim: ClaimId, doc: DocId },
    #[error("specificity of ({claim}, {doc}): the pair has no final label")]
    SpecificityOfUnjudgedPair { claim: ClaimId, doc: DocId },
    #[error("specificity of ({claim}, {doc}) is given twice")]
    DuplicateSpecificity { claim: ClaimId, doc: DocId },
    #[error("specificity of ({claim}, {doc}) has neither a relation nor a revised claim")]
    EmptySpecificity { claim: ClaimId, doc: DocId },
    #[error("judged pair ({claim}, {doc}): document {doc} is not among the documents")]
    MissingDocument { claim: ClaimId, doc: DocId },
    #[error(
        "final label for ({claim}, {doc}): sentence {sentence} is out of range (the abstract has {sentences} sentences)"
    )]
    SentenceOutOfRange {
        claim: ClaimId,
        doc: DocId,
        sentence: u32,
        sentences: usize,
    },
    #[error("document {doc}: extra field {field:?} would repeat a corpus field")]
    DocumentFieldClash { doc: DocId, field: String },
    #[error("run of system {name:?}: no such system")]
    RunOfUnknownSystem { name: String },
    #[error("run of system {name:?} is given twice")]
    DuplicateRun { name: String },
    #[error("run of system {name:?}: claim {claim} (doc {doc}) is not a claim of the release")]
    RunClaimUnknown {
        name: String,
        claim: ClaimId,
        doc: DocId,
    },
    #[error("run of system {name:?}: pair ({claim}, {doc}) is given twice")]
    DuplicateRunPair {
        name: String,
        claim: ClaimId,
        doc: DocId,
    },
    #[error("runs of systems {first:?} and {second:?} would both be written to {path}")]
    RunFileClash {
        first: String,
        second: String,
        path: String,
    },
    #[error("run of system {name:?}: {source}")]
    RunWrite {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot serialize {file}: {source}")]
    Serialize {
        file: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

/// Why release files could not be written out.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{dir}: the directory is not empty (pass force to write into it)")]
    NotEmpty { dir: PathBuf },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Why a gold file or a run could not be read, or an evaluation not made.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Format(#[from] FormatError),
    /// A bad line: the error names the file, the line and the field.
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    #[error("{file}: line {line}: {message}")]
    Confidence {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{file}: holds the runs of several systems ({}); choose one", systems.join(", "))]
    SeveralSystems { file: String, systems: Vec<String> },
    #[error("{file}: no pairs of system {system:?} (systems in the file: {})", if systems.is_empty() { "none named".to_owned() } else { systems.join(", ") })]
    NoSuchSystem {
        file: String,
        system: String,
        systems: Vec<String>,
    },
}
