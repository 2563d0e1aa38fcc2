//! The report's section beyond the depth (issue 15), as the page and the command line's JSON
//! read it: a pool sample's design, Horvitz–Thompson estimates, the stopping test and the
//! planner. Computed by `domain::report::survey` (server only); plain data here, for the
//! browser too. The estimate, stopping and budget types have the JSON shape of
//! `domain::judging`'s (`Estimate`, `SystemEstimate`, `StoppingSample`, `StopDecision`,
//! `Budget`), which convert into them.

use serde::{Deserialize, Serialize};

/// An estimate with its standard error and 95% confidence interval `[low, high]`.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct EstimateView {
    pub value: f64,
    pub standard_error: f64,
    pub low: f64,
    pub high: f64,
}

/// One system's estimates over its retrieved set (`None`: undefined, see
/// `domain::judging::SystemEstimate`).
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct SystemEstimateView {
    pub retrieved: usize,
    pub evidence: EstimateView,
    pub precision: Option<EstimateView>,
    pub recall: Option<EstimateView>,
    pub f1: Option<EstimateView>,
}

/// The stopping test's counts: evidence found before the random sample (`K`), pairs unjudged
/// when it began (`N`), drawn (`n`) and the evidence drawn (`k`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct StoppingCounts {
    pub found: u64,
    pub unjudged: u64,
    pub drawn: u64,
    pub drawn_evidence: u64,
}

/// The stopping test's outcome: its p-value, whether judging may stop, and the least evidence
/// the unjudged pairs held were recall below the target.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct StopVerdict {
    pub p_value: f64,
    pub stop: bool,
    pub null_remaining: u64,
}

/// Judgments, the evidence they find and the annotator-hours they take.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct BudgetView {
    pub judgments: usize,
    pub evidence: usize,
    pub hours: f64,
}

/// One stratum of the sample: its best-rank band, size, draws and what they found.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StratumRow {
    pub stratum: u32,
    /// Best ranks (`low`, `high`].
    pub low_rank: u32,
    pub high_rank: u32,
    pub population: usize,
    pub sampled: usize,
    pub inclusion_probability: f64,
    /// Drawn pairs with a final label, and the evidence among them.
    pub judged: usize,
    pub evidence: usize,
}

/// The sample's design and how far its judging has got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleSummary {
    pub depth: u32,
    pub reach: u32,
    pub strata: Vec<StratumRow>,
    /// Certain pairs (the depth pool and pairs judged beyond it), and those with a final label.
    pub certain: usize,
    pub certain_judged: usize,
    pub drawn: usize,
    pub drawn_judged: usize,
}

/// A system's estimates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SystemSurvey {
    pub system: String,
    #[serde(flatten)]
    pub estimate: SystemEstimateView,
    /// Predicted evidence pairs outside the universe (not estimated).
    pub outside: usize,
}

/// The estimates from a fully judged sample.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimates {
    /// Pairs in the universe.
    pub universe: usize,
    pub total_evidence: EstimateView,
    /// Evidence judged so far in the universe (certain and drawn pairs).
    pub found: usize,
    /// `total_evidence − found`, with the interval shifted alike.
    pub not_found: EstimateView,
    pub systems: Vec<SystemSurvey>,
}

/// The stopping test's outcome, or why it was not made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Stopping {
    /// No sample yet.
    NoSample,
    /// The sample has several strata: not a simple random sample.
    Stratified { strata: usize },
    /// The sample or the pool is not judged yet.
    Waiting,
    Tested {
        target_recall: f64,
        alpha: f64,
        sample: StoppingCounts,
        decision: StopVerdict,
        /// Draws without evidence that would let judging stop (0: it may stop).
        draws_to_stop: u64,
    },
}

impl Stopping {
    /// The tested verdict in words (None before the test is made).
    pub fn verdict(&self) -> Option<String> {
        let Stopping::Tested {
            target_recall,
            alpha,
            decision,
            draws_to_stop,
            ..
        } = self
        else {
            return None;
        };
        Some(if decision.stop {
            format!(
                "with {:.0}% confidence the pool has found at least {:.0}% of the evidence",
                100.0 * (1.0 - alpha),
                100.0 * target_recall
            )
        } else {
            format!(
                "not yet shown that the pool has found {:.0}% of the evidence; {draws_to_stop} more random draws without evidence would show it",
                100.0 * target_recall
            )
        })
    }
}

/// Annotator-hours to the next depth.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DepthPlan {
    pub depth: u32,
    /// Pairs of the pool at `depth` without a final label.
    pub pairs_to_judge: usize,
    /// `None` without a measured time per item.
    pub hours: Option<f64>,
    /// The estimated evidence in the pool at `depth` (needs estimates from a sample drawn at
    /// the current depth).
    pub estimated_evidence: Option<f64>,
}

/// Annotator-hours to the target recall of the estimated total (and of its upper bound).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecallPlan {
    pub target_recall: f64,
    /// Evidence pairs that make the target of the estimate, and of its interval's upper end.
    pub target_evidence: usize,
    pub target_evidence_high: usize,
    /// Judgments beyond the sample (and evidence found in all, hours), `None` if the sample's
    /// reach does not get there.
    pub budget: Option<BudgetView>,
    pub budget_high: Option<BudgetView>,
}

/// The planner.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Median seconds per judgment; `None` before any judgment with a time.
    pub median_seconds: Option<f64>,
    pub next_depth: Option<DepthPlan>,
    /// `None` without estimates or a measured time.
    pub recall: Option<RecallPlan>,
    /// The expected discovery curve beyond the sample at the strata's ends: (judgments beyond
    /// the sample, evidence expected found in all), from (0, evidence found); empty without
    /// estimates.
    pub discovery: Vec<(usize, f64)>,
}

/// Everything the report says beyond the judged depth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Survey {
    pub sample: Option<SampleSummary>,
    /// Why there are no estimates yet (a sample lacking, pairs not judged, a changed pool).
    pub waiting: Option<String>,
    pub estimates: Option<Estimates>,
    pub stopping: Stopping,
    pub plan: Plan,
}
