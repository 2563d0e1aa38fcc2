//! Server functions: each checks the caller's role on the server, calls the store or the domain,
//! and returns plain data. Endpoints are stable: `/api/<endpoint>`.

pub mod admin;
pub mod annotate;
pub mod auth;
pub mod gold;
pub mod guidelines;
pub mod imports;
pub mod pipeline;
pub mod pool;
pub mod projects;
pub mod release;
pub mod release_diff;
pub mod report;
pub mod runs;
pub mod sample;
pub mod search;
pub mod suggestions;
pub mod tokens;
#[cfg(feature = "ssr")]
pub mod upload;
pub mod webhooks;
pub mod work;

use crate::domain::account::{ProjectRole, Role};
#[cfg(feature = "ssr")]
use crate::error::{ApiError, ApiResult};

/// Who may call a server function. The server checks the account role for every
/// `/api/<endpoint>` request before the function reads its arguments (default deny: an endpoint
/// missing here is refused); a project's function then checks the caller's role in the project
/// its arguments name ([`crate::auth::require_project`]) before it does anything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Anyone, logged in or not (login, logout, who am I).
    Public,
    /// A logged-in user holding at least this account role.
    Role(Role),
    /// A logged-in user who may act in the named project with this role: its leads (who hold
    /// the lead role) or members, and admins.
    Project(ProjectRole),
}

impl Access {
    /// The account role the server checks before the function runs (None: anyone).
    pub fn account_role(self) -> Option<Role> {
        match self {
            Access::Public => None,
            Access::Role(role) => Some(role),
            Access::Project(ProjectRole::Lead) => Some(Role::Lead),
            Access::Project(ProjectRole::Annotator) => Some(Role::Annotator),
        }
    }
}

const LEAD: Access = Access::Project(ProjectRole::Lead);
const MEMBER: Access = Access::Project(ProjectRole::Annotator);

/// Every server function's endpoint (`/api/<endpoint>`) with its [`Access`]. A test checks that
/// it lists exactly the registered server functions.
pub const ENDPOINTS: &[(&str, Access)] = &[
    ("login", Access::Public),
    ("logout", Access::Public),
    ("whoami", Access::Public),
    ("sign-in-options", Access::Public),
    ("admin/users", Access::Role(Role::Admin)),
    ("admin/user/create", Access::Role(Role::Admin)),
    ("admin/user/reset", Access::Role(Role::Admin)),
    ("admin/user/role", Access::Role(Role::Admin)),
    ("admin/user/active", Access::Role(Role::Admin)),
    ("account/password", Access::Role(Role::Annotator)),
    ("account/tokens", Access::Role(Role::Annotator)),
    ("account/token/create", Access::Role(Role::Annotator)),
    ("account/token/revoke", Access::Role(Role::Annotator)),
    ("work/projects", Access::Role(Role::Annotator)),
    ("work/open-count", Access::Role(Role::Annotator)),
    ("work/queue", MEMBER),
    ("work/submit", MEMBER),
    ("work/undo", MEMBER),
    ("work/history", MEMBER),
    ("work/skip", MEMBER),
    ("work/flag", MEMBER),
    ("work/comment", MEMBER),
    ("work/search", MEMBER),
    ("work/search/judge", MEMBER),
    ("guidelines/view", MEMBER),
    ("guidelines/confirm", MEMBER),
    ("lead/projects", Access::Role(Role::Lead)),
    ("lead/project/create", Access::Role(Role::Lead)),
    ("lead/members", LEAD),
    ("lead/members/add", LEAD),
    ("lead/members/remove", LEAD),
    ("lead/guidelines", LEAD),
    ("lead/guidelines/save", LEAD),
    ("lead/project", LEAD),
    ("lead/claims", LEAD),
    ("lead/claim", LEAD),
    ("lead/systems", LEAD),
    ("lead/runs/upload", LEAD),
    ("lead/import/upload", LEAD),
    ("lead/jobs", LEAD),
    ("lead/job", LEAD),
    ("lead/job/cancel", LEAD),
    ("lead/pool/preview", LEAD),
    ("lead/pool/build", LEAD),
    ("lead/pool/stats", LEAD),
    ("lead/pool/sample", LEAD),
    ("lead/annotation", LEAD),
    ("lead/annotation/member", LEAD),
    ("lead/annotation/open", LEAD),
    ("lead/annotation/reassign", LEAD),
    ("lead/annotation/mode", LEAD),
    ("lead/annotation/judging", LEAD),
    ("lead/annotation/stop-sample", LEAD),
    ("lead/suggestions", LEAD),
    ("lead/suggestions/set", LEAD),
    ("lead/gold", LEAD),
    ("lead/gold/settings", LEAD),
    ("lead/gold/add", LEAD),
    ("lead/gold/admit", LEAD),
    ("lead/annotation/pair", LEAD),
    ("lead/annotation/adjudicate", LEAD),
    ("pipeline/options", LEAD),
    ("lead/gold/reannotation", LEAD),
    ("pipeline/start", LEAD),
    ("pipeline/job", LEAD),
    ("pipeline/jobs", LEAD),
    ("pipeline/cancel", LEAD),
    ("lead/webhooks", LEAD),
    ("lead/webhook/create", LEAD),
    ("lead/webhook/remove", LEAD),
    ("release/overview", LEAD),
    ("release/create", LEAD),
    ("release/diff", LEAD),
    ("report/view", LEAD),
    ("report/judging", LEAD),
    ("report/survey", LEAD),
];

