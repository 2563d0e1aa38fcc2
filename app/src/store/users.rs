//! Users and login attempts.

use super::audit::{json, AuditEvent};
use super::{is_unique_violation, now_ms, Db, StoreError, StoreResult};
use crate::domain::account::{RecentFailures, Role, ThrottlePolicy, User, Username};
use sqlx::Row;

pub(super) fn user_from_row(row: &sqlx::any::AnyRow) -> StoreResult<User> {
    let role: String = row.try_get("role")?;
    Ok(User {
        id: row.try_get("id")?,
        username: row.try_get("username")?,
        role: Role::parse(&role).map_err(|e| StoreError::Corrupt(e.to_string()))?,
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
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO users (username, role, password_hash, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(username.as_str())
    .bind(role.as_str())
    .bind(password_hash)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            StoreError::Conflict(format!("a user named {username} exists already"))
        } else {
            e.into()
        }
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
    .record(&mut tx)
    .await?;
    tx.commit().await?;
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

/// Counts a login attempt before its password is checked: in one statement under the write
/// lock (so parallel attempts are each counted), the attempt is stored as failed
/// unless `policy` refuses it given the failures already stored. Returns the attempt's id, or
/// the counts that refused it.
pub async fn begin_login_attempt(
    db: &Db,
    username: &str,
    client: &str,
    policy: &ThrottlePolicy,
    now: i64,
) -> StoreResult<Result<i64, RecentFailures>> {
    let since = now - policy.window_ms;
    // In a write transaction: on PostgreSQL the count and the insert are then one step for
    // parallel attempts too, as SQLite's one writer makes them.
    let mut tx = super::write_gate::begin(db).await?;
    let inserted: Option<i64> = sqlx::query_scalar(
        "INSERT INTO login_attempts (username, client, at, success)
         SELECT $1, $2, $3, 0
         WHERE (SELECT COUNT(*) FROM login_attempts
                WHERE username = $1 AND client = $2 AND success = 0 AND at > $4
                  AND at > COALESCE((SELECT MAX(at) FROM login_attempts
                                     WHERE username = $1 AND client = $2 AND success = 1), 0)) < $5
           AND (SELECT COUNT(*) FROM login_attempts WHERE client = $2 AND success = 0 AND at > $4) < $6
           AND (SELECT COUNT(*) FROM login_attempts WHERE username = $1 AND success = 0 AND at > $4) < $7
         RETURNING id",
    )
    .bind(username)
    .bind(client)
    .bind(now)
    .bind(since)
    .bind(i64::from(policy.per_client_name))
    .bind(i64::from(policy.per_client))
    .bind(i64::from(policy.per_name))
    .fetch_optional(&mut *tx)
    .await?;
    tx.commit().await?;
    match inserted {
        Some(id) => Ok(Ok(id)),
        None => Ok(Err(
            recent_failures(db, username, client, policy, now).await?
        )),
    }
}

/// Marks a counted attempt as the success it turned out to be.
pub async fn login_succeeded(db: &Db, attempt: i64) -> StoreResult<()> {
    sqlx::query("UPDATE login_attempts SET success = 1 WHERE id = $1")
        .bind(attempt)
        .execute(db)
        .await?;
    Ok(())
}

/// The failures within the policy's window that [`begin_login_attempt`] counts, with the oldest
/// of those that reached their limit (for the retry time).
pub async fn recent_failures(
    db: &Db,
    username: &str,
    client: &str,
    policy: &ThrottlePolicy,
    now: i64,
) -> StoreResult<RecentFailures> {
    let since = now - policy.window_ms;
    let row: (i64, Option<i64>, i64, Option<i64>, i64, Option<i64>) = sqlx::query_as(
        "WITH pair AS (
             SELECT at FROM login_attempts
             WHERE username = $1 AND client = $2 AND success = 0 AND at > $3
               AND at > COALESCE((SELECT MAX(at) FROM login_attempts
                                  WHERE username = $1 AND client = $2 AND success = 1), 0)),
         by_client AS (SELECT at FROM login_attempts WHERE client = $2 AND success = 0 AND at > $3),
         by_name AS (SELECT at FROM login_attempts WHERE username = $1 AND success = 0 AND at > $3)
         SELECT (SELECT COUNT(*) FROM pair), (SELECT MIN(at) FROM pair),
                (SELECT COUNT(*) FROM by_client), (SELECT MIN(at) FROM by_client),
                (SELECT COUNT(*) FROM by_name), (SELECT MIN(at) FROM by_name)",
    )
    .bind(username)
    .bind(client)
    .bind(since)
    .fetch_one(db)
    .await?;
    let n = |count: i64| u32::try_from(count).unwrap_or(u32::MAX);
    let (client_name, oldest_pair) = (n(row.0), row.1);
    let (by_client, oldest_client) = (n(row.2), row.3);
    let (by_name, oldest_name) = (n(row.4), row.5);
    let oldest_at = [
        (client_name >= policy.per_client_name, oldest_pair),
        (by_client >= policy.per_client, oldest_client),
        (by_name >= policy.per_name, oldest_name),
    ]
    .into_iter()
    .filter_map(|(reached, at)| if reached { at } else { None })
    .min();
    Ok(RecentFailures {
        client_name,
        client: by_client,
        name: by_name,
        oldest_at,
    })
}
