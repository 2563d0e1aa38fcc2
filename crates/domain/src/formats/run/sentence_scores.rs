//! Sentence-score runs (rationale selectors): `{"claim_id", "evidence": {doc_id: [score per
//! sentence]}}`, one line per claim.
//!
//! The pair's score is its best sentence score; its sentences are those scoring above
//! [`SENTENCE_THRESHOLD`]; there is no label. The dict order is the retrieval order (`rank`).

use super::record::RunRecord;
use crate::formats::error::ParseError;
use crate::formats::input::LineParser;
use crate::formats::json::{parse_line, Entries, Id};
use crate::ids::{ClaimId, DocId};
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::VecDeque;
use std::fmt;

/// A sentence scoring strictly above this is a predicted rationale sentence.
pub const SENTENCE_THRESHOLD: f64 = 0.5;

#[derive(Deserialize)]
struct Line {
    #[serde(alias = "id")]
    claim_id: Id<ClaimId>,
    evidence: Entries<Id<DocId>, ScoreSummary>,
}

/// The best score of an array of sentence scores and the sentences above the threshold, taken
/// while reading so that the scores themselves are not kept.
struct ScoreSummary {
    max: Option<f64>,
    above: Vec<u32>,
}

struct SummaryVisitor;

impl<'de> Visitor<'de> for SummaryVisitor {
    type Value = ScoreSummary;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of sentence scores")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ScoreSummary, A::Error> {
        let mut summary = ScoreSummary {
            max: None,
            above: Vec::new(),
        };
        let mut index: u32 = 0;
        while let Some(score) = seq.next_element::<f64>()? {
            if score > SENTENCE_THRESHOLD {
                summary.above.push(index);
            }
            summary.max = Some(summary.max.map_or(score, |m| m.max(score)));
            index = index.saturating_add(1);
        }
        Ok(summary)
    }
}

impl<'de> Deserialize<'de> for ScoreSummary {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(SummaryVisitor)
    }
}

/// Parses sentence-score lines.
pub(crate) struct SentenceScoresParser;

impl LineParser for SentenceScoresParser {
    type Record = RunRecord;

    fn parse_line(
        &mut self,
        file: &str,
        line: usize,
        text: &str,
        out: &mut VecDeque<RunRecord>,
    ) -> Result<(), ParseError> {
        let l: Line = parse_line(file, line, text)?;
        for (position, (doc_id, summary)) in l.evidence.0.into_iter().enumerate() {
            let mut record = RunRecord::bare(l.claim_id.0.clone(), doc_id.0);
            record.score = summary.max;
            record.sentences = Some(summary.above);
            record.rank = Some(super::position_rank(position));
            out.push_back(record);
        }
        Ok(())
    }
}
