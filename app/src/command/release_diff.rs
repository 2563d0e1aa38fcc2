//! The release diff command (issue 17): release B of a project against release A, read from
//! the two recorded archives. The command line's `release diff`, the lead's diff page call it
//! with a [`Lead`] proof.

use super::Lead;
use crate::domain::release::{DiffError, ReleaseContents};
use crate::error::{ApiError, ApiResult, Field};
use crate::model::release_diff::{DiffBootstrap, ReleaseDiff};
use crate::store::Db;

/// Compares release `b` with release `a` (release numbers of the lead's project).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompareReleases {
    pub a: u32,
    pub b: u32,
    /// Resamples (at least 2) and seed of the paired bootstrap.
    pub bootstrap: DiffBootstrap,
}

impl CompareReleases {
    /// The diff (the bootstrap runs on a thread of its own at a lower priority). A release that does not exist is
    /// "not found"; fewer than 2 resamples is invalid; an archive that cannot be read is a
    /// server fault.
    pub async fn run(self, db: &Db, lead: &Lead) -> ApiResult<ReleaseDiff> {
        let CompareReleases { a, b, bootstrap } = self;
        if bootstrap.samples < 2 {
            return Err(ApiError::field(
                Field::Samples,
                format!(
                    "the bootstrap needs at least 2 resamples, not {}",
                    bootstrap.samples
                ),
            ));
        }
        let project = lead.project_id();
        let (_, archive_a) = crate::store::release::archive(db, project, a).await?;
        let (_, archive_b) = crate::store::release::archive(db, project, b).await?;
        let computed = crate::store::background::spawn("release diff", move || {
            let a = ReleaseContents::from_archive(a, &archive_a)?;
            let b = ReleaseContents::from_archive(b, &archive_b)?;
            crate::domain::release::diff(&a, &b, bootstrap)
        })?
        .join()
        .await?;
        computed.map_err(|e| match e {
            DiffError::Samples(e) => ApiError::field(Field::Samples, e),
            other => ApiError::Internal(other.to_string()),
        })
    }
}
