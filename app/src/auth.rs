//! Authentication: argon2id password hashes, login with throttling, the one rule that resolves a
//! request's caller (API token or session, [`request_user`]), and the role check every server
//! function and page runs on the server.

use crate::domain::account::{
    may_act_in_project, Admission, NewPassword, ProjectRole, Role, ThrottlePolicy, User,
    MAX_LOGIN_NAME_CHARS, MAX_PASSWORD_CHARS,
};
use crate::error::{ApiError, ApiResult};
use crate::store::{self, Db, StoreError};
use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use tower_sessions::Session;

/// The session key holding the logged-in user's id.
pub const SESSION_USER: &str = "user_id";
/// The session key holding the user's credentials version at login: a password set since
/// ends the session.
pub const SESSION_VERSION: &str = "credentials_version";

/// Hashes a password with argon2id (the crate's default algorithm and parameters).
pub fn hash_password(password: &NewPassword) -> Result<String, StoreError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.expose().as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| StoreError::Fault(format!("cannot hash the password: {e}")))
}

fn verify_password(hash: &str, password: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

/// A fresh one-time password from the operating system's random source.
pub fn one_time_password() -> ApiResult<NewPassword> {
    use argon2::password_hash::rand_core::RngCore;
    let mut bytes = [0u8; 15];
    OsRng.fill_bytes(&mut bytes);
    NewPassword::parse(&crate::domain::account::one_time_password(bytes))
        .map_err(|e| ApiError::Internal(format!("one-time password: {e}")))
}

/// Whether `password` is `username`'s (through the capped verifications).
pub async fn password_matches(db: &Db, username: &str, password: &str) -> ApiResult<bool> {
    if password.chars().count() > MAX_PASSWORD_CHARS {
        return Ok(false);
    }
    let Some((_, hash)) = store::users::credentials(db, username).await? else {
        return Ok(false);
    };
    verify_capped(hash, password.to_owned()).await
}

/// A hash to verify against when the user name does not exist, so that a wrong name and a
/// wrong password take the same time.
fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| {
        NewPassword::parse("not-a-real-password")
            .ok()
            .and_then(|p| hash_password(&p).ok())
            .unwrap_or_default()
    })
}

/// At most this many password hashes are verified at once (argon2id takes ~19 MiB and a core's
/// worth of time each); up to [`MAX_WAITING_LOGINS`] more wait for a turn (a lab of annotators
/// behind one address signing in at once), others are refused as [`ApiError::Busy`], which
/// counts for nothing.
const CONCURRENT_VERIFICATIONS: usize = 2;
const MAX_WAITING_LOGINS: usize = 256;
/// The longest a login waits for attempts in flight to end before it is answered `Busy`.
const MAX_IN_FLIGHT_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
/// How often a login waiting for attempts in flight looks again.
const IN_FLIGHT_POLL: std::time::Duration = std::time::Duration::from_millis(20);
static VERIFICATIONS: tokio::sync::Semaphore =
    tokio::sync::Semaphore::const_new(CONCURRENT_VERIFICATIONS);
static WAITING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A login waiting for a verification turn (counted in [`WAITING`] until dropped).
struct Waiting;

impl Waiting {
    fn enter() -> ApiResult<Waiting> {
        use std::sync::atomic::Ordering;
        if WAITING.fetch_add(1, Ordering::SeqCst) >= MAX_WAITING_LOGINS {
            WAITING.fetch_sub(1, Ordering::SeqCst);
            return Err(ApiError::Busy);
        }
        Ok(Waiting)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        WAITING.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Verifies a password on a blocking thread, within the cap on concurrent verifications.
async fn verify_capped(hash: String, password: String) -> ApiResult<bool> {
    let waiting = Waiting::enter()?;
    let permit = VERIFICATIONS
        .acquire()
        .await
        .map_err(|e| ApiError::Internal(format!("login semaphore: {e}")))?;
    drop(waiting);
    verify_with(permit, hash, password).await
}

/// Verifies a password on a blocking thread that holds `permit` until the hash is computed,
/// even when the request is dropped meanwhile.
async fn verify_with(
    permit: tokio::sync::SemaphorePermit<'static>,
    hash: String,
    password: String,
) -> ApiResult<bool> {
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        verify_password(&hash, &password)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("password check failed: {e}")))
}

/// A login attempt counted in flight ([`store::users::begin_login_attempt`]): ended as the
/// success or failure it was, or, if its request goes away before that (the client never hears
/// the answer), forgotten.
struct InFlight {
    db: Db,
    id: i64,
    ended: bool,
}

impl InFlight {
    async fn end(mut self, success: bool) -> ApiResult<()> {
        // Ended from here on, even if the write fails: the row stays in flight then and counts
        // as failed once it is older than a check can take.
        self.ended = true;
        Ok(store::users::end_login_attempt(&self.db, self.id, success).await?)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let (db, id) = (self.db.clone(), self.id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = store::users::forget_login_attempt(&db, id).await {
                    tracing::warn!(error = %e, attempt = id, "forgetting an unanswered login");
                }
            });
        }
    }
}

fn throttled(username: &str, retry_after_ms: i64) -> ApiError {
    ApiError::Throttled {
        username: username.to_owned(),
        retry_after_secs: (retry_after_ms + 999) / 1000,
    }
}

