//! What changed between two releases of a project (issue 17), for the lead's diff page and
//! `claimpool release diff`: both read the two recorded archives and call
//! [`crate::domain::release::diff`].

use crate::error::ApiError;
use crate::model::release_diff::ReleaseDiff;
use leptos::prelude::*;

/// The most bootstrap resamples the page may ask for.
pub const MAX_WEB_DIFF_SAMPLES: u32 = 10_000;

/// The diff page of releases `a` and `b` of `project`.
pub fn diff_path(project: &str, a: u32, b: u32) -> String {
    format!(
        "/lead/projects/{}/releases/diff?a={a}&b={b}",
        crate::api::report::encode_path_segment(project)
    )
}

/// Release `b` of the project against release `a`: pairs whose label changed, added and
/// withdrawn, and each system's scores under both with the paired bootstrap interval of the
/// difference (`samples` resamples, default 1,000; `seed`, default 0).
#[server(endpoint = "release/diff")]
pub async fn compare_releases(
    project: String,
    a: u32,
    b: u32,
    samples: Option<u32>,
    seed: Option<u64>,
) -> Result<ReleaseDiff, ApiError> {
    crate::api::respond(
        async {
            let (db, caller) =
                crate::api::project_caller(crate::domain::account::ProjectRole::Lead, &project)
                    .await?;
            let samples = samples.unwrap_or(crate::model::release_diff::DEFAULT_DIFF_SAMPLES);
            if samples > MAX_WEB_DIFF_SAMPLES {
                return Err(ApiError::Invalid(format!(
                    "samples: at most {MAX_WEB_DIFF_SAMPLES} bootstrap resamples, not {samples}"
                )));
            }
            let bootstrap = crate::model::release_diff::DiffBootstrap {
                samples,
                seed: seed.unwrap_or(crate::model::release_diff::DEFAULT_DIFF_SEED),
            };
            diff(&db, caller.project_id(), a, b, bootstrap).await
        }
        .await,
    )
}

/// Release `b` of project `project_id` against release `a`, read from the recorded archives
/// (the bootstrap runs on a blocking thread). A release that does not exist is "not found";
/// fewer than 2 resamples is invalid; an archive that cannot be read is a server fault.
#[cfg(feature = "ssr")]
pub async fn diff(
    db: &crate::store::Db,
    project_id: i64,
    a: u32,
    b: u32,
    bootstrap: crate::model::release_diff::DiffBootstrap,
) -> Result<ReleaseDiff, ApiError> {
    use crate::domain::release::{DiffError, ReleaseContents};
    if bootstrap.samples < 2 {
        return Err(ApiError::Invalid(format!(
            "samples: the bootstrap needs at least 2 resamples, not {}",
            bootstrap.samples
        )));
    }
    let (_, archive_a) = crate::store::release::archive(db, project_id, a).await?;
    let (_, archive_b) = crate::store::release::archive(db, project_id, b).await?;
    let computed = tokio::task::spawn_blocking(move || {
        let a = ReleaseContents::from_archive(a, &archive_a)?;
        let b = ReleaseContents::from_archive(b, &archive_b)?;
        crate::domain::release::diff(&a, &b, bootstrap)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("comparing the releases stopped: {e}")))?;
    computed.map_err(|e| match e {
        DiffError::Samples(e) => ApiError::Invalid(format!("samples: {e}")),
        other => ApiError::Internal(other.to_string()),
    })
}
