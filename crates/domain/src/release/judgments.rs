//! Which pairs of a collection were judged, for the metrics of incomplete judgments
//! ([`crate::metrics::incomplete`]): from a release's `qrels.txt` (a row with a grade of
//! 0 or more, or a label, is judged; a -1 row is a pooled pair without a final label; a pair
//! absent from the qrels is unjudged), or from the claims file alone (its evidence, and in
//! SciFact's claims files the `cited_doc_ids`, judged through citation). Gold evidence pairs are
//! always judged.

use super::error::EvalError;
use crate::formats::{ClaimsReader, Judgment, ParseError, QrelsReader};
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use crate::metrics::{Gold, Judgments};
use serde::Serialize;
use std::path::Path;

/// Where the judged pairs came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JudgedFrom {
    /// The claims file: evidence and cited documents.
    Claims,
    /// A qrels file (its name as given).
    Qrels { file: String },
}

/// The gold and the judged pairs of a claims file: evidence, and `cited_doc_ids`.
pub fn read_gold_judged(path: &Path) -> Result<(Gold, Judgments), EvalError> {
    let mut ids = Vec::new();
    let mut labels: Vec<(ClaimId, DocId, Label)> = Vec::new();
    let mut cited: Vec<(ClaimId, DocId)> = Vec::new();
    for claim in ClaimsReader::open(path)? {
        let claim = claim?.record;
        for evidence in claim.evidence {
            labels.push((claim.id.clone(), evidence.doc_id, evidence.label));
        }
        for doc in claim.cited_doc_ids.into_iter().flatten() {
            cited.push((claim.id.clone(), doc));
        }
        ids.push(claim.id);
    }
    let gold = Gold::new(ids, labels)?;
    let judgments = Judgments::new(&gold, cited);
    Ok((gold, judgments))
}

/// The judged pairs of `gold` from a qrels file (plain TREC grades or labels). A row that
/// contradicts the gold (a relevant or evidence-labelled row for a pair the gold has as NEI, a
/// non-relevant, NEI or -1 row for a gold evidence pair, another evidence label) is an error
/// naming the file, line and field. Rows of claims outside the gold are ignored.
pub fn read_qrels_judgments(path: &Path, gold: &Gold) -> Result<Judgments, EvalError> {
    let mut judged = Vec::new();
    for qrel in QrelsReader::open(path)? {
        let located = qrel?;
        let (line, qrel) = (located.line, located.record);
        let Some(gold_label) = gold.label(&qrel.claim_id, &qrel.doc_id) else {
            continue;
        };
        let conflict = |what: String| {
            EvalError::Parse(ParseError::new(
                &path.display().to_string(),
                line,
                Some("judgment"),
                format!(
                    "{what}, but the claims file gives ({}, {}) {}",
                    qrel.claim_id,
                    qrel.doc_id,
                    if gold_label.is_evidence() {
                        format!("as {gold_label} evidence")
                    } else {
                        "no evidence label (NEI)".to_owned()
                    }
                ),
            ))
        };
        match qrel.judgment {
            Judgment::Relevance(grade) if grade < 0 => {
                if gold_label.is_evidence() {
                    return Err(conflict(format!("grade {grade} marks the pair unjudged")));
                }
            }
            Judgment::Relevance(grade) => {
                if (grade > 0) != gold_label.is_evidence() {
                    return Err(conflict(format!("grade {grade}")));
                }
                judged.push((qrel.claim_id, qrel.doc_id));
            }
            Judgment::Label(label) => {
                if label != gold_label {
                    return Err(conflict(format!("label {label}")));
                }
                judged.push((qrel.claim_id, qrel.doc_id));
            }
        }
    }
    Ok(Judgments::new(gold, judged))
}
