//! Generating candidate runs from a corpus: a BM25 index of titles and abstracts, retrieval of
//! the top abstracts for each claim, and scorers that turn a ranking into run rows.
//!
//! The flow is one-directional: a corpus reader yields [`IndexDoc`]s → [`build_index`] →
//! [`Retriever`] ranks abstracts for a claim ([`Ranking`]) → a scorer
//! ([`Bm25Scorer::SCIFACT_TRAIN`]) turns the ranking into [`RunRow`]s, which serialise as
//! canonical run JSONL. A later retriever (BM25 fused with dense cosine by reciprocal rank) can
//! produce the same [`Ranking`] shape, and later scorers (trained, external command) the same
//! rows. [`bench`](mod@bench) measures indexing and retrieval on a generated corpus.

pub mod analyzer;
pub mod bench;
pub mod bm25_scorer;
pub mod error;
pub mod generate;
pub mod index;
pub mod retrieve;
pub mod row;
mod schema;
pub mod trained;

pub use bm25_scorer::{Bm25Scorer, Calibration, LabelPrior, ScoreFeatures};
pub use error::PipelineError;
pub use index::{build_index, build_index_with, IndexDoc, IndexOptions, IndexSummary};
pub use retrieve::{ClaimTerms, Hit, Ranking, Retriever};
pub use row::RunRow;

#[cfg(test)]
mod tests;
