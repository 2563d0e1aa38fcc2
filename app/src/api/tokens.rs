//! Personal API tokens on the account page (issue 14): any logged-in user creates, lists and
//! revokes their own; an admin may list and revoke anyone's (`user` names them; empty: the
//! caller). The token is shown once, when created. See the commands crate's `tokens`.

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
impl From<commands::tokens::ApiToken> for ApiTokenRow {
    fn from(t: commands::tokens::ApiToken) -> Self {
        ApiTokenRow {
            name: t.name,
            created_at: t.created_at,
            last_used_at: t.last_used_at,
        }
    }
}

/// The live tokens of `user` (empty: the caller's), newest first.
#[server(endpoint = "account/tokens")]
pub async fn list_api_tokens(user: String) -> Result<Vec<ApiTokenRow>, ApiError> {
    crate::api::respond(
        async {
            let caller =
                crate::auth::require_session(crate::domain::account::Role::Annotator).await?;
            let db = crate::state::db()?;
            let owner = commands::tokens::owner(&db, &caller, &user).await?;
            Ok(commands::tokens::list(&db, owner)
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
            let issued = commands::tokens::create(&db, &caller, &name).await?;
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
            let owner = commands::tokens::owner(&db, &caller, &user).await?;
            commands::tokens::revoke(&db, &caller, owner, &name).await?;
            Ok(())
        }
        .await,
    )
}
