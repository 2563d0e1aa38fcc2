//! Tests: hand-made cases with figures worked out by hand, and randomized cases where every
//! number is checked against the naive computation (`naive`, `check`).

mod agreement;
mod check;
// The report benchmark's generated project (crates/benchdata), for the randomized tests; they use
// its generator, not the rest.
#[allow(dead_code)]
#[path = "../../../../benchdata/src/report.rs"]
mod generated;
mod hand_made;
mod naive;
mod randomized;
mod real_data;
mod significance;

use crate::ids::{ClaimId, DocId};
use crate::label::{Label, Probability};
use crate::metrics::{BootstrapSamples, Confidence, Prediction};
use crate::pool::Pair;
use crate::report::{PairId, ReportOptions, SystemPrediction};
use std::num::NonZeroU32;

pub fn pair(claim: &str, doc: &str) -> PairId {
    Pair::new(ClaimId::parse(claim).unwrap(), DocId::parse(doc).unwrap())
}

/// A labelled prediction (no probabilities).
pub fn labelled(claim: &str, doc: &str, label: Label, confidence: f64) -> SystemPrediction {
    SystemPrediction {
        pair: pair(claim, doc),
        prediction: Prediction::Labelled { label },
        confidence: Confidence::new(confidence).unwrap(),
        retrieval_rank: None,
    }
}

/// A prediction with probabilities.
pub fn scored(
    claim: &str,
    doc: &str,
    label: Label,
    p_support: f64,
    p_contradict: f64,
    confidence: f64,
) -> SystemPrediction {
    SystemPrediction {
        pair: pair(claim, doc),
        prediction: Prediction::Scored {
            label,
            p_support: Probability::new(p_support).unwrap(),
            p_contradict: Probability::new(p_contradict).unwrap(),
        },
        confidence: Confidence::new(confidence).unwrap(),
        retrieval_rank: None,
    }
}

pub fn options(step: u32, samples: u32, seed: u64) -> ReportOptions {
    ReportOptions {
        step: NonZeroU32::new(step).unwrap(),
        ..ReportOptions::new(BootstrapSamples::new(samples).unwrap(), seed)
    }
}
