//! Errors of the input readers: each names the file, the line (or parquet row) and the field.

use std::fmt;

/// One bad record: where it is and what is wrong with it.
///
/// Displays as `runs.jsonl:17: field "p_support": 1.3 is not a probability (a number in [0, 1])`,
/// or without the `field` part when the whole line is at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    /// The file's name, as the caller gave it.
    pub file: String,
    /// 1-based line number (for parquet, the 1-based row number).
    pub line: usize,
    /// The field at fault, as a dotted path into the line (`evidence.13734012.label`), if known.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    /// An error at `file:line`, about `field` when given.
    pub fn new(file: &str, line: usize, field: Option<&str>, message: impl Into<String>) -> Self {
        ParseError {
            file: file.to_owned(),
            line,
            field: field.map(str::to_owned),
            message: message.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.file, self.line)?;
        if let Some(field) = &self.field {
            write!(f, "field {field:?}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// A file that cannot be read at all (as opposed to one bad line, a [`ParseError`]).
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// The file cannot be opened or its first bytes cannot be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// A parquet file whose footer or schema is unreadable, or lacks a required column.
    #[error("{file}: not a usable parquet prediction table: {message}")]
    Parquet { file: String, message: String },
    /// The format could not be told from the file's first line.
    #[error("{file}: cannot tell the format from the first line: {reason}")]
    Undetected { file: String, reason: String },
    /// A bad line met while detecting the format.
    #[error(transparent)]
    Parse(#[from] ParseError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_file_line_and_field() {
        let e = ParseError::new(
            "runs.jsonl",
            17,
            Some("p_support"),
            "1.3 is not a probability (a number in [0, 1])",
        );
        assert_eq!(
            e.to_string(),
            "runs.jsonl:17: field \"p_support\": 1.3 is not a probability (a number in [0, 1])"
        );
        let e = ParseError::new("q.txt", 2, None, "expected 4 columns");
        assert_eq!(e.to_string(), "q.txt:2: expected 4 columns");
    }
}
