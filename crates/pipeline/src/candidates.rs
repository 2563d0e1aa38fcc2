//! Where a claim's candidate abstracts come from: BM25 alone, or BM25's top abstracts re-ranked
//! by fusing BM25 with dense (MiniLM) similarity ([`super::hybrid`]).

use super::hybrid::HybridReranker;
use super::{Passage, PipelineError, Ranking, Retriever};

/// A retriever of candidates: the BM25 index, and optionally a dense re-ranker over its top
/// abstracts. `Send + Sync`: one is shared by the threads that score claims.
#[derive(Clone, Copy)]
pub struct CandidateRetriever<'a> {
    index: &'a Retriever,
    hybrid: Option<&'a HybridReranker>,
}

impl<'a> CandidateRetriever<'a> {
    /// BM25 alone.
    pub fn bm25(index: &'a Retriever) -> Self {
        CandidateRetriever {
            index,
            hybrid: None,
        }
    }

    /// BM25's top abstracts ([`HybridReranker::pool_for`]), re-ranked by reciprocal-rank
    /// fusion of BM25 and dense cosine similarity.
    pub fn hybrid(index: &'a Retriever, reranker: &'a HybridReranker) -> Self {
        CandidateRetriever {
            index,
            hybrid: Some(reranker),
        }
    }

    /// The BM25 index underneath.
    pub fn index(&self) -> &'a Retriever {
        self.index
    }

    /// The `k` best abstracts for the claim. Each hit keeps its BM25 score; its rank is its
    /// place in this ranking (fused, for the hybrid retriever).
    pub fn ranking(&self, claim_text: &str, k: usize) -> Result<Ranking, PipelineError> {
        match self.hybrid {
            None => self.index.search(&self.index.claim_terms(claim_text), k),
            Some(_) => Ok(self.with_passages(claim_text, k)?.0),
        }
    }

    /// The `k` best abstracts with their titles and sentences, in the same order.
    pub fn with_passages(
        &self,
        claim_text: &str,
        k: usize,
    ) -> Result<(Ranking, Vec<Passage>), PipelineError> {
        let terms = self.index.claim_terms(claim_text);
        match self.hybrid {
            None => self.index.search_passages(&terms, k),
            Some(reranker) => {
                let (ranking, passages) =
                    self.index.search_passages(&terms, reranker.pool_for(k))?;
                reranker.rerank(claim_text, ranking, passages, k)
            }
        }
    }
}
