//! The key a browser gives each submission, so that a submission sent again (its reply was lost
//! on a flaky network) is stored once.

use std::fmt;

/// Longest key accepted.
pub const MAX_KEY_LEN: usize = 64;

/// A submission's key: 1 to [`MAX_KEY_LEN`] ASCII letters, digits and hyphens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SubmissionKey(String);

/// Why a text is not a submission key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmissionKeyError {
    #[error("is empty")]
    Empty,
    #[error("is longer than {MAX_KEY_LEN} characters")]
    TooLong,
    #[error("may hold only letters, digits and hyphens")]
    Characters,
}

impl SubmissionKey {
    pub fn parse(text: &str) -> Result<SubmissionKey, SubmissionKeyError> {
        if text.is_empty() {
            Err(SubmissionKeyError::Empty)
        } else if text.len() > MAX_KEY_LEN {
            Err(SubmissionKeyError::TooLong)
        } else if !text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            Err(SubmissionKeyError::Characters)
        } else {
            Ok(SubmissionKey(text.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SubmissionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_short_plain_words() {
        assert_eq!(
            SubmissionKey::parse("19c2f-0a1b2c3d4e5f6071").map(|k| k.to_string()),
            Ok("19c2f-0a1b2c3d4e5f6071".to_owned())
        );
        assert_eq!(SubmissionKey::parse(""), Err(SubmissionKeyError::Empty));
        assert_eq!(
            SubmissionKey::parse(&"a".repeat(MAX_KEY_LEN + 1)),
            Err(SubmissionKeyError::TooLong)
        );
        assert!(SubmissionKey::parse(&"a".repeat(MAX_KEY_LEN)).is_ok());
        for bad in ["a b", "a/b", "ключ", "a\n", "a'b"] {
            assert_eq!(
                SubmissionKey::parse(bad),
                Err(SubmissionKeyError::Characters),
                "{bad:?}"
            );
        }
    }
}
