//! Authentication on a request: the session, the one rule that resolves a request's caller (API
//! token or session, [`request_user`]), and the role check every server function and page runs
//! on the server. What reads the store (passwords, the throttled login, the account of a session
//! or token, project membership) is the commands crate's (`commands::login`, `commands::access`),
//! re-exported here.

use crate::domain::account::{ProjectRole, Role, User};
use crate::error::{ApiError, ApiResult};
use commands::Db;
use tower_sessions::Session;

/// The checks behind sessions and tokens, in the commands crate (they read the store).
pub use commands::access::{project_access, project_access_at, ProjectCaller};
/// Passwords and the throttled login check, in the commands crate.
pub use commands::login::{check_login, hash_password, one_time_password, password_matches};

/// The session key holding the logged-in user's id.
pub const SESSION_USER: &str = "user_id";
/// The session key holding the user's credentials version at login: a password set since
/// ends the session.
pub const SESSION_VERSION: &str = "credentials_version";

/// Logs the user into the session, with a fresh session id (no fixation).
pub async fn start_session(session: &Session, db: &Db, user: &User) -> ApiResult<()> {
    let version = commands::access::credentials_version(db, user).await?;
    session
        .cycle_id()
        .await
        .map_err(|e| ApiError::Internal(format!("session: {e}")))?;
    session
        .insert(SESSION_USER, user.id)
        .await
        .map_err(|e| ApiError::Internal(format!("session: {e}")))?;
    keep_session(session, version).await
}

/// Keeps the session valid after its own user set their password (credentials `version`).
pub async fn keep_session(session: &Session, version: i64) -> ApiResult<()> {
    session
        .insert(SESSION_VERSION, version)
        .await
        .map_err(|e| ApiError::Internal(format!("session: {e}")))
}

/// The active user of a session, if any.
pub async fn session_user(session: &Session, db: &Db) -> ApiResult<Option<User>> {
    let id: Option<i64> = session
        .get(SESSION_USER)
        .await
        .map_err(|e| ApiError::Internal(format!("session: {e}")))?;
    let Some(id) = id else {
        return Ok(None);
    };
    let version: i64 = session
        .get(SESSION_VERSION)
        .await
        .map_err(|e| ApiError::Internal(format!("session: {e}")))?
        .unwrap_or_default();
    Ok(commands::access::session_user(db, id, version).await?)
}

/// The client address of a request as the server resolved it: the socket's peer, or, when the
/// peer is a trusted reverse proxy (`serve --trusted-proxy`), the address the proxy forwarded.
/// Only the server's own layer inserts it: a client cannot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddress(pub std::net::IpAddr);

/// The address of the current request's client ([`ClientAddress`]; without that layer, the
/// socket's peer); empty when unknown.
pub async fn client_address() -> String {
    if let Ok(axum::Extension(ClientAddress(ip))) =
        leptos_axum::extract::<axum::Extension<ClientAddress>>().await
    {
        return ip.to_string();
    }
    leptos_axum::extract::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .await
        .map(|info| info.0.ip().to_canonical().to_string())
        .unwrap_or_default()
}

/// The session of the current server-function call or page render.
pub async fn session() -> ApiResult<Session> {
    leptos_axum::extract::<Session>()
        .await
        .map_err(|e| ApiError::Internal(format!("no session layer: {e}")))
}

/// The credential a request presents in its `Authorization` header, if it has one: the value
/// after `Bearer ` (any other scheme is a credential claimpool does not accept).
pub fn authorization(headers: &axum::http::HeaderMap) -> Option<Result<&str, ()>> {
    let value = headers.get(axum::http::header::AUTHORIZATION)?;
    let token = value
        .to_str()
        .ok()
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    Some(token.ok_or(()))
}

/// The caller of a request, by the one rule every page, server function and API route uses:
/// a request with an `Authorization` header is its API token's user, and a token that is not
/// live (wrong, revoked, its user deactivated) is [`ApiError::BadToken`], never anonymous;
/// otherwise the session's user, if any. A token acts with its user's account role and project
/// roles (read at every request).
pub async fn request_user(
    headers: &axum::http::HeaderMap,
    session: &Session,
    db: &Db,
) -> ApiResult<Option<User>> {
    match authorization(headers) {
        Some(Ok(token)) => Ok(Some(commands::access::token_user(db, token).await?)),
        Some(Err(())) => Err(ApiError::BadToken),
        None => session_user(session, db).await,
    }
}

/// The caller of a request as the server's guard resolved it by [`request_user`], before the
/// page or server function ran; carried in the request's extensions so that [`current_user`]
/// does not read the account a second time. Only the guard inserts it: a client cannot.
#[derive(Clone, Debug)]
pub struct ResolvedCaller(pub User);

/// The caller of the current server-function call or page render (see [`request_user`]): the
/// guard's [`ResolvedCaller`] when it resolved one for this request, else resolved now.
pub async fn current_user() -> ApiResult<Option<User>> {
    if let Ok(axum::Extension(ResolvedCaller(user))) =
        leptos_axum::extract::<axum::Extension<ResolvedCaller>>().await
    {
        return Ok(Some(user));
    }
    let db = crate::state::db()?;
    let headers = leptos_axum::extract::<axum::http::HeaderMap>()
        .await
        .map_err(|e| ApiError::Internal(format!("request headers: {e}")))?;
    request_user(&headers, &session().await?, &db).await
}

/// Why account management refuses an API token (issue 35: a leaked token must not make itself
/// lasting by minting tokens, changing the password or creating accounts).
pub const SESSION_ONLY: &str = "managing accounts (tokens, passwords, users) needs a browser session: \
     an API token cannot do it (on the server's machine, `claimpool user` and `claimpool token` can)";

/// The logged-in user of a browser session, who must hold `role`: a request that presents an
/// API token (`Authorization`) is refused with 403, session cookie or not. For everything under
/// `/api/account/` and `/api/admin/` (the server's guard refuses tokens there too,
/// [`crate::api::needs_session`]).
pub async fn require_session(role: Role) -> ApiResult<User> {
    let headers = leptos_axum::extract::<axum::http::HeaderMap>()
        .await
        .map_err(|e| ApiError::Internal(format!("request headers: {e}")))?;
    if authorization(&headers).is_some() {
        return Err(ApiError::Forbidden(SESSION_ONLY.into()));
    }
    let db = crate::state::db()?;
    let user = session_user(&session().await?, &db)
        .await?
        .ok_or(ApiError::Unauthenticated)?;
    if user.role.satisfies(role) {
        Ok(user)
    } else {
        Err(ApiError::Forbidden(format!("this needs the {role} role")))
    }
}

/// The logged-in user, who must hold `role` (admins hold every role, leads the annotator's).
pub async fn require(role: Role) -> ApiResult<User> {
    let user = current_user().await?.ok_or(ApiError::Unauthenticated)?;
    if user.role.satisfies(role) {
        Ok(user)
    } else {
        Err(ApiError::Forbidden(format!("this needs the {role} role")))
    }
}

/// The logged-in caller of a server function, who must be able to act in `project` as
/// `required` (see [`project_access`]).
pub async fn require_project(project: &str, required: ProjectRole) -> ApiResult<ProjectCaller> {
    let user = current_user().await?.ok_or(ApiError::Unauthenticated)?;
    Ok(project_access(&crate::state::db()?, user, project, required).await?)
}
