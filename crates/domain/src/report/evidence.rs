//! The evidence of the collection at the current depth (SciFact-Open §6): how many evidence
//! pairs the claims have, which claims have conflicting evidence, and the specificity relations.

use super::csv::{num, CsvTable};
use super::engine::{Discovered, Engine};
use super::prepared::Prepared;
use super::snapshot::{Snapshot, Specificity};
use crate::ids::ClaimId;
use crate::label::Label;
use serde::{Deserialize, Serialize};

/// The evidence at the current depth.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct EvidenceReport {
    /// The current pool depth.
    pub depth: u32,
    /// Citation evidence pairs.
    pub citation: u64,
    /// Evidence discovered by the pool.
    pub discovered: u64,
    /// All gold evidence pairs.
    pub total: u64,
    /// Claims by number of evidence pairs, from 0 to the largest number.
    pub claims_by_evidence_count: Vec<EvidenceCountRow>,
    /// Claims with both SUPPORT and CONTRADICT evidence, in id order.
    pub conflicting_claims: Vec<ClaimId>,
    /// Specificity relations noted, by relation.
    pub specificity: SpecificityCounts,
}

/// Claims with exactly `evidence_pairs` evidence pairs.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct EvidenceCountRow {
    /// Evidence pairs per claim.
    pub evidence_pairs: u64,
    /// Claims with exactly that many.
    pub claims: u64,
    /// Share of all claims with at most `evidence_pairs` evidence pairs (0 to 1).
    pub cumulative_share: f64,
}

/// How many times each specificity relation was noted.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct SpecificityCounts {
    /// [`Specificity::Matches`].
    pub matches: u64,
    /// [`Specificity::EvidenceMoreSpecific`].
    pub evidence_more_specific: u64,
    /// [`Specificity::EvidenceMoreGeneral`].
    pub evidence_more_general: u64,
    /// [`Specificity::CloselyRelated`].
    pub closely_related: u64,
}

impl SpecificityCounts {
    /// The count of `relation`.
    pub fn get(&self, relation: Specificity) -> u64 {
        match relation {
            Specificity::Matches => self.matches,
            Specificity::EvidenceMoreSpecific => self.evidence_more_specific,
            Specificity::EvidenceMoreGeneral => self.evidence_more_general,
            Specificity::CloselyRelated => self.closely_related,
        }
    }

    fn add(&mut self, relation: Specificity) {
        let slot = match relation {
            Specificity::Matches => &mut self.matches,
            Specificity::EvidenceMoreSpecific => &mut self.evidence_more_specific,
            Specificity::EvidenceMoreGeneral => &mut self.evidence_more_general,
            Specificity::CloselyRelated => &mut self.closely_related,
        };
        *slot += 1;
    }
}

/// Per claim: evidence pairs, and whether it has SUPPORT and CONTRADICT evidence.
#[derive(Clone, Copy, Default)]
struct ClaimEvidence {
    pairs: u64,
    support: bool,
    contradict: bool,
}

pub(super) fn evidence_report(
    snapshot: &Snapshot,
    prepared: &Prepared<'_>,
    engine: &Engine,
    discovered: &Discovered,
) -> EvidenceReport {
    let mut per_claim = vec![ClaimEvidence::default(); prepared.claims.len()];
    for (key, label) in engine.gold_evidence(discovered) {
        if let Some(claim) = per_claim.get_mut(key.claim as usize) {
            claim.pairs += 1;
            claim.support |= label == Label::Support;
            claim.contradict |= label == Label::Contradict;
        }
    }
    let most = per_claim.iter().map(|c| c.pairs).max().unwrap_or(0);
    let mut counts = vec![0_u64; most as usize + 1];
    for claim in &per_claim {
        counts[claim.pairs as usize] += 1;
    }
    let total_claims = per_claim.len();
    let mut cumulative = 0;
    let claims_by_evidence_count = if total_claims == 0 {
        Vec::new()
    } else {
        (0_u64..)
            .zip(counts)
            .map(|(evidence_pairs, claims)| {
                cumulative += claims;
                EvidenceCountRow {
                    evidence_pairs,
                    claims,
                    cumulative_share: cumulative as f64 / total_claims as f64,
                }
            })
            .collect()
    };
    let mut specificity = SpecificityCounts::default();
    for note in &snapshot.specificity {
        specificity.add(note.relation);
    }
    EvidenceReport {
        depth: prepared.depth,
        citation: discovered.gold - discovered.count,
        discovered: discovered.count,
        total: discovered.gold,
        claims_by_evidence_count,
        conflicting_claims: prepared
            .claims
            .iter()
            .zip(&per_claim)
            .filter(|(_, c)| c.support && c.contradict)
            .map(|(&claim, _)| claim.clone())
            .collect(),
        specificity,
    }
}

impl EvidenceReport {
    /// Claims by evidence count, the conflicting claims, and the specificity counts.
    pub fn csv_tables(&self) -> Vec<CsvTable> {
        let mut histogram = CsvTable::new(
            "evidence_per_claim",
            &["evidence_pairs", "claims", "cumulative_share"],
        );
        for row in &self.claims_by_evidence_count {
            histogram.push(vec![
                row.evidence_pairs.to_string(),
                row.claims.to_string(),
                num(row.cumulative_share),
            ]);
        }
        let mut conflicting = CsvTable::new("conflicting_claims", &["claim"]);
        for claim in &self.conflicting_claims {
            conflicting.push(vec![claim.as_str().to_owned()]);
        }
        let mut specificity = CsvTable::new("specificity", &["relation", "count"]);
        for &relation in Specificity::ALL {
            specificity.push(vec![
                relation.as_str().to_owned(),
                self.specificity.get(relation).to_string(),
            ]);
        }
        vec![histogram, conflicting, specificity]
    }
}
