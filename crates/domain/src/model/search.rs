//! Search and judge (issue 38) as the annotation page and the lead's claim page show it: a
//! page of the corpus search for a claim, each result marked when the caller judged its pair
//! or when it is pooled already. Nothing here names a system, a score or anyone's label.
//! Computed by the commands (`commands::search`); plain data here, for the browser too.

use serde::{Deserialize, Serialize};

/// Results a page holds.
pub const PAGE_SIZE: usize = 20;

/// The longest query searched, in characters.
pub const MAX_QUERY_CHARS: usize = 1_000;

/// A text with the query's words marked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marked {
    pub text: String,
    /// Byte ranges `(start, end)` of `text` holding a word of the query, in order, not
    /// overlapping, on character boundaries.
    pub marks: Vec<(usize, usize)>,
}

impl Marked {
    /// The text cut into runs, each with whether it is marked: what a page renders. Ranges
    /// that do not fit the text (out of order, past its end, inside a character) are dropped.
    pub fn runs(&self) -> Vec<(&str, bool)> {
        let mut runs = Vec::new();
        let mut at = 0;
        for &(start, end) in &self.marks {
            if start < at || end <= start {
                continue;
            }
            let (Some(before), Some(marked)) =
                (self.text.get(at..start), self.text.get(start..end))
            else {
                continue;
            };
            if !before.is_empty() {
                runs.push((before, false));
            }
            runs.push((marked, true));
            at = end;
        }
        if let Some(rest) = self.text.get(at..) {
            if !rest.is_empty() {
                runs.push((rest, false));
            }
        }
        runs
    }
}

/// One result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchResult {
    /// 1-based position over the whole result list.
    pub rank: u32,
    pub doc_id: String,
    pub title: Marked,
    pub snippet: Marked,
    /// The query's words the abstract or title holds, each once, in the query's order.
    pub matched_terms: Vec<String>,
    /// The paper's venue, year, authors and links, as far as the corpus line says.
    #[serde(default)]
    pub paper: super::paper::PaperMeta,
    /// The caller judged this pair already.
    pub judged_by_you: bool,
    /// The pair is in the pool (found before, or ranked by the pooled runs): it comes through
    /// the queue and cannot be added again.
    pub in_pool: bool,
}

/// A page of results for one claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchResults {
    /// The claim's id (the claims file's).
    pub claim_id: String,
    pub query: String,
    /// 0-based.
    pub page: usize,
    /// Pages there are (at most 500: the first 10,000 results).
    pub pages: usize,
    /// Abstracts that hold at least one of the query's words.
    pub total_hits: u64,
    pub results: Vec<SearchResult>,
}

/// What a search request gets: results, or how far the building of the corpus's index is
/// (the index is built from the database the first time anyone searches, and again after the
/// corpus changes).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SearchAnswer {
    Indexing { done: u64, total: u64 },
    Results(SearchResults),
}

/// A pair chosen from the results, to judge: it joins the pool as found by search.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FoundPair {
    /// The claim's id (the claims file's).
    pub claim_id: String,
    pub doc_id: String,
    /// The query as searched, and the result's rank in it.
    pub query: String,
    pub rank: u32,
    /// Seconds from opening the search to choosing the pair.
    pub seconds_searching: f64,
}

#[cfg(test)]
mod tests {
    use super::Marked;

    #[test]
    fn runs_cut_the_text_at_the_marks_and_drop_ranges_that_do_not_fit() {
        let marked = Marked {
            text: "Aspirin lowers fever in adults".into(),
            marks: vec![(0, 7), (15, 20), (3, 9), (28, 99)],
        };
        assert_eq!(
            marked.runs(),
            vec![
                ("Aspirin", true),
                (" lowers ", false),
                ("fever", true),
                (" in adults", false)
            ]
        );
        let accented = Marked {
            text: "né à Paris".into(),
            marks: vec![(1, 2), (7, 99)],
        };
        // (1, 2) cuts 'é' in two: dropped; (7, 99) ends past the text: dropped.
        assert_eq!(accented.runs(), vec![("né à Paris", false)]);
    }
}
