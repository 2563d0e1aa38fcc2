//! Users and login attempts.

use super::audit::{json, AuditEvent};
use super::{is_unique_violation, now_ms, Db, StoreError, StoreResult};
use crate::domain::account::{Role, User, Username};
use sqlx::Row;

fn user_from_row(row: &sqlx::sqlite::SqliteRow) -> StoreResult<User> {
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
    let mut tx = db.begin().await?;
    let id = sqlx::query(
        "INSERT INTO users (username, role, password_hash, created_at) VALUES (?, ?, ?, ?)",
    )
    .bind(username.as_str())
    .bind(role.as_str())
    .bind(password_hash)
    .bind(now_ms())
    .execute(&mut *tx)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            StoreError::Conflict(format!("a user named {username} exists already"))
        } else {
            e.into()
        }
    })?
    .last_insert_rowid();
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
        "SELECT id, username, role, active, password_hash FROM users WHERE username = ?",
    )
    .bind(username)
    .fetch_optional(db)
    .await?;
    row.map(|row| Ok((user_from_row(&row)?, row.try_get("password_hash")?)))
        .transpose()
}

pub async fn by_id(db: &Db, id: i64) -> StoreResult<Option<User>> {
    let row = sqlx::query("SELECT id, username, role, active FROM users WHERE id = ?")
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
        sqlx::query_scalar("SELECT password_hash FROM users WHERE username = ?")
            .bind(username)
            .fetch_optional(db)
            .await?,
    )
}

pub async fn record_login_attempt(db: &Db, username: &str, success: bool) -> StoreResult<()> {
    sqlx::query("INSERT INTO login_attempts (username, at, success) VALUES (?, ?, ?)")
        .bind(username)
        .bind(now_ms())
        .bind(success)
        .execute(db)
        .await?;
    Ok(())
}

/// Times of the latest failed logins for a user name since its last success, newest first.
pub async fn recent_failures(db: &Db, username: &str, limit: usize) -> StoreResult<Vec<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT at FROM login_attempts
         WHERE username = ?1 AND success = 0
           AND at > COALESCE((SELECT MAX(at) FROM login_attempts WHERE username = ?1 AND success = 1), 0)
         ORDER BY at DESC LIMIT ?2",
    )
    .bind(username)
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(db)
    .await?)
}
