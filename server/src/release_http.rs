//! Downloading a release's `.tar.gz`: a plain GET route, for browsers' save dialogs and for
//! `curl`. The page guard lets only the project's leads through, with the proof
//! ([`ProjectCaller`]) the handler requires.

use app::auth::ProjectCaller;
use app::state::AppState;
use axum::extract::{Extension, Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use commands::{CommandError, Db, Lead};

/// The route, in axum's path syntax.
pub const DOWNLOAD_ROUTE: &str = "/lead/projects/{name}/releases/{number}/download";

fn plain(status: StatusCode, text: impl Into<String>) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text.into(),
    )
        .into_response()
}

/// `GET /lead/projects/{name}/releases/{number}/download`: the archive as an attachment named
/// `<project>-release-<number>.tar.gz`.
pub async fn download(
    State(state): State<AppState>,
    Extension(caller): Extension<ProjectCaller>,
    Path((_, number)): Path<(String, String)>,
) -> Response {
    // The page guard lets only the project's leads through: the proof follows.
    let lead = match Lead::of(&caller) {
        Ok(lead) => lead,
        Err(e) => return plain(StatusCode::FORBIDDEN, e.to_string()),
    };
    match archive(&state.db, &lead, &number).await {
        Ok(response) => response,
        Err(CommandError::NotFound(what)) => {
            plain(StatusCode::NOT_FOUND, format!("not found: {what}"))
        }
        Err(e) => {
            tracing::error!(error = %e, "release download");
            plain(StatusCode::INTERNAL_SERVER_ERROR, "server error")
        }
    }
}

/// The archive of release `number` (as the path gives it) of the lead's project, as a
/// `.tar.gz` attachment: the page's download link and the HTTP API's route alike. The body is
/// streamed from the database one part (at most 1 MiB) at a time, with the archive's
/// `Content-Length`: a download holds one part in memory, not the archive (issue 35). A part
/// that cannot be read after the response began ends the body early (logged); the client sees
/// fewer bytes than announced.
pub async fn archive(db: &Db, lead: &Lead, number: &str) -> Result<Response, CommandError> {
    let download = commands::release_download::archive(db, lead, number).await?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/gzip".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}\"", download.file_name),
            ),
            (header::CONTENT_LENGTH, download.bytes.to_string()),
        ],
        axum::body::Body::from_stream(download.parts),
    )
        .into_response())
}