/// Checks a login from `client` (its address). Names and passwords no account can have are
/// refused before any work; a login the throttle refuses is refused before it waits for a
/// verification turn; in its turn it is counted in flight, atomically with the throttle check,
/// then verified, then counted as the success or failure it was (see [`ThrottlePolicy`]). A
/// login answered [`ApiError::Busy`] counts for nothing.
pub async fn check_login(db: &Db, username: &str, password: &str, client: &str) -> ApiResult<User> {
    if username.chars().count() > MAX_LOGIN_NAME_CHARS
        || password.chars().count() > MAX_PASSWORD_CHARS
        || username.is_empty()
    {
        return Err(ApiError::BadCredentials);
    }
    let policy = ThrottlePolicy::default();
    if let Admission::Refuse { retry_after_ms } =
        store::users::login_admission(db, username, client, &policy, store::now_ms()).await?
    {
        return Err(throttled(username, retry_after_ms));
    }
    let found = store::users::credentials(db, username).await?;
    let (hash, user) = match found {
        Some((user, hash)) => (hash, Some(user)),
        None => (dummy_hash().to_owned(), None),
    };
    let waiting = Waiting::enter()?;
    let deadline = tokio::time::Instant::now() + MAX_IN_FLIGHT_WAIT;
    let (permit, attempt) = loop {
        let permit = VERIFICATIONS
            .acquire()
            .await
            .map_err(|e| ApiError::Internal(format!("login semaphore: {e}")))?;
        match store::users::begin_login_attempt(db, username, client, &policy, store::now_ms())
            .await?
        {
            Ok(id) => {
                let attempt = InFlight {
                    db: db.clone(),
                    id,
                    ended: false,
                };
                break (permit, attempt);
            }
            Err(Admission::Refuse { retry_after_ms }) => {
                return Err(throttled(username, retry_after_ms))
            }
            Err(_) => {
                // Attempts in flight would reach a limit: wait until they have ended.
                drop(permit);
                if tokio::time::Instant::now() >= deadline {
                    return Err(ApiError::Busy);
                }
                tokio::time::sleep(IN_FLIGHT_POLL).await;
            }
        }
    };
    drop(waiting);
    let ok = verify_with(permit, hash, password.to_owned()).await?;
    match user.filter(|u| ok && u.active) {
        Some(user) => {
            attempt.end(true).await?;
            Ok(user)
        }
        None => {
            attempt.end(false).await?;
            Err(ApiError::BadCredentials)
        }
    }
}

/// Logs the user into the session, with a fresh session id (no fixation).
pub async fn start_session(session: &Session, db: &Db, user: &User) -> ApiResult<()> {
    let version = store::accounts::for_session(db, user.id)
        .await?
        .map(|(_, version)| version)
        .unwrap_or_default();
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
    Ok(store::accounts::for_session(db, id)
        .await?
        .filter(|(user, current)| user.active && *current == version)
        .map(|(user, _)| user))
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
        Some(Ok(token)) => store::api_tokens::user_for(db, token)
            .await?
            .map(Some)
            .ok_or(ApiError::BadToken),
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

/// Proof that a user may act in a project as a given [`ProjectRole`]: obtainable only from
/// [`require_project`] (a server function's caller) or [`project_access`] (a page's), which
/// check the account and the membership on the server. Everything that touches one project
/// takes its project id from here.
#[derive(Clone, Debug)]
pub struct ProjectCaller {
    user: User,
    project_id: i64,
    project: String,
    role: ProjectRole,
}

impl ProjectCaller {
    pub fn user(&self) -> &User {
        &self.user
    }

    pub fn project_id(&self) -> i64 {
        self.project_id
    }

    pub fn project(&self) -> &str {
        &self.project
    }

    /// Whether the caller leads the project (leads and admins).
    pub fn is_lead(&self) -> bool {
        self.role == ProjectRole::Lead
    }
}

/// Whether `user` may act in the project named `project` as `required`: 404 for a project that
/// does not exist, 403 for one the user may not act in.
pub async fn project_access(
    db: &Db,
    user: User,
    project: &str,
    required: ProjectRole,
) -> ApiResult<ProjectCaller> {
    let membership = store::projects::membership_by_name(db, project, user.id).await?;
    check_project(user, membership, required)
}

/// [`project_access`] to the project with id `project_id`.
pub async fn project_access_at(
    db: &Db,
    user: User,
    project_id: i64,
    required: ProjectRole,
) -> ApiResult<ProjectCaller> {
    let membership = store::projects::membership_at(db, project_id, user.id).await?;
    check_project(user, membership, required)
}

fn check_project(
    user: User,
    membership: store::projects::Membership,
    required: ProjectRole,
) -> ApiResult<ProjectCaller> {
    let store::projects::Membership {
        project_id,
        project,
        role: member,
    } = membership;
    if !may_act_in_project(user.role, member, required) {
        return Err(ApiError::Forbidden(match required {
            ProjectRole::Lead => format!("you do not lead the project {project:?}"),
            ProjectRole::Annotator => format!("you are not a member of the project {project:?}"),
        }));
    }
    let role = match (user.role, member) {
        (Role::Admin, _) => ProjectRole::Lead,
        (_, Some(role)) => role,
        (_, None) => required,
    };
    Ok(ProjectCaller {
        user,
        project_id,
        project,
        role,
    })
}

/// The logged-in caller of a server function, who must be able to act in `project` as
/// `required` (see [`project_access`]).
pub async fn require_project(project: &str, required: ProjectRole) -> ApiResult<ProjectCaller> {
    let user = current_user().await?.ok_or(ApiError::Unauthenticated)?;
    project_access(&crate::state::db()?, user, project, required).await
}
