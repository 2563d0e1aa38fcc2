//! API tokens of a logged-in user (or, for an admin, of anyone).

use crate::error::{CommandError, CommandResult};
use crate::Admin;
use domain::account::{Role, User};
use store::Db;

/// A live token as lists show it, and a token just created with its secret.
pub use store::api_tokens::{ApiToken, IssuedToken};

/// The id of the user whose tokens `caller` names: themselves (empty or their own name), or,
/// for an admin, anyone.
pub async fn owner(db: &Db, caller: &User, user: &str) -> CommandResult<i64> {
    let user = user.trim();
    if user.is_empty() || user.eq_ignore_ascii_case(&caller.username) {
        return Ok(caller.id);
    }
    if caller.role != Role::Admin {
        return Err(CommandError::Forbidden(
            "only an admin may manage another user's tokens".into(),
        ));
    }
    Ok(store::users::id_by_name(db, user).await?)
}

/// The live tokens of the user `owner` (from [`owner`]), newest first.
pub async fn list(db: &Db, owner: i64) -> CommandResult<Vec<ApiToken>> {
    Ok(store::api_tokens::list(db, owner).await?)
}

/// Creates a token of `caller`'s named `name`. Audited.
pub async fn create(db: &Db, caller: &User, name: &str) -> CommandResult<IssuedToken> {
    Ok(store::api_tokens::create(db, caller.id, name, Some(caller.id)).await?)
}

/// Revokes the token named `name` of the user `owner` (from [`owner`]). Audited as `caller`'s.
pub async fn revoke(db: &Db, caller: &User, owner: i64, name: &str) -> CommandResult<()> {
    store::api_tokens::revoke(db, owner, name, Some(caller.id)).await?;
    Ok(())
}

/// Creates a token named `name` for the user named `user`, as an administrator (the command
/// line's operator): audited with the admin's id (none for the operator).
pub async fn create_for(
    db: &Db,
    admin: &Admin,
    user: &str,
    name: &str,
) -> CommandResult<IssuedToken> {
    let id = store::users::id_by_name(db, user).await?;
    Ok(store::api_tokens::create(db, id, name, admin.audit_id()).await?)
}

/// The live tokens of the user named `user`, newest first, as an administrator.
pub async fn list_of(db: &Db, admin: &Admin, user: &str) -> CommandResult<Vec<ApiToken>> {
    let _ = admin;
    let id = store::users::id_by_name(db, user).await?;
    Ok(store::api_tokens::list(db, id).await?)
}

/// Revokes the token named `name` of the user named `user`, as an administrator; returns the
/// revoked token. Audited with the admin's id (none for the operator).
pub async fn revoke_for(db: &Db, admin: &Admin, user: &str, name: &str) -> CommandResult<ApiToken> {
    let id = store::users::id_by_name(db, user).await?;
    Ok(store::api_tokens::revoke(db, id, name, admin.audit_id()).await?)
}
