//! A run judged against the gold once: per-claim counts and the confidence-ranked pairs, ready
//! for the plain metrics, per-claim figures and every bootstrap resample.

use super::bootstrap::{self, BootstrapSamples, MetricsWithSd};
use super::by_claim::ClaimMetrics;
use super::error::MetricsError;
use super::gold::Gold;
use super::indexed::{sort_stable_each, IndexedRun, KnownDocs};
use super::run::{Confidence, Run};
use super::scores::{AveragePrecision, Metrics, PrecisionRecall};
use crate::ids::ClaimId;
use crate::label::Label;
use std::sync::Arc;

/// A run compared with a [`Gold`]. Building it costs one sort of the run; every figure after
/// that is a linear pass over integers.
#[derive(Clone, Debug)]
pub struct JudgedRun {
    claims: Arc<[ClaimId]>,
    /// Per claim index: gold evidence pairs.
    gold: Arc<[u64]>,
    /// Per claim index: pairs the run predicts as evidence.
    predicted: Vec<u64>,
    /// Per claim index: predicted pairs that are gold evidence with the same label.
    correct: Vec<u64>,
    ranking: Ranking,
}

/// The run's pairs ordered by confidence, highest first, as two parallel arrays.
#[derive(Clone, Debug, Default)]
struct Ranking {
    /// Claim index of each ranked pair.
    claim: Vec<u32>,
    /// Confidence of each ranked pair (non-increasing).
    confidence: Vec<f64>,
    /// Per ranked pair: [`HIT`] when it is a true positive of the precision/recall curve, and
    /// [`LAST`] when it is the last pair of its threshold (the next pair has a lower confidence).
    flags: Vec<u8>,
}

/// The pair is a true positive of the precision/recall curve.
const HIT: u8 = 1;
/// The pair closes its threshold: all pairs of equal confidence are in.
const LAST: u8 = 2;

impl JudgedRun {
    /// Judges every pair of `run` against `gold`. Fails when a pair's claim is not a gold claim.
    pub fn new(gold: &Gold, run: &Run) -> Result<JudgedRun, MetricsError> {
        JudgedRun::from_indexed(gold, &IndexedRun::of_run(gold, run)?)
    }

    /// Judges the pairs of an [`IndexedRun`] (indexed by `gold`'s claims) against `gold`.
    pub fn from_indexed(gold: &Gold, run: &IndexedRun<'_>) -> Result<JudgedRun, MetricsError> {
        run.check_gold(gold)?;
        let claim_count = gold.claims().len();
        let known = KnownDocs::new(gold, None);
        let mut predicted = vec![0u64; claim_count];
        let mut correct = vec![0u64; claim_count];
        let mut points: Vec<(Confidence, u32, bool)> = Vec::with_capacity(run.len());
        for pair in run.pairs() {
            let gold_label = known.get(pair.claim, pair.doc).label;
            let c = pair.claim as usize;
            if pair.claims_evidence() {
                predicted[c] += 1;
                if matches_gold(pair.label(), gold_label) {
                    correct[c] += 1;
                }
            }
            let hit = matches_gold(pair.best_label(), gold_label);
            points.push((pair.confidence, pair.claim, hit));
        }
        Ok(JudgedRun {
            claims: gold.shared_claims(),
            gold: gold.shared_evidence_counts(),
            predicted,
            correct,
            ranking: Ranking::new(points),
        })
    }

    /// Precision, recall, F1 and average precision over all the gold claims.
    pub fn metrics(&self) -> Metrics {
        self.evaluate(|_| 1)
    }

    /// The metrics with each claim counted `weights[claim]` times (claims in [`Gold::claims`]
    /// order): e.g. 0/1 weights restrict the figures to a subset of claims.
    pub fn metrics_weighted(&self, weights: &[u32]) -> Result<Metrics, MetricsError> {
        if weights.len() != self.claims.len() {
            return Err(MetricsError::WeightCount {
                expected: self.claims.len(),
                got: weights.len(),
            });
        }
        Ok(self.evaluate_weighted(weights))
    }

    /// Precision, recall and F1 of each gold claim, in claim order (claims the run ignores
    /// and claims without evidence included).
    pub fn by_claim(&self) -> Vec<ClaimMetrics> {
        (0..self.claims.len())
            .map(|c| {
                ClaimMetrics::from_counts(
                    self.claims[c].clone(),
                    self.correct[c],
                    self.predicted[c],
                    self.gold[c],
                )
            })
            .collect()
    }

