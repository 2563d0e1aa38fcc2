//! Administration: users.

use crate::domain::account::User;
use crate::error::ApiError;
use leptos::prelude::*;

#[server(endpoint = "admin/users")]
pub async fn list_users() -> Result<Vec<User>, ApiError> {
    crate::api::respond(
        async {
            crate::auth::require(crate::domain::account::Role::Admin).await?;
            Ok(crate::store::users::list(&crate::state::db()?).await?)
        }
        .await,
    )
}
