//! Turning a BM25 ranking into run rows with calibrated probabilities.
//!
//! **Evidence probability.** BM25 scores are not comparable across claims: a long claim with
//! rare terms scores far higher than a short one, whatever the abstracts say. Pooling ranks
//! pairs across claims by confidence, so the scorer maps each hit to the probability that the
//! abstract is evidence for the claim with a logistic model of two features that are
//! comparable across claims and both rise with the score:
//!
//! - `share = score / ceiling`: the share of the claim's BM25 term weight the abstract matches
//!   (see [`Ranking::ceiling`]);
//! - `relative = score / top score`: how close the hit is to the claim's best hit.
//!
//! `p = σ(intercept + w_share · share + w_relative · relative)` with both weights ≥ 0, so `p`
//! never decreases with the score within a claim. The weights shipped
//! ([`Calibration::SCIFACT_TRAIN`]) are a maximum-likelihood fit on SciFact **train**: the top
//! [`FIT_DEPTH`] abstracts of all 809 train claims over the 5,183-abstract corpus, a hit being
//! positive when it is one of the claim's gold evidence abstracts ([`Calibration::fit`] refits
//! them; a test checks that the refit equals the shipped numbers). On SciFact dev (top 100 of
//! all 300 claims) they give 204.5 expected evidence pairs against 202 true ones, and ranking
//! the pooled pairs by `p` has an average precision of 0.56 against 0.29 by raw score; either
//! feature alone reaches 0.40-0.45. On another corpus the probabilities keep their order but
//! their level is SciFact's (a larger corpus has more near misses per claim).
//!
//! **Labels.** BM25 cannot tell support from contradiction, so the evidence probability is
//! split by the share π of SUPPORT among SciFact train evidence pairs (370 of 564,
//! [`LabelPrior::SCIFACT_TRAIN`]): `p_support = p · π`, `p_contradict = p · (1 - π)`,
//! `p_nei = 1 - p`. These are calibrated in the sense that, among pairs given `p`, a share
//! `p · π` should be supporting evidence, if stance does not depend on the BM25 score. The
//! predicted label is the most probable of the three (so NEI unless `p > 1 / (1 + π)`, about
//! 0.60), and a run's confidence, `max(p_support, p_contradict) = p · π`, orders pairs as `p`
//! does. A negation cue in the claim was considered and left out: on SciFact it shifts the
//! share of CONTRADICT from 0.32 to 0.67 on train but only from 0.33 to 0.45 on dev (20 pairs).
//! BM25 predicts no rationale: `sentences` is empty.

use super::error::PipelineError;
use super::retrieve::Ranking;
use super::row::RunRow;
use domain::ids::ClaimId;
use domain::label::{Label, Probability};

/// How many top abstracts per claim the shipped calibration was fitted on.
pub const FIT_DEPTH: usize = 100;

/// The two features of a hit, each in [0, 1] and non-decreasing in the score within a claim.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreFeatures {
    /// Score over the claim's ceiling.
    pub share: f64,
    /// Score over the claim's top score.
    pub relative: f64,
}

impl ScoreFeatures {
    /// The features of a hit with `score`, in a ranking with `ceiling` and top score `top`.
    /// A zero ceiling or top (no term, or no match) gives zero features.
    pub fn of(score: f32, ceiling: f32, top: f32) -> ScoreFeatures {
        let ratio = |over: f32| {
            if over > 0.0 {
                (f64::from(score) / f64::from(over)).clamp(0.0, 1.0)
            } else {
                0.0
            }
        };
        ScoreFeatures {
            share: ratio(ceiling),
            relative: ratio(top),
        }
    }

    /// The features of every hit of a ranking, in its order. The top score is the highest of
    /// the ranking (its first hit for BM25; a fused ranking may order hits otherwise).
    pub fn of_ranking(ranking: &Ranking) -> Vec<ScoreFeatures> {
        let top = ranking
            .hits
            .iter()
            .map(|hit| hit.score)
            .fold(0.0f32, f32::max);
        ranking
            .hits
            .iter()
            .map(|hit| ScoreFeatures::of(hit.score, ranking.ceiling, top))
            .collect()
    }

    fn vector(self) -> [f64; 3] {
        [1.0, self.share, self.relative]
    }
}

/// Why a calibration could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    #[error(
        "calibration weights must be finite and the feature weights non-negative \
         (got intercept {intercept}, share {share}, relative {relative})"
    )]
    Invalid {
        intercept: f64,
        share: f64,
        relative: f64,
    },
    #[error(
        "cannot fit a calibration: the examples need both positives and negatives \
         ({positives} positive of {total})"
    )]
    OneClass { positives: usize, total: usize },
    #[error("the calibration fit did not converge in {0} Newton steps")]
    NotConverged(usize),
    #[error("cannot fit a calibration: the features do not vary (singular Hessian)")]
    Singular,
    #[error("the fitted calibration would not rise with the score: {0}")]
    NotMonotone(Box<CalibrationError>),
}

