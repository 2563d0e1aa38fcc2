//! `qrels.txt` (TREC relevance: 1 evidence, 0 judged NEI, and optionally -1 for pooled pairs
//! without a final label) and `qrels-labels.txt` (the final label of every judged pair), both
//! `claim_id 0 doc_id JUDGMENT`, in claim then doc order; and, when asked, `qrels-model.txt`
//! (model assessors' labels, apart).

use super::checked::{Checked, PairKey};
use super::input::{ReleaseInput, ReleaseOptions};
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Writes `qrels-model.txt`: `claim_id assessor doc_id SUPPORT|CONTRADICT|NEI`, every model
/// assessor's labels, by assessor name, then claim, then doc. Model labels never reach
/// [`relevance`] or [`labels`].
pub(crate) fn model(input: &ReleaseInput) -> Vec<u8> {
    let mut rows: Vec<(&str, &ClaimId, &DocId, Label)> = input
        .model_labels
        .iter()
        .flat_map(|a| {
            a.labels
                .iter()
                .map(move |(claim, doc, label)| (a.name.as_str(), claim, doc, *label))
        })
        .collect();
    rows.sort();
    let mut text = String::new();
    for (assessor, claim, doc, label) in rows {
        // Writing to a String cannot fail.
        let _ = writeln!(text, "{claim} {assessor} {doc} {label}");
    }
    text.into_bytes()
}

/// Writes `qrels.txt`.
pub(crate) fn relevance(release: &Checked<'_>, options: &ReleaseOptions) -> Vec<u8> {
    let mut grades: BTreeMap<PairKey<'_>, i8> = release
        .labels
        .iter()
        .map(|(&pair, label)| (pair, i8::from(label.label.is_evidence())))
        .collect();
    if options.qrels_unjudged {
        grades.extend(release.unjudged.iter().map(|&pair| (pair, -1)));
    }
    lines(grades.iter().map(|(pair, grade)| (*pair, grade)))
}

/// Writes `qrels-labels.txt`.
pub(crate) fn labels(release: &Checked<'_>) -> Vec<u8> {
    lines(
        release
            .labels
            .iter()
            .map(|(&pair, label)| (pair, label.label.as_str())),
    )
}

fn lines<'a, J: std::fmt::Display>(pairs: impl Iterator<Item = (PairKey<'a>, J)>) -> Vec<u8> {
    let mut text = String::new();
    for ((claim, doc), judgment) in pairs {
        // Writing to a String cannot fail.
        let _ = writeln!(text, "{claim} 0 {doc} {judgment}");
    }
    text.into_bytes()
}
