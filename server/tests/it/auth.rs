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
    let hash = store::users::password_hash(&app.db, "ann")
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

/// Users named `{prefix}{i}` for i in 0..n, with the test password (hashed once for all).
async fn add_users(app: &TestApp, prefix: &str, n: usize) -> Vec<String> {
    let password = app::domain::account::NewPassword::parse(PASSWORD).unwrap();
    let hash = app::auth::hash_password(&password).unwrap();
    let mut names = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("{prefix}{i}");
        let username = app::domain::account::Username::parse(&name).unwrap();
        store::users::create(&app.db, &username, Role::Annotator, &hash, None)
            .await
            .unwrap();
        names.push(name);
    }
    names
}

/// One login through the real server from `ip`, optionally naming a forwarded client address;
/// its status and body.
async fn login_from(
    app: &TestApp,
    ip: [u8; 4],
    forwarded_for: Option<&str>,
    name: &str,
    password: &str,
) -> (StatusCode, String) {
    let mut request = client_from(ip).post(app.url("/api/login")).form(&[
        ("username", name),
        ("password", password),
        ("next", "/"),
    ]);
    if let Some(forwarded) = forwarded_for {
        request = request.header("x-forwarded-for", forwarded);
    }
    let res = request.send().await.unwrap();
    let status = res.status();
    (status, res.text().await.unwrap())
}

/// Logins (name, password) from `ip`, all sent at once; each one's name, status and body.
async fn logins_at_once(
    app: &TestApp,
    ip: [u8; 4],
    forwarded_for: Option<&str>,
    logins: Vec<(String, String)>,
) -> Vec<(String, StatusCode, String)> {
    let mut tries = tokio::task::JoinSet::new();
    for (name, password) in logins {
        let (url, forwarded) = (app.url("/api/login"), forwarded_for.map(str::to_owned));
        tries.spawn(async move {
            let mut request = client_from(ip).post(url).form(&[
                ("username", name.as_str()),
                ("password", password.as_str()),
                ("next", "/"),
            ]);
            if let Some(forwarded) = forwarded {
                request = request.header("x-forwarded-for", forwarded);
            }
            let res = request.send().await.unwrap();
            let status = res.status();
            (name, status, res.text().await.unwrap())
        });
    }
    tries.join_all().await
}

/// The seconds a 429 answer says to wait, if it is a throttled login's.
fn retry_after_secs(body: &str) -> Option<i64> {
    match serde_json::from_str::<app::error::ApiError>(body) {
        Ok(app::error::ApiError::Throttled {
            retry_after_secs, ..
        }) => Some(retry_after_secs),
        _ => None,
    }
}

async fn failures_stored(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM login_attempts WHERE success = 0")
        .fetch_one(&app.db)
        .await
        .unwrap()
}

/// Issue 35 F2: a lab of 50 annotators behind one NAT address signing in at 9:00. Logins
/// waiting for their password check are no failures, and none is left behind; the address is
/// still throttled after 30 wrong ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_correct_logins_from_one_address_all_succeed_and_thirty_wrong_ones_still_throttle() {
    let app = TestApp::spawn().await;
    let names = add_users(&app, "lab", 50).await;
    let lab = [127, 0, 0, 9];
    let answers = logins_at_once(
        &app,
        lab,
        None,
        names
            .iter()
            .map(|n| (n.clone(), PASSWORD.to_owned()))
            .collect(),
    )
    .await;
    let refused: Vec<_> = answers
        .iter()
        .filter(|(_, status, _)| *status != StatusCode::OK)
        .collect();
    assert!(
        refused.is_empty(),
        "{} of 50 correct logins refused: {refused:?}",
        refused.len()
    );
    assert_eq!(failures_stored(&app).await, 0, "no failure left behind");

    // 30 wrong logins (made-up names) from the same address, at once: each is checked ...
    let wrong = (0..30)
        .map(|i| (format!("nobody{i}"), "wrong password".to_owned()))
        .collect();
    let answers = logins_at_once(&app, lab, None, wrong).await;
    assert!(
        answers
            .iter()
            .all(|(_, status, _)| *status == StatusCode::UNAUTHORIZED),
        "{answers:?}"
    );
    // ... and then the address is throttled, even with a right password, for the whole window
    // (the oldest of the 30 failures is seconds old).
    let (status, body) = login_from(&app, lab, None, "lab0", PASSWORD).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let retry = retry_after_secs(&body).unwrap_or_else(|| panic!("{body}"));
    assert!((270..=300).contains(&retry), "retry after {retry} s");
    // Another address is not affected.
    let (status, body) = login_from(&app, [127, 0, 0, 10], None, "lab1", PASSWORD).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// Stores a failed login of `name` from `client`, `age_secs` ago.
