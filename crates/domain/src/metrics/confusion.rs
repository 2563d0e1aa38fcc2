//! 3x3 label confusion matrices: a system against the gold, or one annotation pass against
//! another.

use super::error::MetricsError;
use super::gold::Gold;
use super::run::Run;
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use serde::{Deserialize, Serialize};

/// Counts of (row label, column label) pairs. Rows and columns follow [`Label::ALL`]:
/// SUPPORT, CONTRADICT, NEI. For a system, rows are gold labels and columns predicted labels;
/// for two annotation passes, rows are the first pass and columns the second.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct ConfusionMatrix {
    pub counts: [[u64; 3]; 3],
}

impl ConfusionMatrix {
    /// Counts one (row, column) pair.
    pub fn add(&mut self, row: Label, column: Label) {
        self.counts[position(row)][position(column)] += 1;
    }

    pub fn count(&self, row: Label, column: Label) -> u64 {
        self.counts[position(row)][position(column)]
    }

    /// All counted pairs.
    pub fn total(&self) -> u64 {
        self.counts.iter().flatten().sum()
    }

    /// Pairs whose row and column labels agree (the diagonal).
    pub fn agreeing(&self) -> u64 {
        (0..3).map(|i| self.counts[i][i]).sum()
    }

    /// Per label, in [`Label::ALL`] order: pairs with that row label.
    pub fn row_totals(&self) -> [u64; 3] {
        self.counts.map(|row| row.iter().sum())
    }

    /// Per label, in [`Label::ALL`] order: pairs with that column label.
    pub fn column_totals(&self) -> [u64; 3] {
        [0, 1, 2].map(|j| self.counts.iter().map(|row| row[j]).sum())
    }
}

impl FromIterator<(Label, Label)> for ConfusionMatrix {
    fn from_iter<I: IntoIterator<Item = (Label, Label)>>(pairs: I) -> Self {
        let mut matrix = ConfusionMatrix::default();
        for (row, column) in pairs {
            matrix.add(row, column);
        }
        matrix
    }
}

/// Index of a label in [`Label::ALL`].
fn position(label: Label) -> usize {
    match label {
        Label::Support => 0,
        Label::Contradict => 1,
        Label::Nei => 2,
    }
}

/// Gold labels (rows) against the run's stated labels (columns) over the given pairs (each item
/// counted once per occurrence). A pair the run does not list counts as predicted NEI.
///
/// Errors: a pair whose claim is not a gold claim; a pair the run lists without a label
/// (label-less runs have no confusion matrix).
pub fn label_confusion<'a>(
    gold: &Gold,
    run: &Run,
    pairs: impl IntoIterator<Item = (&'a ClaimId, &'a DocId)>,
) -> Result<ConfusionMatrix, MetricsError> {
    let mut matrix = ConfusionMatrix::default();
    for (claim, doc) in pairs {
        let gold_label =
            gold.label(claim, doc)
                .ok_or_else(|| MetricsError::PairClaimNotInGold {
                    claim: claim.clone(),
                    doc: doc.clone(),
                })?;
        let predicted = match run.get(claim, doc) {
            None => Label::Nei,
            Some(pair) => {
                pair.prediction
                    .label()
                    .ok_or_else(|| MetricsError::UnlabelledPrediction {
                        claim: claim.clone(),
                        doc: doc.clone(),
                    })?
            }
        };
        matrix.add(gold_label, predicted);
    }
    Ok(matrix)
}
