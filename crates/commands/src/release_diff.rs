//! The release diff command (issue 17): release B of a project against release A, read from
//! the two recorded archives. The command line's `release diff`, the lead's diff page call it
//! with a [`Lead`] proof.

use super::Lead;
use crate::error::{CommandError, CommandResult, Field};
use domain::model::release_diff::{DiffBootstrap, ReleaseDiff};
use domain::release::{DiffError, ReleaseContents};
use store::Db;

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
    pub async fn run(self, db: &Db, lead: &Lead) -> CommandResult<ReleaseDiff> {
        let CompareReleases { a, b, bootstrap } = self;
        if bootstrap.samples < 2 {
            return Err(CommandError::field(
                Field::Samples,
                format!(
                    "the bootstrap needs at least 2 resamples, not {}",
                    bootstrap.samples
                ),
            ));
        }
        let project = lead.project_id();
        let (_, archive_a) = store::release::archive(db, project, a).await?;
        let (_, archive_b) = store::release::archive(db, project, b).await?;
        let computed = crate::background::spawn("release diff", move || {
            let a = ReleaseContents::from_archive(a, &archive_a)?;
            let b = ReleaseContents::from_archive(b, &archive_b)?;
            domain::release::diff(&a, &b, bootstrap)
        })?
        .join()
        .await?;
        computed.map_err(|e| match e {
            DiffError::Samples(e) => CommandError::field(Field::Samples, e),
            other => CommandError::Internal(other.to_string()),
        })
    }
}
