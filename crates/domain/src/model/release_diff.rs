//! What changed between two releases of a project (issue 17), as the CLI's JSON and the
//! releases-diff page read it: the judged pairs whose final label changed, that were added or
//! withdrawn, and each evaluated system's scores under both releases with the difference and
//! its paired bootstrap interval. Computed by `domain::release::diff` (server only); plain data
//! here, for the browser too.

use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use serde::{Deserialize, Serialize};

/// Release `b` against release `a` of one project. Differences are `b` minus `a`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReleaseDiff {
    /// The project, as release `b`'s manifest names it.
    pub project: String,
    /// The earlier release's number (the one compared against).
    pub a: u32,
    /// The later release's number.
    pub b: u32,
    /// Claims of each release.
    pub claims_a: u64,
    pub claims_b: u64,
    /// Claims of one release only (by id).
    pub claims_only_in_a: Vec<ClaimId>,
    pub claims_only_in_b: Vec<ClaimId>,
    /// Judged pairs of both releases whose final label differs, in (claim, doc) order.
    pub changed: Vec<LabelChange>,
    /// Pairs judged in `b` but not in `a` (with their label in `b`).
    pub added: Vec<PairLabel>,
    /// Pairs judged in `a` but not in `b` (with their label in `a`).
    pub withdrawn: Vec<PairLabel>,
    /// Every system either release evaluates (publishes a run of), by name.
    pub systems: Vec<SystemDiff>,
    /// The bootstrap behind the intervals.
    pub bootstrap: DiffBootstrap,
}

/// A pair whose final label changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelChange {
    pub claim: ClaimId,
    pub doc: DocId,
    /// The label in release `a`.
    pub old: Label,
    /// The label in release `b`.
    pub new: Label,
}

/// A judged pair and its final label.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairLabel {
    pub claim: ClaimId,
    pub doc: DocId,
    pub label: Label,
}

/// Precision, recall and F1 of a system against one release (the release's own claims, gold
/// and published run), as `claimpool eval` computes them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffScores {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

/// A difference `b - a` with its paired bootstrap 95% percentile interval over claims.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoreDifference {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// The differences of the three scores.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffDifferences {
    pub precision: ScoreDifference,
    pub recall: ScoreDifference,
    pub f1: ScoreDifference,
}

/// One system: its scores under each release that publishes its run, and, when both do, the
/// differences.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SystemDiff {
    pub system: String,
    pub under_a: Option<DiffScores>,
    pub under_b: Option<DiffScores>,
    pub difference: Option<DiffDifferences>,
}

/// How the intervals were drawn: resamples of the claims of either release, and the seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffBootstrap {
    pub samples: u32,
    pub seed: u64,
}

/// Resamples and seed when the caller gives none.
pub const DEFAULT_DIFF_SAMPLES: u32 = 1_000;
pub const DEFAULT_DIFF_SEED: u64 = 0;
