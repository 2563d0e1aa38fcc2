//! An annotator's own judgments in a project (their history page): what they answered, when,
//! and whether they undid it; never another person's label.

use super::annotate::LastSubmission;
use serde::{Deserialize, Serialize};

/// Rows a history page holds.
pub const HISTORY_PAGE_SIZE: usize = 50;
/// The longest text filter, in characters.
pub const MAX_FILTER_CHARS: usize = 200;

/// Which of one's judgments a history page lists; each part narrows it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HistoryFilter {
    /// SUPPORT, CONTRADICT or NEI.
    pub label: Option<String>,
    /// first, second or adjudication.
    pub stage: Option<String>,
    /// Words the claim, the claim id, the title or the document id holds (case-insensitive).
    pub text: Option<String>,
    /// Judgments one undid are listed too.
    pub with_undone: bool,
}

/// One's judgment of a pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryRow {
    pub judgment_id: i64,
    pub claim_id: String,
    pub claim: String,
    pub doc_id: String,
    pub title: String,
    /// first, second or adjudication.
    pub stage: String,
    pub label: String,
    /// The first pass's "clearly no evidence".
    pub no_evidence: bool,
    /// Rationale sentences (1-based, as the page numbers them), evidence sets merged.
    pub sentences: Vec<u32>,
    pub specificity: Option<String>,
    pub at_ms: i64,
    /// One undid it: it no longer counts.
    pub undone: bool,
}

/// A page of one's judgments, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryPage {
    pub project: String,
    pub rows: Vec<HistoryRow>,
    /// Judgments the filter lets through, on every page.
    pub total: i64,
    /// 0-based.
    pub page: usize,
    pub pages: usize,
    /// The submission one may still undo (the queue's own), if any.
    pub last: Option<LastSubmission>,
    /// The server's clock when answering (ms), against which the page counts the undo window.
    pub server_ms: i64,
}

/// Pages `total` rows fill (at least one, so an empty list still has its page).
pub fn page_count(total: i64) -> usize {
    usize::try_from(total)
        .unwrap_or(0)
        .div_ceil(HISTORY_PAGE_SIZE)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_hold_fifty_rows() {
        assert_eq!(page_count(0), 1);
        assert_eq!(page_count(1), 1);
        assert_eq!(page_count(50), 1);
        assert_eq!(page_count(51), 2);
        assert_eq!(page_count(-3), 1);
    }
}
