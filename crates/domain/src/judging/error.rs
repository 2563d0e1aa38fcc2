//! Why a judging input (rankings, labels, sample, estimate, test or plan) is refused.

/// Why judging input is refused. Each variant names the value (or pair) at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JudgingError {
    /// An order's name is none of `depth`, `mtf`, `mab-maxmean` (`mab`), `mab-thompson`, `hedge`.
    #[error(
        "unknown judging order {0:?} (expected depth, mtf, mab-maxmean, mab-thompson or hedge)"
    )]
    UnknownOrder(String),
    /// A project's judging order is none of the runs' orders nor `cal`.
    #[error(
        "unknown judging order {0:?} (expected depth, mtf, mab-maxmean, mab-thompson, hedge or cal)"
    )]
    UnknownJudgingOrder(String),
    /// A system's ranking lists the same pair twice.
    #[error("the ranking of pooled system {system} lists the pair (claim {claim}, doc {doc}) more than once")]
    DuplicateRankedPair {
        system: usize,
        claim: String,
        doc: String,
    },
    /// Under `PerClaim`, a system's ranking must hold each claim's pairs together.
    #[error("the per-claim ranking of pooled system {system} lists claim {claim} in more than one run of pairs")]
    ClaimsNotGrouped { system: usize, claim: String },
    /// More pairs than a selector can index (`u32::MAX`).
    #[error("the rankings hold {pairs} distinct pairs, more than the {max} a selector can index")]
    TooManyPairs { pairs: usize, max: u32 },
    /// A pair the selector has already used for its order got the other label.
    #[error("the pair (claim {claim}, doc {doc}) was already recorded as {was}; rebuild the selector to change its label")]
    LabelChanged {
        claim: String,
        doc: String,
        was: &'static str,
    },
    /// The `cal` order's feature matrix was refused.
    #[error("the CAL candidates' features: {0}")]
    Features(cal::FeaturesError),
    /// A target recall outside (0, 1].
    #[error("target recall {0} is not in (0, 1]")]
    TargetRecall(f64),
    /// A significance level outside (0, 1).
    #[error("significance level {0} is not strictly between 0 and 1")]
    Alpha(f64),
    /// A candidate pair listed twice for sampling (or a certain pair listed twice).
    #[error("the pair (claim {claim}, doc {doc}) is listed twice")]
    DuplicatePair { claim: String, doc: String },
    /// A stratum asked for more draws than it holds pairs.
    #[error("stratum {stratum} holds {population} pair(s), fewer than the {sample} asked for")]
    SampleExceedsStratum {
        stratum: u32,
        sample: usize,
        population: usize,
    },
    /// A sample asked for more draws than there are candidates.
    #[error("{population} candidate pair(s), fewer than the {sample} asked for")]
    SampleExceedsPopulation { sample: usize, population: usize },
    /// A sample too small to give every non-empty stratum a draw.
    #[error("a sample of {sample} cannot give each of the {strata} non-empty strata a draw")]
    SampleTooSmall { sample: usize, strata: usize },
    /// A stratum with pairs but no draw: its evidence cannot be estimated.
    #[error("stratum {stratum} holds {population} pair(s) but none was drawn")]
    UnsampledStratum { stratum: u32, population: usize },
    /// A sampled pair names a stratum the design lacks, or a stratum's draws do not match it.
    #[error("the sample does not match its design: {0}")]
    InconsistentSample(String),
    /// A sampled pair has no label yet: estimates need the whole sample judged.
    #[error("the sampled pair (claim {claim}, doc {doc}) is not judged yet")]
    UnjudgedSample { claim: String, doc: String },
    /// A pair is both judged with certainty and drawn in the sample.
    #[error("the pair (claim {claim}, doc {doc}) is both judged with certainty and sampled")]
    CertainAndSampled { claim: String, doc: String },
    /// A stopping sample larger than the unjudged pairs it was drawn from.
    #[error("a random sample of {sampled} drawn from {unjudged} unjudged pair(s)")]
    SampleExceedsUnjudged { sampled: u64, unjudged: u64 },
    /// More evidence in a sample than pairs drawn.
    #[error("{evidence} evidence pair(s) in a sample of {sampled}")]
    EvidenceExceedsSample { evidence: u64, sampled: u64 },
    /// A time per item that is negative, NaN or infinite.
    #[error("{0} seconds per item is not a finite, non-negative number")]
    SecondsPerItem(f64),
    /// An estimated total that is negative, NaN or infinite.
    #[error("estimated total evidence {0} is not a finite, non-negative number")]
    EstimatedTotal(f64),
}

/// A pair's keys as an error message shows them.
pub(crate) fn pair_text<C: std::fmt::Debug, D: std::fmt::Debug>(
    pair: &crate::pool::Pair<C, D>,
) -> (String, String) {
    (format!("{:?}", pair.claim), format!("{:?}", pair.doc))
}
