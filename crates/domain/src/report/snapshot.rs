//! What the report is computed from: a snapshot of one project, as the database layer reads it.

pub use crate::annotation::vocab::{Provenance, SecondPassMode, Specificity};
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use crate::metrics::{
    BootstrapSamples, BootstrapSamplesError, Confidence, MetricsError, Prediction, Run, RunPair,
};
use crate::pool::{Pair, Role, Strategy};
use serde::{Deserialize, Serialize};
use std::num::NonZeroU32;

/// A claim/document pair by external ids.
pub type PairId = Pair<ClaimId, DocId>;

/// Everything the lead report reads about one project. The fields are plain data; the report
/// checks them (unique claims, pairs and system names, known claims, evidence labels for
/// citations) when it is computed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Snapshot {
    /// Every claim of the project: the claim set of every evaluation.
    pub claims: Vec<ClaimId>,
    /// The evidence that came with the claims (cited abstracts): SUPPORT or CONTRADICT only.
    pub citation_evidence: Vec<LabelledPair>,
    /// Every system, pooled or evaluation-only, with all its predictions.
    pub systems: Vec<SystemSnapshot>,
    /// The pool as last built; `None` before the first build (the pool is then empty).
    pub pool: Option<PoolSetting>,
    /// The final label of every judged pair (at most one per pair).
    pub final_labels: Vec<FinalLabel>,
    /// Specificity relations noted on judged pairs (at most one per pair).
    pub specificity: Vec<SpecificityNote>,
    /// Every annotation that stands (retracted judgments left out), in any order.
    pub annotations: Vec<AnnotationRecord>,
    /// Whether second-pass annotators saw the first label.
    pub second_pass_mode: SecondPassMode,
}

impl Snapshot {
    /// Each system's predictions as a metrics [`Run`], in the order of `systems` (refused, with
    /// the pair, when a system predicts a pair twice).
    pub fn runs(&self) -> Result<Vec<Run>, MetricsError> {
        self.systems
            .iter()
            .map(|system| {
                Run::new(system.predictions.iter().map(|p| RunPair {
                    claim: p.pair.claim.clone(),
                    doc: p.pair.doc.clone(),
                    prediction: p.prediction,
                    confidence: p.confidence,
                }))
            })
            .collect()
    }
}

/// A pair with a label.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct LabelledPair {
    /// The claim and the document.
    #[serde(flatten)]
    pub pair: PairId,
    /// SUPPORT or CONTRADICT.
    pub label: Label,
}

/// One system and its predictions.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SystemSnapshot {
    /// Unique within the project.
    pub name: String,
    /// Whether its top pairs are pooled.
    pub role: Role,
    /// Every prediction, each pair at most once.
    pub predictions: Vec<SystemPrediction>,
}

/// One prediction of a system.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct SystemPrediction {
    /// The claim and the document.
    #[serde(flatten)]
    pub pair: PairId,
    /// Stated label and probabilities (or none, for a label-less run).
    pub prediction: Prediction,
    /// The pooling and average-precision order: higher first.
    pub confidence: Confidence,
    /// The document's rank in the system's retrieval list for the claim (1 = first).
    pub retrieval_rank: Option<u32>,
}

/// How the project's pool is built.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct PoolSetting {
    /// How each system's pairs are ranked.
    pub strategy: Strategy,
    /// Pairs pooled per system (confidence) or per system and claim (per-claim).
    pub depth: NonZeroU32,
}

/// The final label of a judged pair and where it came from.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct FinalLabel {
    /// The claim and the document.
    #[serde(flatten)]
    pub pair: PairId,
    /// The label the pair ends with.
    pub label: Label,
    /// Where the label came from.
    pub provenance: Provenance,
}

/// A specificity relation noted on a pair.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct SpecificityNote {
    /// The claim and the document.
    #[serde(flatten)]
    pub pair: PairId,
    /// How the evidence relates to the claim.
    pub relation: Specificity,
}

/// The annotation stage a label was given in.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The first annotator's label.
    First,
    /// The second annotator's label (seeing the first in confirm mode).
    Second,
    /// The adjudicator's label, after the two passes disagree.
    Adjudication,
}

impl Stage {
    /// Every stage, in workflow order.
    pub const ALL: [Stage; 3] = [Stage::First, Stage::Second, Stage::Adjudication];

    /// The database spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::First => "first",
            Stage::Second => "second",
            Stage::Adjudication => "adjudication",
        }
    }
}

/// One label an annotator gave a pair. A later record of the same annotator, pair and stage
/// (an edit) replaces the earlier one's label; its time adds up.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct AnnotationRecord {
    /// The claim and the document.
    #[serde(flatten)]
    pub pair: PairId,
    /// The stage the label was given in.
    pub stage: Stage,
    /// The annotator's user name.
    pub annotator: String,
    /// The label given.
    pub label: Label,
    /// Time spent on the item, when recorded.
    pub seconds: Option<Seconds>,
    /// When the label was given: milliseconds since the epoch (UTC).
    pub at_ms: i64,
    /// The evidence sentences chosen with the label, and the abstract's length.
    #[serde(default)]
    pub rationale: Rationale,
}

