//! Where annotators agree and where they do not (issue 16): Cohen's κ for each pair of
//! annotators, Krippendorff's α over all of them, the same by pool-depth band, by pooled system
//! and by stage pair, and how well the rationale sentences agree. Computed by `domain::report`
//! with `domain::metrics` (server only); plain data here, for the browser too.
//!
//! Every figure carries its sample size; a figure that is undefined (no pair, or chance
//! agreement 1 / expected disagreement 0) is `None`, never 0 or NaN.

use serde::{Deserialize, Serialize};

/// Cohen's κ between two coders over the units both labelled (SUPPORT, CONTRADICT, NEI).
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Kappa {
    /// Units labelled by both.
    pub n: u64,
    /// Share of those units given the same label, p_o; `None` when `n` is 0.
    pub observed_agreement: Option<f64>,
    /// Agreement expected by chance from the two coders' label shares, p_e; `None` when `n`
    /// is 0.
    pub expected_agreement: Option<f64>,
    /// (p_o − p_e) / (1 − p_e); `None` when `n` is 0 or p_e is 1.
    pub kappa: Option<f64>,
}

/// Krippendorff's α for nominal data (Krippendorff 2011, the coincidence-matrix form): any
/// number of coders per unit, missing values allowed; a unit with fewer than two values is not
/// pairable and does not count.
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Alpha {
    /// Pairable units: units with at least two values.
    pub units: u64,
    /// Pairable values, n: the values in pairable units.
    pub values: u64,
    /// D_o = (1/n) Σ_{c≠k} o_ck; `None` without a pairable unit.
    pub observed_disagreement: Option<f64>,
    /// D_e = (1/(n(n−1))) Σ_{c≠k} n_c n_k; `None` without a pairable unit.
    pub expected_disagreement: Option<f64>,
    /// 1 − D_o / D_e; `None` without a pairable unit or when D_e is 0 (a single value used).
    pub alpha: Option<f64>,
}

/// Cohen's κ of two annotators, named by user name (`a` before `b`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnotatorPair {
    pub a: String,
    pub b: String,
    #[serde(flatten)]
    pub kappa: Kappa,
}

/// The figures of one group of pairs (a depth band, a system's contribution).
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct GroupAgreement {
    /// Cohen's κ of the first against the second pass.
    pub first_vs_second: Kappa,
    /// Krippendorff's α over the annotators' first- and second-pass labels.
    pub alpha: Alpha,
}

/// The pairs whose entry depth (the best rank any pooled system gives them) lies in
/// `from..=to`; `to` is `None` for the pairs outside the current pool (beyond its depth, or
/// ranked by no pooled system).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DepthBand {
    pub from: u32,
    pub to: Option<u32>,
    #[serde(flatten)]
    pub agreement: GroupAgreement,
}

/// The pairs a pooled system contributed: those in its own top `depth` (the pool's strategy).
/// A pair several systems rank that high counts for each of them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SystemAgreement {
    pub system: String,
    #[serde(flatten)]
    pub agreement: GroupAgreement,
}

/// Agreement of the rationale sentences on the pairs where both stages gave the same
/// evidence label (SUPPORT or CONTRADICT). A label's rationale is the union of its evidence
/// sets.
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct RationaleAgreement {
    /// Pairs both stages labelled with the same evidence label.
    pub pairs: u64,
    /// Of those, pairs where at least one side chose a sentence (F1 is undefined otherwise).
    pub f1_pairs: u64,
    /// Mean over `f1_pairs` of the per-pair F1 (Dice) of the two sentence sets:
    /// 2 |A ∩ B| / (|A| + |B|); `None` when `f1_pairs` is 0.
    pub mean_f1: Option<f64>,
    /// Krippendorff's α over the binary decisions "this sentence is a rationale", every
    /// sentence of the abstract of each of the `pairs` being a unit with two values.
    pub sentence_alpha: Alpha,
}

/// Two annotation stages compared over the pairs both labelled (each stage's latest label).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StagePair {
    /// `first` or `second`.
    pub a: String,
    /// `second` or `adjudication`.
    pub b: String,
    pub kappa: Kappa,
    /// α over the same pairs, the two stages as coders.
    pub alpha: Alpha,
    pub rationale: RationaleAgreement,
}

/// Where annotators agree, and where they do not.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Reliability {
    /// Cohen's κ of each pair of annotators over the pairs both labelled in the first or the
    /// second pass (each annotator's latest label on a pair), pairs with n ≥ 1, by name.
    pub annotator_pairs: Vec<AnnotatorPair>,
    /// Krippendorff's α over every annotator's first- and second-pass labels: units are
    /// claim/document pairs, coders are annotators. Adjudication is left out (the adjudicator
    /// sees both labels); it is compared in `by_stage`.
    pub alpha: Alpha,
    /// By the depth bands of the depth curve (its step), shallowest first.
    pub by_depth: Vec<DepthBand>,
    /// By pooled system, in report order.
    pub by_system: Vec<SystemAgreement>,
    /// First vs second, first vs adjudication, second vs adjudication.
    pub by_stage: Vec<StagePair>,
}
