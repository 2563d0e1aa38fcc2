//! The release command: record the project's current state as a release (or find that the
//! latest release holds it). The command line's `export`, the releases page and the HTTP API
//! call it with a [`Lead`] proof.

use super::Lead;
use crate::domain::release::ReleaseOptions;
use crate::error::ApiResult;
use crate::store::release::{self, Created, ReleaseRequest};
use crate::store::Db;

/// Releases the project's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreateRelease {
    /// Release although pooled pairs lack a final label.
    pub partial: bool,
    /// List unjudged pooled pairs in `qrels.txt` with relevance -1.
    pub unjudged: bool,
    /// Also write `qrels-model.txt`, the model assessors' labels (refused without one).
    pub model_qrels: bool,
}

impl CreateRelease {
    /// Records the release (audited as the lead's action); refused while pooled pairs lack a
    /// final label, unless `partial`.
    pub async fn run(self, db: &Db, lead: &Lead) -> ApiResult<Created> {
        let request = ReleaseRequest {
            partial: self.partial,
            options: ReleaseOptions {
                qrels_unjudged: self.unjudged,
                model_qrels: self.model_qrels,
            },
        };
        Ok(release::create(db, lead.project_id(), request, lead.audit_id()).await?)
    }
}
