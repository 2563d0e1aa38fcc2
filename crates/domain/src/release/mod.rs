//! Releasing a project's test collection, and evaluating systems against a release
//! (issue "Release the test collection and evaluate systems against it"). Plain Rust, no
//! database: the caller gathers the state into a [`ReleaseInput`].
//!
//! A release is a directory (or a deterministic `.tar.gz` of one) holding:
//! - `claims.jsonl`: every claim and its evidence, SciFact-Open format (`claims_file`);
//! - `qrels.txt` and `qrels-labels.txt`: TREC qrels, as relevance and as labels (`qrels_files`);
//! - `specificity.jsonl`: annotators' specificity notes (`specificity_file`);
//! - `corpus_candidates.jsonl`: the judged abstracts, SciFact corpus format (`corpus_file`);
//! - `qrels-model.txt`, only when asked: model assessors' labels, never mixed into the above;
//! - `runs/<system>.jsonl`: published runs, canonical run format (`run_files`);
//! - `README.md`: a datasheet (`readme`);
//! - `MANIFEST.json`: what the release is, its counts and the SHA-256 of every other file
//!   (`manifest`).
//!
//! The vocabularies come from where each is defined once: a label's provenance and the
//! specificity relations from [`crate::annotation`]
//! ([`Provenance`](crate::annotation::Provenance),
//! [`Specificity`](crate::annotation::Specificity)), the pool strategy and the system
//! roles from [`crate::pool`] ([`Strategy`](crate::pool::Strategy),
//! [`Role`](crate::pool::Role)).
//!
//! Flow: [`ReleaseFiles::build`] checks the input (every reference resolves, no pair twice, every
//! rationale sentence inside its abstract) and writes every file in memory, in a fixed order, so
//! the same state gives the same bytes; then [`ReleaseFiles::write_to_dir`] or
//! [`ReleaseFiles::to_tar_gz`]. For evaluation: [`read_gold`], [`read_run`], [`evaluate`].

mod archive;
mod checked;
mod claims_file;
mod compare;
mod corpus_file;
mod counts;
mod diff;
mod error;
mod evaluate;
mod files;
mod input;
mod json;
mod judgments;
mod manifest;
mod names;
mod qrels_files;
mod readme;
mod run_files;
mod specificity_file;

#[cfg(test)]
mod tests;

pub use compare::{compare, CompareRequest, PairComparison};
pub use counts::{ByProvenance, EvidenceByLabel, ReleaseCounts};
pub use diff::{diff, DiffError, ReleaseContents};
pub use error::{EvalError, ReleaseError, WriteError};
pub use evaluate::{
    evaluate, evaluate_judged, gold_from_claims, judged_report, prediction_of, read_gold, read_run,
    restrict_to_gold, run_from_records, BootstrapRequest, EvalCounts, EvalReport, IncompleteReport,
    JudgedPairs,
};
pub use files::{check_target_dir, ReleaseFile, ReleaseFiles, MODEL_QRELS};
pub use input::{
    ClaimText, FinalLabel, PoolSettings, RecallStatement, ReleaseDate, ReleaseDateError,
    ReleaseInput, ReleaseOptions, SpecificityNote, SystemInfo,
};
pub use judgments::{read_gold_judged, read_qrels_judgments, JudgedFrom};
pub use manifest::{sha256_hex, FORMAT, FORMAT_VERSION, MANIFEST};
pub use names::file_stem;
pub use readme::README;