/// A logistic map from [`ScoreFeatures`] to the probability that a hit is evidence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    intercept: f64,
    share: f64,
    relative: f64,
}

/// Newton steps allowed in [`Calibration::fit`].
const MAX_NEWTON_STEPS: usize = 100;
/// The fit stops when no weight moves by more than this.
const NEWTON_TOLERANCE: f64 = 1e-9;
/// A Newton step is halved at most until it is this small a fraction of the full step.
const MIN_STEP_SCALE: f64 = 1e-6;
/// A tiny ridge on the Hessian, so separable or collinear data cannot make it singular.
const RIDGE: f64 = 1e-9;

impl Calibration {
    /// Fitted by [`Calibration::fit`] on SciFact train; see the module documentation.
    pub const SCIFACT_TRAIN: Calibration = Calibration {
        intercept: -14.306204491306488,
        share: 8.577452061953732,
        relative: 9.999246576340818,
    };

    /// A calibration with these weights; the feature weights must be non-negative.
    pub fn new(intercept: f64, share: f64, relative: f64) -> Result<Calibration, CalibrationError> {
        let valid = intercept.is_finite()
            && share.is_finite()
            && relative.is_finite()
            && share >= 0.0
            && relative >= 0.0;
        if valid {
            Ok(Calibration {
                intercept,
                share,
                relative,
            })
        } else {
            Err(CalibrationError::Invalid {
                intercept,
                share,
                relative,
            })
        }
    }

    /// The weights: intercept, share weight, relative weight.
    pub fn weights(&self) -> [f64; 3] {
        [self.intercept, self.share, self.relative]
    }

    /// The probability that a hit with these features is evidence, in (0, 1).
    pub fn p_evidence(&self, features: ScoreFeatures) -> f64 {
        logistic(dot(self.weights(), features.vector()))
    }

    /// Maximum-likelihood logistic regression of `evidence` on the features (Newton's method).
    /// Fails if the examples are all of one class, or if a fitted feature weight is negative.
    pub fn fit(examples: &[(ScoreFeatures, bool)]) -> Result<Calibration, CalibrationError> {
        let positives = examples.iter().filter(|(_, evidence)| *evidence).count();
        if positives == 0 || positives == examples.len() {
            return Err(CalibrationError::OneClass {
                positives,
                total: examples.len(),
            });
        }
        // Damped Newton from the base rate (the intercept alone): each step is halved until
        // it does not lower the log-likelihood, which is concave, so the fit cannot diverge.
        let base = positives as f64 / examples.len() as f64;
        let mut w = [(base / (1.0 - base)).ln(), 0.0, 0.0];
        let mut current = log_likelihood(examples, w);
        for _ in 0..MAX_NEWTON_STEPS {
            let mut gradient = [0.0; 3];
            let mut hessian = [[0.0; 3]; 3];
            for (features, evidence) in examples {
                let x = features.vector();
                let p = logistic(dot(w, x));
                let residual = if *evidence { 1.0 } else { 0.0 } - p;
                for i in 0..3 {
                    gradient[i] += residual * x[i];
                    for j in 0..3 {
                        hessian[i][j] += p * (1.0 - p) * x[i] * x[j];
                    }
                }
            }
            for (i, row) in hessian.iter_mut().enumerate() {
                row[i] += RIDGE;
            }
            let step = solve3(hessian, gradient).ok_or(CalibrationError::Singular)?;
            let mut scale = 1.0;
            let (next_w, next) = loop {
                let next_w = [0, 1, 2].map(|i| w[i] + scale * step[i]);
                let next = log_likelihood(examples, next_w);
                if next >= current || scale < MIN_STEP_SCALE {
                    break (next_w, next);
                }
                scale /= 2.0;
            };
            let moved = step.iter().map(|s| (scale * s).abs()).fold(0.0, f64::max);
            let stalled = next < current;
            if !stalled {
                w = next_w;
                current = next;
            }
            if moved < NEWTON_TOLERANCE || stalled {
                return Calibration::new(w[0], w[1], w[2])
                    .map_err(|err| CalibrationError::NotMonotone(Box::new(err)));
            }
        }
        Err(CalibrationError::NotConverged(MAX_NEWTON_STEPS))
    }
}

