//! SciFact claims with a ranked `doc_ids` list (ARSJoint's `claims_dev_retrieved*.jsonl`), read
//! as a retrieval-only run: one record per listed doc, `rank` its 1-based position, no label and
//! no score. The claim's other fields are ignored.

use super::record::RunRecord;
use crate::formats::error::ParseError;
use crate::formats::input::LineParser;
use crate::formats::json::{parse_line, Id};
use crate::ids::{ClaimId, DocId};
use serde::Deserialize;
use std::collections::VecDeque;

#[derive(Deserialize)]
struct Line {
    #[serde(alias = "claim_id")]
    id: Id<ClaimId>,
    doc_ids: Vec<Id<DocId>>,
}

/// Parses retrieved-claims lines.
pub(crate) struct RetrievedParser;

impl LineParser for RetrievedParser {
    type Record = RunRecord;

    fn parse_line(
        &mut self,
        file: &str,
        line: usize,
        text: &str,
        out: &mut VecDeque<RunRecord>,
    ) -> Result<(), ParseError> {
        let l: Line = parse_line(file, line, text)?;
        for (position, doc_id) in l.doc_ids.into_iter().enumerate() {
            let mut record = RunRecord::bare(l.id.0.clone(), doc_id.0);
            record.rank = Some(super::position_rank(position));
            out.push_back(record);
        }
        Ok(())
    }
}
