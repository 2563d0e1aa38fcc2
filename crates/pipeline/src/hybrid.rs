//! The hybrid retriever's second stage: BM25's top [`DEFAULT_POOL`] abstracts re-ranked by
//! reciprocal-rank fusion (Cormack et al. 2009) of three rankings of them: BM25's; by the cosine
//! similarity of all-MiniLM-L6-v2 embeddings of the claim and of title + abstract (its first
//! [`DEFAULT_TOKENS`] tokens); and by the best cosine of the claim to one part of the abstract
//! (its title or one of its sentences).
//!
//! fused(d) = sum over the three rankings of 1 / (c + rank(d)), highest first, ties by BM25 rank,
//! with c = [`DEFAULT_RRF_K`].
//!
//! Why the parts: the model was trained on sentence pairs and reads 128 tokens, while a SciFact
//! abstract runs to about 250 and its evidence is often one sentence past the cut. The fusion was
//! chosen on SciFact train only (`tests/hybrid.rs`; 505 claims, 564 evidence pairs, 561 in BM25's
//! top 200), by recall at 50, then 20, then 10: fusing BM25, abstract and best part with c = 1
//! found 559 / 554 / 546, against 559 / 553 / 544 for BM25 with the abstract alone (the previous
//! design, at its best c, 5). On dev: recall@50 204 of 209 against 202 (BM25: 199).
//!
//! Only the candidates are embedded, never the whole corpus; their embeddings are kept in a
//! bounded cache, since claims share candidates.

use super::embed::{cosine, EmbedError, Embedder};
use super::{Hit, Passage, PipelineError, Ranking};
use domain::ids::DocId;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// BM25 candidates re-ranked per claim.
pub const DEFAULT_POOL: usize = 200;
/// The fusion constant c, chosen on SciFact train (see the module's documentation): recall at
/// 10 fell as c grew (546, 544, 541, 540 of 564 for c = 1, 5, 10, 20) while recall at 50 and 20
/// stayed at 559 and 554.
pub const DEFAULT_RRF_K: f64 = 1.0;
/// Tokens read of a claim, a title + abstract or a sentence: all-MiniLM-L6-v2 was trained on
/// 128-token inputs (its tokenizer.json cuts there), and 128 costs less than half the CPU of 256
/// (73 against 168 ms per SciFact abstract on this machine).
pub const DEFAULT_TOKENS: usize = 128;
/// Abstracts whose embeddings are cached: each holds about 11 vectors of 384 floats (the whole
/// and its parts), so 10,000 take about 170 MB.
const CACHE_CAPACITY: usize = 10_000;

/// The dense re-ranker with its model and cache. `Send + Sync`.
pub struct HybridReranker {
    embedder: Embedder,
    pool: usize,
    rrf_k: f64,
    cache: Mutex<Cache>,
}

/// The embeddings of one abstract.
struct DocVectors {
    /// Of title + abstract.
    whole: Vec<f32>,
    /// Of each non-empty part: the title, then the sentences.
    parts: Vec<Vec<f32>>,
}

/// Each candidate's cosine similarity to the claim, in the BM25 ranking's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Similarities {
    /// To title + abstract.
    pub whole: Vec<f32>,
    /// The largest to one part (title or sentence); the whole's when the abstract has no part.
    pub best_part: Vec<f32>,
}

/// Document embeddings, oldest evicted first.
#[derive(Default)]
struct Cache {
    map: HashMap<DocId, Arc<DocVectors>>,
    order: VecDeque<DocId>,
}

impl Cache {
    fn insert(&mut self, doc_id: DocId, vectors: Arc<DocVectors>) {
        if self.map.insert(doc_id.clone(), vectors).is_none() {
            self.order.push_back(doc_id);
        }
        while self.order.len() > CACHE_CAPACITY {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
            }
        }
    }
}

