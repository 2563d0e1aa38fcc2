//! `claims.jsonl` in the SciFact-Open format:
//! `{"id", "claim", "evidence": {doc_id: {"provenance", "label", "sentences", "model_ranks"}}}`.
//!
//! Every claim is listed, in claim order, with `evidence: {}` when it has none. Only final labels
//! SUPPORT and CONTRADICT are evidence (NEI pairs are absent; they are in the qrels), in doc
//! order. `sentences` is the sorted union of the pair's rationale sets (SciFact-Open keeps one
//! flat list). `provenance` is `citation` or `pooling`: imported labels are written as
//! `pooling` (see [`scifact_open`]). `model_ranks` maps each system to the
//! rank it gave the pair (keys sorted), and is `null` for citation evidence and for pairs no
//! system ranked.

use super::checked::Checked;
use super::error::ReleaseError;
use super::input::FinalLabel;
use super::json::{push_line, JsonId, OrderedMap};
use crate::annotation::Provenance;
use serde::Serialize;
use std::collections::BTreeMap;

const FILE: &str = "claims.jsonl";

#[derive(Serialize)]
struct Line<'a> {
    id: JsonId<'a>,
    claim: &'a str,
    evidence: OrderedMap<&'a str, Entry<'a>>,
}

#[derive(Serialize)]
struct Entry<'a> {
    provenance: &'static str,
    label: &'static str,
    sentences: Vec<u32>,
    model_ranks: Option<&'a BTreeMap<String, u32>>,
}

impl<'a> Entry<'a> {
    fn of(label: &'a FinalLabel) -> Entry<'a> {
        Entry {
            provenance: scifact_open(label.provenance),
            label: label.label.as_str(),
            sentences: flat_sentences(&label.sentences),
            model_ranks: match label.provenance {
                Provenance::Citation => None,
                Provenance::Pooling | Provenance::Import => label.model_ranks.as_ref(),
            },
        }
    }
}

/// The provenance SciFact-Open's `claims.jsonl` can express: `citation` or `pooling`. Imported
/// labels were judged outside claimpool, not found by citation, so they are written as `pooling`
/// (the manifest still counts them apart).
pub(crate) fn scifact_open(provenance: Provenance) -> &'static str {
    match provenance {
        Provenance::Citation => "citation",
        Provenance::Pooling | Provenance::Import => "pooling",
    }
}

/// The sorted union of rationale sets.
pub(crate) fn flat_sentences(sets: &[Vec<u32>]) -> Vec<u32> {
    let mut flat: Vec<u32> = sets.iter().flatten().copied().collect();
    flat.sort_unstable();
    flat.dedup();
    flat
}

/// Writes `claims.jsonl`.
pub(crate) fn write(release: &Checked<'_>) -> Result<Vec<u8>, ReleaseError> {
    let mut out = Vec::new();
    let mut labels = release.labels.iter().peekable();
    for (&claim, &text) in &release.claims {
        let mut evidence = Vec::new();
        // Labels are sorted by claim, like the claims: take this claim's run of them.
        while let Some((_, label)) = labels.next_if(|((c, _), _)| *c == claim) {
            if label.label.is_evidence() {
                evidence.push((label.doc.as_str(), Entry::of(label)));
            }
        }
        let line = Line {
            id: JsonId(claim.as_str()),
            claim: text,
            evidence: OrderedMap(evidence),
        };
        push_line(&mut out, FILE, &line)?;
    }
    Ok(out)
}
