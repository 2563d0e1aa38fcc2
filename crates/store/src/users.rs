//! Users and login attempts.

use super::audit::{json, AuditEvent};
use super::flag::Flag;
use super::{now_ms, Constraint, Db, OnConstraint, StoreError, StoreResult};
use domain::account::{
    Admission, CountedAttempt, LoginHistory, Role, ThrottlePolicy, User, Username,
};
use sqlx::Row;

pub(super) fn user_from_row(row: &sqlx::any::AnyRow) -> StoreResult<User> {
    let role: String = row.try_get("role")?;
    Ok(User {
        id: row.try_get("id")?,
        username: row.try_get("username")?,
        role: Role::parse(&role).map_err(StoreError::unreadable)?,
        active: row.try_get::<i64, _>("active")? != 0,
    })
}

/// Creates a user with an already computed argon2id hash.
pub async fn create(
    db: &Db,
    username: &Username,
    role: Role,
    password_hash: &str,
    actor_id: Option<i64>,
) -> StoreResult<User> {
    let mut tx = super::write_gate::begin(db).await?;
    let user = create_in(&mut tx, username, role, password_hash, actor_id).await?;
    tx.commit().await?;
    Ok(user)
}

/// [`create`] inside the caller's write transaction.
pub(crate) async fn create_in(
    tx: &mut sqlx::AnyConnection,
    username: &Username,
    role: Role,
    password_hash: &str,
    actor_id: Option<i64>,
) -> StoreResult<User> {
    // Checked in the write transaction, so two look-alikes created at once cannot both pass.
    let names: Vec<String> = sqlx::query_scalar("SELECT username FROM users")
        .fetch_all(&mut *tx)
        .await?;
    if names.iter().any(|name| name == username.as_str()) {
        return Err(StoreError::conflict(
            Constraint::UserName,
            format!("a user named {username} exists already"),
        ));
    }
    if let Some(existing) = names.iter().find(|name| username.looks_like(name)) {
        return Err(StoreError::conflict(
            Constraint::UserNameLookalike,
            format!(
                "the user name {username} looks like the existing user {existing}'s; choose another"
            ),
        ));
    }
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO users (username, role, password_hash, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(username.as_str())
    .bind(role.as_str())
    .bind(password_hash)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await
    .on_unique(Constraint::UserName, || {
        format!("a user named {username} exists already")
    })?;
    let user = User {
        id,
        username: username.to_string(),
        role,
        active: true,
    };
    AuditEvent {
        project_id: None,
        actor_id,
        action: "create",
        entity: "user",
        entity_id: Some(id.to_string()),
        old_value: None,
        new_value: json(&user),
    }
    .record(&mut *tx)
    .await?;
    Ok(user)
}

/// The user and password hash for a login, if the name exists.
pub async fn credentials(db: &Db, username: &str) -> StoreResult<Option<(User, String)>> {
    let row = sqlx::query(
        "SELECT id, username, role, active, password_hash FROM users WHERE username = $1",
    )
    .bind(username)
    .fetch_optional(db)
    .await?;
    row.map(|row| Ok((user_from_row(&row)?, row.try_get("password_hash")?)))
        .transpose()
}

/// The id of the user with this name.
pub async fn id_by_name(db: &Db, username: &str) -> StoreResult<i64> {
    sqlx::query_scalar("SELECT id FROM users WHERE username = $1")
        .bind(username)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("user {username:?}")))
}

