//! Helpers shared by the pipeline tests.

use crate::{build_index, IndexDoc, Retriever};
use domain::ids::DocId;
use std::convert::Infallible;
use tempfile::TempDir;

/// A document with this id, title and sentences.
pub(crate) fn doc(id: &str, title: &str, sentences: &[&str]) -> IndexDoc {
    IndexDoc {
        doc_id: DocId::parse(id).unwrap(),
        title: title.to_owned(),
        sentences: sentences.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// Builds an index of `docs` in a fresh temporary directory and opens it.
pub(crate) fn index_of(docs: Vec<IndexDoc>) -> (TempDir, Retriever) {
    let dir = tempfile::tempdir().unwrap();
    build_index(
        dir.path(),
        docs.into_iter().map(Ok::<_, Infallible>),
        &|_| {},
    )
    .unwrap();
    let retriever = Retriever::open(dir.path()).unwrap();
    (dir, retriever)
}

/// Doc ids of hits, as text.
pub(crate) fn ids(hits: &[crate::Hit]) -> Vec<&str> {
    hits.iter().map(|hit| hit.doc_id.as_str()).collect()
}

/// BM25 as tantivy defines it (k1 = 1.2, b = 0.75, idf = ln(1 + (N - n + 0.5) / (n + 0.5)),
/// document lengths rounded to tantivy's one-byte field norms), computed from token lists.
pub(crate) struct BruteBm25 {
    docs: Vec<(DocId, std::collections::HashMap<String, u32>, f64)>,
    doc_freq: std::collections::HashMap<String, u64>,
    average_length: f64,
}

const K1: f64 = 1.2;
const B: f64 = 0.75;

impl BruteBm25 {
    /// From each document's id and analysed tokens.
    pub(crate) fn new(docs: Vec<(DocId, Vec<String>)>) -> BruteBm25 {
        use tantivy::fieldnorm::FieldNormReader;
        let total: usize = docs.iter().map(|(_, tokens)| tokens.len()).sum();
        let average_length = total as f64 / docs.len() as f64;
        let mut doc_freq = std::collections::HashMap::new();
        let docs = docs
            .into_iter()
            .map(|(id, tokens)| {
                let length = tokens.len() as u32;
                let stored =
                    FieldNormReader::id_to_fieldnorm(FieldNormReader::fieldnorm_to_id(length));
                let mut counts = std::collections::HashMap::new();
                for token in tokens {
                    *counts.entry(token).or_insert(0) += 1;
                }
                for token in counts.keys() {
                    *doc_freq.entry(token.clone()).or_insert(0u64) += 1;
                }
                (id, counts, f64::from(stored))
            })
            .collect();
        BruteBm25 {
            docs,
            doc_freq,
            average_length,
        }
    }

    fn idf(&self, term: &str) -> f64 {
        let n = self.docs.len() as f64;
        let df = *self.doc_freq.get(term).unwrap_or(&0) as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Every matching document's score for the query's (term, count) pairs, best first, ties
    /// by doc id.
    pub(crate) fn rank(&self, query: &[(String, u32)]) -> Vec<(DocId, f64)> {
        let mut scored: Vec<(DocId, f64)> = self
            .docs
            .iter()
            .filter_map(|(id, counts, length)| {
                let mut score = 0.0;
                let mut matched = false;
                for (term, count) in query {
                    if let Some(&tf) = counts.get(term) {
                        matched = true;
                        let tf = f64::from(tf);
                        let norm = K1 * (1.0 - B + B * length / self.average_length);
                        score += f64::from(*count) * self.idf(term) * (K1 + 1.0) * tf / (tf + norm);
                    }
                }
                matched.then(|| (id.clone(), score))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        scored
    }

    /// The query's ceiling: sum of count x idf x (k1 + 1).
    pub(crate) fn ceiling(&self, query: &[(String, u32)]) -> f64 {
        query
            .iter()
            .map(|(term, count)| f64::from(*count) * self.idf(term) * (K1 + 1.0))
            .sum()
    }
}
