//! One system's output ("run"): its name, whether it is pooled, and its scored pairs.

use super::error::PoolError;
use super::pair::{Key, Pair};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// A system's confidence in a pair: any finite number, higher = more confident.
///
/// Upstream this is max(p_support, p_contradict), a retrieval score, or 1/0 for label-only
/// runs. `-0.0` is stored as `0.0`, so the two tie.
#[derive(Clone, Copy, PartialEq, PartialOrd, Debug, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Score(f64);

impl Score {
    /// Parses a finite score.
    pub fn new(value: f64) -> Result<Score, PoolError> {
        if value.is_finite() {
            // Adding 0.0 turns -0.0 into 0.0 and leaves every other value alone.
            Ok(Score(value + 0.0))
        } else {
            Err(PoolError::NonFiniteScore(value))
        }
    }

    /// The score as a number.
    pub fn get(self) -> f64 {
        self.0
    }

    /// Total order on scores (all finite, no negative zero, so this is the numeric order).
    pub(crate) fn total_cmp(self, other: Score) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl TryFrom<f64> for Score {
    type Error = PoolError;
    fn try_from(value: f64) -> Result<Score, PoolError> {
        Score::new(value)
    }
}

impl From<Score> for f64 {
    fn from(score: Score) -> f64 {
        score.0
    }
}

/// A pair as one system scored it.
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
pub struct ScoredPair<C, D> {
    pub pair: Pair<C, D>,
    pub score: Score,
    /// The document's rank in the system's retrieval list for the claim (1 = first), if the
    /// system reports one. Lower is better; a missing rank comes after every rank.
    pub retrieval_rank: Option<u32>,
}

impl<C, D> ScoredPair<C, D> {
    /// A scored pair.
    pub fn new(claim: C, doc: D, score: Score, retrieval_rank: Option<u32>) -> Self {
        ScoredPair {
            pair: Pair { claim, doc },
            score,
            retrieval_rank,
        }
    }
}

/// Whether a system's top pairs enter the pool or the system is only evaluated on it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Pooled,
    EvaluationOnly,
}

impl Role {
    /// The database spelling (`systems.role`): `pooled` or `evaluation-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Pooled => "pooled",
            Role::EvaluationOnly => "evaluation-only",
        }
    }

    /// Parses the spelling of [`Role::as_str`] (forms, the command line, stored rows).
    pub fn parse(text: &str) -> Result<Role, UnknownRole> {
        [Role::Pooled, Role::EvaluationOnly]
            .into_iter()
            .find(|role| role.as_str() == text)
            .ok_or_else(|| UnknownRole(text.to_owned()))
    }
}

impl std::str::FromStr for Role {
    type Err = UnknownRole;

    fn from_str(text: &str) -> Result<Role, UnknownRole> {
        Role::parse(text)
    }
}

/// A system role that is neither `pooled` nor `evaluation-only`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown system role {0:?} (expected pooled or evaluation-only)")]
pub struct UnknownRole(pub String);

/// A system's run, checked: a non-empty name, each pair at most once, at most `u32::MAX` pairs.
#[derive(Clone, Debug)]
pub struct SystemRun<C, D> {
    name: String,
    role: Role,
    pairs: Vec<ScoredPair<C, D>>,
}

impl<C: Key, D: Key> SystemRun<C, D> {
    /// Checks a run. Fails on an empty name, a pair scored twice, or more than `u32::MAX` pairs.
    pub fn new(
        name: impl Into<String>,
        role: Role,
        pairs: Vec<ScoredPair<C, D>>,
    ) -> Result<Self, PoolError> {
        let name = name.into();
        if name.trim().is_empty() {
            return Err(PoolError::EmptySystemName);
        }
        if u32::try_from(pairs.len()).is_err() {
            return Err(PoolError::TooManyPairs {
                system: name,
                pairs: pairs.len(),
                max: u32::MAX,
            });
        }
        let mut keys: Vec<Pair<C, D>> = pairs.iter().map(|p| p.pair).collect();
        keys.sort_unstable();
        if let Some(twice) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(PoolError::DuplicatePair {
                system: name,
                claim: format!("{:?}", twice[0].claim),
                doc: format!("{:?}", twice[0].doc),
            });
        }
        Ok(SystemRun { name, role, pairs })
    }

    /// The system's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Pooled or evaluation-only.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The scored pairs, in input order.
    pub fn pairs(&self) -> &[ScoredPair<C, D>] {
        &self.pairs
    }

    pub(crate) fn into_parts(self) -> (String, Role, Vec<ScoredPair<C, D>>) {
        (self.name, self.role, self.pairs)
    }
}
