//! The problems found in an import's file, for a rejection that names each (file, line and
//! field), and the ids a file brings, each of which must be new.

use crate::error::CommandError;
use domain::formats::{FormatError, Located, ParseError};
use std::collections::{HashMap, HashSet};

/// At most this many problems are listed for a rejected file.
pub const MAX_ERRORS: usize = 50;

/// Problems found in a file.
#[derive(Default)]
pub(crate) struct Problems {
    file: String,
    list: Vec<String>,
    more: usize,
}

impl Problems {
    pub(crate) fn new(file: &str) -> Problems {
        Problems {
            file: file.to_owned(),
            ..Problems::default()
        }
    }

    fn push(&mut self, problem: String) {
        if self.list.len() < MAX_ERRORS {
            self.list.push(problem);
        } else {
            self.more += 1;
        }
    }

    pub(crate) fn at(&mut self, line: usize, field: Option<&str>, message: impl Into<String>) {
        self.push(ParseError::new(&self.file.clone(), line, field, message).to_string());
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The record of a parsed line, or None after noting the line's error.
    pub(crate) fn record<T>(&mut self, item: Result<Located<T>, ParseError>) -> Option<Located<T>> {
        item.map_err(|e| self.push(e.to_string())).ok()
    }

    pub(crate) fn into_error(self) -> CommandError {
        let total = self.list.len() + self.more;
        let mut text = format!(
            "{}: {total} problem{} found, nothing was imported:",
            self.file,
            if total == 1 { "" } else { "s" }
        );
        for p in &self.list {
            text.push_str("\n  ");
            text.push_str(p);
        }
        if self.more > 0 {
            text.push_str(&format!("\n  … and {} more", self.more));
        }
        CommandError::Invalid(text)
    }
}

/// A file that cannot be read as its format says.
pub(crate) fn format_error(err: FormatError) -> CommandError {
    CommandError::Invalid(err.to_string())
}

/// Ids a file brings: each must be new to the project and appear once in the file.
pub(crate) struct NewIds {
    existing: HashSet<String>,
    seen: HashMap<String, usize>,
    /// "document" or "claim", and the field that holds the id.
    what: &'static str,
    field: &'static str,
}

impl NewIds {
    pub(crate) fn new(
        existing: HashSet<String>,
        what: &'static str,
        field: &'static str,
    ) -> NewIds {
        NewIds {
            existing,
            seen: HashMap::new(),
            what,
            field,
        }
    }

    /// Whether `id` on `line` is new; if not, the problem is noted.
    pub(crate) fn admit(&mut self, id: &str, line: usize, problems: &mut Problems) -> bool {
        let (what, field) = (self.what, self.field);
        if self.existing.contains(id) {
            problems.at(
                line,
                Some(field),
                format!("{what} {id} is in the project already"),
            );
            return false;
        }
        if let Some(first) = self.seen.insert(id.to_owned(), line) {
            problems.at(
                line,
                Some(field),
                format!("{what} {id} appears twice (first on line {first})"),
            );
            return false;
        }
        true
    }
}
