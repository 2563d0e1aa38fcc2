//! An annotator's figures on gold: accuracy, label confusion, rationale-sentence fit against
//! the reference, and drift over time.

use crate::label::Label;
use crate::model::gold::{DriftPoint, GoldFigures, RationaleFit};
use std::collections::BTreeSet;

/// One gold answer beside its item's reference.
#[derive(Clone, Debug, PartialEq)]
pub struct GoldResult {
    pub reference: Label,
    /// The reference's rationale sentences, all evidence sets together.
    pub reference_sentences: BTreeSet<u32>,
    /// The answer's label (NEI for "clearly no evidence").
    pub answer: Label,
    pub answer_sentences: BTreeSet<u32>,
    pub at_ms: i64,
}

impl GoldResult {
    pub fn correct(&self) -> bool {
        self.reference == self.answer
    }
}

fn index(label: Label) -> usize {
    Label::ALL.iter().position(|l| *l == label).unwrap_or(2)
}

fn share(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// The figures over `results` (any order).
pub fn score(results: &[GoldResult]) -> GoldFigures {
    let mut figures = GoldFigures::default();
    let mut fit = RationaleFit::default();
    for r in results {
        figures.answered += 1;
        figures.correct += u64::from(r.correct());
        figures.confusion[index(r.reference)][index(r.answer)] += 1;
        if r.reference.is_evidence() {
            fit.items += 1;
            fit.marked += r.answer_sentences.len() as u64;
            fit.reference += r.reference_sentences.len() as u64;
            fit.matched += r
                .answer_sentences
                .intersection(&r.reference_sentences)
                .count() as u64;
        }
    }
    figures.accuracy = share(figures.correct, figures.answered);
    fit.precision = share(fit.matched, fit.marked);
    fit.recall = share(fit.matched, fit.reference);
    fit.f1 = match (fit.precision, fit.recall) {
        (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    };
    figures.rationale = fit;
    figures
}

/// Accuracy over consecutive windows of `window` answers in time order (the last window may be
/// shorter); empty for no answers or a window of 0.
pub fn drift(results: &[GoldResult], window: usize) -> Vec<DriftPoint> {
    if window == 0 {
        return Vec::new();
    }
    let mut ordered: Vec<&GoldResult> = results.iter().collect();
    ordered.sort_by_key(|r| r.at_ms);
    ordered
        .chunks(window)
        .map(|chunk| {
            let correct = chunk.iter().filter(|r| r.correct()).count() as u64;
            let answered = chunk.len() as u64;
            DriftPoint {
                from_ms: chunk.first().map_or(0, |r| r.at_ms),
                to_ms: chunk.last().map_or(0, |r| r.at_ms),
                answered,
                correct,
                accuracy: correct as f64 / answered as f64,
            }
        })
        .collect()
}

/// Every sentence of a JSON rationale (an array of evidence sets, each an array of indices);
/// None when the text is not one.
pub fn sentences_of(rationale_json: &str) -> Option<BTreeSet<u32>> {
    let sets: Vec<Vec<u32>> = serde_json::from_str(rationale_json).ok()?;
    Some(sets.into_iter().flatten().collect())
}
