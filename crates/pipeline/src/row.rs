//! One row of a generated run: a scored claim/abstract pair.

use domain::ids::{ClaimId, DocId};
use domain::label::{Label, Probability};
use serde::{Deserialize, Serialize};

/// A claim/abstract pair as a generated run reports it. Serialises with exactly the field names
/// of claimpool's canonical run JSONL, one object per line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub claim_id: ClaimId,
    pub doc_id: DocId,
    pub predicted_label: Label,
    pub p_support: Probability,
    pub p_contradict: Probability,
    pub p_nei: Probability,
    /// 1-based retrieval rank of the abstract for the claim.
    pub rank: u32,
    /// Indices (0-based) of the abstract's sentences given as rationale; empty when the system
    /// predicts none.
    pub sentences: Vec<u32>,
}
