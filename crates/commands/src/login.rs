//! Passwords and logins: argon2id hashes, the check of a user's password, and the login check
//! with its throttling (the throttle's counts are kept by the store).

use crate::error::{CommandError, CommandResult};
use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use domain::account::{
    Admission, NewPassword, ThrottlePolicy, User, MAX_LOGIN_NAME_CHARS, MAX_PASSWORD_CHARS,
};
use store::{Db, StoreError};

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
pub fn one_time_password() -> CommandResult<NewPassword> {
    use argon2::password_hash::rand_core::RngCore;
    let mut bytes = [0u8; 15];
    OsRng.fill_bytes(&mut bytes);
    NewPassword::parse(&domain::account::one_time_password(bytes))
        .map_err(|e| CommandError::Internal(format!("one-time password: {e}")))
}

/// Whether `password` is `username`'s (through the capped verifications).
pub async fn password_matches(db: &Db, username: &str, password: &str) -> CommandResult<bool> {
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
/// behind one address signing in at once), others are refused as [`CommandError::Busy`], which
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
    fn enter() -> CommandResult<Waiting> {
        use std::sync::atomic::Ordering;
        if WAITING.fetch_add(1, Ordering::SeqCst) >= MAX_WAITING_LOGINS {
            WAITING.fetch_sub(1, Ordering::SeqCst);
            return Err(CommandError::Busy);
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
async fn verify_capped(hash: String, password: String) -> CommandResult<bool> {
    let waiting = Waiting::enter()?;
    let permit = VERIFICATIONS
        .acquire()
        .await
        .map_err(|e| CommandError::Internal(format!("login semaphore: {e}")))?;
    drop(waiting);
    verify_with(permit, hash, password).await
}

/// Verifies a password on a blocking thread that holds `permit` until the hash is computed,
/// even when the request is dropped meanwhile.
async fn verify_with(
    permit: tokio::sync::SemaphorePermit<'static>,
    hash: String,
    password: String,
) -> CommandResult<bool> {
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        verify_password(&hash, &password)
    })
    .await
    .map_err(|e| CommandError::Internal(format!("password check failed: {e}")))
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
    async fn end(mut self, success: bool) -> CommandResult<()> {
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

fn throttled(username: &str, retry_after_ms: i64) -> CommandError {
    CommandError::Throttled {
        username: username.to_owned(),
        retry_after_secs: (retry_after_ms + 999) / 1000,
    }
}

/// Checks a login from `client` (its address). Names and passwords no account can have are
/// refused before any work; a login the throttle refuses is refused before it waits for a
/// verification turn; in its turn it is counted in flight, atomically with the throttle check,
/// then verified, then counted as the success or failure it was (see [`ThrottlePolicy`]). A
/// login answered [`CommandError::Busy`] counts for nothing.
pub async fn check_login(
    db: &Db,
    username: &str,
    password: &str,
    client: &str,
) -> CommandResult<User> {
    if username.chars().count() > MAX_LOGIN_NAME_CHARS
        || password.chars().count() > MAX_PASSWORD_CHARS
        || username.is_empty()
    {
        return Err(CommandError::BadCredentials);
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
            .map_err(|e| CommandError::Internal(format!("login semaphore: {e}")))?;
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
                    return Err(CommandError::Busy);
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
            Err(CommandError::BadCredentials)
        }
    }
}
