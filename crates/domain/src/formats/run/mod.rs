//! System runs: the formats systems write their predictions in, all read into [`RunRecord`]s.
//!
//! [`RunReader`] streams one record per claim/doc pair, each with the line it came from; a JSON
//! line holding many pairs yields many records with that line's number. A pair given twice by
//! the same system is an error naming both lines.

mod canonical;
mod duplicates;
mod label_order;
mod leaderboard;
mod parquet_table;
mod record;
mod retrieved;
mod sentence_scores;
mod trec;
mod trec_bulk;
mod verisci;

pub use canonical::RunWriter;
pub use label_order::{LabelOrder, LabelOrderError};
pub use record::{RunRecord, Scoring, ScoringTally};
pub use sentence_scores::SENTENCE_THRESHOLD;
pub use trec_bulk::{TrecPairs, TrecText};

use super::error::{FormatError, ParseError};
use super::input::{
    bounded, first_bytes, first_line, is_gzip, open_input, Bounded, Input, LineRecords, LineSource,
    Located, MAX_LINE_BYTES,
};
use duplicates::{PairIndex, Seen};
use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::str::FromStr;

/// The run formats claimpool reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunFormat {
    /// claimpool's JSONL, one pair per line (see [`RunWriter`]).
    Canonical,
    /// The SciFact-Open prediction table (parquet), one system per `model`.
    SciFactOpenParquet,
    /// SciFact leaderboard predictions / MultiVerS output, `label_probs` in a [`LabelOrder`].
    Leaderboard,
    /// VeriSci `label_prediction.jsonl`: a label and its confidence per pair.
    VeriSci,
    /// TREC run: `qid Q0 docno rank score tag`.
    Trec,
    /// Sentence scores per pair (rationale selectors), no label.
    SentenceScores,
    /// SciFact claims with a ranked `doc_ids` list: retrieval only.
    RetrievedClaims,
}

impl RunFormat {
    /// All formats, in the order a form lists them.
    pub const ALL: [RunFormat; 7] = [
        RunFormat::Canonical,
        RunFormat::SciFactOpenParquet,
        RunFormat::Leaderboard,
        RunFormat::VeriSci,
        RunFormat::Trec,
        RunFormat::SentenceScores,
        RunFormat::RetrievedClaims,
    ];

    /// The format's short name (what [`FromStr`] reads).
    pub fn as_str(self) -> &'static str {
        match self {
            RunFormat::Canonical => "canonical",
            RunFormat::SciFactOpenParquet => "scifact-open-parquet",
            RunFormat::Leaderboard => "leaderboard",
            RunFormat::VeriSci => "verisci",
            RunFormat::Trec => "trec",
            RunFormat::SentenceScores => "sentence-scores",
            RunFormat::RetrievedClaims => "retrieved-claims",
        }
    }

    /// Tells the format from a file's first line, where that is unambiguous. Parquet has no lines:
    /// use [`RunFormat::detect_file`].
    pub fn detect_line(line: &str) -> Result<RunFormat, String> {
        let line = line.trim();
        if !line.starts_with('{') {
            let columns = line.split_whitespace().count();
            return if columns == 6 {
                Ok(RunFormat::Trec)
            } else {
                Err(format!(
                    "not a JSON object, and {columns} columns where a TREC run has 6"
                ))
            };
        }
        let object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(line).map_err(|e| format!("not a JSON object: {e}"))?;
        let has = |key: &str| object.contains_key(key);
        if has("labels") {
            Ok(RunFormat::VeriSci)
        } else if has("doc_ids") {
            Ok(RunFormat::RetrievedClaims)
        } else if has("claim_id") && has("doc_id") {
            Ok(RunFormat::Canonical)
        } else if let Some(evidence) = object.get("evidence").and_then(|e| e.as_object()) {
            detect_evidence(evidence, has("id"), has("claim"))
        } else {
            Err(
                "none of the keys that tell a run format apart (labels, doc_ids, claim_id and \
                 doc_id, evidence)"
                    .to_owned(),
            )
        }
    }

    /// Tells the format of a file: parquet by its magic bytes, the others by the first line.
    pub fn detect_file(path: &Path) -> Result<RunFormat, FormatError> {
        if first_bytes(path, 4)?.starts_with(parquet_table::PARQUET_MAGIC) {
            return Ok(RunFormat::SciFactOpenParquet);
        }
        let undetected = |reason: String| FormatError::Undetected {
            file: path.display().to_string(),
            reason,
        };
        let line = first_line(path)?.ok_or_else(|| undetected("the file is empty".to_owned()))?;
        RunFormat::detect_line(&line).map_err(undetected)
    }
}