/// The share of SUPPORT among evidence pairs, used to split the evidence probability.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LabelPrior {
    /// In [0, 1].
    support: f64,
}

impl LabelPrior {
    /// SciFact train: 370 SUPPORT and 194 CONTRADICT claim/abstract pairs.
    pub const SCIFACT_TRAIN_COUNTS: (u64, u64) = (370, 194);

    /// The prior of SciFact train, from [`LabelPrior::SCIFACT_TRAIN_COUNTS`].
    pub const SCIFACT_TRAIN: LabelPrior = LabelPrior {
        support: Self::SCIFACT_TRAIN_COUNTS.0 as f64
            / (Self::SCIFACT_TRAIN_COUNTS.0 + Self::SCIFACT_TRAIN_COUNTS.1) as f64,
    };

    /// The prior of `support` SUPPORT and `contradict` CONTRADICT pairs; `None` if both are 0.
    pub fn from_counts(support: u64, contradict: u64) -> Option<LabelPrior> {
        let total = support.checked_add(contradict).filter(|total| *total > 0)?;
        Some(LabelPrior {
            support: support as f64 / total as f64,
        })
    }

    /// The share of SUPPORT among evidence pairs, in [0, 1].
    pub fn support(&self) -> f64 {
        self.support
    }
}

/// Scores a BM25 ranking into run rows; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bm25Scorer {
    calibration: Calibration,
    prior: LabelPrior,
}

impl Default for Bm25Scorer {
    /// [`Bm25Scorer::SCIFACT_TRAIN`].
    fn default() -> Self {
        Bm25Scorer::SCIFACT_TRAIN
    }
}

impl Bm25Scorer {
    /// A scorer with this calibration and label prior.
    pub fn new(calibration: Calibration, prior: LabelPrior) -> Bm25Scorer {
        Bm25Scorer { calibration, prior }
    }

    /// The scorer fitted on SciFact train.
    pub const SCIFACT_TRAIN: Bm25Scorer = Bm25Scorer {
        calibration: Calibration::SCIFACT_TRAIN,
        prior: LabelPrior::SCIFACT_TRAIN,
    };

    /// One row per hit of the claim's ranking, in rank order.
    pub fn score(
        &self,
        claim_id: &ClaimId,
        ranking: &Ranking,
    ) -> Result<Vec<RunRow>, PipelineError> {
        let features = ScoreFeatures::of_ranking(ranking);
        ranking
            .hits
            .iter()
            .zip(features)
            .map(|(hit, features)| {
                let p = self.calibration.p_evidence(features);
                let probability = |value: f64| {
                    Probability::new(value.clamp(0.0, 1.0)).map_err(|source| {
                        PipelineError::Probability {
                            claim_id: claim_id.clone(),
                            doc_id: hit.doc_id.clone(),
                            source,
                        }
                    })
                };
                let p_support = probability(p * self.prior.support)?;
                let p_contradict = probability(p * (1.0 - self.prior.support))?;
                let p_nei = probability(1.0 - p)?;
                Ok(RunRow {
                    claim_id: claim_id.clone(),
                    doc_id: hit.doc_id.clone(),
                    predicted_label: most_probable(p_support, p_contradict, p_nei),
                    p_support,
                    p_contradict,
                    p_nei,
                    rank: hit.rank,
                    sentences: Vec::new(),
                })
            })
            .collect()
    }
}

/// The label with the highest probability; ties go to SUPPORT, then CONTRADICT.
fn most_probable(support: Probability, contradict: Probability, nei: Probability) -> Label {
    let evidence = if support >= contradict {
        (Label::Support, support)
    } else {
        (Label::Contradict, contradict)
    };
    if evidence.1 >= nei {
        evidence.0
    } else {
        Label::Nei
    }
}

/// Log-likelihood of the examples under weights `w`, computed without overflow.
fn log_likelihood(examples: &[(ScoreFeatures, bool)], w: [f64; 3]) -> f64 {
    examples
        .iter()
        .map(|(features, evidence)| {
            let z = dot(w, features.vector());
            // ln σ(z) = -softplus(-z) and ln(1 - σ(z)) = -softplus(z).
            -softplus(if *evidence { -z } else { z })
        })
        .sum()
}

/// ln(1 + e^x), stable for large |x|.
fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

fn logistic(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Solves `a · x = b` by Gaussian elimination with partial pivoting; `None` if singular.
fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < f64::MIN_POSITIVE {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..3 {
            let factor = a[row][col] / a[col][col];
            let pivot_row = a[col];
            for (value, pivot_value) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *value -= factor * pivot_value;
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let rest: f64 = (row + 1..3).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    Some(x)
}
