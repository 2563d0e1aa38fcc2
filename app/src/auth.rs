//! Authentication: argon2id password hashes, login with throttling, and the role check every
//! server function and page runs on the server.

use crate::domain::account::{NewPassword, Role, ThrottlePolicy, User};
use crate::error::{ApiError, ApiResult};
use crate::store::{self, Db, StoreError};
use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use tower_sessions::Session;

/// The session key holding the logged-in user's id.
pub const SESSION_USER: &str = "user_id";

/// Hashes a password with argon2id (the crate's default algorithm and parameters).
pub fn hash_password(password: &NewPassword) -> Result<String, StoreError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.expose().as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| StoreError::Invalid(format!("cannot hash the password: {e}")))
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

/// Checks a login: throttled user names are refused before the password is looked at.
pub async fn check_login(db: &Db, username: &str, password: &str) -> ApiResult<User> {
    let policy = ThrottlePolicy::default();
    let failures = store::users::recent_failures(db, username, policy.max_failures).await?;
    if let Some(ms) = policy.locked_for(&failures, store::now_ms()) {
        return Err(ApiError::Throttled {
            username: username.to_owned(),
            retry_after_secs: (ms + 999) / 1000,
        });
    }
    let found = store::users::credentials(db, username).await?;
    let (hash, user) = match &found {
        Some((user, hash)) => (hash.clone(), Some(user.clone())),
        None => (dummy_hash().to_owned(), None),
    };
    let candidate = password.to_owned();
    let ok = tokio::task::spawn_blocking(move || verify_password(&hash, &candidate))
        .await
        .map_err(|e| ApiError::Internal(format!("password check failed: {e}")))?;
    let user = user.filter(|u| ok && u.active);
    store::users::record_login_attempt(db, username, user.is_some()).await?;
    user.ok_or(ApiError::BadCredentials)
}

/// Logs the user into the session, with a fresh session id (no fixation).
pub async fn start_session(session: &Session, user: &User) -> ApiResult<()> {
    session
        .cycle_id()
        .await
        .map_err(|e| ApiError::Internal(format!("session: {e}")))?;
    session
        .insert(SESSION_USER, user.id)
        .await
        .map_err(|e| ApiError::Internal(format!("session: {e}")))
}

/// The active user of a session, if any.
pub async fn session_user(session: &Session, db: &Db) -> ApiResult<Option<User>> {
    let id: Option<i64> = session
        .get(SESSION_USER)
        .await
        .map_err(|e| ApiError::Internal(format!("session: {e}")))?;
    match id {
        Some(id) => Ok(store::users::by_id(db, id).await?.filter(|u| u.active)),
        None => Ok(None),
    }
}

/// The session of the current server-function call or page render.
pub async fn session() -> ApiResult<Session> {
    leptos_axum::extract::<Session>()
        .await
        .map_err(|e| ApiError::Internal(format!("no session layer: {e}")))
}

/// The logged-in user of the current request, if any.
pub async fn current_user() -> ApiResult<Option<User>> {
    let db = crate::state::db()?;
    session_user(&session().await?, &db).await
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
