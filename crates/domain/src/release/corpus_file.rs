//! `corpus_candidates.jsonl`: every document of the release in the SciFact corpus format,
//! `{"doc_id", "title", "abstract": [sentences], ...}`, in doc order. The document's other
//! fields (`structured`, `metadata`, ...) follow, in the order the corpus file gave them.

use super::checked::Checked;
use super::error::ReleaseError;
use super::json::{push_line, JsonId};
use crate::formats::Document;
use serde::ser::{Serialize, SerializeMap, Serializer};

const FILE: &str = "corpus_candidates.jsonl";

struct Line<'a>(&'a Document);

impl Serialize for Line<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let doc = self.0;
        let mut map = s.serialize_map(Some(3 + doc.extra.len()))?;
        map.serialize_entry("doc_id", &JsonId(doc.doc_id.as_str()))?;
        map.serialize_entry("title", &doc.title)?;
        map.serialize_entry("abstract", &doc.sentences)?;
        for (key, value) in &doc.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Writes `corpus_candidates.jsonl`.
pub(crate) fn write(release: &Checked<'_>) -> Result<Vec<u8>, ReleaseError> {
    let mut out = Vec::new();
    for doc in release.documents.values() {
        push_line(&mut out, FILE, &Line(doc))?;
    }
    Ok(out)
}
