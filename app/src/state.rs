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
}

/// The database, inside a server function or a page rendered on the server.
pub fn db() -> ApiResult<Db> {
    leptos::prelude::use_context::<AppState>()
        .map(|state| state.db)
        .ok_or_else(|| ApiError::Internal("the server state is missing".into()))
}
