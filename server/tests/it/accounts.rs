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
    let hash = app::store::users::password_hash(&app.db, "carol")
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
        app::store::projects::add_member(&app.db, project, id, ProjectRole::Annotator, None)
            .await
            .unwrap();
    }
    app::store::pool::build(
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
    assert_eq!(
        app::store::projects::membership_at(
            &app.db,
            project,
            app::store::users::id_by_name(&app.db, "lea").await.unwrap()
        )
        .await
        .unwrap()
        .role,
        None,
        "the lead membership ended"
    );
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
