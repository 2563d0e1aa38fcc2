//! The hybrid retriever's second stage: BM25's top [`DEFAULT_POOL`] abstracts re-ranked by
//! reciprocal-rank fusion (Cormack et al. 2009; c = [`DEFAULT_RRF_K`], tuned on SciFact train)
//! of their BM25 rank and their rank by the cosine
//! similarity of MiniLM embeddings of the claim and of title + abstract.
//!
//! fused(d) = 1 / (c + rank_bm25(d)) + 1 / (c + rank_dense(d)), highest first, ties by BM25
//! rank. Only the candidates are embedded (their first [`DEFAULT_TOKENS`] tokens), never the
//! whole corpus; embeddings are kept in a bounded cache, since claims share candidates.

use super::embed::{cosine, EmbedError, Embedder};
use super::{Hit, Passage, PipelineError, Ranking};
use crate::domain::ids::DocId;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// BM25 candidates re-ranked per claim.
pub const DEFAULT_POOL: usize = 200;
/// The fusion constant c, tuned on SciFact train (`tests/hybrid.rs`, 128 tokens): recall@20 /
/// @50 were 0.9805 / 0.9911 for c = 1 to 20, then fell (c = 60, Cormack et al.'s value: 0.9716 /
/// 0.9894; c = 200: 0.9592 / 0.9894). The largest of the best is kept.
pub const DEFAULT_RRF_K: f64 = 20.0;
/// Tokens read of a claim or of a title + abstract: all-MiniLM-L6-v2 was trained on 128-token
/// inputs (its tokenizer.json cuts there), and 128 costs less than half the CPU of 256 (73 against
/// 168 ms per SciFact abstract on this machine).
pub const DEFAULT_TOKENS: usize = 128;
/// Embeddings cached: 50,000 x 384 floats is about 77 MB.
const CACHE_CAPACITY: usize = 50_000;

/// The dense re-ranker with its model and cache. `Send + Sync`.
pub struct HybridReranker {
    embedder: Embedder,
    pool: usize,
    rrf_k: f64,
    cache: Mutex<Cache>,
}

/// Document embeddings, oldest evicted first.
#[derive(Default)]
struct Cache {
    map: HashMap<DocId, Arc<[f32]>>,
    order: VecDeque<DocId>,
}

impl Cache {
    fn insert(&mut self, doc_id: DocId, embedding: Arc<[f32]>) {
        if self.map.insert(doc_id.clone(), embedding).is_none() {
            self.order.push_back(doc_id);
        }
        while self.order.len() > CACHE_CAPACITY {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
            }
        }
    }
}

impl HybridReranker {
    /// A re-ranker over BM25's top [`DEFAULT_POOL`] with c = [`DEFAULT_RRF_K`], reading
    /// [`DEFAULT_TOKENS`] tokens of each text.
    pub fn new(embedder: Embedder) -> HybridReranker {
        HybridReranker::with(embedder, DEFAULT_POOL, DEFAULT_RRF_K, DEFAULT_TOKENS)
    }

    /// A re-ranker over BM25's top `pool` with fusion constant `rrf_k`, reading at most
    /// `tokens` tokens of each text.
    pub fn with(mut embedder: Embedder, pool: usize, rrf_k: f64, tokens: usize) -> HybridReranker {
        embedder.set_max_tokens(tokens);
        HybridReranker {
            embedder,
            pool: pool.max(1),
            rrf_k,
            cache: Mutex::new(Cache::default()),
        }
    }

    /// How many BM25 candidates are re-ranked for a top `k` (at least `k`).
    pub fn pool_for(&self, k: usize) -> usize {
        self.pool.max(k)
    }

    /// The model.
    pub fn embedder(&self) -> &Embedder {
        &self.embedder
    }

    /// The fusion constant c.
    pub fn rrf_k(&self) -> f64 {
        self.rrf_k
    }

