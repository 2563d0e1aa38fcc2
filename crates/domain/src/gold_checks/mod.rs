//! Gold checks and qualification (issue 16): pairs with a known reference annotation, slipped
//! into annotators' queues at a rate the lead sets, or given as a qualification before real
//! items. This module holds the rules — how a project uses gold ([`GoldSettings`]), when an
//! annotator's next item is a gold check ([`GoldSchedule`]), what a candidate must do next in
//! their qualification ([`Qualification::next_step`]) — and the figures per annotator
//! ([`score`]): accuracy on gold, label confusion, rationale-sentence F1 against the reference
//! and drift over time.

mod schedule;
pub mod score;
#[cfg(test)]
mod tests;

pub use schedule::{draw_order, pick, GoldSchedule};
pub use score::{drift, score, sentences_of, GoldResult};

use serde::{Deserialize, Serialize};
use std::fmt;

/// A gold item's use on an assignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Purpose {
    /// Qualification, with the reference shown after each answer.
    Training,
    /// Qualification, graded against the pass mark.
    Graded,
    /// A check among real items, indistinguishable from them.
    Check,
}

impl Purpose {
    pub const ALL: [Purpose; 3] = [Purpose::Training, Purpose::Graded, Purpose::Check];

    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Training => "training",
            Purpose::Graded => "graded",
            Purpose::Check => "check",
        }
    }

    pub fn parse(text: &str) -> Result<Purpose, GoldError> {
        Purpose::ALL
            .into_iter()
            .find(|p| p.as_str() == text)
            .ok_or_else(|| GoldError::Purpose(text.to_owned()))
    }
}

/// Where a gold item's reference comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The evidence (and cited non-evidence) that came with the claims.
    Citation,
    /// A pair the pool's annotators already decided (test–retest).
    Final,
}

impl Source {
    pub const ALL: [Source; 2] = [Source::Citation, Source::Final];

    pub fn as_str(self) -> &'static str {
        match self {
            Source::Citation => "citation",
            Source::Final => "final",
        }
    }

    pub fn parse(text: &str) -> Result<Source, GoldError> {
        Source::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| GoldError::Source(text.to_owned()))
    }

    /// The final labels' provenance the items are drawn from.
    pub fn provenance(self) -> &'static str {
        match self {
            Source::Citation => "citation",
            Source::Final => "pooling",
        }
    }
}

/// Something about gold that cannot be.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GoldError {
    #[error("gold_every: {0} is not a whole number from 2 to 1000 (or empty for none)")]
    Every(String),
    #[error("{field}: {value} is not a whole number from 0 to 100")]
    Count { field: &'static str, value: String },
    #[error("qualification_pass: {0} is not a share from 0 to 1 (or a percentage from 0 to 100)")]
    PassMark(String),
    #[error("qualification_training: a training part needs a graded part after it")]
    TrainingWithoutGraded,
    #[error("purpose: {0} is none of training, graded, check")]
    Purpose(String),
    #[error("source: {0} is none of citation, final")]
    Source(String),
}

impl GoldError {
    /// The form field or option the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            GoldError::Every(_) => "gold_every",
            GoldError::Count { field, .. } => field,
            GoldError::PassMark(_) => "qualification_pass",
            GoldError::TrainingWithoutGraded => "qualification_training",
            GoldError::Purpose(_) => "purpose",
            GoldError::Source(_) => "source",
        }
    }
}

/// A share of correct graded answers needed to pass, in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
pub struct PassMark(f64);

impl PassMark {
    /// Reads a share ("0.8") or a percentage ("80", "80%").
    pub fn parse(text: &str) -> Result<PassMark, GoldError> {
        let t = text.trim();
        let (number, percent) = match t.strip_suffix('%') {
            Some(n) => (n.trim(), true),
            None => (t, false),
        };
        let value: f64 = number
            .parse()
            .map_err(|_| GoldError::PassMark(text.to_owned()))?;
        let share = if percent || value > 1.0 {
            value / 100.0
        } else {
            value
        };
        PassMark::new(share).ok_or_else(|| GoldError::PassMark(text.to_owned()))
    }

