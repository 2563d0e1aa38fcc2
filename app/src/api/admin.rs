//! Administration: users.

use crate::domain::account::User;
use crate::error::ApiError;
use leptos::prelude::*;

#[server(endpoint = "admin/users")]
pub async fn list_users() -> Result<Vec<User>, ApiError> {
    crate::api::respond(
        async {
            let (db, admin) = admin().await?;
            Ok(commands::account::users(&db, &admin).await?)
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

/// The database and the admin of a browser session: an API token cannot manage accounts
/// (issue 35, [`crate::api::needs_session`]).
#[cfg(feature = "ssr")]
async fn admin() -> Result<(commands::Db, commands::Admin), ApiError> {
    let user = crate::auth::require_session(crate::domain::account::Role::Admin).await?;
    Ok((crate::state::db()?, commands::Admin::of(&user)?))
}

/// Creates an account with `role` and a one-time password, returned once (the user changes it
/// on their account page).
#[server(endpoint = "admin/user/create")]
pub async fn create_user(username: String, role: String) -> Result<OneTimePassword, ApiError> {
    crate::api::respond(
        async {
            use commands::account::{CreateUser, PasswordChoice};
            let (db, admin) = admin().await?;
            let (user, password) = CreateUser::parse(&username, &role, PasswordChoice::OneTime)?
                .run(&db, &admin)
                .await?;
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
            use commands::account::{set_password, PasswordChoice};
            let (db, admin) = admin().await?;
            let password = set_password(&db, &admin, &username, PasswordChoice::OneTime).await?;
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
            let role = commands::account::parse_role(&role)?;
            Ok(commands::account::set_role(&db, &admin, &username, role).await?)
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
            Ok(commands::account::set_active(&db, &admin, &username, active).await?)
        }
        .await,
    )
}
