//! The SciFact-Open figures computed the plain way, on strings, sharing no code with the metrics
//! module: counting for precision/recall/F1, one sorted pass for average precision, and
//! bootstrap resamples materialized as copies of claims.

use crate::label::Label;
use std::collections::{HashMap, HashSet};

/// A run pair as the tests see it.
#[derive(Clone, Debug)]
pub struct RefPair {
    pub claim: String,
    pub doc: String,
    pub label: Option<Label>,
    /// (p_support, p_contradict).
    pub probs: Option<(f64, f64)>,
    pub confidence: f64,
}

/// Claims and their evidence labels.
#[derive(Clone, Debug, Default)]
pub struct RefGold {
    pub claims: Vec<String>,
    pub evidence: HashMap<(String, String), Label>,
}

fn div(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

/// Pairs whose claim is a gold claim.
fn kept<'a>(gold: &RefGold, run: &'a [RefPair]) -> Vec<&'a RefPair> {
    let claims: HashSet<&str> = gold.claims.iter().map(String::as_str).collect();
    run.iter()
        .filter(|p| claims.contains(p.claim.as_str()))
        .collect()
}

/// Whether `label` (None: any) matches the gold evidence label of the pair.
fn hit(gold: &RefGold, pair: &RefPair, label: Option<Label>) -> bool {
    match gold.evidence.get(&(pair.claim.clone(), pair.doc.clone())) {
        None => false,
        Some(g) => label.is_none_or(|l| l == *g),
    }
}

/// [precision, recall, F1, average precision].
pub fn all_four(gold: &RefGold, run: &[RefPair]) -> [f64; 4] {
    let pairs = kept(gold, run);
    let total = gold.evidence.len() as f64;
    let mut predicted = 0.0;
    let mut correct = 0.0;
    for p in &pairs {
        if p.label != Some(Label::Nei) {
            predicted += 1.0;
            if hit(gold, p, p.label) {
                correct += 1.0;
            }
        }
    }
    let precision = div(correct, predicted);
    let recall = div(correct, total);
    let f1 = div(2.0 * precision * recall, precision + recall);
    // AP: thresholds at each distinct confidence, highest first.
    let mut sorted = pairs.clone();
    sorted.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    let (mut retrieved, mut hits, mut before, mut ap) = (0.0, 0.0, 0.0, 0.0);
    for (i, p) in sorted.iter().enumerate() {
        let best = match (p.probs, p.label) {
            (Some((s, c)), Some(_)) => Some(if s >= c {
                Label::Support
            } else {
                Label::Contradict
            }),
            (_, label) => label,
        };
        retrieved += 1.0;
        if hit(gold, p, best) {
            hits += 1.0;
        }
        let last = sorted
            .get(i + 1)
            .is_none_or(|n| n.confidence != p.confidence);
        if last && hits > before {
            ap += (hits - before) / total * (hits / retrieved);
            before = hits;
        }
    }
    [precision, recall, f1, ap]
}

/// The gold and run of one bootstrap resample: claim `claims[i]` drawn `weights[i]` times
/// becomes that many renamed copies, each with its evidence and its pairs.
pub fn materialize(
    gold: &RefGold,
    run: &[RefPair],
    claims: &[String],
    weights: &[u32],
) -> (RefGold, Vec<RefPair>) {
    let mut g = RefGold::default();
    let mut r = Vec::new();
    for (claim, &w) in claims.iter().zip(weights) {
        for k in 0..w {
            let copy = format!("{claim}~{k}");
            g.claims.push(copy.clone());
            for ((c, d), l) in &gold.evidence {
                if c == claim {
                    g.evidence.insert((copy.clone(), d.clone()), *l);
                }
            }
            for p in run.iter().filter(|p| &p.claim == claim) {
                r.push(RefPair {
                    claim: copy.clone(),
                    ..p.clone()
                });
            }
        }
    }
    (g, r)
}

/// Sample standard deviation.
pub fn sample_sd(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// Asserts two figures agree to 1e-9.
pub fn close(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() < 1e-9, "{what}: got {got}, want {want}");
}