    /// The cosine similarity of the claim to each candidate, in the ranking's order.
    pub fn similarities(
        &self,
        claim_text: &str,
        ranking: &Ranking,
        passages: &[Passage],
    ) -> Result<Vec<f32>, EmbedError> {
        let claim = self
            .embedder
            .embed(&[claim_text])?
            .pop()
            .unwrap_or_default();
        let mut known: Vec<Option<Arc<[f32]>>> = {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            ranking
                .hits
                .iter()
                .map(|hit| cache.map.get(&hit.doc_id).cloned())
                .collect()
        };
        let missing: Vec<usize> = (0..known.len()).filter(|&i| known[i].is_none()).collect();
        if !missing.is_empty() {
            let texts: Vec<String> = missing.iter().map(|&i| passages[i].full_text()).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let embedded = self.embedder.embed(&refs)?;
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            for (&i, embedding) in missing.iter().zip(embedded) {
                let embedding: Arc<[f32]> = embedding.into();
                cache.insert(ranking.hits[i].doc_id.clone(), embedding.clone());
                known[i] = Some(embedding);
            }
        }
        Ok(known
            .iter()
            .map(|e| e.as_deref().map_or(0.0, |e| cosine(&claim, e)))
            .collect())
    }

    /// Re-ranks BM25's candidates (best first, with their passages) and keeps the top `k`;
    /// hits keep their BM25 score and get their fused rank.
    pub fn rerank(
        &self,
        claim_text: &str,
        ranking: Ranking,
        passages: Vec<Passage>,
        k: usize,
    ) -> Result<(Ranking, Vec<Passage>), PipelineError> {
        let similarities = self.similarities(claim_text, &ranking, &passages)?;
        let order = fuse(&similarities, self.rrf_k);
        let mut slots: Vec<Option<(Hit, Passage)>> =
            ranking.hits.into_iter().zip(passages).map(Some).collect();
        let mut hits = Vec::with_capacity(k.min(order.len()));
        let mut kept = Vec::with_capacity(k.min(order.len()));
        for (i, rank) in order.into_iter().take(k).zip(1u32..) {
            if let Some((mut hit, passage)) = slots[i].take() {
                hit.rank = rank;
                hits.push(hit);
                kept.push(passage);
            }
        }
        Ok((
            Ranking {
                hits,
                ceiling: ranking.ceiling,
            },
            kept,
        ))
    }
}

/// The reciprocal-rank fusion of a BM25 ranking (the positions 0, 1, ... of `similarities`)
/// with the ranking by similarity (highest first, ties by BM25 position): the positions, best
/// fused first, ties by BM25 position.
pub fn fuse(similarities: &[f32], rrf_k: f64) -> Vec<usize> {
    let n = similarities.len();
    let mut by_similarity: Vec<usize> = (0..n).collect();
    by_similarity.sort_by(|&a, &b| similarities[b].total_cmp(&similarities[a]).then(a.cmp(&b)));
    let mut dense_rank = vec![0usize; n];
    for (rank, &i) in by_similarity.iter().enumerate() {
        dense_rank[i] = rank + 1;
    }
    let fused = |i: usize| 1.0 / (rrf_k + (i + 1) as f64) + 1.0 / (rrf_k + dense_rank[i] as f64);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| fused(b).total_cmp(&fused(a)).then(a.cmp(&b)));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_adds_reciprocal_ranks() {
        // BM25 order 0,1,2,3; dense order 3,2,0,1.
        let sims = [0.5, 0.1, 0.7, 0.9];
        // c = 1: fused 0: 1/2+1/4 = .75; 1: 1/3+1/5 = .533; 2: 1/4+1/3 = .583; 3: 1/5+1/2 = .7.
        assert_eq!(fuse(&sims, 1.0), [0, 3, 2, 1]);
        // c = 60: 0: 1/61+1/63 = .032266; 3: 1/64+1/61 = .032018; 2: 1/63+1/62 = .031902;
        // 1: 1/62+1/64 = .031754.
        assert_eq!(fuse(&sims, 60.0), [0, 3, 2, 1]);
        // Mirrored ranks tie; the tie goes to BM25's order.
        assert_eq!(fuse(&[0.1, 0.9], 60.0), [0, 1]);
        // Equal similarities: dense ties follow BM25, so fusion keeps BM25's order.
        assert_eq!(fuse(&[0.3; 5], 60.0), [0, 1, 2, 3, 4]);
        assert!(fuse(&[], 60.0).is_empty());
    }
}
