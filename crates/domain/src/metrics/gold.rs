//! The reference labels: every claim of the collection, and its evidence pairs.

use super::error::MetricsError;
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The gold standard of a collection: the full claim list (claims without evidence included,
/// since they count in the bootstrap and in per-claim figures) and, per claim, the pairs labelled
/// SUPPORT or CONTRADICT. Every other (claim, doc) pair of a listed claim is NEI.
#[derive(Clone, Debug)]
pub struct Gold {
    /// Claims in [`ClaimId`] order; a claim's position is its index everywhere in this module.
    claims: Arc<[ClaimId]>,
    index: HashMap<ClaimId, u32>,
    /// Per claim index: its evidence docs (never NEI).
    evidence: Vec<BTreeMap<DocId, Label>>,
    /// Per claim index: how many evidence pairs it has.
    evidence_counts: Arc<[u64]>,
}

impl Gold {
    /// Builds the gold from the collection's claims and its labelled pairs.
    ///
    /// `labels` may hold NEI pairs too (e.g. every judged pair of a pool): they are checked for
    /// conflicts and then dropped, since an unlisted pair is NEI anyway. A pair given twice with
    /// the same label is kept once.
    ///
    /// Errors: a claim listed twice, a label for a claim not in `claims`, a pair given two
    /// different labels, more than `u32::MAX` claims.
    pub fn new(
        claims: impl IntoIterator<Item = ClaimId>,
        labels: impl IntoIterator<Item = (ClaimId, DocId, Label)>,
    ) -> Result<Gold, MetricsError> {
        let mut sorted: Vec<ClaimId> = claims.into_iter().collect();
        sorted.sort();
        if let Some(pair) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(MetricsError::DuplicateGoldClaim {
                claim: pair[0].clone(),
            });
        }
        let mut index = HashMap::with_capacity(sorted.len());
        for (position, claim) in sorted.iter().enumerate() {
            let position = u32::try_from(position).map_err(|_| MetricsError::TooManyClaims {
                count: sorted.len(),
            })?;
            index.insert(claim.clone(), position);
        }
        // Every given label, NEI included, so that NEI-vs-evidence conflicts are caught.
        let mut given: Vec<BTreeMap<DocId, Label>> = vec![BTreeMap::new(); sorted.len()];
        for (claim, doc, label) in labels {
            let Some(&position) = index.get(&claim) else {
                return Err(MetricsError::GoldLabelForUnknownClaim { claim, doc });
            };
            let docs = &mut given[position as usize];
            match docs.get(&doc) {
                Some(&first) if first != label => {
                    return Err(MetricsError::ConflictingGoldLabels {
                        claim,
                        doc,
                        first,
                        second: label,
                    });
                }
                Some(_) => {}
                None => {
                    docs.insert(doc, label);
                }
            }
        }
        let evidence: Vec<BTreeMap<DocId, Label>> = given
            .into_iter()
            .map(|mut docs| {
                docs.retain(|_, label| label.is_evidence());
                docs
            })
            .collect();
        let evidence_counts = evidence.iter().map(|docs| docs.len() as u64).collect();
        Ok(Gold {
            claims: sorted.into(),
            index,
            evidence,
            evidence_counts,
        })
    }

    /// The claims, in [`ClaimId`] order.
    pub fn claims(&self) -> &[ClaimId] {
        &self.claims
    }

    /// How many gold evidence (SUPPORT or CONTRADICT) pairs there are.
    pub fn evidence_count(&self) -> usize {
        self.evidence.iter().map(BTreeMap::len).sum()
    }

    /// The gold label of a pair: its evidence label, or NEI; `None` when the claim is not listed.
    pub fn label(&self, claim: &ClaimId, doc: &DocId) -> Option<Label> {
        self.claim_index(claim).map(|i| self.label_at(i, doc))
    }

    /// Every evidence pair, in claim then doc order.
    pub fn evidence(&self) -> impl Iterator<Item = (&ClaimId, &DocId, Label)> + '_ {
        self.claims
            .iter()
            .zip(&self.evidence)
            .flat_map(|(claim, docs)| docs.iter().map(move |(doc, &label)| (claim, doc, label)))
    }

    pub(crate) fn claim_index(&self, claim: &ClaimId) -> Option<u32> {
        self.index.get(claim).copied()
    }

    /// The index of the claim of a run's pair at `index`; an error naming the pair when its
    /// claim is not a gold claim.
    pub(crate) fn claim_index_of(
        &self,
        index: usize,
        pair: &super::run::RunPair,
    ) -> Result<u32, MetricsError> {
        self.claim_index(&pair.claim)
            .ok_or_else(|| MetricsError::RunClaimNotInGold {
                index,
                claim: pair.claim.clone(),
                doc: pair.doc.clone(),
            })
    }

    /// Gold label of `doc` for the claim at `index` (a value from [`Gold::claim_index`]).
    pub(crate) fn label_at(&self, index: u32, doc: &DocId) -> Label {
        self.evidence
            .get(index as usize)
            .and_then(|docs| docs.get(doc))
            .copied()
            .unwrap_or(Label::Nei)
    }

    pub(crate) fn shared_claims(&self) -> Arc<[ClaimId]> {
        Arc::clone(&self.claims)
    }

    pub(crate) fn shared_evidence_counts(&self) -> Arc<[u64]> {
        Arc::clone(&self.evidence_counts)
    }
}
