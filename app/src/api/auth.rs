//! Login, logout and the current user.

use crate::domain::account::User;
use crate::error::ApiError;
use leptos::prelude::*;

/// Only same-site absolute paths may follow a login (no open redirects).
pub fn safe_next(next: &str) -> &str {
    if next.starts_with('/') && !next.starts_with("//") && !next.contains('\\') {
        next
    } else {
        "/"
    }
}

#[server(endpoint = "login")]
pub async fn login(username: String, password: String, next: String) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let db = crate::state::db()?;
            let user = crate::auth::check_login(&db, username.trim(), &password).await?;
            crate::auth::start_session(&crate::auth::session().await?, &user).await?;
            tracing::info!(user = %user.username, "login");
            leptos_axum::redirect(safe_next(&next));
            Ok(())
        }
        .await,
    )
}

#[server(endpoint = "logout")]
pub async fn logout() -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let session = crate::auth::session().await?;
            session
                .flush()
                .await
                .map_err(|e| ApiError::Internal(format!("session: {e}")))?;
            leptos_axum::redirect("/login");
            Ok(())
        }
        .await,
    )
}

/// The logged-in user, or None.
#[server(endpoint = "whoami")]
pub async fn whoami() -> Result<Option<User>, ApiError> {
    crate::api::respond(crate::auth::current_user().await)
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn next_stays_on_site() {
        assert_eq!(safe_next("/lead"), "/lead");
        assert_eq!(safe_next("//evil.example"), "/");
        assert_eq!(safe_next("https://evil.example"), "/");
        assert_eq!(safe_next("/\\evil"), "/");
        assert_eq!(safe_next(""), "/");
    }
}
