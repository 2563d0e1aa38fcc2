//! API tokens of a logged-in user (or, for an admin, of anyone).

use crate::error::{CommandError, CommandResult};
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