/// The parts of a passage that are embedded one by one: its title and sentences, when not blank.
fn passage_parts(passage: &Passage) -> Vec<&str> {
    std::iter::once(passage.title.as_str())
        .chain(passage.sentences.iter().map(String::as_str))
        .filter(|part| !part.trim().is_empty())
        .collect()
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

    /// The cosine similarities of the claim to each candidate, in the ranking's order.
    pub fn similarities(
        &self,
        claim_text: &str,
        ranking: &Ranking,
        passages: &[Passage],
    ) -> Result<Similarities, EmbedError> {
        let claim = self
            .embedder
            .embed(&[claim_text])?
            .pop()
            .unwrap_or_default();
        let mut known: Vec<Option<Arc<DocVectors>>> = {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            ranking
                .hits
                .iter()
                .map(|hit| cache.map.get(&hit.doc_id).cloned())
                .collect()
        };
        let missing: Vec<usize> = (0..known.len()).filter(|&i| known[i].is_none()).collect();
        if !missing.is_empty() {
            let wholes: Vec<String> = missing.iter().map(|&i| passages[i].full_text()).collect();
            let parts: Vec<Vec<&str>> = missing
                .iter()
                .map(|&i| passage_parts(&passages[i]))
                .collect();
            let whole_refs: Vec<&str> = wholes.iter().map(String::as_str).collect();
            let part_refs: Vec<&str> = parts.iter().flatten().copied().collect();
            let mut whole_vectors = self.embedder.embed(&whole_refs)?.into_iter();
            let mut part_vectors = self.embedder.embed(&part_refs)?.into_iter();
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            for (&i, own_parts) in missing.iter().zip(&parts) {
                let vectors = Arc::new(DocVectors {
                    whole: whole_vectors.next().unwrap_or_default(),
                    parts: part_vectors.by_ref().take(own_parts.len()).collect(),
                });
                cache.insert(ranking.hits[i].doc_id.clone(), vectors.clone());
                known[i] = Some(vectors);
            }
        }
        let mut similarities = Similarities {
            whole: Vec::with_capacity(known.len()),
            best_part: Vec::with_capacity(known.len()),
        };
        for vectors in &known {
            let (whole, best_part) = vectors.as_deref().map_or((0.0, 0.0), |v| {
                let whole = cosine(&claim, &v.whole);
                let best = v
                    .parts
                    .iter()
                    .map(|part| cosine(&claim, part))
                    .reduce(f32::max)
                    .unwrap_or(whole);
                (whole, best)
            });
            similarities.whole.push(whole);
            similarities.best_part.push(best_part);
        }
        Ok(similarities)
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
        let order = fuse(&[&similarities.whole, &similarities.best_part], self.rrf_k);
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

/// The reciprocal-rank fusion of a BM25 ranking (the positions 0, 1, ... of each list in
/// `dense`) with the ranking by each list of similarities (highest first, ties by BM25
/// position): the positions, best fused first, ties by BM25 position. The lists have one value
/// per BM25 position.
pub fn fuse(dense: &[&[f32]], rrf_k: f64) -> Vec<usize> {
    let n = dense.first().map_or(0, |list| list.len());
    let mut fused: Vec<f64> = (0..n).map(|i| 1.0 / (rrf_k + (i + 1) as f64)).collect();
    for similarities in dense {
        let mut by_similarity: Vec<usize> = (0..n).collect();
        let value = |i: usize| similarities.get(i).copied().unwrap_or(f32::NEG_INFINITY);
        by_similarity.sort_by(|&a, &b| value(b).total_cmp(&value(a)).then(a.cmp(&b)));
        for (rank, &i) in by_similarity.iter().enumerate() {
            fused[i] += 1.0 / (rrf_k + (rank + 1) as f64);
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| fused[b].total_cmp(&fused[a]).then(a.cmp(&b)));
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
        assert_eq!(fuse(&[&sims], 1.0), [0, 3, 2, 1]);
        // c = 60: 0: 1/61+1/63 = .032266; 3: 1/64+1/61 = .032018; 2: 1/63+1/62 = .031902;
        // 1: 1/62+1/64 = .031754.
        assert_eq!(fuse(&[&sims], 60.0), [0, 3, 2, 1]);
        // Mirrored ranks tie; the tie goes to BM25's order.
        assert_eq!(fuse(&[&[0.1, 0.9]], 60.0), [0, 1]);
        // Equal similarities: dense ties follow BM25, so fusion keeps BM25's order.
        assert_eq!(fuse(&[&[0.3; 5]], 60.0), [0, 1, 2, 3, 4]);
        assert!(fuse(&[&[]], 60.0).is_empty());
        assert!(fuse(&[], 60.0).is_empty());
        // Two dense lists, c = 1; BM25 ranks positions 0, 1, 2 as 1, 2, 3.
        // List a ranks them 2, 3, 1; list b ranks them 3, 2, 1:
        // 0: 1/2 + 1/3 + 1/4 = 1.083; 1: 1/3 + 1/4 + 1/3 = .917; 2: 1/4 + 1/2 + 1/2 = 1.25.
        assert_eq!(fuse(&[&[0.5, 0.2, 0.9], &[0.1, 0.7, 0.8]], 1.0), [2, 0, 1]);
        // List b ranks them 1, 3, 2 instead:
        // 0: 1/2 + 1/3 + 1/2 = 1.333; 1: 1/3 + 1/4 + 1/4 = .833; 2: 1/4 + 1/2 + 1/3 = 1.083.
        assert_eq!(fuse(&[&[0.5, 0.2, 0.9], &[0.9, 0.1, 0.4]], 1.0), [0, 2, 1]);
    }
}
