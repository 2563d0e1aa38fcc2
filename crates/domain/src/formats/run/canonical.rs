//! claimpool's own run format: one JSON object per claim/doc pair. Read here and written here.
//!
//! `{"system"?, "claim_id", "doc_id", "predicted_label"?, "p_support"?, "p_contradict"?, "p_nei"?,
//! "score"?, "rank"?, "sentences"?}`; ids may be integers or strings, absent and `null` fields are
//! the same. `label` is accepted for `predicted_label` and `model` for `system`.

use super::record::RunRecord;
use crate::formats::error::ParseError;
use crate::formats::input::LineParser;
use crate::formats::json::{parse_line, AnyLabel, Id, Prob};
use crate::ids::{ClaimId, DocId};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::Write;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default, borrow, alias = "model")]
    system: Option<Cow<'a, str>>,
    claim_id: Id<ClaimId>,
    doc_id: Id<DocId>,
    #[serde(default, alias = "label")]
    predicted_label: Option<AnyLabel>,
    #[serde(default)]
    p_support: Option<Prob>,
    #[serde(default)]
    p_contradict: Option<Prob>,
    #[serde(default)]
    p_nei: Option<Prob>,
    #[serde(default)]
    score: Option<f64>,
    #[serde(default)]
    rank: Option<u32>,
    #[serde(default)]
    sentences: Option<Vec<u32>>,
}

/// Parses canonical lines.
pub(crate) struct CanonicalParser;

impl LineParser for CanonicalParser {
    type Record = RunRecord;

    fn parse_line(
        &mut self,
        file: &str,
        line: usize,
        text: &str,
        out: &mut VecDeque<RunRecord>,
    ) -> Result<(), ParseError> {
        let l: Line<'_> = parse_line(file, line, text)?;
        out.push_back(RunRecord {
            system: l.system.map(Cow::into_owned),
            claim_id: l.claim_id.0,
            doc_id: l.doc_id.0,
            label: l.predicted_label.map(|x| x.0),
            p_support: l.p_support.map(|x| x.0),
            p_contradict: l.p_contradict.map(|x| x.0),
            p_nei: l.p_nei.map(|x| x.0),
            score: l.score,
            rank: l.rank,
            sentences: l.sentences,
        });
        Ok(())
    }
}

#[derive(Serialize)]
struct OutLine<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a str>,
    claim_id: &'a str,
    doc_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    predicted_label: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    p_support: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    p_contradict: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    p_nei: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sentences: Option<&'a [u32]>,
}

/// Writes runs in the canonical JSONL format, one record per line; [`super::RunReader`] reads
/// them back unchanged.
pub struct RunWriter<W: Write> {
    out: W,
}

impl<W: Write> RunWriter<W> {
    /// A writer onto `out` (wrap files in a `BufWriter`; wrap in a gzip encoder to compress).
    pub fn new(out: W) -> Self {
        RunWriter { out }
    }

    /// Writes one record as one line. A score that is not finite cannot be written (JSON has no
    /// NaN or infinity) and is refused with `InvalidInput`.
    pub fn write(&mut self, record: &RunRecord) -> std::io::Result<()> {
        if record.score.is_some_and(|s| !s.is_finite()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "claim {} doc {}: score {:?} is not a finite number",
                    record.claim_id, record.doc_id, record.score
                ),
            ));
        }
        let line = OutLine {
            system: record.system.as_deref(),
            claim_id: record.claim_id.as_str(),
            doc_id: record.doc_id.as_str(),
            predicted_label: record.label.map(|l| l.as_str()),
            p_support: record.p_support.map(|p| p.get()),
            p_contradict: record.p_contradict.map(|p| p.get()),
            p_nei: record.p_nei.map(|p| p.get()),
            score: record.score,
            rank: record.rank,
            sentences: record.sentences.as_deref(),
        };
        serde_json::to_writer(&mut self.out, &line)?;
        self.out.write_all(b"\n")
    }

    /// Flushes and gives back the underlying writer.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}
