//! Login, logout and the current user.

use crate::domain::account::User;
use crate::error::ApiError;
use leptos::prelude::*;

/// The longest path a login may lead to.
const MAX_NEXT: usize = 2048;

/// Only same-origin absolute paths may follow a login (no open redirects): a path that starts
/// with one `/`, holds no backslash (browsers read `\\` as `/`) and no control character or white
/// space (browsers drop tabs and line breaks from URLs, so `/\t/evil.example` would become
/// `//evil.example`; line breaks would also split the Location header). Anything else goes to `/`.
pub fn safe_next(next: &str) -> &str {
    let same_origin_path = next.starts_with('/')
        && !next.starts_with("//")
        && next.len() <= MAX_NEXT
        && !next
            .chars()
            .any(|c| c == '\\' || c.is_control() || c.is_whitespace());
    if same_origin_path {
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
            let client = crate::auth::client_address().await;
            let user = crate::auth::check_login(&db, username.trim(), &password, &client).await?;
            crate::auth::start_session(&crate::auth::session().await?, &db, &user).await?;
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

/// Changes the caller's own password (the current one is checked); their other sessions end,
/// this one stays.
#[server(endpoint = "account/password")]
pub async fn change_password(current: String, new: String) -> Result<(), ApiError> {
    crate::api::respond(
        async {
            let user =
                crate::auth::require_session(crate::domain::account::Role::Annotator).await?;
            let change = commands::account::ChangeOwnPassword::parse(&current, &new)?;
            let version = change.run(&crate::state::db()?, &user).await?;
            crate::auth::keep_session(&crate::auth::session().await?, version).await
        }
        .await,
    )
}

/// The words of the single sign-on's button, when the server has an OpenID provider.
#[server(endpoint = "sign-in-options")]
pub async fn sign_in_options() -> Result<Option<String>, ApiError> {
    crate::api::respond(
        async {
            let state = leptos::prelude::use_context::<crate::state::AppState>()
                .ok_or_else(|| ApiError::Internal("no application state".into()))?;
            Ok(state.sso.map(|sso| sso.config().label.clone()))
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
        assert_eq!(
            safe_next("/lead/projects/a?step=25#depth"),
            "/lead/projects/a?step=25#depth"
        );
    }

    #[test]
    fn next_refuses_what_browsers_strip_or_headers_split() {
        for bad in [
            "/\t/evil.example/phish",
            "/\n/evil.example",
            "/\r\nSet-Cookie: x=1",
            "/ /evil.example",
            "/\u{0}x",
            "/\u{a0}/evil.example",
        ] {
            assert_eq!(safe_next(bad), "/", "{bad:?}");
        }
        assert_eq!(safe_next(&format!("/{}", "a".repeat(5000))), "/");
    }
}
