//! Test-only, deliberately naive re-implementations of the metrics on plain strings, written
//! without any of the module's code paths (no per-claim counts, no ranking, no weights), so the
//! tests compare two independent computations.

use super::{Confidence, Gold, Prediction, Run, RunPair};
use crate::ids::{ClaimId, DocId};
use crate::label::{Label, Probability};
use std::collections::HashMap;

/// A pair as the tests write it.
#[derive(Clone, Debug)]
pub struct RawPair {
    pub claim: String,
    pub doc: String,
    /// Stated label; `None` for a label-less run.
    pub label: Option<Label>,
    /// (p_support, p_contradict), when the run gives them.
    pub probs: Option<(f64, f64)>,
    pub confidence: f64,
}

/// A gold as the tests write it: claims, and evidence (SUPPORT/CONTRADICT) pairs.
#[derive(Clone, Debug, Default)]
pub struct RawGold {
    pub claims: Vec<String>,
    pub evidence: Vec<(String, String, Label)>,
}

impl RawGold {
    fn labels(&self) -> HashMap<(&str, &str), Label> {
        self.evidence
            .iter()
            .map(|(c, d, l)| ((c.as_str(), d.as_str()), *l))
            .collect()
    }

    pub fn build(&self) -> Gold {
        Gold::new(
            self.claims
                .iter()
                .map(|c| ClaimId::parse(c.as_str()).unwrap()),
            self.evidence.iter().map(|(c, d, l)| {
                (
                    ClaimId::parse(c.as_str()).unwrap(),
                    DocId::parse(d.as_str()).unwrap(),
                    *l,
                )
            }),
        )
        .unwrap()
    }
}

pub fn build_run(pairs: &[RawPair]) -> Run {
    Run::new(pairs.iter().map(|p| RunPair {
        claim: ClaimId::parse(p.claim.as_str()).unwrap(),
        doc: DocId::parse(p.doc.as_str()).unwrap(),
        prediction: match (p.label, p.probs) {
            (None, _) => Prediction::Unlabelled,
            (Some(label), None) => Prediction::Labelled { label },
            (Some(label), Some((s, c))) => Prediction::Scored {
                label,
                p_support: Probability::new(s).unwrap(),
                p_contradict: Probability::new(c).unwrap(),
            },
        },
        confidence: Confidence::new(p.confidence).unwrap(),
    }))
    .unwrap()
}

/// (precision, recall, F1) by direct counting.
pub fn precision_recall_f1(gold: &RawGold, run: &[RawPair]) -> (f64, f64, f64) {
    let labels = gold.labels();
    let mut predicted = 0.0;
    let mut correct = 0.0;
    for pair in run {
        if pair.label == Some(Label::Nei) {
            continue;
        }
        predicted += 1.0;
        if let Some(&g) = labels.get(&(pair.claim.as_str(), pair.doc.as_str())) {
            if pair.label.is_none() || pair.label == Some(g) {
                correct += 1.0;
            }
        }
    }
    let total = gold.evidence.len() as f64;
    let p = if predicted > 0.0 {
        correct / predicted
    } else {
        0.0
    };
    let r = if total > 0.0 { correct / total } else { 0.0 };
    let f = if p == 0.0 && r == 0.0 {
        0.0
    } else {
        2.0 / (1.0 / p + 1.0 / r)
    };
    (p, r, f)
}

/// The precision/recall curve as an explicit list of (recall, precision) points, one per
/// distinct confidence, highest first: each point counts every pair at or above it.
pub fn curve(gold: &RawGold, run: &[RawPair]) -> Vec<(f64, f64)> {
    let labels = gold.labels();
    let hit = |pair: &RawPair| -> bool {
        let Some(&g) = labels.get(&(pair.claim.as_str(), pair.doc.as_str())) else {
            return false;
        };
        match (pair.probs, pair.label) {
            (Some((s, c)), _) => {
                (if c > s {
                    Label::Contradict
                } else {
                    Label::Support
                }) == g
            }
            (None, Some(label)) => label == g,
            (None, None) => true,
        }
    };
    let mut thresholds: Vec<f64> = run.iter().map(|p| p.confidence).collect();
    thresholds.sort_by(|a, b| b.partial_cmp(a).unwrap());
    thresholds.dedup();
    let total = gold.evidence.len() as f64;
    thresholds
        .iter()
        .map(|&t| {
            let above: Vec<&RawPair> = run.iter().filter(|p| p.confidence >= t).collect();
            let hits = above.iter().filter(|p| hit(p)).count() as f64;
            (hits / total, hits / above.len() as f64)
        })
        .collect()
}

/// AP = sum of (R_i - R_{i-1}) P_i over the explicit curve.
pub fn average_precision(gold: &RawGold, run: &[RawPair]) -> f64 {
    if gold.evidence.is_empty() {
        return 0.0;
    }
    let mut previous_recall = 0.0;
    let mut sum = 0.0;
    for (recall, precision) in curve(gold, run) {
        sum += (recall - previous_recall) * precision;
        previous_recall = recall;
    }
    sum
}

/// [precision, recall, F1, AP].
pub fn all_four(gold: &RawGold, run: &[RawPair]) -> [f64; 4] {
    let (p, r, f) = precision_recall_f1(gold, run);
    [p, r, f, average_precision(gold, run)]
}

/// Sample standard deviation, two-pass.
pub fn sample_sd(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// The resampled collection written out: claim `claim_order[i]` copied `weights[i]` times,
/// copy k renamed "<claim>x<k>", with all its gold and predicted pairs.
pub fn materialize(
    gold: &RawGold,
    run: &[RawPair],
    claim_order: &[ClaimId],
    weights: &[u32],
) -> (RawGold, Vec<RawPair>) {
    let mut out_gold = RawGold::default();
    let mut out_run = Vec::new();
    for (claim, &w) in claim_order.iter().zip(weights) {
        let claim = claim.as_str();
        for k in 0..w {
            let copy = format!("{claim}x{k}");
            out_gold.claims.push(copy.clone());
            for (c, d, l) in &gold.evidence {
                if c == claim {
                    out_gold.evidence.push((copy.clone(), d.clone(), *l));
                }
            }
            for p in run.iter().filter(|p| p.claim == claim) {
                out_run.push(RawPair {
                    claim: copy.clone(),
                    ..p.clone()
                });
            }
        }
    }
    (out_gold, out_run)
}