/// The server functions that read a multipart form: the server refuses other bodies with 400
/// before the function runs (server_fn's multipart decoder panics on a body without a boundary).
pub const MULTIPART_ENDPOINTS: &[&str] = &["lead/runs/upload", "lead/import/upload"];

/// Whether `/api/<endpoint>` manages accounts (everything under `account/`: the caller's tokens
/// and password; everything under `admin/`: users, their passwords, roles and activation), which
/// needs a browser session: the server refuses a request with an API token there with 403 before
/// the function runs, and the functions check it again ([`crate::auth::require_session`]).
/// Issue 35: a leaked token must not make itself lasting by minting others, revoking itself,
/// changing the password, or (an admin's) creating an account or resetting another's password.
/// Scripts that manage users run `claimpool user` on the server's machine.
pub fn needs_session(endpoint: &str) -> bool {
    endpoint.starts_with("account/") || endpoint.starts_with("admin/")
}

/// The access of `/api/<endpoint>`; None for a path that is no server function.
pub fn access(endpoint: &str) -> Option<Access> {
    ENDPOINTS
        .iter()
        .find(|(e, _)| *e == endpoint)
        .map(|(_, access)| *access)
}

/// The database and the caller, who must be able to act in `project` as `role` (see
/// [`crate::auth::require_project`]).
#[cfg(feature = "ssr")]
pub(crate) async fn project_caller(
    role: ProjectRole,
    project: &str,
) -> ApiResult<(commands::Db, crate::auth::ProjectCaller)> {
    let caller = crate::auth::require_project(project, role).await?;
    Ok((crate::state::db()?, caller))
}

/// The database and the proof that the caller leads `project`, for a lead command.
#[cfg(feature = "ssr")]
pub(crate) async fn lead(project: &str) -> ApiResult<(commands::Db, commands::Lead)> {
    let (db, caller) = project_caller(ProjectRole::Lead, project).await?;
    Ok((db, commands::Lead::of(&caller)?))
}

/// Gives an error result its HTTP status, so clients other than the pages can act on it.
#[cfg(feature = "ssr")]
pub(crate) fn respond<T>(result: ApiResult<T>) -> ApiResult<T> {
    result.map_err(ApiError::into_response_error)
}
