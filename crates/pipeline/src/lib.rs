//! Generating candidate runs from a corpus: a BM25 index of titles and abstracts, retrieval of
//! the top abstracts for each claim, and scorers that turn a ranking into run rows.
//!
//! The flow is one-directional: a corpus reader yields [`IndexDoc`]s → [`build_index`] (which
//! also stores each title and abstract, [`Passage`]) → a [`CandidateRetriever`] ranks abstracts
//! for a claim ([`Ranking`]): BM25 alone ([`Retriever`]), or BM25's top 200 re-ranked by
//! reciprocal-rank fusion with MiniLM cosine similarity ([`HybridReranker`], [`embed`]) → a
//! scorer turns the ranking into run rows: [`Bm25Scorer::SCIFACT_TRAIN`], the [`trained`] model,
//! or a user's command ([`external`]), whose output is checked like a run import. Runs are
//! canonical run JSONL ([`RunRow`]). Its benchmarks' workloads are in `crates/benchdata` (indexing
//! and retrieval on a generated corpus, the trained scorer against BM25 on SciFact).
//!
//! [`search`] is the same index searched by a person: a page of 20 results with titles,
//! snippets and the query's words marked ([`CorpusSearch`]), the index kept as derived data in
//! a cache directory under the corpus's fingerprint ([`SearchIndex`]).
//!
//! Its own crate: it depends on the domain and on tantivy and candle, never on the store or the
//! pages, and compiles beside them.

// The SciFact evaluation (crates/benchdata) names this crate `pipeline`; the trained scorer's
// unit tests include it.
#[cfg(test)]
extern crate self as pipeline;

pub mod analyzer;
pub mod bm25_scorer;
pub mod candidates;
pub mod embed;
pub mod error;
pub mod external;
pub mod generate;
pub mod hybrid;
pub mod index;
pub mod job;
pub mod passage;
pub mod retrieve;
pub mod row;
mod schema;
pub mod search;
pub mod trained;

pub use bm25_scorer::{Bm25Scorer, Calibration, LabelPrior, ScoreFeatures};
pub use candidates::CandidateRetriever;
pub use embed::Embedder;
pub use error::PipelineError;
pub use hybrid::HybridReranker;
pub use index::{build_index, build_index_with, IndexDoc, IndexOptions, IndexSummary};
pub use passage::Passage;
pub use retrieve::{ClaimTerms, Hit, Ranking, Retriever};
pub use row::RunRow;
pub use search::{CorpusSearch, Highlighted, SearchHit, SearchIndex, SearchPage};

#[cfg(test)]
mod tests;
