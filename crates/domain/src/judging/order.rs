//! The judging orders: which unjudged pair of the pooled rankings to judge next.

use super::error::JudgingError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How [`super::Selector`] picks the next pair to judge. Every order works over the global
/// confidence ranking ([`crate::pool::Strategy::Confidence`]) and within claims
/// ([`crate::pool::Strategy::PerClaim`]); see the selector for the exact rules.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Order {
    /// Shallowest entry depth first (the smallest rank any pooled system gives the pair), ties
    /// by claim then doc: what depth pooling judges. After `pool_size(d)` judgments the judged
    /// pairs are exactly the depth-`d` pool.
    #[serde(rename = "depth")]
    Depth,
    /// Move-to-front (Cormack, Palmer & Clarke 1998): stay with a system while its pairs are
    /// evidence; a non-evidence pair lowers its priority by one.
    #[serde(rename = "mtf")]
    Mtf,
    /// A bandit over systems (Losada, Parapar & Barreiro 2016/2017): the system whose pairs so
    /// far have the highest posterior mean (evidence + 1) / (judged + 2), Beta(1,1) prior.
    #[serde(rename = "mab-maxmean", alias = "mab")]
    MabMaxMean,
    /// The same bandit with Thompson sampling: one draw from each system's
    /// Beta(1 + evidence, 1 + non-evidence) posterior, the largest wins. The only order that
    /// uses the seed.
    #[serde(rename = "mab-thompson")]
    MabThompson,
    /// Hedge (Aslam, Pavlu & Savell 2003): weights over systems, the pair of highest weighted
    /// rank value next, weights updated by a rank-based loss after each judgment.
    #[serde(rename = "hedge")]
    Hedge,
}

impl Order {
    /// Every order, in the order the documentation lists them.
    pub const ALL: [Order; 5] = [
        Order::Depth,
        Order::Mtf,
        Order::MabMaxMean,
        Order::MabThompson,
        Order::Hedge,
    ];

    /// The database and command-line spelling: `depth`, `mtf`, `mab-maxmean`, `mab-thompson`
    /// or `hedge`.
    pub fn as_str(self) -> &'static str {
        match self {
            Order::Depth => "depth",
            Order::Mtf => "mtf",
            Order::MabMaxMean => "mab-maxmean",
            Order::MabThompson => "mab-thompson",
            Order::Hedge => "hedge",
        }
    }

    /// Parses [`Order::as_str`]'s spelling in any case; `mab` alone means `mab-maxmean`, the
    /// bandit Losada et al. found best.
    pub fn parse(text: &str) -> Result<Order, JudgingError> {
        let norm = text.trim().to_ascii_lowercase().replace('_', "-");
        match norm.as_str() {
            "mab" => Ok(Order::MabMaxMean),
            _ => Order::ALL
                .into_iter()
                .find(|order| order.as_str() == norm)
                .ok_or_else(|| JudgingError::UnknownOrder(text.to_owned())),
        }
    }
}

impl std::str::FromStr for Order {
    type Err = JudgingError;
    fn from_str(text: &str) -> Result<Order, JudgingError> {
        Order::parse(text)
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A project's judging order: one of the runs' orders, which judge what the pooled systems
/// ranked, or `cal`, continuous active learning over those pairs and each claim's top
/// retrievals from the whole corpus ([`super::CalCandidates`], [`super::LiveCal`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum JudgingOrder {
    Runs(Order),
    Cal,
}

impl JudgingOrder {
    /// Every order a lead may pick, the runs' first.
    pub const ALL: [JudgingOrder; 6] = [
        JudgingOrder::Runs(Order::Depth),
        JudgingOrder::Runs(Order::Mtf),
        JudgingOrder::Runs(Order::MabMaxMean),
        JudgingOrder::Runs(Order::MabThompson),
        JudgingOrder::Runs(Order::Hedge),
        JudgingOrder::Cal,
    ];

    /// The database and command-line spelling: a run order's ([`Order::as_str`]) or `cal`.
    pub fn as_str(self) -> &'static str {
        match self {
            JudgingOrder::Runs(order) => order.as_str(),
            JudgingOrder::Cal => "cal",
        }
    }

    /// Parses [`JudgingOrder::as_str`]'s spelling as [`Order::parse`] does, or `cal`.
    pub fn parse(text: &str) -> Result<JudgingOrder, JudgingError> {
        if text.trim().eq_ignore_ascii_case("cal") {
            return Ok(JudgingOrder::Cal);
        }
        Order::parse(text)
            .map(JudgingOrder::Runs)
            .map_err(|_| JudgingError::UnknownJudgingOrder(text.to_owned()))
    }
}

impl From<Order> for JudgingOrder {
    fn from(order: Order) -> JudgingOrder {
        JudgingOrder::Runs(order)
    }
}

impl fmt::Display for JudgingOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for JudgingOrder {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for JudgingOrder {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<JudgingOrder, D::Error> {
        let text = String::deserialize(d)?;
        JudgingOrder::parse(&text).map_err(serde::de::Error::custom)
    }
}
