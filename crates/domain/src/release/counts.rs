//! The figures a release reports in its manifest and datasheet.

use super::checked::Checked;
use crate::annotation::Provenance;
use crate::label::Label;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// What a release holds, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReleaseCounts {
    pub claims: u64,
    /// Claims with at least one SUPPORT or CONTRADICT pair.
    pub claims_with_evidence: u64,
    /// Pairs whose final label is SUPPORT or CONTRADICT.
    pub evidence_pairs: u64,
    pub evidence_by_label: EvidenceByLabel,
    pub evidence_by_provenance: ByProvenance,
    /// Pairs with a final label, NEI included.
    pub judged_pairs: u64,
    /// Judged pairs whose final label is NEI.
    pub nei_pairs: u64,
    /// Pooled pairs without a final label.
    pub unjudged_pooled_pairs: u64,
    /// Documents in `corpus_candidates.jsonl`.
    pub documents: u64,
    pub specificity_notes: u64,
    /// Runs published under `runs/`.
    pub runs: u64,
    /// Pairs over all published runs.
    pub run_pairs: u64,
}

/// Evidence pairs by final label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EvidenceByLabel {
    #[serde(rename = "SUPPORT")]
    pub support: u64,
    #[serde(rename = "CONTRADICT")]
    pub contradict: u64,
}

/// Evidence pairs by where their label came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ByProvenance {
    pub citation: u64,
    pub pooling: u64,
    pub import: u64,
}

impl ReleaseCounts {
    pub(crate) fn of(release: &Checked<'_>) -> ReleaseCounts {
        let mut counts = ReleaseCounts {
            claims: release.claims.len() as u64,
            judged_pairs: release.labels.len() as u64,
            unjudged_pooled_pairs: release.unjudged.len() as u64,
            documents: release.documents.len() as u64,
            specificity_notes: release.specificity.len() as u64,
            runs: release.runs.len() as u64,
            run_pairs: release.runs.values().map(|r| r.records.len() as u64).sum(),
            ..ReleaseCounts::default()
        };
        let mut with_evidence = BTreeSet::new();
        for ((claim, _), label) in &release.labels {
            match label.label {
                Label::Nei => {
                    counts.nei_pairs += 1;
                    continue;
                }
                Label::Support => counts.evidence_by_label.support += 1,
                Label::Contradict => counts.evidence_by_label.contradict += 1,
            }
            counts.evidence_pairs += 1;
            with_evidence.insert(*claim);
            let by = &mut counts.evidence_by_provenance;
            match label.provenance {
                Provenance::Citation => by.citation += 1,
                Provenance::Pooling => by.pooling += 1,
                Provenance::Import => by.import += 1,
            }
        }
        counts.claims_with_evidence = with_evidence.len() as u64;
        counts
    }
}
