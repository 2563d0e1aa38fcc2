//! External identifiers of claims and documents, as the input files spell them.
//!
//! SciFact uses integers, BEIR and TREC often use strings ("MED-10"). Both are kept as text and
//! ordered numerically when both sides are integers, so claim 9 sorts before claim 10, as the
//! pooling tie-break (then claim id, then doc id) expects.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// Why a piece of text is not an identifier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("is empty")]
    Empty,
    #[error("contains white space: {0:?}")]
    Whitespace(String),
    #[error("is longer than {max} characters", max = MAX_ID_LEN)]
    TooLong,
    #[error("contains a control character: {0:?}")]
    Control(String),
}

/// Longest identifier accepted.
pub const MAX_ID_LEN: usize = 256;

fn check_id(text: &str) -> Result<(), IdError> {
    if text.is_empty() {
        Err(IdError::Empty)
    } else if text.len() > MAX_ID_LEN {
        Err(IdError::TooLong)
    } else if text.chars().any(char::is_whitespace) {
        Err(IdError::Whitespace(text.to_owned()))
    } else if text.chars().any(char::is_control) {
        Err(IdError::Control(text.to_owned()))
    } else {
        Ok(())
    }
}

/// The value of `text` if it is a decimal number written without sign or leading zeros, so
/// that distinct texts never share a value (ids such as SciFact's and PubMed's can then be keyed
/// by number).
#[cfg(feature = "server")]
pub fn decimal_value(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    let canonical = bytes.first().is_some_and(|&b| b != b'0') || bytes == b"0";
    if canonical && bytes.len() <= 19 && bytes.iter().all(u8::is_ascii_digit) {
        text.parse().ok()
    } else {
        None
    }
}

/// Numeric-aware order: integers by value, before any non-integer id, which sort as text.
fn compare_ids(a: &str, b: &str) -> Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y).then_with(|| a.cmp(b)),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

macro_rules! external_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Parses an identifier: non-empty, no white space or control characters, at most
            /// [`MAX_ID_LEN`] bytes.
            pub fn parse(text: impl Into<String>) -> Result<Self, IdError> {
                let text = text.into();
                check_id(&text)?;
                Ok(Self(text))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = IdError;
            fn try_from(text: String) -> Result<Self, IdError> {
                Self::parse(text)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = IdError;
            fn from_str(text: &str) -> Result<Self, IdError> {
                Self::parse(text)
            }
        }

        impl Ord for $name {
            fn cmp(&self, other: &Self) -> Ordering {
                compare_ids(&self.0, &other.0)
            }
        }

        impl PartialOrd for $name {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.0)
            }
        }
    };
}

external_id!(
    /// A claim's id, as its claims file gives it.
    ClaimId
);
external_id!(
    /// A document's id in the corpus (SciFact `doc_id`, BEIR `_id`).
    DocId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert!(ClaimId::parse("12").is_ok());
        assert!(DocId::parse("MED-10").is_ok());
        assert_eq!(ClaimId::parse(""), Err(IdError::Empty));
        assert!(matches!(DocId::parse("a b"), Err(IdError::Whitespace(_))));
        for text in ["a\u{0}b", "\u{0}", "x\u{1b}[31m", "a\u{7f}"] {
            assert!(
                matches!(DocId::parse(text), Err(IdError::Control(_))),
                "{text:?}"
            );
        }
        assert_eq!(
            DocId::parse("x".repeat(MAX_ID_LEN + 1)),
            Err(IdError::TooLong)
        );
    }

    #[test]
    fn orders_numbers_by_value_then_text() {
        let mut ids: Vec<DocId> = ["10", "9", "b", "a", "010", "100"]
            .iter()
            .map(|s| DocId::parse(*s).unwrap())
            .collect();
        ids.sort();
        let got: Vec<&str> = ids.iter().map(DocId::as_str).collect();
        assert_eq!(got, ["9", "010", "10", "100", "a", "b"]);
    }

    #[test]
    fn serde_round_trip_checks_the_text() {
        let id: ClaimId = serde_json::from_str("\"42\"").unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"42\"");
        assert!(serde_json::from_str::<ClaimId>("\"\"").is_err());
    }
}
