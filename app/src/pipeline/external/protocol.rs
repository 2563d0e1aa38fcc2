//! What an external scorer reads: one JSON line per claim with its candidate abstracts.
//!
//! `{"claim_id": "13", "claim": "...", "candidates": [{"doc_id": "4983", "title": "...",
//! "abstract": ["sentence", ...], "rank": 1, "bm25_score": 23.5}, ...]}`
//!
//! Ids are strings (SciFact's integer ids as their decimal text). `rank` is the 1-based place in
//! the retriever's ranking; `bm25_score` the abstract's BM25 score for the claim. A claim with
//! no candidate (no content word) is still sent, with an empty list, and needs no prediction.

use crate::domain::ids::ClaimId;
use crate::pipeline::{Passage, Ranking};
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
    bm25_score: f32,
}

/// One claim's line (without the newline).
pub(crate) fn claim_line(
    claim_id: &ClaimId,
    claim: &str,
    ranking: &Ranking,
    passages: &[Passage],
) -> serde_json::Result<String> {
    let candidates = ranking
        .hits
        .iter()
        .zip(passages)
        .map(|(hit, passage)| CandidateLine {
            doc_id: hit.doc_id.as_str(),
            title: &passage.title,
            sentences: &passage.sentences,
            rank: hit.rank,
            bm25_score: hit.score,
        })
        .collect();
    serde_json::to_string(&ClaimLine {
        claim_id: claim_id.as_str(),
        claim,
        candidates,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::DocId;
    use crate::pipeline::Hit;

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
        let passages = [Passage {
            title: "T".into(),
            sentences: vec!["S1.".into(), "S2.".into()],
        }];
        let line = claim_line(&ClaimId::parse("13").unwrap(), "C", &ranking, &passages).unwrap();
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"claim_id": "13", "claim": "C", "candidates": [
                {"doc_id": "4983", "title": "T", "abstract": ["S1.", "S2."], "rank": 1, "bm25_score": 2.5}
            ]})
        );
        assert!(!line.contains('\n'));
    }
}
