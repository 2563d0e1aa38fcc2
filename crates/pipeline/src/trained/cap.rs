//! How many abstracts of one claim the trained scorer calls evidence.
//!
//! The label model judges each (claim, abstract) pair alone, but a claim's candidates compete:
//! in SciFact train, 468 of the 505 claims with evidence have exactly one evidence abstract and
//! none has more than four. A model trained without sampled negatives (R = 0) has hardly seen a
//! retrieved abstract that is not evidence and calls several per claim evidence (on SciFact
//! dev's top 50: 1,077 pairs for 300 claims, 529 of them below rank 5 with 10 correct). So a
//! claim's predicted evidence is capped at what the training claims had: the smallest m such
//! that at least [`EVIDENCE_COVERAGE`] of the training claims with evidence have at most m
//! evidence abstracts (2 on SciFact train). Only the predicted labels change: probabilities,
//! ranks and hence the confidence ranking (what pooling and average precision read) stay.

use crate::RunRow;
use domain::label::Label;

/// Share of the training claims with evidence whose evidence count the cap must cover.
pub const EVIDENCE_COVERAGE: f64 = 0.95;

/// The smallest m such that at least [`EVIDENCE_COVERAGE`] of `counts` (evidence abstracts per
/// training claim with evidence; zeros are ignored) are at most m; `None` without such a claim.
pub(crate) fn evidence_cap(counts: impl IntoIterator<Item = usize>) -> Option<u32> {
    let mut counts: Vec<usize> = counts.into_iter().filter(|&n| n > 0).collect();
    if counts.is_empty() {
        return None;
    }
    counts.sort_unstable();
    // The ceil(coverage · n)-th smallest count (1-based) covers that share.
    let needed = (EVIDENCE_COVERAGE * counts.len() as f64).ceil() as usize;
    let index = needed.clamp(1, counts.len()) - 1;
    u32::try_from(counts[index]).ok()
}

/// Keeps SUPPORT / CONTRADICT for at most `cap` of one claim's `rows`: the most confident
/// (max(p_support, p_contradict)), ties to the better retrieval rank; the others become NEI
/// without rationale.
pub(crate) fn cap_evidence(rows: &mut [RunRow], cap: u32) {
    let mut evidence: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].predicted_label.is_evidence())
        .collect();
    let confidence = |row: &RunRow| row.p_support.get().max(row.p_contradict.get());
    evidence.sort_by(|&a, &b| {
        confidence(&rows[b])
            .total_cmp(&confidence(&rows[a]))
            .then(rows[a].rank.cmp(&rows[b].rank))
    });
    for &i in evidence.iter().skip(cap as usize) {
        rows[i].predicted_label = Label::Nei;
        rows[i].sentences.clear();
    }
}
