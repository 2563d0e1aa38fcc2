//! The order of the three probabilities in a `label_probs` array.

use crate::label::{Label, LabelError};
use std::fmt;
use std::str::FromStr;

/// Which label each position of a `label_probs` array belongs to: a permutation of the three labels.
///
/// MultiVerS writes `[p_CONTRADICT, p_NEI, p_SUPPORT]` (its `label_lookup` is REFUTE=0, NEI=1,
/// SUPPORT=2), which is the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LabelOrder([Label; 3]);

/// Why a text is not a label order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelOrderError {
    #[error("a label order names three labels separated by commas, got {0}")]
    Count(usize),
    #[error(transparent)]
    Label(#[from] LabelError),
    #[error("label {0} is named twice in the label order")]
    Repeated(Label),
}

impl LabelOrder {
    /// MultiVerS's order: CONTRADICT, NEI, SUPPORT.
    pub const MULTIVERS: LabelOrder = LabelOrder([Label::Contradict, Label::Nei, Label::Support]);

    /// An order from three distinct labels.
    pub fn new(labels: [Label; 3]) -> Result<LabelOrder, LabelOrderError> {
        for (i, label) in labels.iter().enumerate() {
            if labels[..i].contains(label) {
                return Err(LabelOrderError::Repeated(*label));
            }
        }
        Ok(LabelOrder(labels))
    }

    /// The labels, position by position.
    pub fn labels(self) -> [Label; 3] {
        self.0
    }
}

impl Default for LabelOrder {
    fn default() -> Self {
        LabelOrder::MULTIVERS
    }
}

impl FromStr for LabelOrder {
    type Err = LabelOrderError;

    /// Parses text such as `"REFUTE,NEI,SUPPORT"` (any spelling [`Label::parse`] knows).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let [a, b, c] = parts.as_slice() else {
            return Err(LabelOrderError::Count(parts.len()));
        };
        LabelOrder::new([Label::parse(a)?, Label::parse(b)?, Label::parse(c)?])
    }
}

impl fmt::Display for LabelOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c] = self.0;
        write!(f, "{a},{b},{c}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_any_spelling_and_round_trips() {
        let order: LabelOrder = "REFUTE, NEI ,SUPPORT".parse().unwrap();
        assert_eq!(order, LabelOrder::default());
        assert_eq!(order.to_string(), "CONTRADICT,NEI,SUPPORT");
        let other: LabelOrder = "supports,refutes,not_enough_info".parse().unwrap();
        assert_eq!(
            other.labels(),
            [Label::Support, Label::Contradict, Label::Nei]
        );
        assert_eq!(other.to_string().parse::<LabelOrder>().unwrap(), other);
    }

    #[test]
    fn rejects_wrong_counts_repeats_and_unknown_labels() {
        assert_eq!(
            "SUPPORT,NEI".parse::<LabelOrder>(),
            Err(LabelOrderError::Count(2))
        );
        assert_eq!(
            "SUPPORT,NEI,SUPPORTS".parse::<LabelOrder>(),
            Err(LabelOrderError::Repeated(Label::Support))
        );
        assert!(matches!(
            "SUPPORT,NEI,MAYBE".parse::<LabelOrder>(),
            Err(LabelOrderError::Label(_))
        ));
    }
}
