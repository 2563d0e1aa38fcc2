//! `specificity.jsonl`: how each annotated claim relates to the evidence,
//! `{"claim_id", "doc_id", "relation", "revised_claim"}` (either may be `null`), in claim then doc
//! order. `relation` is one of `matches`, `evidence_more_specific`, `evidence_more_general`,
//! `closely_related`.

use super::checked::Checked;
use super::error::ReleaseError;
use super::json::{push_line, JsonId};
use serde::Serialize;

const FILE: &str = "specificity.jsonl";

#[derive(Serialize)]
struct Line<'a> {
    claim_id: JsonId<'a>,
    doc_id: JsonId<'a>,
    relation: Option<&'static str>,
    revised_claim: Option<&'a str>,
}

/// Writes `specificity.jsonl`.
pub(crate) fn write(release: &Checked<'_>) -> Result<Vec<u8>, ReleaseError> {
    let mut out = Vec::new();
    for ((claim, doc), note) in &release.specificity {
        let line = Line {
            claim_id: JsonId(claim.as_str()),
            doc_id: JsonId(doc.as_str()),
            relation: note.relation.map(|r| r.as_str()),
            revised_claim: note.revised_claim.as_deref(),
        };
        push_line(&mut out, FILE, &line)?;
    }
    Ok(out)
}
