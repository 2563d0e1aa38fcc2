//! Judging: which pooled pair to judge next, how much evidence a budget finds, what a sample
//! beyond the judged depth says about the rest, and when to stop (issue "judging orders,
//! replay, sampled pools with estimates, stopping").
//!
//! - Orders ([`Order`], [`Selector`]): `depth`, `mtf` (Cormack, Palmer & Clarke 1998),
//!   `mab-maxmean` and `mab-thompson` (Losada, Parapar & Barreiro 2016/2017) and `hedge`
//!   (Aslam, Pavlu & Savell 2003), over the global confidence ranking or within claims,
//!   deterministic for a seed. A selector's state depends only on the set of labels it was
//!   given, so the server may rebuild it from the labels so far on each request.
//! - Live ([`LiveSelector`], [`JudgingSettings`], [`label_so_far`]): a project's order, seed
//!   and budget, what its labels so far say to the order, and the first pass to serve next.
//! - Replay ([`replay`], [`Curve`]): an order judged against a known truth for a budget, one
//!   curve point per judgment.
//! - Samples and estimates ([`stratified_sample`], [`Estimator`]): a stratified random sample
//!   of the pairs beyond the depth with inclusion probabilities; Horvitz–Thompson estimates of
//!   the total evidence and each system's precision, recall and F1 with 95% intervals.
//! - CAL over the corpus ([`CalCandidates`], [`replay_cal`]): the `cal` order's candidates,
//!   every pair a pooled run ranked and each claim's top retrievals over the whole corpus, as
//!   features for the [`cal`] learner (autoTAR); its replay counts the evidence found outside
//!   the runs.
//! - Stopping ([`RecallTarget`]): Callaghan & Müller-Hansen's (2020) hypergeometric test of a
//!   target recall on a random sample of the unjudged pairs; [`RecallTarget::draws_to_stop`];
//!   [`replay_cal_stopping`]: the `cal` order, then the sample, until the test lets it stop;
//!   [`StopSample`]: the live order's sample, drawn when a lead asks and tested once judged.
//! - Pool bias ([`leave_one_out`]): each pooled system left out in turn, the pairs depth
//!   pooling of the others judges and as many judged by `cal` over their candidates.
//! - Planning ([`plan_recall`] and friends): annotator-hours from the median seconds per item
//!   and a discovery curve.
//!
//! Keys are generic ([`crate::pool::Key`]), pairs are the pool's
//! [`crate::pool::Pair`]; nothing here touches the database or the web.

mod beta;
mod cal;
mod cal_stop;
mod error;
mod estimate;
mod hedge;
mod leave_one_out;
mod live;
mod live_cal;
mod live_stop;
mod order;
mod plan;
mod replay;
mod sample;
mod selector;
mod stopping;

#[cfg(test)]
mod tests;

pub use self::cal::{replay_cal, replay_cal_with_search, CalCandidates, CalReplay, Retrieved};
pub use cal_stop::{replay_cal_stopping, CalStop};
pub use error::JudgingError;
pub use estimate::{Estimate, Estimator, SystemEstimate, Z_95};
pub use hedge::HEDGE_BETA;
pub use leave_one_out::{cal_pool, leave_one_out, pool_of, LeftOut};
pub use live::{
    label_so_far, FirstPasses, JudgingSettings, LivePlan, LiveSelector, DEFAULT_CAL_CANDIDATES,
};
pub use live_cal::{CalPick, LiveCal};
pub use live_stop::{StopSample, StopStatus};
pub use order::{JudgingOrder, Order};
pub use plan::{hours, median_seconds, plan_evidence, plan_judgments, plan_recall, Budget};
pub use replay::{evidence_at, replay, Curve, CurvePoint};
pub use sample::{
    beyond_depth, rank_band, shuffled, stratified_sample, Allocation, Candidate, Sample, Sampled,
    StratumDesign,
};
pub use selector::Selector;
pub use stopping::{hypergeometric_cdf, RecallTarget, StopDecision, StoppingSample};
