//! Accounts and roles, through the real HTTP server.

use crate::common;

use app::domain::account::Role;
use common::{error_message, TestApp, PASSWORD};
use reqwest::StatusCode;

#[tokio::test]
async fn annotators_are_refused_on_lead_and_admin_pages_and_functions() {
    let app = TestApp::spawn().await;
    app.add_user("ann", Role::Annotator).await;
    let client = app.logged_in("ann").await;

    for page in ["/lead", "/lead/projects/x", "/admin/users"] {
        let res = client.get(app.url(page)).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "page {page}");
    }
    for function in ["/api/lead/projects", "/api/admin/users"] {
        let res = client.post(app.url(function)).send().await.unwrap();
        assert_eq!(
            res.status(),
            StatusCode::FORBIDDEN,
            "server function {function}"
        );
        assert_eq!(
            error_message(res).await,
            "forbidden: this needs the lead role".replace(
                "lead",
                if function.contains("admin") {
                    "admin"
                } else {
                    "lead"
                }
            )
        );
    }
    let res = client
        .post(app.url("/api/lead/claims"))
        .form(&[("project", "x"), ("search", ""), ("offset", "0")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);

    // The annotator's own pages and functions work.
    assert_eq!(
        client.get(app.url("/")).send().await.unwrap().status(),
        StatusCode::OK
    );
    let res = client
        .post(app.url("/api/work/open-count"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.text().await.unwrap(), "0");
}

#[tokio::test]
async fn leads_reach_lead_pages_but_not_admin_ones() {
    let app = TestApp::spawn().await;
    app.add_user("lea", Role::Lead).await;
    let client = app.logged_in("lea").await;
    assert_eq!(
        client.get(app.url("/lead")).send().await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(
        client
            .post(app.url("/api/lead/projects"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        client
            .get(app.url("/admin/users"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        client
            .post(app.url("/api/admin/users"))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn anonymous_callers_are_sent_to_login() {
    let app = TestApp::spawn().await;
    let client = app.client();
    let res = client
        .get(app.url("/lead/projects/x?q=a b"))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_redirection());
    let location = res.headers()["location"].to_str().unwrap();
    assert_eq!(location, "/login?next=/lead/projects/x%3Fq%3Da%2520b");
    let res = client
        .post(app.url("/api/lead/projects"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        client.get(app.url("/login")).send().await.unwrap().status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn a_wrong_password_gets_a_clear_message_and_no_session() {
    let app = TestApp::spawn().await;
    app.add_user("ann", Role::Annotator).await;
    let client = app.client();
    let res = app.login(&client, "ann", "wrong password").await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert!(
        res.headers().get("set-cookie").is_none(),
        "no session cookie on failure"
    );
    assert_eq!(error_message(res).await, "wrong user name or password");
    // No session: the next call is still anonymous.
    let who = client.post(app.url("/api/whoami")).send().await.unwrap();
    assert_eq!(who.text().await.unwrap(), "null");
    // An unknown user gets the same message.
    let res = app.login(&client, "nobody", "wrong password").await;
    assert_eq!(error_message(res).await, "wrong user name or password");
}

#[tokio::test]
async fn a_login_sets_a_strict_http_only_cookie_and_logout_ends_it() {
    let app = TestApp::spawn().await;
    app.add_user("ann", Role::Annotator).await;
    let client = app.client();
    let res = app.login(&client, "ann", PASSWORD).await;
    assert_eq!(res.status(), StatusCode::OK);
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("claimpool_session="), "{cookie}");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    let who: serde_json::Value = client
        .post(app.url("/api/whoami"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(who["username"], "ann");
    assert_eq!(who["role"], "annotator");
    client.post(app.url("/api/logout")).send().await.unwrap();
    let who = client.post(app.url("/api/whoami")).send().await.unwrap();
    assert_eq!(who.text().await.unwrap(), "null");
}

/// A client whose connections come from `ip` (any 127.0.0.0/8 address reaches the server).
fn client_from(ip: [u8; 4]) -> reqwest::Client {
    common::client_builder()
        .cookie_store(true)
        .local_address(std::net::IpAddr::from(ip))
        .build()
        .unwrap()
}

#[tokio::test]
async fn throttling_engages_after_repeated_failures() {
    let app = TestApp::spawn().await;
    app.add_user("ann", Role::Annotator).await;
    let client = app.client();
    for attempt in 1..=5 {
        let res = app.login(&client, "ann", "wrong password").await;
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "attempt {attempt}");
    }
    // Even the right password is refused now, from this address, with a message that says when
    // to retry.
    let res = app.login(&client, "ann", PASSWORD).await;
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    let text = error_message(res).await;
    assert!(
        text.starts_with("too many failed logins for ann; try again in "),
        "{text}"
    );
    assert!(text.ends_with(" s"), "{text}");
    // Another user name is not affected.
    app.add_user("bob", Role::Annotator).await;
    assert_eq!(
        app.login(&app.client(), "bob", PASSWORD).await.status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn an_attacker_cannot_lock_others_out() {
    let app = TestApp::spawn().await;
    app.add_user("admin1", Role::Admin).await;
    let attacker = client_from([127, 0, 0, 1]);
    for _ in 0..8 {
        app.login(&attacker, "admin1", "guess guess").await;
    }
    assert_eq!(
        app.login(&attacker, "admin1", PASSWORD).await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    // The real admin, from another address, logs in with the right password.
    let admin = client_from([127, 0, 0, 2]);
    let res = app.login(&admin, "admin1", PASSWORD).await;
    assert_eq!(res.status(), StatusCode::OK, "{}", error_message(res).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_guesses_are_each_counted_before_the_password_is_checked() {
    let app = TestApp::spawn().await;
    app.add_user("ann", Role::Annotator).await;
    let client = app.client();
    let mut tries = tokio::task::JoinSet::new();
    for i in 0..30 {
        let (url, client) = (app.url("/api/login"), client.clone());
        tries.spawn(async move {
            let password = format!("guess-{i}");
            client
                .post(url)
                .form(&[("username", "ann"), ("password", &password), ("next", "/")])
                .send()
                .await
                .unwrap()
                .status()
        });
    }
    let statuses = tries.join_all().await;
    let checked = statuses
        .iter()
        .filter(|s| **s == StatusCode::UNAUTHORIZED)
        .count();
    let refused = statuses
        .iter()
        .filter(|s| **s == StatusCode::TOO_MANY_REQUESTS)
        .count();
    // Five passwords were checked; every other try was refused before its password was read.
    assert_eq!((checked, refused), (5, 25), "{statuses:?}");
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM login_attempts")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(stored, 5);
}

#[tokio::test]
async fn overlong_names_and_passwords_cost_nothing() {
    let app = TestApp::spawn().await;
    app.add_user("ann", Role::Annotator).await;
    let client = app.client();
    let long_name = "a".repeat(1_500_000);
    let res = app.login(&client, &long_name, PASSWORD).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let res = app.login(&client, "ann", &"p".repeat(100_000)).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM login_attempts")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(
        stored, 0,
        "nothing stored for names or passwords no account can have"
    );
    // The right password still works: those tries were not counted against the name.
    assert_eq!(
        app.login(&client, "ann", PASSWORD).await.status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn passwords_are_stored_only_as_argon2id_hashes() {
    let app = TestApp::spawn().await;
    app.add_user("ann", Role::Annotator).await;
    let hash = app::store::users::password_hash(&app.db, "ann")
        .await
        .unwrap()
        .unwrap();
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    assert!(!hash.contains(PASSWORD));
    // The database refuses anything that is not an argon2id hash.
    let plain = sqlx::query("INSERT INTO users (username, role, password_hash, created_at) VALUES ('x', 'lead', 'secret', 0)")
        .execute(&app.db)
        .await;
    assert!(plain.is_err());
}

#[tokio::test]
async fn expired_sessions_are_purged() {
    let app = TestApp::spawn().await;
    app.add_user("ann", Role::Annotator).await;
    let _live = app.logged_in("ann").await;
    let expired = if common::postgres::tests_on_postgres() {
        "INSERT INTO sessions (id, data, expiry_date)
         VALUES ('old', decode('00', 'hex'), '2000-01-01 00:00:00+00')"
    } else {
        "INSERT INTO sessions (id, data, expiry_date) VALUES ('old', x'00', '2000-01-01 00:00:00')"
    };
    sqlx::query(expired).execute(&app.db).await.unwrap();
    let count = || async {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM sessions")
            .fetch_one(&app.db)
            .await
            .unwrap()
    };
    assert_eq!(count().await, 2);
    server::http::purge_expired_sessions(&app.db).await.unwrap();
    assert_eq!(
        count().await,
        1,
        "the expired session is gone, the live one stays"
    );
    let ids: Vec<String> = sqlx::query_scalar("SELECT id FROM sessions")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_ne!(ids, ["old"]);
}
