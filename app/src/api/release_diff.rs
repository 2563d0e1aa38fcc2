//! What changed between two releases of a project (issue 17), for the lead's diff page: the
//! command [`commands::release_diff::CompareReleases`], which `claimpool release diff`
//! calls too.

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
            let (db, lead) = crate::api::lead(&project).await?;
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
            let _turn = crate::state::heavy()?.turn("release diff").await?;
            Ok(commands::release_diff::CompareReleases { a, b, bootstrap }
                .run(&db, &lead)
                .await?)
        }
        .await,
    )
}
