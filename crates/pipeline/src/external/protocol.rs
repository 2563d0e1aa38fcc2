//! What an external scorer reads: one JSON line per claim with its candidate abstracts.
//!
//! `{"claim_id": "13", "claim": "...", "candidates": [{"doc_id": "4983", "title": "...",
//! "abstract": ["sentence", ...], "rank": 1, "bm25_score": 23.5}, ...]}`
//!
//! Ids are strings (SciFact's integer ids as their decimal text). `rank` is the 1-based place in
//! the claim's candidate list (the retriever's ranking; for a pool's pairs, the order they are
//! sent in); `bm25_score` the abstract's BM25 score for the claim, left out where the candidates
//! do not come from BM25 (a model assessor's pooled pairs). A claim with no candidate (no
//! content word) is still sent, with an empty list, and needs no prediction.

use super::{Candidate, ClaimRequest};
use serde::Serialize;

#[derive(Serialize)]
struct ClaimLine<'a> {
    claim_id: &'a str,
    claim: &'a str,
    candidates: Vec<CandidateLine<'a>>,
}

#[derive(Serialize)]
struct CandidateLine<'a> {
    doc_id: &'a str,
    title: &'a str,
    #[serde(rename = "abstract")]
    sentences: &'a [String],
    rank: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    bm25_score: Option<f32>,
}

/// One claim's line (without the newline).
pub(crate) fn claim_line(request: &ClaimRequest) -> serde_json::Result<String> {
    let candidates = request
        .candidates
        .iter()
        .map(|candidate: &Candidate| CandidateLine {
            doc_id: candidate.doc_id.as_str(),
            title: &candidate.title,
            sentences: &candidate.sentences,
            rank: candidate.rank,
            bm25_score: candidate.bm25_score,
        })
        .collect();
    serde_json::to_string(&ClaimLine {
        claim_id: request.claim_id.as_str(),
        claim: &request.claim,
        candidates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Hit, Passage, Ranking};
    use domain::ids::{ClaimId, DocId};

    #[test]
    fn a_claim_line_has_the_documented_shape() {
        let ranking = Ranking {
            hits: vec![Hit {
                doc_id: DocId::parse("4983").unwrap(),
                score: 2.5,
                rank: 1,
            }],
            ceiling: 10.0,
        };
        let passages = vec![Passage {
            title: "T".into(),
            sentences: vec!["S1.".into(), "S2.".into()],
        }];
        let request =
            ClaimRequest::retrieved(ClaimId::parse("13").unwrap(), "C", ranking, passages);
        let line = claim_line(&request).unwrap();
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"claim_id": "13", "claim": "C", "candidates": [
                {"doc_id": "4983", "title": "T", "abstract": ["S1.", "S2."], "rank": 1, "bm25_score": 2.5}
            ]})
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn a_candidate_without_a_bm25_score_leaves_the_field_out() {
        let request = ClaimRequest {
            claim_id: ClaimId::parse("13").unwrap(),
            claim: "C".into(),
            candidates: vec![Candidate {
                doc_id: DocId::parse("7").unwrap(),
                title: "T".into(),
                sentences: vec!["S1.".into()],
                rank: 1,
                bm25_score: None,
            }],
        };
        let value: serde_json::Value =
            serde_json::from_str(&claim_line(&request).unwrap()).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"claim_id": "13", "claim": "C", "candidates": [
                {"doc_id": "7", "title": "T", "abstract": ["S1."], "rank": 1}
            ]})
        );
    }
}
