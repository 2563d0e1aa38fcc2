//! The error every server function returns: a kind the page can act on, and a message a person
//! can read. On the server each kind also sets the HTTP status of the response.

pub use crate::domain::field::Field;
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
    /// The request's `Authorization` is no live API token of an active user (a token that is
    /// present but wrong never falls back to anonymous).
    #[error("the API token is invalid or revoked, or its user is deactivated")]
    BadToken,
    #[error("too many failed logins for {username}; try again in {retry_after_secs} s")]
    Throttled {
        username: String,
        retry_after_secs: i64,
    },
    /// Too many logins are being checked at once; the client may retry shortly.
    #[error("the server is busy checking other logins; try again in a moment")]
    Busy,
    #[error("not found: {0}")]
    NotFound(String),
    /// The request's input is wrong; the message says which field and why.
    #[error("{0}")]
    Invalid(String),
    /// One named input of a command is wrong: the pages show `field: message`, the command line
    /// names its option (`--field: message`).
    #[error("{}: {message}", .field.label())]
    Field { field: Field, message: String },
    /// The request conflicts with the current state (a duplicate, a stale item).
    #[error("{0}")]
    Conflict(String),
    /// The server is doing as much heavy work (reports, diffs) as it allows; the client may
    /// retry later. The message says what was refused.
    #[error("busy: {0}")]
    Overloaded(String),
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
            ApiError::Unauthenticated | ApiError::BadCredentials | ApiError::BadToken => {
                StatusCode::UNAUTHORIZED
            }
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::Throttled { .. } | ApiError::Busy => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Overloaded(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Invalid(_) | ApiError::Field { .. } => StatusCode::BAD_REQUEST,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Internal(_) | ApiError::ServerFn(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Sets the HTTP status of the server function's response to this error's, and returns it
    /// made [opaque](ApiError::opaque).
    pub fn into_response_error(self) -> ApiError {
        let error = self.opaque();
        if let Some(res) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
            res.set_status(error.status());
        }
        error
    }

    /// A server fault with its detail replaced by an id: the detail (an SQLite message, a path,
    /// a panic) goes to the server log with that id, and the client learns only the id. Errors
    /// of the request (invalid input, forbidden, not found, conflicts) pass unchanged.
    pub fn opaque(self) -> ApiError {
        match self {
            ApiError::Internal(detail) => {
                let id = fault_id();
                tracing::error!(error_id = %id, detail = %detail, "server fault");
                ApiError::Internal(format!("reference {id}; the server log has the details"))
            }
            ApiError::ServerFn(ServerFnErrorErr::ServerError(detail)) => {
                ApiError::Internal(detail).opaque()
            }
            other => other,
        }
    }
}

/// A short random id that ties a client's error message to the server log's line.
#[cfg(feature = "ssr")]
fn fault_id() -> String {
    format!("{:08x}", rand::random::<u32>())
}

/// A command's error as the server functions answer it: the same kind, one to one.
#[cfg(feature = "ssr")]
impl From<commands::CommandError> for ApiError {
    fn from(err: commands::CommandError) -> ApiError {
        use commands::CommandError as E;
        match err {
            E::Unauthenticated => ApiError::Unauthenticated,
            E::Forbidden(what) => ApiError::Forbidden(what),
            E::BadCredentials => ApiError::BadCredentials,
            E::BadToken => ApiError::BadToken,
            E::Throttled {
                username,
                retry_after_secs,
            } => ApiError::Throttled {
                username,
                retry_after_secs,
            },
            E::Busy => ApiError::Busy,
            E::NotFound(what) => ApiError::NotFound(what),
            E::Invalid(what) => ApiError::Invalid(what),
            E::Field { field, message } => ApiError::Field { field, message },
            E::Conflict(what) => ApiError::Conflict(what),
            E::Overloaded(what) => ApiError::Overloaded(what),
            E::Internal(what) => ApiError::Internal(what),
        }
    }
}

impl ApiError {
    /// The input `field` is wrong: `message` says why.
    pub fn field(field: Field, message: impl std::fmt::Display) -> ApiError {
        ApiError::Field {
            field,
            message: message.to_string(),
        }
    }

    /// The same error about the input `field`: an invalid input becomes [`ApiError::Field`];
    /// other errors pass unchanged.
    pub fn about(self, field: Field) -> ApiError {
        match self {
            ApiError::Invalid(message) | ApiError::Field { message, .. } => {
                ApiError::Field { field, message }
            }
            other => other,
        }
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    #[test]
    fn faults_are_opaque_request_errors_are_not() {
        let fault = ApiError::Internal("database is locked at /srv/claimpool.db".into()).opaque();
        let ApiError::Internal(message) = &fault else {
            panic!("a fault stays a fault: {fault:?}");
        };
        assert!(
            !message.contains("locked") && !message.contains("/srv"),
            "{message}"
        );
        assert!(message.starts_with("reference "), "{message}");
        assert_eq!(
            fault.status(),
            axum::http::StatusCode::INTERNAL_SERVER_ERROR
        );
        let io: ApiError =
            commands::CommandError::Internal("writing /tmp/x: disk full".into()).into();
        assert_eq!(io.status(), axum::http::StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!io.opaque().to_string().contains("disk"));
        let throttled: ApiError = commands::CommandError::Throttled {
            username: "ann".into(),
            retry_after_secs: 3,
        }
        .into();
        assert_eq!(
            throttled,
            ApiError::Throttled {
                username: "ann".into(),
                retry_after_secs: 3
            }
        );
        let field = ApiError::field(Field::LabelOrder, "REFUTE is given twice");
        assert_eq!(field.to_string(), "label order: REFUTE is given twice");
        assert_eq!(field.status(), axum::http::StatusCode::BAD_REQUEST);
        assert_eq!(
            ApiError::Invalid("is empty".into()).about(Field::Name),
            ApiError::field(Field::Name, "is empty")
        );
        assert_eq!(
            ApiError::NotFound("project x".into()).about(Field::Name),
            ApiError::NotFound("project x".into())
        );
        for kept in [
            ApiError::Invalid("line 3, field doc_id: not a number".into()),
            ApiError::Forbidden("this needs the lead role".into()),
            ApiError::NotFound("project x".into()),
            ApiError::Conflict("already imported".into()),
        ] {
            assert_eq!(kept.clone().opaque(), kept);
        }
    }
}

/// Shorthand for server function results.
pub type ApiResult<T> = Result<T, ApiError>;
