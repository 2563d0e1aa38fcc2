//! Pooling: which claim/document pairs to annotate (issue "build and grow the annotation pool").
//!
//! As SciFact-Open (Wadden et al. 2022, §3.1): each pooled system's pairs are ranked by
//! confidence across all claims and its top `d` enter the pool ([`Strategy::Confidence`]); or,
//! as TREC, each claim's top `d` ([`Strategy::PerClaim`]). Ties go to the lower retrieval rank
//! (missing last), then the lower claim key, then the lower doc key.
//!
//! Flow: check each run ([`SystemRun::new`]), sort it once ([`Ranking::add`]), then
//! [`Ranking::pool`] at a depth, [`Ranking::preview`] candidate depths, [`Pool::added_since`]
//! an existing pool, [`Pool::split_judged`] off judged pairs, and report [`Pool::stats`] and
//! [`Ranking::prior_evidence_stats`].
//!
//! Keys are generic ([`Key`]); the database layer passes `u32` keys ordered as the external ids.

mod build;
mod error;
mod fast_hash;
mod growth;
mod judged;
mod order;
mod pair;
mod ranking;
mod run;
mod stats;

#[cfg(test)]
mod tests;

pub use build::{ModelRank, Pool, PooledPair, SystemInfo};
pub use error::PoolError;
pub use fast_hash::FxHashMap;
pub use growth::DepthStep;
pub use judged::{split_judged, JudgedSplit};
pub use order::{RankedRun, Strategy};
pub use pair::{Key, Pair, PairSet};
pub use ranking::Ranking;
pub use run::{Role, Score, ScoredPair, SystemRun, UnknownRole};
pub use stats::{
    PoolStats, PriorEvidenceBySystem, PriorEvidenceStats, SystemContribution, SystemCountRow,
};
