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
