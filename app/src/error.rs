//! The error every server function returns: a kind the page can act on, and a message a person
//! can read. On the server each kind also sets the HTTP status of the response.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
pub enum ApiError {
    /// No session: the caller must log in.
    #[error("please log in")]
    Unauthenticated,
    /// Logged in, but the role does not allow this.
    #[error("forbidden: {0}")]
    Forbidden(String),
    #[error("wrong user name or password")]
    BadCredentials,
    #[error("too many failed logins for {username}; try again in {retry_after_secs} s")]
    Throttled {
        username: String,
        retry_after_secs: i64,
    },
    #[error("not found: {0}")]
    NotFound(String),
    /// The request's input is wrong; the message says which field and why.
    #[error("{0}")]
    Invalid(String),
    /// The request conflicts with the current state (a duplicate, a stale item).
    #[error("{0}")]
    Conflict(String),
    /// Something failed on the server; details are in the server log.
    #[error("server error: {0}")]
    Internal(String),
    /// Transport and encoding errors of the server-function machinery.
    #[error("{0}")]
    ServerFn(ServerFnErrorErr),
}

impl FromServerFnError for ApiError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        ApiError::ServerFn(value)
    }
}

#[cfg(feature = "ssr")]
impl ApiError {
    pub fn status(&self) -> axum::http::StatusCode {
        use axum::http::StatusCode;
        match self {
            ApiError::Unauthenticated | ApiError::BadCredentials => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::Throttled { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Invalid(_) => StatusCode::BAD_REQUEST,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Internal(_) | ApiError::ServerFn(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Sets the HTTP status of the server function's response to this error's, and returns it.
    pub fn into_response_error(self) -> ApiError {
        if let Some(res) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
            res.set_status(self.status());
        }
        self
    }
}

#[cfg(feature = "ssr")]
impl From<crate::store::StoreError> for ApiError {
    fn from(err: crate::store::StoreError) -> ApiError {
        match err {
            crate::store::StoreError::NotFound(what) => ApiError::NotFound(what),
            crate::store::StoreError::Conflict(what) => ApiError::Conflict(what),
            crate::store::StoreError::Invalid(what) => ApiError::Invalid(what),
            crate::store::StoreError::Forbidden(what) => ApiError::Forbidden(what),
            other => {
                tracing::error!(error = %other, "store error");
                ApiError::Internal(other.to_string())
            }
        }
    }
}

impl ApiError {
    /// The same error with its message rewritten (for the kinds that carry one).
    pub fn map_message(self, f: impl Fn(&str) -> String) -> ApiError {
        match self {
            ApiError::Invalid(m) => ApiError::Invalid(f(&m)),
            ApiError::Conflict(m) => ApiError::Conflict(f(&m)),
            ApiError::NotFound(m) => ApiError::NotFound(f(&m)),
            other => other,
        }
    }
}

/// Shorthand for server function results.
pub type ApiResult<T> = Result<T, ApiError>;