pub async fn by_id(db: &Db, id: i64) -> StoreResult<Option<User>> {
    let row = sqlx::query("SELECT id, username, role, active FROM users WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(user_from_row).transpose()
}

pub async fn list(db: &Db) -> StoreResult<Vec<User>> {
    sqlx::query("SELECT id, username, role, active FROM users ORDER BY role, username")
        .fetch_all(db)
        .await?
        .iter()
        .map(user_from_row)
        .collect()
}

/// The stored password hash of a user, for tests and audits of how passwords are kept.
pub async fn password_hash(db: &Db, username: &str) -> StoreResult<Option<String>> {
    Ok(
        sqlx::query_scalar("SELECT password_hash FROM users WHERE username = $1")
            .bind(username)
            .fetch_optional(db)
            .await?,
    )
}

/// The failed and in-flight login attempts of `username` or from `client` within the policy's
/// window (at most the newest 1,000: more than any limit), and when the name last logged in
/// from the address.
async fn login_history(
    conn: &mut sqlx::AnyConnection,
    username: &str,
    client: &str,
    policy: &ThrottlePolicy,
    now: i64,
) -> StoreResult<LoginHistory> {
    let rows: Vec<(i64, Flag, Flag, i64)> = sqlx::query_as(
        "SELECT at, username = $1, client = $2, pending FROM login_attempts
         WHERE (username = $1 OR client = $2) AND success = 0 AND at > $3
         ORDER BY at DESC LIMIT 1000",
    )
    .bind(username)
    .bind(client)
    .bind(now - policy.window_ms)
    .fetch_all(&mut *conn)
    .await?;
    let pair_last_success: Option<i64> = sqlx::query_scalar(
        "SELECT MAX(at) FROM login_attempts WHERE username = $1 AND client = $2 AND success = 1",
    )
    .bind(username)
    .bind(client)
    .fetch_one(&mut *conn)
    .await?;
    Ok(LoginHistory {
        attempts: rows
            .into_iter()
            .map(|(at, same_name, same_client, pending)| CountedAttempt {
                at,
                same_name: same_name.0,
                same_client: same_client.0,
                in_flight: pending != 0,
            })
            .collect(),
        pair_last_success,
    })
}

/// What the throttle makes of a login of `username` from `client` now, read without counting
/// anything (a refusal before the login waits for its turn).
pub async fn login_admission(
    db: &Db,
    username: &str,
    client: &str,
    policy: &ThrottlePolicy,
    now: i64,
) -> StoreResult<Admission> {
    let mut conn = db.acquire().await?;
    let history = login_history(&mut conn, username, client, policy, now).await?;
    Ok(policy.admit(&history, now))
}

/// Counts a login attempt before its password is checked: in one write transaction (so that
/// parallel attempts are each counted), the attempt is stored as in flight if `policy` admits
/// it given the failures and attempts in flight already stored. Returns the attempt's id, or
/// what the throttle said instead ([`Admission::Wait`] or [`Admission::Refuse`]).
pub async fn begin_login_attempt(
    db: &Db,
    username: &str,
    client: &str,
    policy: &ThrottlePolicy,
    now: i64,
) -> StoreResult<Result<i64, Admission>> {
    let mut tx = super::write_gate::begin(db).await?;
    let history = login_history(&mut tx, username, client, policy, now).await?;
    let admission = policy.admit(&history, now);
    if admission != Admission::Check {
        return Ok(Err(admission));
    }
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO login_attempts (username, client, at, success, pending)
         VALUES ($1, $2, $3, 0, 1) RETURNING id",
    )
    .bind(username)
    .bind(client)
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Ok(id))
}

/// Settles an attempt in flight as the success or failure its password check turned out.
pub async fn end_login_attempt(db: &Db, attempt: i64, success: bool) -> StoreResult<()> {
    let mut tx = super::write_gate::begin(db).await?;
    sqlx::query("UPDATE login_attempts SET success = $1, pending = 0 WHERE id = $2")
        .bind(i64::from(success))
        .bind(attempt)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Forgets an attempt in flight whose password was never checked or whose answer never
/// reached its client: it counts for nothing.
pub async fn forget_login_attempt(db: &Db, attempt: i64) -> StoreResult<()> {
    let mut tx = super::write_gate::begin(db).await?;
    sqlx::query("DELETE FROM login_attempts WHERE id = $1 AND pending = 1")
        .bind(attempt)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}
