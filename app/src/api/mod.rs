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

use crate::domain::account::Role;
#[cfg(feature = "ssr")]
use crate::error::{ApiError, ApiResult};

/// Who may call a server function at all. The server checks this for every `/api/<endpoint>`
/// request before the function reads its arguments (default deny: an endpoint missing here is
/// refused); each function then checks the caller's relation to what it touches (their own queue,
/// a project they lead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Anyone, logged in or not (login, logout, who am I).
    Public,
    /// A logged-in user holding at least this role.
    Role(Role),
}

/// Every server function's endpoint (`/api/<endpoint>`) with its [`Access`]. A test checks that
/// it lists exactly the registered server functions.
pub const ENDPOINTS: &[(&str, Access)] = &[
    ("login", Access::Public),
    ("logout", Access::Public),
    ("whoami", Access::Public),
    ("admin/users", Access::Role(Role::Admin)),
    ("work/projects", Access::Role(Role::Annotator)),
    ("work/open-count", Access::Role(Role::Annotator)),
    ("work/queue", Access::Role(Role::Annotator)),
    ("work/submit", Access::Role(Role::Annotator)),
    ("work/undo", Access::Role(Role::Annotator)),
    ("work/skip", Access::Role(Role::Annotator)),
    ("work/flag", Access::Role(Role::Annotator)),
    ("work/comment", Access::Role(Role::Annotator)),
    ("lead/projects", Access::Role(Role::Lead)),
    ("lead/project", Access::Role(Role::Lead)),
    ("lead/claims", Access::Role(Role::Lead)),
    ("lead/claim", Access::Role(Role::Lead)),
    ("lead/systems", Access::Role(Role::Lead)),
    ("lead/runs/upload", Access::Role(Role::Lead)),
    ("lead/pool/preview", Access::Role(Role::Lead)),
    ("lead/pool/build", Access::Role(Role::Lead)),
    ("lead/pool/stats", Access::Role(Role::Lead)),
    ("lead/annotation", Access::Role(Role::Lead)),
    ("lead/annotation/member", Access::Role(Role::Lead)),
    ("lead/annotation/open", Access::Role(Role::Lead)),
    ("lead/annotation/reassign", Access::Role(Role::Lead)),
    ("lead/annotation/mode", Access::Role(Role::Lead)),
    ("lead/annotation/pair", Access::Role(Role::Lead)),
    ("lead/annotation/adjudicate", Access::Role(Role::Lead)),
    ("pipeline/options", Access::Role(Role::Lead)),
    ("pipeline/start", Access::Role(Role::Lead)),
    ("pipeline/job", Access::Role(Role::Lead)),
    ("pipeline/jobs", Access::Role(Role::Lead)),
    ("pipeline/cancel", Access::Role(Role::Lead)),
    ("release/overview", Access::Role(Role::Lead)),
    ("release/create", Access::Role(Role::Lead)),
    ("report/view", Access::Role(Role::Lead)),
];

/// The server functions that read a multipart form: the server refuses other bodies with 400
/// before the function runs (server_fn's multipart decoder panics on a body without a boundary).
pub const MULTIPART_ENDPOINTS: &[&str] = &["lead/runs/upload"];

/// The access of `/api/<endpoint>`; None for a path that is no server function.
pub fn access(endpoint: &str) -> Option<Access> {
    ENDPOINTS
        .iter()
        .find(|(e, _)| *e == endpoint)
        .map(|(_, access)| *access)
}

/// Gives an error result its HTTP status, so clients other than the pages can act on it.
#[cfg(feature = "ssr")]
pub(crate) fn respond<T>(result: ApiResult<T>) -> ApiResult<T> {
    result.map_err(ApiError::into_response_error)
}
