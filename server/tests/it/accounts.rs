//! Accounts in the browser (issue 14): an admin creates users with one-time passwords, resets
//! passwords, changes roles and deactivates accounts; every user changes their own password.
//! A reset ends the user's other sessions; a deactivated user's session stops at the next
//! request and their open items go to the other annotators. Through the real HTTP server.

use crate::common;

use app::domain::account::{ProjectRole, Role};
use common::{TestApp, PASSWORD};
use reqwest::StatusCode;
use serde_json::Value;

async fn post(
    client: &reqwest::Client,
    app: &TestApp,
    endpoint: &str,
    form: &[(&str, &str)],
) -> reqwest::Response {
    client
        .post(app.url(&format!("/api/{endpoint}")))
        .form(form)
        .send()
        .await
        .unwrap()
}

/// Whether the client's session still works (who am I answers with a user).
async fn logged_in_as(client: &reqwest::Client, app: &TestApp) -> Option<String> {
    let me: Value = post(client, app, "whoami", &[]).await.json().await.unwrap();
    me["username"].as_str().map(str::to_owned)
}

#[tokio::test]
async fn an_admin_creates_a_user_whose_one_time_password_works_once_given() {
    let app = TestApp::spawn().await;
    app.add_user("root", Role::Admin).await;
    let admin = app.logged_in("root").await;
    let res = post(
        &admin,
        &app,
        "admin/user/create",
        &[("username", "carol"), ("role", "lead")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    let secret: Value = res.json().await.unwrap();
    let password = secret["password"].as_str().unwrap().to_owned();
    assert_eq!(secret["username"], "carol");
    assert_eq!(password.len(), 29, "{password}");
    // Stored hashed, never in plain text, and the audit trail does not carry it.
    let hash = store::users::password_hash(&app.db, "carol")
        .await
        .unwrap()
        .unwrap();
    assert!(hash.starts_with("$argon2id$") && !hash.contains(&password));
    let audit: Vec<String> = sqlx::query_scalar("SELECT COALESCE(new_value, '') FROM audit_events")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert!(audit.iter().all(|a| !a.contains(&password)));
    let carol = app.client();
    assert_eq!(
        app.login(&carol, "carol", &password).await.status(),
        StatusCode::OK
    );
    assert_eq!(logged_in_as(&carol, &app).await.as_deref(), Some("carol"));
    // The same name again is a conflict; a bad name or role is refused with the reason.
    let res = post(
        &admin,
        &app,
        "admin/user/create",
        &[("username", "carol"), ("role", "lead")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::CONFLICT);
    let res = post(
        &admin,
        &app,
        "admin/user/create",
        &[("username", "a b"), ("role", "lead")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let res = post(
        &admin,
        &app,
        "admin/user/create",
        &[("username", "dave"), ("role", "boss")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_password_reset_ends_the_users_other_sessions() {
    let app = TestApp::spawn().await;
    app.add_user("root", Role::Admin).await;
    app.add_user("ann", Role::Annotator).await;
    let admin = app.logged_in("root").await;
    let (first, second) = (app.logged_in("ann").await, app.logged_in("ann").await);
    assert_eq!(logged_in_as(&first, &app).await.as_deref(), Some("ann"));
    let res = post(&admin, &app, "admin/user/reset", &[("username", "ann")]).await;
    assert_eq!(res.status(), StatusCode::OK);
    let secret: Value = res.json().await.unwrap();
    for client in [&first, &second] {
        assert_eq!(logged_in_as(client, &app).await, None);
        let res = post(client, &app, "work/open-count", &[]).await;
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    }
    // The old password no longer works, the new one does.
    assert_eq!(
        app.login(&first, "ann", PASSWORD).await.status(),
        StatusCode::UNAUTHORIZED
    );
    let new = secret["password"].as_str().unwrap();
    assert_eq!(app.login(&first, "ann", new).await.status(), StatusCode::OK);
    assert_eq!(logged_in_as(&first, &app).await.as_deref(), Some("ann"));
}

#[tokio::test]
async fn users_change_their_own_password_keeping_this_session_only() {
    let app = TestApp::spawn().await;
    app.add_user("ann", Role::Annotator).await;
    let (this, other) = (app.logged_in("ann").await, app.logged_in("ann").await);
    let res = post(
        &this,
        &app,
        "account/password",
        &[("current", "wrong one"), ("new", "a brand new password")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        logged_in_as(&other, &app).await.as_deref(),
        Some("ann"),
        "a refused change ends nothing"
    );
    let res = post(
        &this,
        &app,
        "account/password",
        &[("current", PASSWORD), ("new", "short")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let res = post(
        &this,
        &app,
        "account/password",
        &[("current", PASSWORD), ("new", "a brand new password")],
    )
    .await;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "{}",
        res.text().await.unwrap()
    );
    assert_eq!(logged_in_as(&this, &app).await.as_deref(), Some("ann"));
    assert_eq!(logged_in_as(&other, &app).await, None);
    let fresh = app.client();
    assert_eq!(
        app.login(&fresh, "ann", "a brand new password")
            .await
            .status(),
        StatusCode::OK
    );
    // Anonymous callers cannot change anything.
    let res = post(
        &app.client(),
        &app,
        "account/password",
        &[("current", "x"), ("new", "a brand new password")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
}

/// A project with the demo sample, a run of one pair per claim pooled whole, and `annotators`.
async fn project_with_pool(app: &TestApp, annotators: &[&str]) -> i64 {
    let doc = common::demo_lines("corpus.jsonl")[0]["doc_id"].to_string();
    let pairs: Vec<(String, String, f64)> = common::demo_lines("claims.jsonl")
        .iter()
        .enumerate()
        .map(|(i, c)| (c["id"].to_string(), doc.clone(), 0.9 - i as f64 * 0.01))
        .collect();
    let project = app.demo_project("p", true, &pairs).await;
    for name in annotators {
        let id = app.add_user(name, Role::Annotator).await;
        store::projects::add_member(&app.db, project, id, ProjectRole::Annotator, None)
            .await
            .unwrap();
    }
    store::pool::build(
        &app.db,
        project,
        app::domain::pool::Strategy::Confidence,
        40,
        None,
    )
    .await
    .unwrap();
    project
}

async fn open_items(app: &TestApp, name: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM assignments a JOIN users u ON u.id = a.annotator_id
         WHERE u.username = $1 AND a.status = 'open'",
    )
    .bind(name)
    .fetch_one(&app.db)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_deactivated_user_is_logged_out_at_the_next_request_and_their_items_move_on() {
    let app = TestApp::spawn().await;
    project_with_pool(&app, &["ann1", "ann2"]).await;
    app.add_user("root", Role::Admin).await;
    let admin = app.logged_in("root").await;
    let ann1 = app.logged_in("ann1").await;
    let (before1, before2) = (
        open_items(&app, "ann1").await,
        open_items(&app, "ann2").await,
    );
    assert!(before1 > 0 && before2 > 0, "{before1} {before2}");
    let res = post(&ann1, &app, "work/queue", &[("project", "p")]).await;
    assert_eq!(res.status(), StatusCode::OK);
    let res = post(
        &admin,
        &app,
        "admin/user/active",
        &[("username", "ann1"), ("active", "false")],
    )
    .await;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "{}",
        res.text().await.unwrap()
    );
    let res = post(&ann1, &app, "work/queue", &[("project", "p")]).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        app.login(&app.client(), "ann1", PASSWORD).await.status(),
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(open_items(&app, "ann1").await, 0);
    assert_eq!(open_items(&app, "ann2").await, before1 + before2);
    // Reactivated, they can log in again (a lead adds them back to projects).
    let res = post(
        &admin,
        &app,
        "admin/user/active",
        &[("username", "ann1"), ("active", "true")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        app.login(&app.client(), "ann1", PASSWORD).await.status(),
        StatusCode::OK
    );
    let audit: Vec<String> =
        sqlx::query_scalar("SELECT action FROM audit_events WHERE entity = 'user' ORDER BY id")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert!(
        audit.contains(&"deactivate".to_owned()) && audit.contains(&"reactivate".to_owned()),
        "{audit:?}"
    );
}

#[tokio::test]
async fn a_role_change_takes_effect_at_once_and_the_last_admin_stays() {
    let app = TestApp::spawn().await;
    let project = project_with_pool(&app, &["ann1", "ann2"]).await;
    app.add_user("root", Role::Admin).await;
    app.add_lead("lea", "p").await;
    let admin = app.logged_in("root").await;
    let lead = app.logged_in("lea").await;
    assert_eq!(
        post(&lead, &app, "lead/annotation", &[("project", "p")])
            .await
            .status(),
        StatusCode::OK
    );
    let res = post(
        &admin,
        &app,
        "admin/user/role",
        &[("username", "lea"), ("role", "annotator")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        post(&lead, &app, "lead/annotation", &[("project", "p")])
            .await
            .status(),
        StatusCode::FORBIDDEN
    );
    // The lead membership is kept but leads nothing while the account is an annotator (it leads
    // again if the account is made a lead again: `a_lead_demoted_and_restored_...`).
    let kept = store::projects::membership_at(
        &app.db,
        project,
        store::users::id_by_name(&app.db, "lea").await.unwrap(),
    )
    .await
    .unwrap()
    .role;
    assert!(!app::domain::account::may_act_in_project(
        Role::Annotator,
        kept,
        ProjectRole::Annotator
    ));
    // An annotator made a lead hands their open items on.
    let before = open_items(&app, "ann1").await;
    assert!(before > 0);
    let res = post(
        &admin,
        &app,
        "admin/user/role",
        &[("username", "ann1"), ("role", "lead")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(open_items(&app, "ann1").await, 0);
    // The last admin can neither be demoted nor deactivated.
    let res = post(
        &admin,
        &app,
        "admin/user/role",
        &[("username", "root"), ("role", "lead")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::CONFLICT);
    let res = post(
        &admin,
        &app,
        "admin/user/active",
        &[("username", "root"), ("active", "false")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::CONFLICT);
}

#[tokio::test]
async fn a_lead_creates_a_project_leads_it_and_manages_its_members() {
    let app = TestApp::spawn().await;
    app.add_user("lea", Role::Lead).await;
    app.add_user("leo", Role::Lead).await;
    app.add_user("ann", Role::Annotator).await;
    let (lea, leo) = (app.logged_in("lea").await, app.logged_in("leo").await);
    let res = post(
        &lea,
        &app,
        "lead/project/create",
        &[("name", "  fresh  "), ("description", "d")],
    )
    .await;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "{}",
        res.text().await.unwrap()
    );
    assert_eq!(res.json::<String>().await.unwrap(), "fresh");
    let res = post(
        &lea,
        &app,
        "lead/project/create",
        &[("name", "fresh"), ("description", "")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::CONFLICT);
    // The creator leads it; another lead neither sees nor touches it until added.
    assert_eq!(
        post(&lea, &app, "lead/project", &[("name", "fresh")])
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        post(&leo, &app, "lead/project", &[("name", "fresh")])
            .await
            .status(),
        StatusCode::FORBIDDEN
    );
    let listed: Vec<Value> = post(&leo, &app, "lead/projects", &[])
        .await
        .json()
        .await
        .unwrap();
    assert!(listed.is_empty());
    let add = |who: &'static str, role: &'static str| {
        let lea = lea.clone();
        let app = &app;
        async move {
            post(
                &lea,
                app,
                "lead/members/add",
                &[("project", "fresh"), ("username", who), ("role", role)],
            )
            .await
        }
    };
    assert_eq!(add("ann", "annotator").await.status(), StatusCode::OK);
    assert_eq!(
        add("ann", "lead").await.status(),
        StatusCode::BAD_REQUEST,
        "an annotator account cannot lead"
    );
    assert_eq!(add("nobody", "lead").await.status(), StatusCode::NOT_FOUND);
    assert_eq!(add("leo", "lead").await.status(), StatusCode::OK);
    assert_eq!(
        post(&leo, &app, "lead/project", &[("name", "fresh")])
            .await
            .status(),
        StatusCode::OK
    );
    let members: Vec<Value> = post(&lea, &app, "lead/members", &[("project", "fresh")])
        .await
        .json()
        .await
        .unwrap();
    let rows: Vec<(String, String)> = members
        .iter()
        .map(|m| {
            (
                m["username"].as_str().unwrap().to_owned(),
                m["role"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [("lea", "lead"), ("leo", "lead"), ("ann", "annotator")]
            .map(|(u, r)| (u.to_owned(), r.to_owned()))
    );
    // The annotator's membership lets them open the project's work page; removed, it does not.
    let ann = app.logged_in("ann").await;
    assert_eq!(
        post(&ann, &app, "work/queue", &[("project", "fresh")])
            .await
            .status(),
        StatusCode::OK
    );
    let res = post(
        &leo,
        &app,
        "lead/members/remove",
        &[("project", "fresh"), ("username", "ann")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        post(&ann, &app, "work/queue", &[("project", "fresh")])
            .await
            .status(),
        StatusCode::FORBIDDEN
    );
    // A lead removed from the project loses it at once.
    let res = post(
        &leo,
        &app,
        "lead/members/remove",
        &[("project", "fresh"), ("username", "lea")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        post(&lea, &app, "lead/project", &[("name", "fresh")])
            .await
            .status(),
        StatusCode::FORBIDDEN
    );
    let audit: Vec<String> = sqlx::query_scalar("SELECT action FROM audit_events ORDER BY id")
        .fetch_all(&app.db)
        .await
        .unwrap();
    for action in [
        "create",
        "add_member",
        "remove_member",
        "deactivate_annotator",
    ] {
        assert!(audit.contains(&action.to_owned()), "{action}: {audit:?}");
    }
}

/// A token of `user`, as `claimpool token create` makes it.
async fn token_of(app: &TestApp, user: &str, name: &str) -> String {
    let id = store::users::id_by_name(&app.db, user).await.unwrap();
    store::api_tokens::create(&app.db, id, name, None)
        .await
        .unwrap()
        .secret
}

/// Calls the server function `endpoint` as a script with `token` (no cookie).
async fn with_token(
    app: &TestApp,
    token: &str,
    endpoint: &str,
    form: &[(&str, &str)],
) -> reqwest::Response {
    common::client_builder()
        .build()
        .unwrap()
        .post(app.url(&format!("/api/{endpoint}")))
        .header("authorization", format!("Bearer {token}"))
        .form(form)
        .send()
        .await
        .unwrap()
}

/// Issue 35 F4: a token acts in projects but cannot manage the account: it can neither list,
/// create nor revoke tokens nor change the password (403, saying why); a browser session can.
#[tokio::test]
async fn an_api_token_cannot_manage_the_account() {
    let app = TestApp::spawn().await;
    app.add_user("ann", Role::Annotator).await;
    let token = token_of(&app, "ann", "ci").await;
    let res = with_token(&app, &token, "work/projects", &[]).await;
    assert_eq!(res.status(), StatusCode::OK, "the token works");
    for (endpoint, form) in [
        ("account/tokens", &[("user", "")][..]),
        ("account/token/create", &[("name", "another")][..]),
        ("account/token/revoke", &[("name", "ci"), ("user", "")][..]),
        (
            "account/password",
            &[("current", PASSWORD), ("new", "taken over by a token")][..],
        ),
    ] {
        let res = with_token(&app, &token, endpoint, form).await;
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{endpoint}");
        let message = common::error_message(res).await;
        assert!(message.contains("browser session"), "{endpoint}: {message}");
        // With a session cookie as well, the token still may not.
        let session = app.logged_in("ann").await;
        let res = session
            .post(app.url(&format!("/api/{endpoint}")))
            .header("authorization", format!("Bearer {token}"))
            .form(form)
            .send()
            .await
            .unwrap();
        assert_eq!(
            res.status(),
            StatusCode::FORBIDDEN,
            "{endpoint} with a cookie"
        );
    }
    let live: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM api_tokens WHERE revoked_at IS NULL")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(live, 1, "nothing created or revoked");
    assert!(app
        .login(&app.client(), "ann", PASSWORD)
        .await
        .status()
        .is_success());
    // The browser session manages the account.
    let session = app.logged_in("ann").await;
    let res = post(
        &session,
        &app,
        "account/token/create",
        &[("name", "another")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    let res = post(&session, &app, "account/tokens", &[("user", "")]).await;
    assert_eq!(res.status(), StatusCode::OK);
}

/// Issue 35 F4: an admin's token cannot manage users either (a leaked one would otherwise
/// create an account, or reset a password, that outlives its revocation): 403, nothing changed;
/// the admin's browser session can.
#[tokio::test]
async fn an_admins_token_cannot_create_users_or_reset_passwords() {
    let app = TestApp::spawn().await;
    app.add_user("root", Role::Admin).await;
    app.add_user("ann", Role::Annotator).await;
    let token = token_of(&app, "root", "ci").await;
    let users = || async {
        sqlx::query_as::<_, (String, String, i64)>(
            "SELECT username, role, active FROM users ORDER BY username",
        )
        .fetch_all(&app.db)
        .await
        .unwrap()
    };
    let before = users().await;
    for (endpoint, form) in [
        ("admin/users", &[][..]),
        (
            "admin/user/create",
            &[("username", "mallory"), ("role", "admin")][..],
        ),
        ("admin/user/reset", &[("username", "ann")][..]),
        (
            "admin/user/role",
            &[("username", "ann"), ("role", "admin")][..],
        ),
        (
            "admin/user/active",
            &[("username", "ann"), ("active", "false")][..],
        ),
    ] {
        let res = with_token(&app, &token, endpoint, form).await;
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{endpoint}");
        let message = common::error_message(res).await;
        assert!(message.contains("browser session"), "{endpoint}: {message}");
    }
    assert_eq!(users().await, before, "no account created or changed");
    assert!(
        app.login(&app.client(), "ann", PASSWORD)
            .await
            .status()
            .is_success(),
        "ann's password is unchanged"
    );
    let session = app.logged_in("root").await;
    let res = post(
        &session,
        &app,
        "admin/user/create",
        &[("username", "carol"), ("role", "annotator")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK, "the admin's session can");
}

/// Issue 35 F4: a password change, by the user or an admin, revokes the account's tokens.
#[tokio::test]
async fn a_password_change_revokes_the_accounts_tokens() {
    let app = TestApp::spawn().await;
    app.add_user("root", Role::Admin).await;
    app.add_user("ann", Role::Annotator).await;
    let token = token_of(&app, "ann", "ci").await;
    assert_eq!(
        with_token(&app, &token, "work/projects", &[])
            .await
            .status(),
        StatusCode::OK
    );
    let ann = app.logged_in("ann").await;
    let res = post(
        &ann,
        &app,
        "account/password",
        &[("current", PASSWORD), ("new", "a brand new password")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        with_token(&app, &token, "work/projects", &[])
            .await
            .status(),
        StatusCode::UNAUTHORIZED
    );
    let listed: Value = post(&ann, &app, "account/tokens", &[("user", "")])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed, serde_json::json!([]));
    // An admin's reset revokes them too.
    let token = token_of(&app, "ann", "ci").await;
    let admin = app.logged_in("root").await;
    let res = post(&admin, &app, "admin/user/reset", &[("username", "ann")]).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        with_token(&app, &token, "work/projects", &[])
            .await
            .status(),
        StatusCode::UNAUTHORIZED
    );
    let revocations: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM audit_events WHERE entity = 'api_token' AND action = 'revoke'",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(revocations, 2, "each revocation is audited");
}

/// Issue 35 F5: deactivation ends the user's sessions and revokes their tokens for good:
/// reactivated, they sign in afresh and make new tokens.
#[tokio::test]
async fn deactivation_ends_sessions_and_tokens_for_good() {
    let app = TestApp::spawn().await;
    app.add_user("root", Role::Admin).await;
    app.add_user("ann", Role::Annotator).await;
    let admin = app.logged_in("root").await;
    let ann = app.logged_in("ann").await;
    let token = token_of(&app, "ann", "ci").await;
    for active in ["false", "true"] {
        let res = post(
            &admin,
            &app,
            "admin/user/active",
            &[("username", "ann"), ("active", active)],
        )
        .await;
        assert_eq!(res.status(), StatusCode::OK);
    }
    assert_eq!(
        logged_in_as(&ann, &app).await,
        None,
        "the old session is over"
    );
    assert_eq!(
        post(&ann, &app, "work/projects", &[]).await.status(),
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        with_token(&app, &token, "work/projects", &[])
            .await
            .status(),
        StatusCode::UNAUTHORIZED,
        "the old token is revoked"
    );
    // A fresh login and a new token work.
    let fresh = app.logged_in("ann").await;
    assert_eq!(logged_in_as(&fresh, &app).await.as_deref(), Some("ann"));
    let token = token_of(&app, "ann", "ci").await;
    assert_eq!(
        with_token(&app, &token, "work/projects", &[])
            .await
            .status(),
        StatusCode::OK
    );
}

/// Issue 35 F5: a lead demoted to annotator no longer leads; restored to lead, they lead their
/// projects again.
#[tokio::test]
async fn a_lead_demoted_and_restored_leads_their_project_again() {
    let app = TestApp::spawn().await;
    app.add_user("root", Role::Admin).await;
    app.add_user("lea", Role::Lead).await;
    let admin = app.logged_in("root").await;
    let lea = app.logged_in("lea").await;
    let res = post(
        &lea,
        &app,
        "lead/project/create",
        &[("name", "mine"), ("description", "")],
    )
    .await;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "{}",
        res.text().await.unwrap()
    );
    let lead_page = |client: reqwest::Client| {
        let app = &app;
        async move {
            post(&client, app, "lead/members", &[("project", "mine")])
                .await
                .status()
        }
    };
    assert_eq!(lead_page(lea.clone()).await, StatusCode::OK);
    let set_role = |role: &'static str| {
        let (app, admin) = (&app, admin.clone());
        async move {
            post(
                &admin,
                app,
                "admin/user/role",
                &[("username", "lea"), ("role", role)],
            )
            .await
            .status()
        }
    };
    assert_eq!(set_role("annotator").await, StatusCode::OK);
    assert_eq!(lead_page(lea.clone()).await, StatusCode::FORBIDDEN);
    let page = lea
        .get(app.url("/lead/projects/mine"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::FORBIDDEN);
    // While demoted, the project's member list does not show them as an active lead.
    let members = store::projects::members(
        &app.db,
        store::projects::id_by_name(&app.db, "mine").await.unwrap(),
    )
    .await
    .unwrap();
    assert!(
        members.iter().all(|m| m.username != "lea" || !m.active),
        "{members:?}"
    );
    assert_eq!(set_role("lead").await, StatusCode::OK);
    assert_eq!(lead_page(lea.clone()).await, StatusCode::OK);
    let page = lea
        .get(app.url("/lead/projects/mine"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let projects: Value = post(&lea, &app, "lead/projects", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(projects.as_array().map(Vec::len), Some(1), "{projects}");
}

/// Issue 35 F14: user names are ASCII letters, digits, '.', '_' and '-', and a name that looks
/// like an existing one (`adrnin`, `admln`, `Adm1n` for `admin`) is refused.
#[tokio::test]
async fn look_alike_user_names_are_refused() {
    let app = TestApp::spawn().await;
    app.add_user("admin", Role::Admin).await;
    let admin = app.logged_in("admin").await;
    for (name, status) in [
        ("ädmin", StatusCode::BAD_REQUEST),
        ("аdmin", StatusCode::BAD_REQUEST),  // Cyrillic а
        ("ａdmin", StatusCode::BAD_REQUEST), // full-width
        ("adrnin", StatusCode::CONFLICT),
        ("AdmIn", StatusCode::CONFLICT),
        ("adm1n", StatusCode::CONFLICT),
        ("ADMIN", StatusCode::CONFLICT),
    ] {
        let res = post(
            &admin,
            &app,
            "admin/user/create",
            &[("username", name), ("role", "annotator")],
        )
        .await;
        assert_eq!(
            res.status(),
            status,
            "{name}: {}",
            res.text().await.unwrap()
        );
    }
    let users: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(users, 1);
    let res = post(
        &admin,
        &app,
        "admin/user/create",
        &[("username", "ann.b_2-x"), ("role", "annotator")],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
}
