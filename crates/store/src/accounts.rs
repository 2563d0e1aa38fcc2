//! Account management (issue 14): passwords, roles and deactivation, each audited. A password
//! set here ends the user's other sessions (their credentials version moves on) and revokes
//! their API tokens; a deactivation ends their sessions and revokes their tokens for good
//! (issue 35: a reactivated user signs in afresh); an account that can no longer annotate a
//! project hands its open items there to the other annotators. A lead membership outlasts a
//! role change: it leads nothing while the account cannot lead, and leads again once it can.

use super::audit::{json, AuditEvent};
use super::users::user_from_row;
use super::{Constraint, Db, StoreError, StoreResult};
use domain::account::{Role, User};
use sqlx::Row;

/// The user with `id` and their credentials version, for checking a session.
pub async fn for_session(db: &Db, id: i64) -> StoreResult<Option<(User, i64)>> {
    let row = sqlx::query(
        "SELECT id, username, role, active, credentials_version FROM users WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await?;
    row.map(|row| Ok((user_from_row(&row)?, row.try_get("credentials_version")?)))
        .transpose()
}

async fn user_named(db: &Db, username: &str) -> StoreResult<User> {
    let row = sqlx::query("SELECT id, username, role, active FROM users WHERE username = $1")
        .bind(username)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("user {username:?}")))?;
    user_from_row(&row)
}

/// Sets a user's password (an argon2id hash), ends their other sessions and revokes their API
/// tokens; returns the new credentials version, which the session that set it (their own) keeps.
pub async fn set_password(
    db: &Db,
    username: &str,
    password_hash: &str,
    actor_id: Option<i64>,
) -> StoreResult<i64> {
    let user = user_named(db, username).await?;
    let mut tx = super::write_gate::begin(db).await?;
    let version: i64 = sqlx::query_scalar(
        "UPDATE users SET password_hash = $1, credentials_version = credentials_version + 1
         WHERE id = $2 RETURNING credentials_version",
    )
    .bind(password_hash)
    .bind(user.id)
    .fetch_one(&mut *tx)
    .await?;
    AuditEvent {
        project_id: None,
        actor_id,
        action: "set_password",
        entity: "user",
        entity_id: Some(user.id.to_string()),
        old_value: None,
        new_value: json(
            &serde_json::json!({ "user": user.username, "by_owner": actor_id == Some(user.id) }),
        ),
    }
    .record(&mut tx)
    .await?;
    super::api_tokens::revoke_all(&mut tx, user.id, actor_id, "password set").await?;
    tx.commit().await?;
    Ok(version)
}

/// Ends the memberships `user` can no longer hold once their account has `role` (or is
/// inactive, `role` None: all of them): an annotator's open items go to the project's other
/// annotators. A role change keeps lead memberships: they lead nothing while the account
/// cannot lead ([`domain::account::may_act_in_project`]) and lead again when it can.
async fn end_unfit_memberships(
    db: &Db,
    user: &User,
    role: Option<Role>,
    actor_id: Option<i64>,
) -> StoreResult<()> {
    use domain::account::ProjectRole;
    let memberships: Vec<(i64, String)> = sqlx::query_as(
        "SELECT project_id, role FROM project_members WHERE user_id = $1 AND active = 1",
    )
    .bind(user.id)
    .fetch_all(db)
    .await?;
    for (project, member) in memberships {
        let member = ProjectRole::parse(&member).map_err(StoreError::unreadable)?;
        if role.is_some_and(|role| member.fits(role) || member == ProjectRole::Lead) {
            continue;
        }
        super::projects::remove_member(db, project, &user.username, actor_id).await?;
    }
    Ok(())
}

/// Changes a user's account role. Memberships the new role cannot hold end first (an
/// annotator's open items are handed on); admins keep at least one active admin.
pub async fn set_role(
    db: &Db,
    username: &str,
    role: Role,
    actor_id: Option<i64>,
) -> StoreResult<User> {
    let user = user_named(db, username).await?;
    if user.role == role {
        return Ok(user);
    }
    if user.role == Role::Admin {
        check_not_last_admin(db, &user).await?;
    }
    end_unfit_memberships(db, &user, Some(role), actor_id).await?;
    let mut tx = super::write_gate::begin(db).await?;
    sqlx::query("UPDATE users SET role = $1 WHERE id = $2")
        .bind(role.as_str())
        .bind(user.id)
        .execute(&mut *tx)
        .await?;
    AuditEvent {
        project_id: None,
        actor_id,
        action: "set_role",
        entity: "user",
        entity_id: Some(user.id.to_string()),
        old_value: json(&serde_json::json!({ "role": user.role })),
        new_value: json(&serde_json::json!({ "role": role })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(User { role, ..user })
}

/// Deactivates (their sessions end and their API tokens are revoked, for good; their open items
/// are handed on and their memberships end) or reactivates an account: they sign in afresh and
/// make new tokens, and a lead adds them back to projects.
pub async fn set_active(
    db: &Db,
    username: &str,
    active: bool,
    actor_id: Option<i64>,
) -> StoreResult<User> {
    let user = user_named(db, username).await?;
    if user.active == active {
        return Ok(user);
    }
    if !active {
        if user.role == Role::Admin {
            check_not_last_admin(db, &user).await?;
        }
        end_unfit_memberships(db, &user, None, actor_id).await?;
    }
    let mut tx = super::write_gate::begin(db).await?;
    // A deactivation moves the credentials version on: the user's sessions stay ended after a
    // reactivation.
    sqlx::query(
        "UPDATE users SET active = $1,
             credentials_version = credentials_version + (CASE WHEN $1 = 0 THEN 1 ELSE 0 END)
         WHERE id = $2",
    )
    .bind(i64::from(active))
    .bind(user.id)
    .execute(&mut *tx)
    .await?;
    if !active {
        super::api_tokens::revoke_all(&mut tx, user.id, actor_id, "deactivated").await?;
    }
    AuditEvent {
        project_id: None,
        actor_id,
        action: if active { "reactivate" } else { "deactivate" },
        entity: "user",
        entity_id: Some(user.id.to_string()),
        old_value: json(&serde_json::json!({ "active": user.active })),
        new_value: json(&serde_json::json!({ "active": active })),
    }
    .record(&mut tx)
    .await?;
    tx.commit().await?;
    Ok(User { active, ..user })
}

/// Refuses to take away the last active admin.
async fn check_not_last_admin(db: &Db, user: &User) -> StoreResult<()> {
    let others: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM users WHERE role = 'admin' AND active = 1 AND id != $1",
    )
    .bind(user.id)
    .fetch_one(db)
    .await?;
    if others == 0 {
        return Err(StoreError::conflict(
            Constraint::LastAdmin,
            format!(
                "{} is the last active admin; make another admin first",
                user.username
            ),
        ));
    }
    Ok(())
}