/// Leaderboard predictions (objects per doc) or sentence scores (arrays of non-integers per doc).
fn detect_evidence(
    evidence: &serde_json::Map<String, serde_json::Value>,
    has_id: bool,
    has_claim: bool,
) -> Result<RunFormat, String> {
    if has_claim {
        return Err("a claims file (it has \"claim\"), not a run".to_owned());
    }
    match evidence.values().next() {
        None if has_id => Ok(RunFormat::Leaderboard),
        None => Err("an empty evidence object under claim_id: choose the format".to_owned()),
        Some(serde_json::Value::Object(_)) => Ok(RunFormat::Leaderboard),
        Some(serde_json::Value::Array(_)) => {
            let fractional = evidence
                .values()
                .filter_map(|v| v.as_array())
                .flatten()
                .any(|x| x.is_f64());
            if fractional {
                Ok(RunFormat::SentenceScores)
            } else {
                Err(
                    "evidence lists hold only whole numbers: sentence indices (a rationale \
                     selection) or sentence scores cannot be told apart; choose the format"
                        .to_owned(),
                )
            }
        }
        _ => Err("evidence that is neither objects nor score lists".to_owned()),
    }
}

impl fmt::Display for RunFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a run format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown run format {0:?} (expected one of canonical, scifact-open-parquet, leaderboard, verisci, trec, sentence-scores, retrieved-claims)")]
pub struct UnknownRunFormat(pub String);

impl FromStr for RunFormat {
    type Err = UnknownRunFormat;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        RunFormat::ALL
            .into_iter()
            .find(|f| f.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| UnknownRunFormat(text.to_owned()))
    }
}

/// How to read a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReadOptions {
    /// Order of `label_probs` in leaderboard predictions.
    pub label_order: LabelOrder,
    /// Report pairs given twice by one system (costs about 16 bytes of memory per pair).
    pub check_duplicates: bool,
    /// The most bytes the file may hold once decompressed; None: no bound.
    pub max_decompressed_bytes: Option<u64>,
    /// The longest line of a line-based format (at most [`MAX_LINE_BYTES`]).
    pub max_line_bytes: usize,
    /// The most predicted rationale sentences one prediction may list.
    pub max_sentences: usize,
    /// The whole file is one system (its name given on import): a pair may not repeat under
    /// different system names or run tags either.
    pub one_system: bool,
}

/// The default bound on predicted rationale sentences per prediction: abstracts have tens of
/// sentences, so this only stops files that would fill the database with sentence lists.
pub const MAX_SENTENCES: usize = 1_000;

impl Default for RunReadOptions {
    fn default() -> Self {
        RunReadOptions {
            label_order: LabelOrder::default(),
            check_duplicates: true,
            max_decompressed_bytes: None,
            max_line_bytes: MAX_LINE_BYTES,
            max_sentences: MAX_SENTENCES,
            one_system: false,
        }
    }
}

type Records = Box<dyn Iterator<Item = Result<Located<RunRecord>, ParseError>> + Send>;

/// A streaming reader of one run file in any [`RunFormat`].
pub struct RunReader {
    records: Records,
    file: String,
    /// "line", or "row" for parquet tables.
    unit: &'static str,
    duplicates: Option<PairIndex>,
    max_sentences: usize,
    one_system: bool,
}

impl RunReader {
    /// Opens `path` (gzip or not) in `format`; errors name the file as `path` displays.
    pub fn open(
        path: &Path,
        format: RunFormat,
        options: &RunReadOptions,
    ) -> Result<RunReader, FormatError> {
        let name = path.display().to_string();
        if format == RunFormat::SciFactOpenParquet {
            let io = |source| FormatError::Io {
                file: name.clone(),
                source,
            };
            let mut file = BufReader::new(File::open(path).map_err(io)?);
            let table = if is_gzip(&mut file).map_err(io)? {
                let gz = BufReader::new(flate2::bufread::MultiGzDecoder::new(file));
                let mut input = bounded(Box::new(gz), options.max_decompressed_bytes);
                parquet_table::spool(&mut input).map_err(io)?
            } else if let Some(limit) = options.max_decompressed_bytes {
                let mut input = Bounded::new(file, limit);
                parquet_table::spool(&mut input).map_err(io)?
            } else {
                file.into_inner()
            };
            return RunReader::parquet(table, name, options);
        }
        RunReader::from_input(open_input(path)?, name, format, options)
    }

