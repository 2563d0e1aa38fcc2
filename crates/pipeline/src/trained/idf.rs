//! Document frequencies of the training corpus's terms, for BM25's inverse document frequency.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// Terms in fewer documents than this are not stored; they count as appearing in one document.
pub(crate) const MIN_STORED_DF: u32 = 2;

/// How many of a corpus's documents contain each term.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct DocFreq {
    documents: u64,
    /// Terms in at least [`MIN_STORED_DF`] documents (sorted, so the saved model is stable).
    df: BTreeMap<String, u32>,
}

impl DocFreq {
    /// Counts, for each term, the documents (each a list of terms, repeats allowed) holding it.
    pub(crate) fn count<D, S>(documents: impl IntoIterator<Item = D>) -> DocFreq
    where
        D: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut df: BTreeMap<String, u32> = BTreeMap::new();
        let mut count = 0u64;
        for terms in documents {
            count += 1;
            let distinct: HashSet<String> = terms
                .into_iter()
                .map(|term| term.as_ref().to_owned())
                .collect();
            for term in distinct {
                *df.entry(term).or_insert(0) += 1;
            }
        }
        df.retain(|_, n| *n >= MIN_STORED_DF);
        DocFreq {
            documents: count,
            df,
        }
    }

    /// The number of documents counted.
    pub(crate) fn documents(&self) -> u64 {
        self.documents
    }

    /// The number of terms stored.
    pub(crate) fn terms(&self) -> usize {
        self.df.len()
    }

    /// BM25's (and tantivy's) idf, `ln(1 + (N - n + 0.5) / (n + 0.5))`, with an unstored
    /// term's `n` taken as 1. Never negative.
    pub(crate) fn idf(&self, term: &str) -> f64 {
        let n = f64::from(self.df.get(term).copied().unwrap_or(1));
        let total = self.documents as f64;
        (1.0 + ((total - n).max(0.0) + 0.5) / (n + 0.5)).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_documents_not_occurrences_and_drops_rare_terms() {
        let df = DocFreq::count([
            vec!["cell", "cell", "mice"],
            vec!["cell", "rare"],
            vec!["mice", "cell"],
            vec![],
        ]);
        assert_eq!(df.documents(), 4);
        assert_eq!(df.terms(), 2);
        let idf = |n: f64| (1.0 + (4.0 - n + 0.5) / (n + 0.5)).ln();
        assert!((df.idf("cell") - idf(3.0)).abs() < 1e-12);
        assert!((df.idf("mice") - idf(2.0)).abs() < 1e-12);
        assert!((df.idf("rare") - idf(1.0)).abs() < 1e-12);
        assert!((df.idf("unseen") - idf(1.0)).abs() < 1e-12);
        assert!(df.idf("cell") < df.idf("mice"));
    }
}
