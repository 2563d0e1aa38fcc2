//! The server's shared state, reachable from handlers (axum `FromRef`) and server functions
//! (Leptos context).

use crate::error::{ApiError, ApiResult};
use crate::store::Db;
use axum::extract::FromRef;
use leptos::prelude::LeptosOptions;

#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub db: Db,
    /// What pipeline jobs may use (commands and models named on the server's command line).
    pub pipeline: std::sync::Arc<crate::pipeline::job::PipelineSettings>,
    /// How much a browser may upload.
    pub limits: UploadLimits,
}

/// Limits on what a browser uploads, set on `serve` (`--max-upload-mb`, `--max-decompressed-mb`,
/// `--max-line-kb`, `--max-sentences`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UploadLimits {
    /// The largest uploaded file, in bytes, as sent (compressed when it is gzip).
    pub max_file_bytes: u64,
    /// The most an uploaded file may hold once decompressed, in bytes.
    pub max_decompressed_bytes: u64,
    /// The longest line of an uploaded file, in bytes.
    pub max_line_bytes: usize,
    /// The most predicted rationale sentences per prediction.
    pub max_sentences: usize,
    /// The longest form field other than the file (a system name, a description), in bytes.
    pub max_field_bytes: usize,
}

impl Default for UploadLimits {
    fn default() -> Self {
        UploadLimits {
            max_file_bytes: 1024 * 1024 * 1024,
            // A 10-million-line run is about 1.5 GiB of JSON lines.
            max_decompressed_bytes: 8 * 1024 * 1024 * 1024,
            max_line_bytes: 16 * 1024 * 1024,
            max_sentences: 1_000,
            max_field_bytes: 64 * 1024,
        }
    }
}

/// The upload limits, inside a server function.
pub fn limits() -> ApiResult<UploadLimits> {
    leptos::prelude::use_context::<AppState>()
        .map(|state| state.limits)
        .ok_or_else(|| ApiError::Internal("the server state is missing".into()))
}

/// The database, inside a server function or a page rendered on the server.
pub fn db() -> ApiResult<Db> {
    leptos::prelude::use_context::<AppState>()
        .map(|state| state.db)
        .ok_or_else(|| ApiError::Internal("the server state is missing".into()))
}

/// The pipeline settings, inside a server function.
pub fn pipeline() -> ApiResult<std::sync::Arc<crate::pipeline::job::PipelineSettings>> {
    leptos::prelude::use_context::<AppState>()
        .map(|state| state.pipeline)
        .ok_or_else(|| ApiError::Internal("the server state is missing".into()))
}
