//! Why a snapshot cannot be reported on.

use crate::ids::{ClaimId, DocId};
use crate::metrics::MetricsError;
use crate::pool::PoolError;

/// A snapshot the report refuses, naming the list and the pair at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReportError {
    /// The claim list names a claim twice.
    #[error("claims: claim {claim} is listed twice")]
    DuplicateClaim {
        /// The claim.
        claim: ClaimId,
    },
    /// A pair's claim is not a claim of the project.
    #[error("{list}: pair ({claim}, {doc}) has a claim that is not in the project's claim list")]
    UnknownClaim {
        /// The snapshot list the pair is in.
        list: String,
        /// The unknown claim.
        claim: ClaimId,
        /// The pair's document.
        doc: DocId,
    },
    /// A list that holds each pair at most once holds this one twice.
    #[error("{list}: pair ({claim}, {doc}) is given twice")]
    DuplicatePair {
        /// The snapshot list the pair is in.
        list: String,
        /// The pair's claim.
        claim: ClaimId,
        /// The pair's document.
        doc: DocId,
    },
    /// Citation evidence must be SUPPORT or CONTRADICT.
    #[error("citation evidence: pair ({claim}, {doc}) is labelled NEI")]
    NeiCitation {
        /// The pair's claim.
        claim: ClaimId,
        /// The pair's document.
        doc: DocId,
    },
    /// More distinct documents than `u32` keys can number.
    #[error("more than {max} distinct documents", max = u32::MAX)]
    TooManyDocuments,
    /// A system list the pool refuses (empty or repeated name, a pair scored twice, a
    /// non-finite score).
    #[error("systems: {0}")]
    Pool(#[from] PoolError),
    /// An evaluation the metrics refuse.
    #[error("evaluation: {0}")]
    Metrics(#[from] MetricsError),
    /// A thread testing the significance of the systems' differences stopped (panicked).
    #[error("the significance tests between systems stopped before they finished")]
    SignificanceStopped,
}
