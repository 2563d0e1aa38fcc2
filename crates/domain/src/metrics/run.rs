//! A system's output: scored (claim, doc) pairs, with or without a predicted label.

use super::error::MetricsError;
use crate::ids::{ClaimId, DocId};
use crate::label::{Label, Probability};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// How sure a system is of a pair, on any scale where larger means more confident: a finite
/// number (computed upstream, e.g. max(p_support, p_contradict) or a retrieval score).
/// -0.0 is stored as 0.0, so equal values are exactly the tied values.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Confidence(f64);

/// A confidence that is NaN or infinite.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("confidence {0} is not a finite number")]
pub struct ConfidenceError(pub f64);

impl Confidence {
    /// Accepts any finite number.
    pub fn new(value: f64) -> Result<Confidence, ConfidenceError> {
        if value.is_finite() {
            // Adding +0.0 turns -0.0 into +0.0 and leaves every other value unchanged.
            Ok(Confidence(value + 0.0))
        } else {
            Err(ConfidenceError(value))
        }
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

impl PartialEq for Confidence {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Confidence {}

impl Ord for Confidence {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl PartialOrd for Confidence {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl TryFrom<f64> for Confidence {
    type Error = ConfidenceError;
    fn try_from(value: f64) -> Result<Confidence, ConfidenceError> {
        Confidence::new(value)
    }
}

impl From<Confidence> for f64 {
    fn from(c: Confidence) -> f64 {
        c.0
    }
}

/// What a run says about a pair.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Prediction {
    /// A label-less run (TREC-style ranking): the pair is retrieved, with no verdict. It counts
    /// as predicted evidence and is judged label-agnostically.
    Unlabelled,
    /// A verdict without probabilities.
    Labelled { label: Label },
    /// A verdict with the probabilities the system gave support and contradiction.
    Scored {
        label: Label,
        p_support: Probability,
        p_contradict: Probability,
    },
}

impl Prediction {
    /// The run's stated verdict (`None` for a label-less run). Precision, recall, F1 and the
    /// confusion matrix use this label.
    pub fn label(self) -> Option<Label> {
        match self {
            Prediction::Unlabelled => None,
            Prediction::Labelled { label } | Prediction::Scored { label, .. } => Some(label),
        }
    }

    /// Whether the pair counts as predicted evidence: a SUPPORT or CONTRADICT verdict, or no
    /// verdict at all (label-less run).
    pub fn claims_evidence(self) -> bool {
        self.label().is_none_or(Label::is_evidence)
    }

    /// The label a point of the precision/recall curve is judged with: the larger of
    /// `p_support` and `p_contradict` when the run gives them (SUPPORT when they are equal,
    /// whatever the stated label, and never NEI); otherwise the stated label (which may be
    /// NEI); `None` for a label-less run, which any gold evidence label matches.
    pub fn best_label(self) -> Option<Label> {
        match self {
            Prediction::Unlabelled => None,
            Prediction::Labelled { label } => Some(label),
            Prediction::Scored {
                p_support,
                p_contradict,
                ..
            } => Some(if p_support.get() >= p_contradict.get() {
                Label::Support
            } else {
                Label::Contradict
            }),
        }
    }
}

/// One pair of a run.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct RunPair {
    pub claim: ClaimId,
    pub doc: DocId,
    pub prediction: Prediction,
    pub confidence: Confidence,
}

/// A system's pairs, each (claim, doc) at most once, in the order given.
#[derive(Clone, Debug, Default)]
pub struct Run {
    pairs: Vec<RunPair>,
    /// claim -> doc -> position in `pairs`.
    index: HashMap<ClaimId, HashMap<DocId, usize>>,
}

impl Run {
    /// Collects a run's pairs; fails on a (claim, doc) pair given twice.
    pub fn new(pairs: impl IntoIterator<Item = RunPair>) -> Result<Run, MetricsError> {
        let mut run = Run::default();
        for pair in pairs {
            let position = run.pairs.len();
            match run
                .index
                .entry(pair.claim.clone())
                .or_default()
                .entry(pair.doc.clone())
            {
                Entry::Occupied(first) => {
                    return Err(MetricsError::DuplicateRunPair {
                        index: position,
                        first_index: *first.get(),
                        claim: pair.claim,
                        doc: pair.doc,
                    });
                }
                Entry::Vacant(slot) => {
                    slot.insert(position);
                }
            }
            run.pairs.push(pair);
        }
        Ok(run)
    }

    /// The pairs, in the order given.
    pub fn pairs(&self) -> &[RunPair] {
        &self.pairs
    }

    /// The run's pair for (claim, doc), if it has one.
    pub fn get(&self, claim: &ClaimId, doc: &DocId) -> Option<&RunPair> {
        let position = *self.index.get(claim)?.get(doc)?;
        self.pairs.get(position)
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}
