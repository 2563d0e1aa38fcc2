//! The features of a (claim, abstract) pair for the label model: its sentences' predictions
//! pooled, the claim's overlap with the abstract, the retrieval rank and the claim's negation.

use super::features::{flag, Features};
use super::pair::DocFeatures;
use super::text::Cues;

// The features, by index.
pub(crate) const BIAS: usize = 0;
/// The highest rationale probability of the abstract's sentences.
pub(crate) const MAX_RATIONALE: usize = 1;
/// Mean of the two highest (the highest alone for a one-sentence abstract).
pub(crate) const TOP2_RATIONALE: usize = 2;
/// Logit of the highest, clamped to [-10, 10], over 10.
pub(crate) const MAX_RATIONALE_LOGIT: usize = 3;
/// Sentences with rationale probability ≥ 0.5, over 3, at most 1.
pub(crate) const RATIONALE_COUNT: usize = 4;
pub(crate) const ABSTRACT_SHARE: usize = 5;
pub(crate) const TITLE_SHARE: usize = 6;
/// 1 / retrieval rank.
pub(crate) const INVERSE_RANK: usize = 7;
/// ln(rank) / ln(100), at most 1.
pub(crate) const LOG_RANK: usize = 8;
/// 2 · P(support) − 1 of the most likely rationale sentence.
pub(crate) const STANCE_TOP: usize = 9;
/// The same, averaged over the three most likely rationale sentences, weighted by their
/// rationale probabilities.
pub(crate) const STANCE_WEIGHTED: usize = 10;
/// STANCE_TOP × MAX_RATIONALE.
pub(crate) const STANCE_BY_RATIONALE: usize = 11;
pub(crate) const CLAIM_NEGATED: usize = 12;
/// Number of features.
pub(crate) const DIMS: usize = 13;

/// Sentences pooled by [`STANCE_WEIGHTED`].
const STANCE_POOL: usize = 3;
/// Ranks are scaled by ln of this in [`LOG_RANK`].
const RANK_SCALE: f64 = 100.0;

/// What the sentence models say about one sentence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SentencePrediction {
    /// Probability that the sentence is a rationale for the claim.
    pub(crate) rationale: f64,
    /// Probability that it supports (rather than contradicts) the claim, were it a rationale.
    pub(crate) support: f64,
}

/// The label model's features of a (claim, abstract) pair: pooled sentence predictions, the
/// claim's overlap with the abstract, the retrieval rank (1-based) and the claim's negation.
pub(crate) fn pooled_features(
    predictions: &[SentencePrediction],
    doc: &DocFeatures,
    rank: u32,
    claim: Cues,
) -> Features {
    let mut sorted: Vec<SentencePrediction> = predictions.to_vec();
    sorted.sort_by(|x, y| y.rationale.total_cmp(&x.rationale));
    let mut dense = [0.0f32; DIMS];
    dense[BIAS] = 1.0;
    if let Some(top) = sorted.first() {
        let top2: Vec<f64> = sorted.iter().take(2).map(|p| p.rationale).collect();
        let pool = &sorted[..sorted.len().min(STANCE_POOL)];
        let weight: f64 = pool.iter().map(|p| p.rationale).sum();
        let stance_weighted = if weight > 0.0 {
            pool.iter()
                .map(|p| p.rationale * (2.0 * p.support - 1.0))
                .sum::<f64>()
                / weight
        } else {
            0.0
        };
        let stance_top = 2.0 * top.support - 1.0;
        dense[MAX_RATIONALE] = top.rationale as f32;
        dense[TOP2_RATIONALE] = (top2.iter().sum::<f64>() / top2.len() as f64) as f32;
        dense[MAX_RATIONALE_LOGIT] = (logit(top.rationale).clamp(-10.0, 10.0) / 10.0) as f32;
        dense[RATIONALE_COUNT] =
            (sorted.iter().filter(|p| p.rationale >= 0.5).count() as f32 / 3.0).min(1.0);
        dense[STANCE_TOP] = stance_top as f32;
        dense[STANCE_WEIGHTED] = stance_weighted as f32;
        dense[STANCE_BY_RATIONALE] = (stance_top * top.rationale) as f32;
    }
    dense[ABSTRACT_SHARE] = doc.abstract_share as f32;
    dense[TITLE_SHARE] = doc.title_share as f32;
    let rank = f64::from(rank.max(1));
    dense[INVERSE_RANK] = (1.0 / rank) as f32;
    dense[LOG_RANK] = (rank.ln() / RANK_SCALE.ln()).min(1.0) as f32;
    dense[CLAIM_NEGATED] = flag(claim.negated());
    let mut features = Features::default();
    features.push_dense(&dense);
    features
}

/// ln(p / (1 − p)), infinite at 0 and 1.
fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}
