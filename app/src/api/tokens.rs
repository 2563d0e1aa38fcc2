//! Personal API tokens on the account page (issue 14): any logged-in user creates, lists and
//! revokes their own; an admin may list and revoke anyone's (`user` names them; empty: the
//! caller). The token is shown once, when created. See [`crate::store::api_tokens`].

use crate::error::ApiError;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A token as the account page lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApiTokenRow {
    pub name: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// When a request last used it (to the minute), if ever.
    pub last_used_at: Option<i64>,
}

/// A token just created: its name and the token itself, which is never shown again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IssuedApiToken {
    pub name: String,
    pub token: String,
}

#[cfg(feature = "ssr")]
impl From<crate::store::api_tokens::ApiToken> for ApiTokenRow {
    fn from(t: crate::store::api_tokens::ApiToken) -> Self {
        ApiTokenRow {
            name: t.name,
            created_at: t.created_at,
            last_used_at: t.last_used_at,
        }
    }
}

/// The id of the user whose tokens `caller` names: themselves (empty or their own name), or,
/// for an admin, anyone.
#[cfg(feature = "ssr")]
async fn owner(
    db: &crate::store::Db,
    caller: &crate::domain::account::User,
    user: &str,
) -> Result<i64, ApiError> {
    let user = user.trim();
    if user.is_empty() || user.eq_ignore_ascii_case(&caller.username) {
        return Ok(caller.id);
    }
    if caller.role != crate::domain::account::Role::Admin {
        return Err(ApiError::Forbidden(
            "only an admin may manage another user's tokens".into(),
        ));
    }
    Ok(crate::store::users::id_by_name(db, user).await?)
}

/// The live tokens of `user` (empty: the caller's), newest first.
#[server(endpoint = "account/tokens")]
pub async fn list_api_tokens(user: String) -> Result<Vec<ApiTokenRow>, ApiError> {
    crate::api::respond(
        async {
            let caller =
                crate::auth::require_session(crate::domain::account::Role::Annotator).await?;
            let db = crate::state::db()?;
            let owner = owner(&db, &caller, &user).await?;
            Ok(crate::store::api_tokens::list(&db, owner)
                .await?
                .into_iter()
                .map(ApiTokenRow::from)
                .collect())
        }
        .await,
    )
}

/// Creates a token of the caller's named `name`; the answer holds the token, shown only now.
/// Audited.
#[server(endpoint = "account/token/create")]
pub async fn create_api_token(name: String) -> Result<IssuedApiToken, ApiError> {
    crate::api::respond(
        async {
            let caller =
                crate::auth::require_session(crate::domain::account::Role::Annotator).await?;
            let db = crate::state::db()?;
            let issued =
                crate::store::api_tokens::create(&db, caller.id, &name, Some(caller.id)).await?;
            tracing::info!(user = %caller.username, name = %issued.token.name, "API token created");
            Ok(IssuedApiToken {
                name: issued.token.name,
                token: issued.secret,
            })
        }
        .await,
    )
}

/// Revokes the token named `name` of `user` (empty: the caller's); it stops working at once.
/// Audited.
#[server(endpoint = "account/token/revoke")]
pub async fn revoke_api_token(name: String, user: String) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let caller =
                crate::auth::require_session(crate::domain::account::Role::Annotator).await?;
            let db = crate::state::db()?;
            let owner = owner(&db, &caller, &user).await?;
            crate::store::api_tokens::revoke(&db, owner, &name, Some(caller.id)).await?;
            Ok(())
        }
        .await,
    )
}
