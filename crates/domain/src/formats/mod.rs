//! Input formats of claimpool: corpora, claims, qrels and system runs, read as streams of typed
//! records, plain or gzip-compressed, with errors naming the file, the line and the field.
//!
//! - [`corpus`]: SciFact / SciFact-Open and BEIR `corpus.jsonl` ([`sentences`] splits BEIR text).
//! - [`claims`]: SciFact and SciFact-Open claims files.
//! - [`qrels`]: labelled and plain TREC qrels.
//! - [`run`]: seven run formats, the canonical run writer, confidences.
//!
//! Every reader is an iterator over `Result<Located<Record>, ParseError>`: one line (or parquet
//! row) is parsed at a time, so memory does not grow with the file (runs keep about 16 bytes per
//! pair to find repeated pairs; see [`run::RunReadOptions`]). A bad line yields one error and
//! reading goes on with the next line; a read error (say, truncated gzip) ends the stream.

pub mod claims;
pub mod corpus;
pub mod error;
pub mod input;
mod json;
pub mod qrels;
pub mod run;
pub mod sentences;

pub use claims::{Claim, ClaimsReader, Evidence, EvidenceProvenance};
pub use corpus::{CorpusFormat, CorpusReader, Document};
pub use error::{FormatError, ParseError};
pub use input::{
    bound, decompressed, open_input, size_text, watch, Input, Located, ReadBounds, Watch,
    MAX_LINE_BYTES,
};
pub use qrels::{Judgment, Qrel, QrelsReader};
pub use run::{
    LabelOrder, RunFormat, RunReadOptions, RunReader, RunRecord, RunWriter, Scoring, ScoringTally,
    MAX_SENTENCES,
};

#[cfg(test)]
mod real_data_tests;

/// Readers move to a blocking task or another thread (compile-time check).
#[cfg(test)]
#[allow(dead_code)]
fn readers_are_send() {
    fn send<T: Send>() {}
    send::<CorpusReader>();
    send::<ClaimsReader>();
    send::<QrelsReader>();
    send::<RunReader>();
    send::<Input>();
}