    /// Reads an already opened input (see [`super::input::decompressed`]) named `file_name` in
    /// errors. A parquet table is first copied to an unlinked temporary file.
    pub fn from_input(
        input: Input,
        file_name: impl Into<String>,
        format: RunFormat,
        options: &RunReadOptions,
    ) -> Result<RunReader, FormatError> {
        let file = file_name.into();
        let mut input = bounded(input, options.max_decompressed_bytes);
        let lines =
            |input| LineSource::new(input, file.clone()).with_max_line(options.max_line_bytes);
        let records: Records = match format {
            RunFormat::SciFactOpenParquet => {
                let table =
                    parquet_table::spool(&mut input as &mut dyn Read).map_err(|source| {
                        FormatError::Io {
                            file: file.clone(),
                            source,
                        }
                    })?;
                return RunReader::parquet(table, file, options);
            }
            RunFormat::Canonical => {
                Box::new(LineRecords::new(lines(input), canonical::CanonicalParser))
            }
            RunFormat::Leaderboard => Box::new(LineRecords::new(
                lines(input),
                leaderboard::LeaderboardParser {
                    order: options.label_order,
                },
            )),
            RunFormat::VeriSci => Box::new(LineRecords::new(lines(input), verisci::VeriSciParser)),
            RunFormat::Trec => Box::new(LineRecords::new(lines(input), trec::TrecParser)),
            RunFormat::SentenceScores => Box::new(LineRecords::new(
                lines(input),
                sentence_scores::SentenceScoresParser,
            )),
            RunFormat::RetrievedClaims => {
                Box::new(LineRecords::new(lines(input), retrieved::RetrievedParser))
            }
        };
        Ok(RunReader::new(records, file, "line", options))
    }

    fn parquet(
        table: File,
        file: String,
        options: &RunReadOptions,
    ) -> Result<RunReader, FormatError> {
        let records = parquet_table::ParquetRecords::new(table, file.clone())?;
        Ok(RunReader::new(Box::new(records), file, "row", options))
    }

    fn new(records: Records, file: String, unit: &'static str, options: &RunReadOptions) -> Self {
        RunReader {
            records,
            file,
            unit,
            duplicates: options.check_duplicates.then(PairIndex::default),
            max_sentences: options.max_sentences,
            one_system: options.one_system,
        }
    }

    /// The error for a pair already given on `first`.
    fn duplicate(&self, at: &Located<RunRecord>, first: usize) -> ParseError {
        let r = &at.record;
        let system = r
            .system
            .as_deref()
            .map(|s| format!(" of system {s:?}"))
            .unwrap_or_default();
        ParseError::new(
            &self.file,
            at.line,
            Some("doc_id"),
            format!(
                "claim {} / doc {}{system} was already given on {} {first}",
                r.claim_id, r.doc_id, self.unit
            ),
        )
    }
}

impl Iterator for RunReader {
    type Item = Result<Located<RunRecord>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        let next = self.records.next()?;
        if let Ok(at) = &next {
            let listed = at.record.sentences.as_ref().map_or(0, Vec::len);
            if listed > self.max_sentences {
                return Some(Err(ParseError::new(
                    &self.file,
                    at.line,
                    Some("sentences"),
                    format!(
                        "{listed} predicted sentences; this server takes at most {} per prediction",
                        self.max_sentences
                    ),
                )));
            }
        }
        let (Ok(at), Some(index)) = (&next, self.duplicates.as_mut()) else {
            return Some(next);
        };
        let r = &at.record;
        let system = match self.one_system {
            true => "",
            false => r.system.as_deref().unwrap_or(""),
        };
        match index.record(system, r.claim_id.as_str(), r.doc_id.as_str(), at.line) {
            Seen::New => Some(next),
            Seen::Before(first) => Some(Err(self.duplicate(at, first))),
            Seen::TooMany => Some(Err(ParseError::new(
                &self.file,
                at.line,
                None,
                "more than 2^32 distinct ids: too many to check for repeated pairs",
            ))),
        }
    }
}

/// The rank of the entry at 0-based `position` of a claim's dict or list.
fn position_rank(position: usize) -> u32 {
    u32::try_from(position).map_or(u32::MAX, |p| p.saturating_add(1))
}

#[cfg(test)]
mod tests;