/// The sentences an annotator chose as evidence: the union of the label's evidence sets.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct Rationale {
    /// Sentence indices (from 0), sorted, distinct; empty for NEI.
    pub sentences: Vec<u32>,
    /// Sentences in the document's abstract.
    pub abstract_sentences: u32,
}

/// A duration in seconds: finite and not negative.
#[derive(Clone, Copy, PartialEq, PartialOrd, Debug, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Seconds(f64);

/// A duration that is negative, NaN or infinite.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0} is not a duration in seconds (a finite number, at least 0)")]
pub struct SecondsError(pub f64);

impl Seconds {
    /// Accepts a finite number ≥ 0 (-0.0 is stored as 0.0).
    pub fn new(value: f64) -> Result<Seconds, SecondsError> {
        if value.is_finite() && value >= 0.0 {
            Ok(Seconds(value + 0.0))
        } else {
            Err(SecondsError(value))
        }
    }

    /// The duration in seconds.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for Seconds {
    type Error = SecondsError;
    fn try_from(value: f64) -> Result<Seconds, SecondsError> {
        Seconds::new(value)
    }
}

impl From<Seconds> for f64 {
    fn from(seconds: Seconds) -> f64 {
        seconds.0
    }
}

/// How the report is computed.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct ReportOptions {
    /// Distance between the depths of the depth curve (which ends at the current depth).
    pub step: NonZeroU32,
    /// Bootstrap resamples for the systems' standard deviations.
    pub bootstrap_samples: BootstrapSamples,
    /// Seed of the bootstrap and of the sampled system orderings.
    pub seed: u64,
    /// Orderings sampled for the system-count curve when more than
    /// [`EXACT_ORDERINGS_UP_TO`] systems are pooled (fewer are enumerated exactly).
    pub ordering_samples: NonZeroU32,
    /// Permutations of the randomization test between each pair of systems (0: no test, every
    /// p-value 1).
    #[serde(default = "default_permutations")]
    pub permutations: u32,
}

fn default_permutations() -> u32 {
    super::significance::DEFAULT_PERMUTATIONS
}

/// Up to this many pooled systems, the system-count curve averages over every ordering.
pub const EXACT_ORDERINGS_UP_TO: usize = 8;

/// The default depth step of the depth curve.
pub const DEFAULT_STEP: NonZeroU32 = nonzero(25);

/// The default number of sampled orderings (beyond [`EXACT_ORDERINGS_UP_TO`] pooled systems).
pub const DEFAULT_ORDERING_SAMPLES: NonZeroU32 = nonzero(1_000);

/// The default number of bootstrap resamples.
pub const DEFAULT_BOOTSTRAP_SAMPLES: u32 = 1_000;

const fn nonzero(n: u32) -> NonZeroU32 {
    match NonZeroU32::new(n) {
        Some(n) => n,
        None => NonZeroU32::MIN,
    }
}

/// Report options a caller gave that cannot be used, naming the option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportOptionsError {
    /// The depth step is 0.
    #[error("step: the depth step is at least 1")]
    Step,
    /// Fewer than 2 bootstrap resamples.
    #[error("bootstrap: {0}")]
    Bootstrap(#[from] BootstrapSamplesError),
    /// More bootstrap resamples than the caller allows.
    #[error("bootstrap: at most {max} resamples, got {got}")]
    TooManyResamples {
        /// The caller's limit.
        max: u32,
        /// What was asked.
        got: u32,
    },
}

impl ReportOptions {
    /// [`DEFAULT_STEP`] and [`DEFAULT_ORDERING_SAMPLES`], with `bootstrap_samples` (usually
    /// [`DEFAULT_BOOTSTRAP_SAMPLES`]) and `seed`.
    pub fn new(bootstrap_samples: BootstrapSamples, seed: u64) -> ReportOptions {
        ReportOptions {
            step: DEFAULT_STEP,
            bootstrap_samples,
            seed,
            ordering_samples: DEFAULT_ORDERING_SAMPLES,
            permutations: super::significance::DEFAULT_PERMUTATIONS,
        }
    }

    /// Options from plain numbers, as a command line or a query string gives them: a depth step
    /// of at least 1, and 2 to `max_bootstrap` bootstrap resamples.
    pub fn parse(
        step: u32,
        bootstrap_samples: u32,
        seed: u64,
        max_bootstrap: u32,
    ) -> Result<ReportOptions, ReportOptionsError> {
        let step = NonZeroU32::new(step).ok_or(ReportOptionsError::Step)?;
        if bootstrap_samples > max_bootstrap {
            return Err(ReportOptionsError::TooManyResamples {
                max: max_bootstrap,
                got: bootstrap_samples,
            });
        }
        Ok(ReportOptions {
            step,
            ..ReportOptions::new(BootstrapSamples::new(bootstrap_samples)?, seed)
        })
    }
}