    pub fn new(share: f64) -> Option<PassMark> {
        (share.is_finite() && (0.0..=1.0).contains(&share)).then_some(PassMark(share))
    }

    pub fn get(self) -> f64 {
        self.0
    }

    /// Whether `correct` of `graded` reaches the mark (an empty graded part passes nobody).
    pub fn passed(self, correct: usize, graded: usize) -> bool {
        graded > 0 && correct as f64 >= self.0 * graded as f64 - 1e-9
    }
}

impl fmt::Display for PassMark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.0} %", self.0 * 100.0)
    }
}

/// A project's qualification: `training` items with feedback, then `graded` items passed at
/// `pass`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Qualification {
    pub training: u32,
    pub graded: u32,
    pub pass: PassMark,
}

/// Where a candidate stands in a qualification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The next item is a training item (`done` of them so far).
    Training { done: u32 },
    /// The next item is a graded item (`done` of them so far).
    Graded { done: u32 },
    /// Every graded item is answered: time to decide.
    Decide,
}

impl Qualification {
    /// What a candidate who answered `training` and `graded` items does next.
    pub fn next_step(&self, training: u32, graded: u32) -> Step {
        if training < self.training {
            Step::Training { done: training }
        } else if graded < self.graded {
            Step::Graded { done: graded }
        } else {
            Step::Decide
        }
    }
}

/// How a project uses gold.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoldSettings {
    /// One gold check among every this many items (None: no checks).
    pub every: Option<u32>,
    /// None: new annotators get real items at once.
    pub qualification: Option<Qualification>,
}

impl GoldSettings {
    /// Whether the project serves gold items at all: checks or a qualification.
    pub fn uses_gold(&self) -> bool {
        self.every.is_some() || self.qualification.is_some()
    }

    /// Reads the stored columns (`qualification_graded` 0: no qualification).
    pub fn from_columns(
        every: Option<i64>,
        training: i64,
        graded: i64,
        pass: f64,
    ) -> Result<GoldSettings, GoldError> {
        GoldSettings::parse_form(
            &every.map(|e| e.to_string()).unwrap_or_default(),
            &training.to_string(),
            &graded.to_string(),
            &pass.to_string(),
        )
    }

    /// Reads the lead's form (or the CLI's options): blank `every` turns checks off; `graded`
    /// 0 turns the qualification off.
    pub fn parse_form(
        every: &str,
        training: &str,
        graded: &str,
        pass: &str,
    ) -> Result<GoldSettings, GoldError> {
        let every = match every.trim() {
            "" | "0" | "off" | "none" => None,
            t => Some(
                t.parse::<u32>()
                    .ok()
                    .filter(|n| (2..=1000).contains(n))
                    .ok_or_else(|| GoldError::Every(t.to_owned()))?,
            ),
        };
        let count = |field: &'static str, text: &str| -> Result<u32, GoldError> {
            let t = text.trim();
            if t.is_empty() {
                return Ok(0);
            }
            t.parse::<u32>()
                .ok()
                .filter(|n| *n <= 100)
                .ok_or_else(|| GoldError::Count {
                    field,
                    value: t.to_owned(),
                })
        };
        let training = count("qualification_training", training)?;
        let graded = count("qualification_graded", graded)?;
        let pass = PassMark::parse(if pass.trim().is_empty() { "0.8" } else { pass })?;
        let qualification = match (training, graded) {
            (0, 0) => None,
            (_, 0) => return Err(GoldError::TrainingWithoutGraded),
            (training, graded) => Some(Qualification {
                training,
                graded,
                pass,
            }),
        };
        Ok(GoldSettings {
            every,
            qualification,
        })
    }

    /// The stored columns: (gold_every, qualification_training, qualification_graded,
    /// qualification_pass).
    pub fn columns(&self) -> (Option<i64>, i64, i64, f64) {
        let q = self.qualification;
        (
            self.every.map(i64::from),
            q.map_or(0, |q| i64::from(q.training)),
            q.map_or(0, |q| i64::from(q.graded)),
            q.map_or(0.8, |q| q.pass.get()),
        )
    }
}
