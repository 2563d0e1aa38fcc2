//! One claim/doc prediction of a system, and how confident the system is in it.

use crate::ids::{ClaimId, DocId};
use crate::label::{Label, Probability};

/// One claim/abstract pair of a run, in the terms every run format maps onto.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// The system, when the file names it (TREC tag, parquet `model`, canonical `system`).
    pub system: Option<String>,
    pub claim_id: ClaimId,
    pub doc_id: DocId,
    /// Predicted verdict; `None` for retrieval-only runs.
    pub label: Option<Label>,
    pub p_support: Option<Probability>,
    pub p_contradict: Option<Probability>,
    pub p_nei: Option<Probability>,
    /// A score (finite) when the run has one instead of, or besides, the probabilities.
    pub score: Option<f64>,
    /// Retrieval rank: from the file, or the 1-based position in the claim's dict or list.
    pub rank: Option<u32>,
    /// Predicted rationale sentences (0-based indices into the abstract).
    pub sentences: Option<Vec<u32>>,
}

impl RunRecord {
    /// A record of `claim_id`/`doc_id` with nothing else known.
    pub fn bare(claim_id: ClaimId, doc_id: DocId) -> RunRecord {
        RunRecord {
            system: None,
            claim_id,
            doc_id,
            label: None,
            p_support: None,
            p_contradict: None,
            p_nei: None,
            score: None,
            rank: None,
            sentences: None,
        }
    }

    /// How strongly the system claims this pair is evidence (SUPPORT or CONTRADICT).
    ///
    /// `max(p_support, p_contradict)` when both are given; else the score; else, for label-only
    /// runs, 1.0 for SUPPORT/CONTRADICT and 0.0 for NEI or no label, so that pooling (which breaks
    /// ties by retrieval rank, then claim id, then doc id) orders such runs by their own order.
    pub fn confidence(&self) -> f64 {
        match (self.p_support, self.p_contradict, self.score) {
            (Some(s), Some(c), _) => s.get().max(c.get()),
            (_, _, Some(score)) => score,
            _ => self.label_only_confidence(),
        }
    }

    /// The confidence a record with this label and no probabilities or score would have.
    fn label_only_confidence(&self) -> f64 {
        match self.label {
            Some(label) if label.is_evidence() => 1.0,
            _ => 0.0,
        }
    }
}

/// Whether a run's confidences rank its pairs, or only repeat its labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scoring {
    /// Confidences differ between pairs with the same label: they are real scores.
    Scores,
    /// Every pair with the same label has the same confidence (label-only runs, VeriSci runs whose
    /// confidence is constant, constant TREC scores): ranking falls to the run's order.
    Order,
}

/// Watches a run's records to tell its [`Scoring`]; keep one per system.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScoringTally {
    /// First confidence seen for SUPPORT, CONTRADICT, NEI and no label.
    first: [Option<f64>; 4],
    varies: bool,
}

impl ScoringTally {
    /// Takes one record into account.
    pub fn observe(&mut self, record: &RunRecord) {
        let slot = match record.label {
            Some(Label::Support) => 0,
            Some(Label::Contradict) => 1,
            Some(Label::Nei) => 2,
            None => 3,
        };
        let confidence = record.confidence();
        match self.first[slot] {
            None => self.first[slot] = Some(confidence),
            Some(first) => self.varies |= first != confidence,
        }
    }

    /// The scoring of the records seen so far.
    pub fn scoring(&self) -> Scoring {
        if self.varies {
            Scoring::Scores
        } else {
            Scoring::Order
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(label: Option<Label>) -> RunRecord {
        RunRecord {
            label,
            ..RunRecord::bare(ClaimId::parse("1").unwrap(), DocId::parse("2").unwrap())
        }
    }

    fn p(x: f64) -> Option<Probability> {
        Some(Probability::new(x).unwrap())
    }

    #[test]
    fn confidence_prefers_probabilities_then_score_then_label() {
        let mut r = record(Some(Label::Nei));
        assert_eq!(r.confidence(), 0.0);
        r.label = Some(Label::Contradict);
        assert_eq!(r.confidence(), 1.0);
        r.score = Some(0.25);
        assert_eq!(r.confidence(), 0.25);
        r.p_support = p(0.125);
        assert_eq!(r.confidence(), 0.25, "one probability alone is not used");
        r.p_contradict = p(0.625);
        assert_eq!(r.confidence(), 0.625);
        assert_eq!(record(None).confidence(), 0.0);
    }

    #[test]
    fn scoring_is_order_when_confidence_only_repeats_the_label() {
        let mut tally = ScoringTally::default();
        for label in [
            Label::Support,
            Label::Nei,
            Label::Support,
            Label::Contradict,
        ] {
            tally.observe(&record(Some(label)));
        }
        assert_eq!(tally.scoring(), Scoring::Order);
        let mut constant = record(None);
        constant.score = Some(3.0);
        tally.observe(&constant);
        tally.observe(&constant);
        assert_eq!(tally.scoring(), Scoring::Order);
        constant.score = Some(2.0);
        tally.observe(&constant);
        assert_eq!(tally.scoring(), Scoring::Scores);
    }
}
