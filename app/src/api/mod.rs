//! Server functions: each checks the caller's role on the server, calls the store or the domain,
//! and returns plain data. Endpoints are stable: `/api/<endpoint>`.

pub mod admin;
pub mod annotate;
pub mod auth;
pub mod pipeline;
pub mod pool;
pub mod projects;
pub mod release;
pub mod report;
pub mod runs;
pub mod work;

#[cfg(feature = "ssr")]
use crate::error::{ApiError, ApiResult};

/// Gives an error result its HTTP status, so clients other than the pages can act on it.
#[cfg(feature = "ssr")]
pub(crate) fn respond<T>(result: ApiResult<T>) -> ApiResult<T> {
    result.map_err(ApiError::into_response_error)
}
