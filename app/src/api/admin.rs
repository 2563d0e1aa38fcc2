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

/// A new account or a reset password: the one-time password, shown once.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OneTimePassword {
    pub username: String,
    pub password: String,
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::store::Db, User), ApiError> {
    let user = crate::auth::require(crate::domain::account::Role::Admin).await?;
    Ok((crate::state::db()?, user))
}

/// Creates an account with `role` and a one-time password, returned once (the user changes it
/// on their account page).
#[server(endpoint = "admin/user/create")]
pub async fn create_user(username: String, role: String) -> Result<OneTimePassword, ApiError> {
    crate::api::respond(
        async {
            let (db, admin) = admin().await?;
            let username = crate::domain::account::Username::parse(&username)
                .map_err(|e| ApiError::Invalid(format!("user name: {e}")))?;
            let role = crate::domain::account::Role::parse(&role)
                .map_err(|e| ApiError::Invalid(e.to_string()))?;
            let password = crate::auth::one_time_password()?;
            let hash = crate::auth::hash_password(&password)?;
            let user =
                crate::store::users::create(&db, &username, role, &hash, Some(admin.id)).await?;
            Ok(OneTimePassword {
                username: user.username,
                password: password.expose().to_owned(),
            })
        }
        .await,
    )
}

/// Gives a user a new one-time password, returned once; their sessions end.
#[server(endpoint = "admin/user/reset")]
pub async fn reset_password(username: String) -> Result<OneTimePassword, ApiError> {
    crate::api::respond(
        async {
            let (db, admin) = admin().await?;
            let password = crate::auth::one_time_password()?;
            let hash = crate::auth::hash_password(&password)?;
            crate::store::accounts::set_password(&db, &username, &hash, Some(admin.id)).await?;
            Ok(OneTimePassword {
                username,
                password: password.expose().to_owned(),
            })
        }
        .await,
    )
}

/// Changes a user's account role.
#[server(endpoint = "admin/user/role")]
pub async fn set_user_role(username: String, role: String) -> Result<User, ApiError> {
    crate::api::respond(
        async {
            let (db, admin) = admin().await?;
            let role = crate::domain::account::Role::parse(&role)
                .map_err(|e| ApiError::Invalid(e.to_string()))?;
            Ok(crate::store::accounts::set_role(&db, &username, role, Some(admin.id)).await?)
        }
        .await,
    )
}

/// Deactivates or reactivates an account.
#[server(endpoint = "admin/user/active")]
pub async fn set_user_active(username: String, active: bool) -> Result<User, ApiError> {
    crate::api::respond(
        async {
            let (db, admin) = admin().await?;
            Ok(crate::store::accounts::set_active(&db, &username, active, Some(admin.id)).await?)
        }
        .await,
    )
}
