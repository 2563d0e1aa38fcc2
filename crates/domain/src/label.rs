//! Verdicts, and the probabilities systems give them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The verdict for a claim/abstract pair. Every spelling of the field maps onto these three.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum Label {
    #[serde(rename = "SUPPORT")]
    Support,
    #[serde(rename = "CONTRADICT")]
    Contradict,
    #[serde(rename = "NEI")]
    Nei,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown label {0:?} (expected SUPPORT, CONTRADICT or NEI, or SUPPORTS, REFUTES, REFUTE, NOINFO, NOT_ENOUGH_INFO)")]
pub struct LabelError(pub String);

impl Label {
    pub const ALL: [Label; 3] = [Label::Support, Label::Contradict, Label::Nei];

    /// Parses any spelling used by SciFact, SciFact-Open, FEVER, VeriSci and MultiVerS, in any case.
    pub fn parse(text: &str) -> Result<Label, LabelError> {
        let norm = text.trim().to_ascii_uppercase().replace([' ', '-'], "_");
        match norm.as_str() {
            "SUPPORT" | "SUPPORTS" | "SUPPORTED" => Ok(Label::Support),
            "CONTRADICT" | "CONTRADICTS" | "REFUTE" | "REFUTES" | "REFUTED" => {
                Ok(Label::Contradict)
            }
            "NEI" | "NOINFO" | "NOT_ENOUGH_INFO" | "NOTENOUGHINFO" => Ok(Label::Nei),
            _ => Err(LabelError(text.to_owned())),
        }
    }

    /// The canonical spelling, as claimpool writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Support => "SUPPORT",
            Label::Contradict => "CONTRADICT",
            Label::Nei => "NEI",
        }
    }

    /// SUPPORT or CONTRADICT: the pair is evidence.
    pub fn is_evidence(self) -> bool {
        !matches!(self, Label::Nei)
    }
}

impl std::str::FromStr for Label {
    type Err = LabelError;
    fn from_str(text: &str) -> Result<Label, LabelError> {
        Label::parse(text)
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A probability: a finite number in [0, 1].
#[derive(Clone, Copy, PartialEq, PartialOrd, Debug, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Probability(f64);

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0} is not a probability (a number in [0, 1])")]
pub struct ProbabilityError(pub f64);

impl Probability {
    pub fn new(value: f64) -> Result<Probability, ProbabilityError> {
        if value.is_finite() && (0.0..=1.0).contains(&value) {
            Ok(Probability(value))
        } else {
            Err(ProbabilityError(value))
        }
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for Probability {
    type Error = ProbabilityError;
    fn try_from(value: f64) -> Result<Probability, ProbabilityError> {
        Probability::new(value)
    }
}

impl From<Probability> for f64 {
    fn from(p: Probability) -> f64 {
        p.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_every_spelling() {
        for s in ["SUPPORT", "Supports", "supported"] {
            assert_eq!(Label::parse(s), Ok(Label::Support));
        }
        for s in ["CONTRADICT", "REFUTES", "refute"] {
            assert_eq!(Label::parse(s), Ok(Label::Contradict));
        }
        for s in ["NEI", "NOINFO", "NOT_ENOUGH_INFO", "Not Enough Info"] {
            assert_eq!(Label::parse(s), Ok(Label::Nei));
        }
        assert!(Label::parse("MAYBE").is_err());
    }

    #[test]
    fn probabilities_are_bounded_and_finite() {
        assert!(Probability::new(0.0).is_ok());
        assert!(Probability::new(1.0).is_ok());
        assert!(Probability::new(1.0001).is_err());
        assert!(Probability::new(-0.1).is_err());
        assert!(Probability::new(f64::NAN).is_err());
        assert!(serde_json::from_str::<Probability>("1.5").is_err());
    }
}