    /// The metrics with their bootstrap standard deviations (see [`bootstrap::bootstrap`]).
    pub fn bootstrap(&self, samples: BootstrapSamples, seed: u64) -> MetricsWithSd {
        bootstrap::bootstrap_judged(std::slice::from_ref(self), samples, seed)
            .into_iter()
            .next()
            .unwrap_or_default()
    }

    /// Whether two judged runs were judged against the same gold (same claims, same evidence
    /// counts), so that the same claim resample means the same thing for both.
    pub(crate) fn same_gold(&self, other: &JudgedRun) -> bool {
        (Arc::ptr_eq(&self.claims, &other.claims) || self.claims == other.claims)
            && (Arc::ptr_eq(&self.gold, &other.gold) || self.gold == other.gold)
    }

    pub(crate) fn claim_count(&self) -> usize {
        self.claims.len()
    }

    /// Per claim index: (correct, predicted, gold evidence) counts.
    pub(crate) fn claim_counts(&self, claim: usize) -> (u64, u64, u64) {
        (self.correct[claim], self.predicted[claim], self.gold[claim])
    }

    /// The ranked pairs, highest confidence first: (claim index, confidence, hit).
    pub(crate) fn ranked(&self) -> impl Iterator<Item = (u32, f64, bool)> + '_ {
        self.ranking
            .claim
            .iter()
            .zip(&self.ranking.confidence)
            .zip(&self.ranking.flags)
            .map(|((&claim, &confidence), &flags)| (claim, confidence, flags & HIT != 0))
    }

    /// The metrics with claim weights; `weights` has one entry per gold claim.
    pub(crate) fn evaluate_weighted(&self, weights: &[u32]) -> Metrics {
        self.evaluate(|c| weights.get(c).map_or(0, |&w| u64::from(w)))
    }

    fn evaluate(&self, weight: impl Fn(usize) -> u64) -> Metrics {
        let (mut gold, mut predicted, mut correct) = (0u64, 0u64, 0u64);
        for c in 0..self.claims.len() {
            let w = weight(c);
            if w != 0 {
                gold += w * self.gold[c];
                predicted += w * self.predicted[c];
                correct += w * self.correct[c];
            }
        }
        let pr = PrecisionRecall::from_counts(correct, predicted, gold);
        Metrics {
            precision: pr.precision,
            recall: pr.recall,
            f1: pr.f1,
            average_precision: self.ranking.average_precision(gold, weight),
        }
    }
}

/// Whether a predicted label matches the gold label of a pair. NEI gold is never matched; a
/// missing prediction label (label-less run) matches any gold evidence.
pub(super) fn matches_gold(predicted: Option<Label>, gold: Label) -> bool {
    gold.is_evidence() && predicted.is_none_or(|label| label == gold)
}

impl Ranking {
    /// Sorts the (confidence, claim index, hit) points once, highest confidence first.
    fn new(points: Vec<(Confidence, u32, bool)>) -> Ranking {
        let mut ranking = Ranking {
            claim: Vec::with_capacity(points.len()),
            confidence: Vec::with_capacity(points.len()),
            flags: Vec::with_capacity(points.len()),
        };
        // Stable: tied pairs keep the run's order; it does not matter, ties enter together.
        sort_stable_each(
            points,
            |a, b| b.0.cmp(&a.0),
            |(confidence, claim, hit)| {
                ranking.claim.push(claim);
                ranking.confidence.push(confidence.get());
                ranking.flags.push(u8::from(hit) * HIT);
            },
        );
        let confidence = &ranking.confidence;
        for (i, flags) in ranking.flags.iter_mut().enumerate() {
            let last = confidence
                .get(i + 1)
                .is_none_or(|next| next.total_cmp(&confidence[i]).is_ne());
            if last {
                *flags |= LAST;
            }
        }
        ranking
    }

    /// AP = sum over thresholds of (R_i - R_{i-1}) * P_i, each pair counted `weight(claim)`
    /// times, with `gold` (weighted) evidence pairs as the recall denominator, so gold pairs the
    /// run never retrieves are missed recall. Only thresholds that raise recall contribute.
    fn average_precision(&self, gold: u64, weight: impl Fn(usize) -> u64) -> f64 {
        if gold == 0 {
            return 0.0;
        }
        let (mut retrieved, mut hits) = (0u64, 0u64);
        let mut ap = AveragePrecision::new(gold);
        for (&claim, &flags) in self.claim.iter().zip(&self.flags) {
            let w = weight(claim as usize);
            retrieved += w;
            hits += w * u64::from(flags & HIT);
            if flags & LAST != 0 {
                ap.close_threshold(hits, retrieved);
            }
        }
        ap.value()
    }
}