async fn failed_login(app: &TestApp, name: &str, client: &str, age_secs: i64) {
    sqlx::query(
        "INSERT INTO login_attempts (username, client, at, success) VALUES ($1, $2, $3, 0)",
    )
    .bind(name)
    .bind(client)
    .bind(store::now_ms() - age_secs * 1000)
    .execute(&app.db)
    .await
    .unwrap();
}

/// Issue 35 F2: the retry time a refusal names is when enough counted failures have left the
/// window for every limit reached to let the login through; then it does.
#[tokio::test]
async fn the_retry_time_is_when_the_counted_failures_leave_the_window() {
    let app = TestApp::spawn().await;
    app.add_user("ann", Role::Annotator).await;
    let window = 300;
    // Five failures for ann from one address, the oldest 200 s ago: 100 s to wait.
    for age in [200, 150, 100, 50, 10] {
        failed_login(&app, "ann", "127.0.0.21", age).await;
    }
    let (status, body) = login_from(&app, [127, 0, 0, 21], None, "ann", PASSWORD).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let retry = retry_after_secs(&body).unwrap();
    assert!((99..=101).contains(&retry), "retry after {retry} s");

    // Two limits reached: ann's five failures from this address free in 50 s, but the address's
    // 35 failures drop below 30 only when the 30th newest (100 s old) leaves: 200 s.
    for age in [250, 249, 248, 247, 246] {
        failed_login(&app, "ann", "127.0.0.22", age).await;
    }
    for i in 0..30 {
        failed_login(&app, &format!("made-up-{i}"), "127.0.0.22", 100).await;
    }
    let (status, body) = login_from(&app, [127, 0, 0, 22], None, "ann", PASSWORD).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let retry = retry_after_secs(&body).unwrap();
    assert!(
        (window - 101..=window - 99).contains(&retry),
        "retry after {retry} s"
    );

    // Once the failures have left the window the login goes through at once.
    sqlx::query("UPDATE login_attempts SET at = at - $1")
        .bind(window * 1000)
        .execute(&app.db)
        .await
        .unwrap();
    for ip in [[127, 0, 0, 21], [127, 0, 0, 22]] {
        let (status, body) = login_from(&app, ip, None, "ann", PASSWORD).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
}

/// Issue 35 F3: behind a reverse proxy every login comes from the proxy's address; with
/// `--trusted-proxy` the client is the address the proxy forwards, so one client's wrong logins
/// throttle that client only.
#[tokio::test]
async fn behind_a_trusted_proxy_the_forwarded_client_is_throttled_not_everyone() {
    let app = TestApp::spawn_with(server::http::ServeOptions {
        trusted_proxies: server::security::TrustedProxies::parse_all(&[
            "127.0.0.31".to_owned(),
            "10.9.0.0/16".to_owned(),
        ])
        .unwrap(),
        ..Default::default()
    })
    .await;
    app.add_user("ann2", Role::Annotator).await;
    app.add_user("lead", Role::Lead).await;
    let proxy = [127, 0, 0, 31];
    let (a, b) = ("203.0.113.7", "198.51.100.2");
    let wrong = (0..30)
        .map(|i| (format!("made-up-{i}"), "wrong password".to_owned()))
        .collect();
    let answers = logins_at_once(&app, proxy, Some(a), wrong).await;
    assert!(
        answers
            .iter()
            .all(|(_, status, _)| *status == StatusCode::UNAUTHORIZED),
        "{answers:?}"
    );
    let clients: Vec<String> = sqlx::query_scalar("SELECT DISTINCT client FROM login_attempts")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(clients, [a]);
    // A is throttled, also when it claims to forward for someone else (the proxy appends the
    // address it saw, the rightmost; a second trusted proxy in the chain is skipped) ...
    for forwarded in [
        a.to_owned(),
        format!("{b}, {a}"),
        format!("{b}, {a}, 10.9.3.4"),
    ] {
        let (status, body) = login_from(&app, proxy, Some(&forwarded), "ann2", PASSWORD).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{forwarded}: {body}");
    }
    // ... while everyone else behind the proxy logs in.
    for name in ["ann2", "lead"] {
        let (status, body) = login_from(&app, proxy, Some(b), name, PASSWORD).await;
        assert_eq!(status, StatusCode::OK, "{name}: {body}");
    }
    // A peer that is no trusted proxy is keyed on its own address, whatever it forwards.
    let (status, body) = login_from(&app, [127, 0, 0, 32], Some(b), "ann2", "wrong").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let last: String =
        sqlx::query_scalar("SELECT client FROM login_attempts ORDER BY id DESC LIMIT 1")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(last, "127.0.0.32");
}

/// Issue 35 F3: without `--trusted-proxy`, X-Forwarded-For is the client's word and ignored.
#[tokio::test]
async fn without_a_trusted_proxy_x_forwarded_for_is_ignored() {
    let app = TestApp::spawn().await;
    app.add_user("ann2", Role::Annotator).await;
    let ip = [127, 0, 0, 33];
    let wrong = (0..30)
        .map(|i| (format!("made-up-{i}"), "wrong password".to_owned()))
        .collect();
    logins_at_once(&app, ip, Some("203.0.113.7"), wrong).await;
    let (status, body) = login_from(&app, ip, Some("198.51.100.2"), "ann2", PASSWORD).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let clients: Vec<String> = sqlx::query_scalar("SELECT DISTINCT client FROM login_attempts")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(clients, ["127.0.0.33"]);
}

/// Issue 35 F3: guessing a user's password from many addresses cannot lock the user out of
/// the address they usually log in from; it still throttles new addresses.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn failures_on_a_name_from_many_addresses_do_not_lock_out_its_usual_address() {
    let app = TestApp::spawn().await;
    app.add_user("ann2", Role::Annotator).await;
    let usual = [127, 0, 0, 40];
    let (status, body) = login_from(&app, usual, None, "ann2", PASSWORD).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // 20 addresses, 5 wrong passwords each: 100 failures on ann2.
    let mut attackers = tokio::task::JoinSet::new();
    for host in 1..=20u8 {
        let app_url = app.url("/api/login");
        attackers.spawn(async move {
            let client = client_from([127, 0, 1, host]);
            let mut statuses = Vec::new();
            for i in 0..5 {
                let password = format!("guess-{host}-{i}");
                let res = client
                    .post(&app_url)
                    .form(&[("username", "ann2"), ("password", &password), ("next", "/")])
                    .send()
                    .await
                    .unwrap();
                statuses.push(res.status());
            }
            statuses
        });
    }
    let statuses: Vec<StatusCode> = attackers.join_all().await.concat();
    assert_eq!(statuses.len(), 100);
    assert!(
        statuses.iter().all(|s| *s == StatusCode::UNAUTHORIZED),
        "{statuses:?}"
    );
    // A new address is throttled by the backstop on the name ...
    let (status, body) = login_from(&app, [127, 0, 2, 1], None, "ann2", PASSWORD).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    // ... but ann2 logs in from where they did before.
    let (status, body) = login_from(&app, usual, None, "ann2", PASSWORD).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
