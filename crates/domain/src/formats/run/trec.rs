//! TREC runs: `qid Q0 docno rank score tag`, white-space separated, one pair per line. The score
//! is the confidence (there is no label) and the tag names the system.

use super::record::RunRecord;
use crate::formats::error::ParseError;
use crate::formats::input::LineParser;
use crate::ids::{ClaimId, DocId};
use std::collections::VecDeque;

/// Parses TREC run lines.
pub(crate) struct TrecParser;

impl LineParser for TrecParser {
    type Record = RunRecord;

    fn parse_line(
        &mut self,
        file: &str,
        line: usize,
        text: &str,
        out: &mut VecDeque<RunRecord>,
    ) -> Result<(), ParseError> {
        let err = |field: &str, message: String| ParseError::new(file, line, Some(field), message);
        let mut columns = text.split_whitespace();
        let (Some(qid), Some(_q0), Some(docno), Some(rank), Some(score), Some(tag), None) = (
            columns.next(),
            columns.next(),
            columns.next(),
            columns.next(),
            columns.next(),
            columns.next(),
            columns.next(),
        ) else {
            return Err(ParseError::new(
                file,
                line,
                None,
                format!(
                    "a TREC run line has 6 columns (qid Q0 docno rank score tag), this one has {}",
                    text.split_whitespace().count()
                ),
            ));
        };
        let claim_id = ClaimId::parse(qid).map_err(|e| err("qid", format!("id {e}")))?;
        let doc_id = DocId::parse(docno).map_err(|e| err("docno", format!("id {e}")))?;
        let rank: u32 = rank.parse().map_err(|_| {
            err(
                "rank",
                format!("{rank:?} is not a rank (a whole number >= 0)"),
            )
        })?;
        let score = score
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite())
            .ok_or_else(|| err("score", format!("{score:?} is not a finite number")))?;
        let mut record = RunRecord::bare(claim_id, doc_id);
        record.system = Some(tag.to_owned());
        record.rank = Some(rank);
        record.score = Some(score);
        out.push_back(record);
        Ok(())
    }
}
