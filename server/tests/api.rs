//! Personal API tokens and the HTTP API for scripts (issue 14), over HTTP against the real app:
//! a token acts as its user wherever a session would (server functions, pages), a bad, revoked
//! or deactivated user's token is 401 and never anonymous, a token without a cookie needs no
//! same-origin headers; and the JSON API under /api/v1 drives a campaign.
//! Data: the demo sample shipped in server/demo (40 claims, 443 abstracts).

mod common;

use app::api::tokens::{ApiTokenRow, IssuedApiToken};
use app::domain::account::Role;
use common::TestApp;
use reqwest::StatusCode;

/// A client without cookies or redirects: what a script is.
fn script() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Creates a token named `name` through the account page's server function, as `client`.
async fn create_token(app: &TestApp, client: &reqwest::Client, name: &str) -> String {
    let res = app
        .post_form(client, "/api/account/token/create", &[("name", name)])
        .await;
    assert!(
        res.status().is_success(),
        "{}",
        common::error_message(res).await
    );
    let issued: IssuedApiToken = res.json().await.unwrap();
    assert_eq!(issued.name, name);
    assert!(issued.token.starts_with("cp_"), "{}", issued.token);
    issued.token
}

#[tokio::test]
async fn a_token_acts_as_its_user_until_revoked_or_deactivated() {
    let app = TestApp::spawn().await;
    app::store::projects::create(&app.db, "p", "", None)
        .await
        .unwrap();
    app.add_lead("lead", "p").await;
    app.add_user("ann", Role::Annotator).await;
    let lead = app.logged_in("lead").await;
    let token = create_token(&app, &lead, "ci").await;
    // Shown once: the store holds only its SHA-256.
    let stored: Vec<String> = sqlx::query_scalar("SELECT token_sha256 FROM api_tokens")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert!(!stored[0].contains(&token[3..]));
    // The same name twice is a conflict.
    let res = app
        .post_form(&lead, "/api/account/token/create", &[("name", "ci")])
        .await;
    assert_eq!(res.status(), StatusCode::CONFLICT);

    // A server function, a page and a POST with a foreign Origin (no cookie: no CSRF check).
    let bearer = format!("Bearer {token}");
    let res = script()
        .post(app.url("/api/lead/projects"))
        .header("authorization", &bearer)
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let projects: Vec<serde_json::Value> = res.json().await.unwrap();
    assert_eq!(projects.len(), 1);
    let res = script()
        .get(app.url("/lead/projects/p"))
        .header("authorization", &bearer)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    // With a session cookie too, the cross-site check applies.
    let res = lead
        .post(app.url("/api/lead/projects"))
        .header("authorization", &bearer)
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    // The listing shows it used.
    let listed: Vec<ApiTokenRow> = app
        .post_form(&lead, "/api/account/tokens", &[("user", "")])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].name, "ci");
    assert!(listed[0].last_used_at.is_some());

    // A wrong token is 401, even where anonymous callers are welcome.
    for bad in [
        "Bearer cp_0000000000000000000000000000000000000000000000000000000000000000",
        "Bearer nonsense",
        "Basic bGVhZDpwdw==",
    ] {
        for (path, method) in [
            ("/api/whoami", "POST"),
            ("/api/lead/projects", "POST"),
            ("/lead/projects/p", "GET"),
        ] {
            let request = if method == "POST" {
                script().post(app.url(path))
            } else {
                script().get(app.url(path))
            };
            let res = request.header("authorization", bad).send().await.unwrap();
            assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{bad} {path}");
        }
    }

    // An annotator may not manage the lead's tokens; an admin may.
    let ann = app.logged_in("ann").await;
    let res = app
        .post_form(&ann, "/api/account/tokens", &[("user", "lead")])
        .await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let res = app
        .post_form(
            &ann,
            "/api/account/token/revoke",
            &[("name", "ci"), ("user", "lead")],
        )
        .await;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    app.add_user("root", Role::Admin).await;
    let admin = app.logged_in("root").await;
    let listed: Vec<ApiTokenRow> = app
        .post_form(&admin, "/api/account/tokens", &[("user", "lead")])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);

    // A deactivated user's token stops at once, and works again on reactivation.
    let whoami = || async {
        script()
            .post(app.url("/api/whoami"))
            .header("authorization", &bearer)
            .send()
            .await
            .unwrap()
    };
    let me: Option<app::domain::account::User> = whoami().await.json().await.unwrap();
    assert_eq!(me.map(|u| u.username).as_deref(), Some("lead"));
    app::store::accounts::set_active(&app.db, "lead", false, None)
        .await
        .unwrap();
    assert_eq!(whoami().await.status(), StatusCode::UNAUTHORIZED);
    app::store::accounts::set_active(&app.db, "lead", true, None)
        .await
        .unwrap();
    assert_eq!(whoami().await.status(), StatusCode::OK);

    // Revoked (by the admin): 401 at once; audited with who did it.
    let res = app
        .post_form(
            &admin,
            "/api/account/token/revoke",
            &[("name", "ci"), ("user", "lead")],
        )
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(whoami().await.status(), StatusCode::UNAUTHORIZED);
    let audit: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT a.action, u.username FROM audit_events a LEFT JOIN users u ON u.id = a.actor_id
         WHERE a.entity = 'api_token' ORDER BY a.id",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(
        audit,
        vec![
            ("create".to_owned(), Some("lead".to_owned())),
            ("revoke".to_owned(), Some("root".to_owned())),
        ]
    );
}
