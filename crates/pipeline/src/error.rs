//! What can go wrong while building, opening or searching an index.

use std::path::{Path, PathBuf};

/// An error of the retrieval pipeline, with the index directory or document it concerns.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// A tantivy operation failed.
    #[error("{context} (index {dir}): {source}")]
    Tantivy {
        context: &'static str,
        dir: PathBuf,
        #[source]
        source: tantivy::TantivyError,
    },
    /// The directory could not be created.
    #[error("cannot create index directory {dir}: {source}")]
    CreateDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The directory already holds an index; build into an empty directory.
    #[error("{dir} already holds an index: remove it or build elsewhere")]
    IndexExists { dir: PathBuf },
    /// The document source failed (the corpus reader's error, with the document's position).
    #[error("reading document {position} of the corpus: {source}")]
    Source {
        /// 1-based position of the document in the source.
        position: u64,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Two documents share an id.
    #[error("document {position} of the corpus repeats doc id {doc_id}")]
    DuplicateDocId {
        position: u64,
        doc_id: domain::ids::DocId,
    },
    /// The directory holds a tantivy index that claimpool did not build.
    #[error("{dir} is not a claimpool index: {problem}")]
    NotOurIndex { dir: PathBuf, problem: String },
    /// A stored doc id is missing or no longer parses.
    #[error("index {dir}: document {address} has a bad stored doc id: {problem}")]
    BadStoredId {
        dir: PathBuf,
        address: String,
        problem: String,
    },
    /// The index does not store the abstracts' text (built by an older claimpool).
    #[error(
        "index {dir} does not store the abstracts' text, which this retriever or scorer reads: \
         rebuild it with `claimpool pipeline index`"
    )]
    NoPassages { dir: PathBuf },
    /// A stored title and abstract no longer parse.
    #[error("index {dir}: the stored text of doc {doc_id} is unreadable: {problem}")]
    BadPassage {
        dir: PathBuf,
        doc_id: domain::ids::DocId,
        problem: String,
    },
    /// A search query longer than a person types; nothing was searched.
    #[error("the search query has {chars} characters; at most {max} are searched")]
    QueryTooLong { chars: usize, max: usize },
    /// A results page past the last one served; nothing was searched.
    #[error(
        "page {page} of the results is past the last one served ({max_page}, the results \
         ranked up to {max_rank}): narrow the query instead"
    )]
    PageTooDeep {
        page: usize,
        max_page: usize,
        max_rank: usize,
    },
    /// A search index fingerprint that cannot name a directory of the cache.
    #[error("search index fingerprint {fingerprint:?}: {problem}")]
    BadFingerprint {
        fingerprint: String,
        problem: &'static str,
    },
    /// A file operation on the search index cache failed.
    #[error("{context} {path}: {source}")]
    Cache {
        context: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The dense re-ranker's model failed.
    #[error(transparent)]
    Embed(#[from] super::embed::EmbedError),
    /// A scorer produced a number that is not a probability.
    #[error("claim {claim_id}, doc {doc_id}: {source}")]
    Probability {
        claim_id: domain::ids::ClaimId,
        doc_id: domain::ids::DocId,
        #[source]
        source: domain::label::ProbabilityError,
    },
}

impl PipelineError {
    /// Wraps tantivy errors of the operation `context` on the index in `dir`.
    pub(crate) fn tantivy<'a>(
        context: &'static str,
        dir: &'a Path,
    ) -> impl Fn(tantivy::TantivyError) -> PipelineError + 'a {
        move |source| PipelineError::Tantivy {
            context,
            dir: dir.to_path_buf(),
            source,
        }
    }
}
