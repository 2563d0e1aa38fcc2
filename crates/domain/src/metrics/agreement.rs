//! Agreement between annotators: Cohen's κ between two passes or two annotators over the same
//! pairs ([`Agreement`], [`kappa`]), Krippendorff's nominal α over any number of coders with
//! missing values ([`nominal_alpha`]), and the agreement of rationale sentences
//! ([`sentence_f1`], [`sentence_decisions`]).

mod alpha;
mod rationale;
#[cfg(test)]
mod tests;

pub use alpha::nominal_alpha;
pub use rationale::{sentence_decisions, sentence_f1};

use super::confusion::ConfusionMatrix;
use super::scores::ratio;
use crate::label::Label;
use crate::model::agreement::Kappa;
use serde::{Deserialize, Serialize};

/// Observed agreement, chance agreement and Cohen's kappa over the three labels.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct Agreement {
    /// Pairs labelled by both passes (at least 1).
    pub pairs: u64,
    /// Fraction of pairs given the same label, p_o.
    pub observed_agreement: f64,
    /// Agreement expected by chance from the two passes' label frequencies,
    /// p_e = sum over labels of (first-pass share * second-pass share).
    pub expected_agreement: f64,
    /// Cohen's kappa (p_o - p_e) / (1 - p_e). `None` when p_e = 1: both passes gave one and the
    /// same label to every pair, so kappa is 0/0 (p_o is then 1 too).
    pub kappa: Option<f64>,
    /// First pass in rows, second pass in columns.
    pub confusion: ConfusionMatrix,
}

impl Agreement {
    /// Agreement over (first pass label, second pass label) pairs; `None` when there are none.
    pub fn from_labels(pairs: impl IntoIterator<Item = (Label, Label)>) -> Option<Agreement> {
        Agreement::from_confusion(pairs.into_iter().collect())
    }

    /// Agreement from a confusion matrix of the two passes; `None` when it is empty.
    pub fn from_confusion(confusion: ConfusionMatrix) -> Option<Agreement> {
        let n = confusion.total();
        if n == 0 {
            return None;
        }
        let rows = confusion.row_totals();
        let columns = confusion.column_totals();
        // In integers, so the degenerate case p_e = 1 is detected exactly.
        let chance: u128 = rows
            .iter()
            .zip(&columns)
            .map(|(&r, &c)| u128::from(r) * u128::from(c))
            .sum();
        let n_squared = u128::from(n) * u128::from(n);
        let observed = ratio(confusion.agreeing(), n);
        let expected = chance as f64 / n_squared as f64;
        let kappa = (chance != n_squared).then(|| (observed - expected) / (1.0 - expected));
        Some(Agreement {
            pairs: n,
            observed_agreement: observed,
            expected_agreement: expected,
            kappa,
            confusion,
        })
    }

    /// Observed agreement in percent.
    pub fn percent_agreement(&self) -> f64 {
        100.0 * self.observed_agreement
    }
}

/// Cohen's κ over (first coder's label, second coder's label) pairs, with its sample size: all
/// `None` but `n` = 0 when there are none.
pub fn kappa(pairs: impl IntoIterator<Item = (Label, Label)>) -> Kappa {
    match Agreement::from_labels(pairs) {
        Some(a) => Kappa {
            n: a.pairs,
            observed_agreement: Some(a.observed_agreement),
            expected_agreement: Some(a.expected_agreement),
            kappa: a.kappa,
        },
        None => Kappa::default(),
    }
}
