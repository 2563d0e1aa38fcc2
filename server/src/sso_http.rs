//! Single sign-on's two routes (`commands::sso`): `GET /auth/sso/start?next=` sends the browser
//! to the OpenID provider, `GET /auth/sso/callback` takes it back and signs it in.
//!
//! The session cookie is `SameSite=Strict`, which a browser does not send on a navigation another
//! site began, the provider's redirect back included, nor on the redirects that follow it. So:
//! - the sign-in's state rides in a cookie of its own, `SameSite=Lax`, limited to `/auth/sso`
//!   and ten minutes: the callback finds it, and refuses a state this browser did not start;
//! - the callback answers with a page that moves on to `next` by itself (`<meta refresh>`): a
//!   navigation of claimpool's own page, which carries the new session cookie.

use app::state::AppState;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use commands::sso::SsoError;
use tower_sessions::Session;

/// The cookie that binds a sign-in's state to the browser that started it.
const STATE_COOKIE: &str = "claimpool_sso";

#[derive(serde::Deserialize)]
pub struct StartQuery {
    next: Option<String>,
}

/// `GET /auth/sso/start`.
pub async fn start(State(state): State<AppState>, Query(query): Query<StartQuery>) -> Response {
    let Some(sso) = state.sso.clone() else {
        return page(
            StatusCode::NOT_FOUND,
            "Not found",
            "Single sign-on is not configured on this server",
        );
    };
    let next = app::api::auth::safe_next(query.next.as_deref().unwrap_or("/")).to_owned();
    match sso.start(&state.db, &next).await {
        Ok(started) => {
            let secure = if sso.config().public_origin.starts_with("https://") {
                "; Secure"
            } else {
                ""
            };
            let cookie = format!(
                "{STATE_COOKIE}={}; Path=/auth/sso; Max-Age=600; HttpOnly; SameSite=Lax{secure}",
                started.state
            );
            let mut response =
                (StatusCode::SEE_OTHER, [(header::CACHE_CONTROL, "no-store")]).into_response();
            let headers = response.headers_mut();
            match (
                HeaderValue::from_str(&started.url),
                HeaderValue::from_str(&cookie),
            ) {
                (Ok(location), Ok(cookie)) => {
                    headers.insert(header::LOCATION, location);
                    headers.insert(header::SET_COOKIE, cookie);
                    response
                }
                _ => failed(&SsoError::Provider(
                    "the authorization URL is no header value".into(),
                )),
            }
        }
        Err(e) => failed(&e),
    }
}

#[derive(serde::Deserialize)]
pub struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// `GET /auth/sso/callback`.
pub async fn callback(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    Query(query): Query<CallbackQuery>,
) -> Response {
    let Some(sso) = state.sso.clone() else {
        return page(
            StatusCode::NOT_FOUND,
            "Not found",
            "Single sign-on is not configured on this server",
        );
    };
    if let Some(error) = query.error {
        let detail = query.error_description.unwrap_or_default();
        return page(
            StatusCode::FORBIDDEN,
            "Sign-in refused",
            &format!("The identity provider did not sign you in ({error}) {detail}"),
        );
    }
    let (Some(code), Some(sign_in)) = (query.code, query.state) else {
        return page(
            StatusCode::BAD_REQUEST,
            "Sign-in failed",
            "The identity provider sent no code or state",
        );
    };
    let bound = cookie(&headers, STATE_COOKIE);
    let signed = match sso.finish(&state.db, &sign_in, bound, &code).await {
        Ok(signed) => signed,
        Err(e) => return failed(&e),
    };
    if let Err(e) = app::auth::start_session(&session, &state.db, &signed.user).await {
        tracing::error!(error = %e, "single sign-on: starting the session");
        return page(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Sign-in failed",
            "The server could not start your session; try again",
        );
    }
    tracing::info!(user = %signed.user.username, "login through single sign-on");
    let next = html_escape::encode_double_quoted_attribute(app::api::auth::safe_next(&signed.next))
        .into_owned();
    let body = format!(
        "<!DOCTYPE html><html lang=en><meta charset=utf-8><title>Signed in</title>\
         <meta http-equiv=refresh content=\"0;url={next}\">\
         <main class='page narrow'><h1>Signed in</h1><p><a href=\"{next}\">Continue</a></p></main>"
    );
    let clear = format!("{STATE_COOKIE}=; Path=/auth/sso; Max-Age=0; HttpOnly; SameSite=Lax");
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
            (header::CACHE_CONTROL, "no-store".to_owned()),
            (header::SET_COOKIE, clear),
        ],
        body,
    )
        .into_response()
}

/// The value of cookie `name` of the request, if it sent one.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// The page of a sign-in that did not end signed in.
fn failed(e: &SsoError) -> Response {
    match e {
        SsoError::Refused(refusal) => page(
            StatusCode::FORBIDDEN,
            "Sign-in refused",
            &refusal.to_string(),
        ),
        SsoError::Expired => page(StatusCode::BAD_REQUEST, "Sign-in expired", &e.to_string()),
        SsoError::Provider(detail) => {
            tracing::warn!(error = %detail, "single sign-on");
            page(StatusCode::BAD_GATEWAY, "Sign-in failed", &e.to_string())
        }
        SsoError::Command(inner) => {
            tracing::error!(error = %inner, "single sign-on");
            page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Sign-in failed",
                "The server failed to sign you in; try again",
            )
        }
    }
}

/// A small page: a title, a message, and the way back to the login page.
fn page(status: StatusCode, title: &str, message: &str) -> Response {
    crate::http::message_page(status, title, message, ("/login", "Back to the login page"))
}
