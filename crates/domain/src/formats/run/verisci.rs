//! VeriSci `label_prediction.jsonl` (also ARSJoint's `label_predictions.jsonl`):
//! `{"claim_id", "labels": {doc_id: {"label", "confidence"}}}`, one line per claim.
//!
//! `confidence` is the probability of the predicted label. It becomes that label's probability,
//! and the score is the probability that the pair is evidence: the confidence for SUPPORT or
//! CONTRADICT, one minus it for NEI. The dict order is the retrieval order (`rank`).

use super::record::RunRecord;
use crate::formats::error::ParseError;
use crate::formats::input::LineParser;
use crate::formats::json::{parse_line, AnyLabel, Entries, Id, Prob};
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use serde::Deserialize;
use std::collections::VecDeque;

#[derive(Deserialize)]
struct Line {
    #[serde(alias = "id")]
    claim_id: Id<ClaimId>,
    labels: Entries<Id<DocId>, Pair>,
}

#[derive(Deserialize)]
struct Pair {
    label: AnyLabel,
    confidence: Prob,
}

/// Parses VeriSci label-prediction lines.
pub(crate) struct VeriSciParser;

impl LineParser for VeriSciParser {
    type Record = RunRecord;

    fn parse_line(
        &mut self,
        file: &str,
        line: usize,
        text: &str,
        out: &mut VecDeque<RunRecord>,
    ) -> Result<(), ParseError> {
        let l: Line = parse_line(file, line, text)?;
        for (position, (doc_id, pair)) in l.labels.0.into_iter().enumerate() {
            let label = pair.label.0;
            let c = pair.confidence.0;
            let mut record = RunRecord::bare(l.claim_id.0.clone(), doc_id.0);
            record.label = Some(label);
            match label {
                Label::Support => record.p_support = Some(c),
                Label::Contradict => record.p_contradict = Some(c),
                Label::Nei => record.p_nei = Some(c),
            }
            record.score = Some(if label.is_evidence() {
                c.get()
            } else {
                1.0 - c.get()
            });
            record.rank = Some(super::position_rank(position));
            out.push_back(record);
        }
        Ok(())
    }
}
