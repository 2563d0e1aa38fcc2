//! A project's annotation guidelines as the pages see them.

use serde::{Deserialize, Serialize};

/// The current guidelines for a member of the project: rendered on the server (raw HTML
/// escaped, unsafe links dropped), so the page may insert `html` as is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GuidelinesView {
    pub version: i64,
    pub html: String,
    pub author: Option<String>,
    pub created_at_ms: i64,
    /// Whether the caller confirmed this version.
    pub confirmed: bool,
}

/// One version of the guidelines, as the lead's history lists them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GuidelinesVersion {
    pub version: i64,
    pub author: Option<String>,
    pub created_at_ms: i64,
    pub bytes: i64,
    /// Members who confirmed this version.
    pub confirmations: i64,
}

/// What the lead's editor starts from: the current text and every version, newest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GuidelinesEditor {
    /// The current version's number and Markdown; None before the first.
    pub current: Option<(i64, String)>,
    pub history: Vec<GuidelinesVersion>,
}
