//! The authorization matrix, generated from what the server serves: every registered server
//! function and every page route, for each kind of caller (anonymous, annotator, lead, admin).
//! A server function missing from `app::api::ENDPOINTS` fails the first test; every cell of the
//! matrix is asserted by the others.

mod common;

use app::api::{Access, ENDPOINTS};
use app::domain::account::Role;
use common::TestApp;
use reqwest::StatusCode;
use std::collections::BTreeSet;

#[test]
fn the_endpoint_table_lists_exactly_the_registered_server_functions() {
    let registered: BTreeSet<String> = leptos::server_fn::axum::server_fn_paths()
        .map(|(path, _)| {
            path.strip_prefix("/api/")
                .unwrap_or_else(|| panic!("server function outside /api/: {path}"))
                .to_owned()
        })
        .collect();
    let table: BTreeSet<String> = ENDPOINTS.iter().map(|(e, _)| (*e).to_owned()).collect();
    assert_eq!(ENDPOINTS.len(), table.len(), "an endpoint is listed twice");
    let missing: Vec<_> = registered.difference(&table).collect();
    let stale: Vec<_> = table.difference(&registered).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "server functions without an access rule: {missing:?}; rules without a function: {stale:?}"
    );
    assert!(
        registered.len() >= 35,
        "{} server functions",
        registered.len()
    );
}

/// The callers of the matrix: a name, their role (None: not logged in) and a client.
async fn callers(app: &TestApp) -> Vec<(&'static str, Option<Role>, reqwest::Client)> {
    let mut callers = vec![("anonymous", None, app.client())];
    for (name, role) in [
        ("annotator", Role::Annotator),
        ("lead", Role::Lead),
        ("admin", Role::Admin),
    ] {
        app.add_user(name, role).await;
        callers.push((name, Some(role), app.logged_in(name).await));
    }
    callers
}

/// The status a caller with `role` must get when `access` refuses them, or None when it lets
/// them through.
fn refusal(access: Access, role: Option<Role>) -> Option<StatusCode> {
    match (access, role) {
        (Access::Public, _) => None,
        (Access::Role(_), None) => Some(StatusCode::UNAUTHORIZED),
        (Access::Role(needed), Some(have)) if !have.satisfies(needed) => {
            Some(StatusCode::FORBIDDEN)
        }
        (Access::Role(_), Some(_)) => None,
    }
}

#[tokio::test]
async fn every_server_function_checks_the_role_before_reading_its_arguments() {
    let app = TestApp::spawn().await;
    let callers = callers(&app).await;
    let mut wrong = Vec::new();
    let mut cells = 0;
    for (endpoint, access) in ENDPOINTS {
        if *endpoint == "logout" {
            continue; // below, with clients of its own
        }
        for (who, role, client) in &callers {
            // No arguments at all: a caller who may not call the function is refused before
            // they are read; one who may gets 400 for the missing arguments (or an answer).
            let res = client
                .post(app.url(&format!("/api/{endpoint}")))
                .header("content-type", "application/x-www-form-urlencoded")
                .body("")
                .send()
                .await
                .unwrap();
            let status = res.status();
            cells += 1;
            let ok = match refusal(*access, *role) {
                Some(expected) => status == expected,
                None => {
                    status != StatusCode::UNAUTHORIZED
                        && status != StatusCode::FORBIDDEN
                        && !status.is_server_error()
                }
            };
            if !ok {
                let body = res.text().await.unwrap_or_default();
                wrong.push(format!("{endpoint} as {who}: {status} {body}"));
            }
        }
    }
    assert!(cells >= 4 * 34, "{cells} cells");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // An endpoint that is no server function: 404 for everyone.
    for (who, _, client) in &callers {
        let res = client
            .post(app.url("/api/lead/nothing"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{who}");
    }
    // Logout is open to all and ends the session.
    for (who, role) in [("annotator", Role::Annotator), ("lead", Role::Lead)] {
        let client = app.logged_in(who).await;
        let res = client.post(app.url("/api/logout")).send().await.unwrap();
        assert!(
            !res.status().is_client_error() && !res.status().is_server_error(),
            "{who}: {}",
            res.status()
        );
        let res = client
            .post(app.url("/api/lead/projects"))
            .send()
            .await
            .unwrap();
        let expected = refusal(Access::Role(Role::Lead), None).unwrap();
        assert_eq!(res.status(), expected, "{who} ({role}) after logout");
    }
}

/// Every page route with its parameters filled in.
fn page_paths() -> Vec<String> {
    leptos_axum::generate_route_list(app::App)
        .iter()
        .map(|route| {
            route
                .path()
                .split('/')
                .map(|segment| {
                    if segment.starts_with(':') || segment.starts_with('{') {
                        "x"
                    } else {
                        segment
                    }
                })
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[tokio::test]
async fn every_page_checks_the_role_on_the_server() {
    let app = TestApp::spawn().await;
    let callers = callers(&app).await;
    let pages = page_paths();
    assert!(pages.len() >= 11, "{pages:?}");
    let mut wrong = Vec::new();
    for page in &pages {
        let needed = if page == "/login" {
            Access::Public
        } else if page.starts_with("/admin") {
            Access::Role(Role::Admin)
        } else if page.starts_with("/lead") {
            Access::Role(Role::Lead)
        } else {
            Access::Role(Role::Annotator)
        };
        for (who, role, client) in &callers {
            let res = client.get(app.url(page)).send().await.unwrap();
            let status = res.status();
            let to_login = status.is_redirection()
                && res
                    .headers()
                    .get("location")
                    .and_then(|l| l.to_str().ok())
                    .is_some_and(|l| l.starts_with("/login?next="));
            let ok = match refusal(needed, *role) {
                Some(StatusCode::UNAUTHORIZED) => to_login,
                Some(expected) => status == expected,
                None => !to_login && status != StatusCode::FORBIDDEN && !status.is_server_error(),
            };
            if !ok {
                wrong.push(format!("{page} as {who}: {status}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
