//! Personal API tokens and the HTTP API for scripts (issue 14), over HTTP against the real app:
//! a token acts as its user wherever a session would (server functions, pages), a bad, revoked
//! or deactivated user's token is 401 and never anonymous, a token without a cookie needs no
//! same-origin headers; and the JSON API under /api/v1 drives a campaign.
//! Data: the demo sample shipped in server/demo (40 claims, 443 abstracts).

use crate::common;

use app::api::tokens::{ApiTokenRow, IssuedApiToken};
use app::domain::account::Role;
use common::TestApp;
use reqwest::StatusCode;

/// A client without cookies or redirects: what a script is.
fn script() -> reqwest::Client {
    common::client_builder().build().unwrap()
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
async fn a_token_acts_as_its_user_until_revoked_or_deactivated_for_good() {
    let app = TestApp::spawn().await;
    store::projects::create(&app.db, "p", "", None)
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

    let whoami_url = app.url("/api/whoami");
    let whoami = |bearer: String| {
        let url = whoami_url.clone();
        async move {
            script()
                .post(url)
                .header("authorization", bearer)
                .send()
                .await
                .unwrap()
        }
    };
    let me: Option<app::domain::account::User> = whoami(bearer.clone()).await.json().await.unwrap();
    assert_eq!(me.map(|u| u.username).as_deref(), Some("lead"));

    // Revoked (by the admin): 401 at once; audited with who did it.
    let res = app
        .post_form(
            &admin,
            "/api/account/token/revoke",
            &[("name", "ci"), ("user", "lead")],
        )
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        whoami(bearer.clone()).await.status(),
        StatusCode::UNAUTHORIZED
    );
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

    // A deactivated user's token stops at once, and stays revoked when the user is reactivated
    // (issue 35 F5: deactivation used to only suspend it).
    let second = format!("Bearer {}", create_token(&app, &lead, "ci2").await);
    assert_eq!(whoami(second.clone()).await.status(), StatusCode::OK);
    store::accounts::set_active(&app.db, "lead", false, None)
        .await
        .unwrap();
    assert_eq!(
        whoami(second.clone()).await.status(),
        StatusCode::UNAUTHORIZED
    );
    store::accounts::set_active(&app.db, "lead", true, None)
        .await
        .unwrap();
    assert_eq!(whoami(second).await.status(), StatusCode::UNAUTHORIZED);
}

/// Two canonical runs over the demo sample: for each claim, its cited abstracts and five others.
/// `alpha` is confident in the cited ones, `beta` less so, and they pick different others.
fn demo_runs() -> [(&'static str, Vec<u8>); 2] {
    let claims = common::demo_lines("claims.jsonl");
    let docs: Vec<String> = common::demo_lines("corpus.jsonl")
        .iter()
        .map(|d| d["doc_id"].to_string())
        .collect();
    let run = |cited_p: f64, offset: usize| -> Vec<u8> {
        let mut lines = String::new();
        for (i, claim) in claims.iter().enumerate() {
            let cited: Vec<String> = claim["cited_doc_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.to_string())
                .collect();
            let others = (0..5).map(|k| docs[(i * 7 + k + offset) % docs.len()].clone());
            for (rank, (doc, p)) in cited
                .iter()
                .map(|d| (d.clone(), cited_p))
                .chain(others.map(|d| (d, 0.05)))
                .enumerate()
            {
                if rank > 0 && cited[..rank.min(cited.len())].contains(&doc) {
                    continue;
                }
                let p = p - rank as f64 * 0.001;
                lines.push_str(&format!(
                    "{{\"claim_id\": {}, \"doc_id\": {doc}, \"p_support\": {p}, \"p_contradict\": 0.01}}\n",
                    claim["id"]
                ));
            }
        }
        lines.into_bytes()
    };
    [("alpha", run(0.9, 0)), ("beta", run(0.6, 3))]
}

/// A token of `user`, as `claimpool token create` makes it.
async fn token_of(app: &TestApp, user: &str, name: &str) -> String {
    let id = store::users::id_by_name(&app.db, user).await.unwrap();
    store::api_tokens::create(&app.db, id, name, None)
        .await
        .unwrap()
        .secret
}

/// A script's call: the token, no cookie.
fn call(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    token: &str,
) -> reqwest::RequestBuilder {
    script().request(method, app.url(path)).bearer_auth(token)
}

async fn json_of(res: reqwest::Response, expected: StatusCode) -> serde_json::Value {
    let status = res.status();
    let body = res.text().await.unwrap();
    assert_eq!(status, expected, "{body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// Uploads `file` as an import of `kind` and waits for its job to end `done`.
async fn import(app: &TestApp, token: &str, kind: &str, query: &str, file: Vec<u8>) {
    let path = format!("/api/v1/projects/sci/imports/{kind}{query}");
    let job = json_of(
        call(app, reqwest::Method::POST, &path, token)
            .body(file)
            .send()
            .await
            .unwrap(),
        StatusCode::ACCEPTED,
    )
    .await;
    assert_eq!(job["kind"], "import");
    let id = job["id"].as_i64().unwrap();
    for _ in 0..1200 {
        let job = json_of(
            call(
                app,
                reqwest::Method::GET,
                &format!("/api/v1/projects/sci/jobs/{id}"),
                token,
            )
            .send()
            .await
            .unwrap(),
            StatusCode::OK,
        )
        .await;
        match job["status"].as_str().unwrap() {
            "done" => return,
            "failed" | "cancelled" => panic!("{kind} import ended: {job}"),
            _ => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    panic!("the {kind} import did not end in two minutes");
}

#[tokio::test]
async fn a_script_runs_a_campaign_with_a_leads_token() {
    use reqwest::Method;
    use sha2::Digest;
    let app = TestApp::spawn_with_jobs(app::pipeline::job::PipelineSettings::default()).await;
    app.add_user("lead", Role::Lead).await;
    let token = token_of(&app, "lead", "script").await;

    let created = json_of(
        call(&app, Method::POST, "/api/v1/projects", &token)
            .json(&serde_json::json!({ "name": "sci", "description": "SciFact sample" }))
            .send()
            .await
            .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(created["name"], "sci");
    // The same name again: 409, as JSON.
    let again = json_of(
        call(&app, Method::POST, "/api/v1/projects", &token)
            .json(&serde_json::json!({ "name": "sci" }))
            .send()
            .await
            .unwrap(),
        StatusCode::CONFLICT,
    )
    .await;
    assert!(again["error"].as_str().unwrap().contains("sci"), "{again}");

    let demo = |name: &str| {
        std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("demo")
                .join(name),
        )
        .unwrap()
    };
    import(&app, &token, "corpus", "", demo("corpus.jsonl")).await;
    import(&app, &token, "claims", "", demo("claims.jsonl")).await;
    for (system, run) in demo_runs() {
        import(
            &app,
            &token,
            "run",
            &format!("?system={system}&role=pooled&file_name={system}.jsonl"),
            run,
        )
        .await;
    }
    let systems: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM systems")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(systems, 2);

    // Input the API refuses, naming the field: 400.
    for (method, path, body, field) in [
        (
            Method::POST,
            "/api/v1/projects/sci/imports/qrels",
            None,
            "kind",
        ),
        (
            Method::POST,
            "/api/v1/projects/sci/imports/run?role=judge",
            None,
            "role",
        ),
        (
            Method::POST,
            "/api/v1/projects/sci/imports/run?sytem=x",
            None,
            "sytem",
        ),
        (
            Method::POST,
            "/api/v1/projects/sci/pool",
            Some("{}"),
            "depth",
        ),
        (
            Method::POST,
            "/api/v1/projects/sci/pool",
            Some(r#"{"depth": 5, "strategy": "widest"}"#),
            "strategy",
        ),
        (
            Method::GET,
            "/api/v1/projects/sci/report?step=x",
            None,
            "step",
        ),
    ] {
        let res = call(&app, method, path, &token)
            .body(body.unwrap_or("{}").to_owned())
            .send()
            .await
            .unwrap();
        let error = json_of(res, StatusCode::BAD_REQUEST).await;
        let message = error["error"].as_str().unwrap();
        assert!(message.contains(field), "{path}: {message}");
        assert_eq!(error["status"], 400);
    }
    for path in [
        "/api/v1/projects/sci/jobs/999999",
        "/api/v1/projects/nowhere/releases",
        "/api/v1/projects/sci/releases/1/archive",
        "/api/v1/nothing",
        "/api/v1/projects/sci/pool/stats",
    ] {
        let res = call(&app, Method::GET, path, &token).send().await.unwrap();
        json_of(res, StatusCode::NOT_FOUND).await;
    }

    let built = json_of(
        call(&app, Method::POST, "/api/v1/projects/sci/pool", &token)
            .json(&serde_json::json!({ "depth": 30 }))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    let pooled = built["pool_size"].as_i64().unwrap();
    assert!(pooled >= 30, "{built}");
    let stats = json_of(
        call(&app, Method::GET, "/api/v1/projects/sci/pool/stats", &token)
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(stats["pool_size"].as_i64(), Some(pooled), "{stats}");
    let report = json_of(
        call(
            &app,
            Method::GET,
            "/api/v1/projects/sci/report?bootstrap=10",
            &token,
        )
        .send()
        .await
        .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert!(report.is_object() && !report.as_object().unwrap().is_empty());

    let created = json_of(
        call(&app, Method::POST, "/api/v1/projects/sci/releases", &token)
            .json(&serde_json::json!({ "partial": true }))
            .send()
            .await
            .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(created["new"], true);
    assert_eq!(created["release"]["number"], 1);
    // Nothing changed: the same release, 200.
    let same = json_of(
        call(&app, Method::POST, "/api/v1/projects/sci/releases", &token)
            .json(&serde_json::json!({ "partial": true }))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(same["new"], false);
    let listing = json_of(
        call(&app, Method::GET, "/api/v1/projects/sci/releases", &token)
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    let releases = listing["releases"].as_array().unwrap();
    assert_eq!(releases.len(), 1);
    let sha = releases[0]["sha256"].as_str().unwrap().to_owned();
    let res = call(
        &app,
        Method::GET,
        "/api/v1/projects/sci/releases/1/archive",
        &token,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "application/gzip");
    let archive = res.bytes().await.unwrap();
    let digest: String = sha2::Sha256::digest(&archive)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(digest, sha);
    assert_eq!(
        releases[0]["archive_bytes"].as_i64(),
        Some(archive.len() as i64)
    );
    // Every step was the token's user's, in the audit trail.
    let by_lead: i64 = sqlx::query_scalar(
        "SELECT COUNT(DISTINCT a.action || a.entity) FROM audit_events a JOIN users u ON u.id = a.actor_id
         WHERE u.username = 'lead'",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert!(by_lead >= 2, "{by_lead}");
}

/// Every route of the table with its placeholders filled in for project `p`.
fn concrete(route: &server::api_v1::ApiRoute, project: &str) -> String {
    route
        .full_path()
        .replace("{project}", project)
        .replace("{kind}", "run")
        .replace("{id}", "1")
        .replace("{number}", "1")
}

#[tokio::test]
async fn refused_tokens_get_json_401_or_403_on_every_lead_route() {
    use server::api_v1::{Verb, ROUTES};
    let app = TestApp::spawn().await;
    store::projects::create(&app.db, "p", "", None)
        .await
        .unwrap();
    let p = store::projects::id_by_name(&app.db, "p").await.unwrap();
    let ann = app.add_user("ann", Role::Annotator).await;
    store::projects::add_member(
        &app.db,
        p,
        ann,
        app::domain::account::ProjectRole::Annotator,
        None,
    )
    .await
    .unwrap();
    app.add_lead("gone", "p").await;
    app.add_lead("lead", "p").await;
    let annotator = token_of(&app, "ann", "t").await;
    let gone = token_of(&app, "gone", "t").await;
    let revoked = token_of(&app, "lead", "old").await;
    let lead_id = store::users::id_by_name(&app.db, "lead").await.unwrap();
    store::api_tokens::revoke(&app.db, lead_id, "old", Some(lead_id))
        .await
        .unwrap();
    store::accounts::set_active(&app.db, "gone", false, None)
        .await
        .unwrap();
    let mut checked = 0;
    for route in ROUTES {
        let method = match route.verb {
            Verb::Get => reqwest::Method::GET,
            Verb::Post => reqwest::Method::POST,
        };
        let path = concrete(route, "p");
        for (token, expected) in [
            (&annotator, StatusCode::FORBIDDEN),
            (&gone, StatusCode::UNAUTHORIZED),
            (&revoked, StatusCode::UNAUTHORIZED),
        ] {
            let res = call(&app, method.clone(), &path, token)
                .body("{}")
                .send()
                .await
                .unwrap();
            let error = json_of(res, expected).await;
            assert!(error["error"].is_string(), "{path}: {error}");
            checked += 1;
        }
    }
    assert_eq!(checked, 3 * ROUTES.len());
    // Nothing was queued or created by them.
    let jobs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs")
        .fetch_one(&app.db)
        .await
        .unwrap();
    let projects: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM projects")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!((jobs, projects), (0, 1));
}

#[tokio::test]
async fn the_openapi_document_lists_exactly_the_served_routes() {
    use server::api_v1::ROUTES;
    use std::collections::BTreeSet;
    let app = TestApp::spawn().await;
    let doc = json_of(
        script()
            .get(app.url("/api/openapi.json"))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(doc["openapi"], "3.1.0");
    let mut documented = BTreeSet::new();
    let mut operations = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            documented.insert((method.clone(), path.clone()));
            operations.insert(op["operationId"].as_str().unwrap().to_owned());
            // Every path parameter is declared.
            let declared: BTreeSet<&str> = op["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["in"] == "path")
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            let in_path: BTreeSet<&str> = path
                .split('/')
                .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
                .collect();
            assert_eq!(declared, in_path, "{method} {path}");
        }
    }
    let table: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|r| (r.verb.as_str().to_owned(), r.full_path()))
        .collect();
    assert_eq!(documented, table);
    assert_eq!(operations.len(), ROUTES.len());
    // Every documented route is served (anonymous: 401 from the route, not the API's 404).
    for route in ROUTES {
        let method = match route.verb {
            server::api_v1::Verb::Get => reqwest::Method::GET,
            server::api_v1::Verb::Post => reqwest::Method::POST,
        };
        let res = script()
            .request(method, app.url(&concrete(route, "p")))
            .send()
            .await
            .unwrap();
        assert_eq!(
            res.status(),
            StatusCode::UNAUTHORIZED,
            "{}",
            route.full_path()
        );
    }
}

#[tokio::test]
async fn the_cli_creates_lists_and_revokes_tokens_that_the_server_accepts() {
    let app = TestApp::spawn().await;
    app.add_user("lead", Role::Lead).await;
    let db = app.db_arg.clone();
    let claimpool = |args: &[&str]| {
        let out = crate::support::cli::claimpool(&db, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // Standard output holds the token alone (for `T=$(claimpool token create ...)`).
    let token = claimpool(&["token", "create", "--user", "lead", "--name", "ci"])
        .trim()
        .to_owned();
    assert!(token.starts_with("cp_") && token.len() == 67, "{token}");
    let whoami = || async {
        script()
            .post(app.url("/api/whoami"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
    };
    assert_eq!(whoami().await.status(), StatusCode::OK);
    let listed: Vec<serde_json::Value> =
        serde_json::from_str(&claimpool(&["token", "list", "--user", "lead", "--json"])).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["name"], "ci");
    assert!(listed[0]["last_used_at"].is_i64(), "{listed:?}");
    assert!(!serde_json::to_string(&listed)
        .unwrap()
        .contains(&token[3..]));
    claimpool(&["token", "revoke", "--user", "lead", "--name", "ci"]);
    assert_eq!(whoami().await.status(), StatusCode::UNAUTHORIZED);
    assert!(claimpool(&["token", "list", "--user", "lead"]).is_empty());
}

#[tokio::test]
async fn the_account_page_has_the_token_section() {
    let app = TestApp::spawn().await;
    app.add_user("ann", Role::Annotator).await;
    let ann = app.logged_in("ann").await;
    let page = ann
        .get(app.url("/account"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("API tokens"), "{page}");
    assert!(page.contains("data-testid=\"new-token\""), "{page}");
    assert!(page.contains("No tokens."), "{page}");
    create_token(&app, &ann, "notebook").await;
    let page = ann
        .get(app.url("/account"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("notebook") && page.contains("never"),
        "{page}"
    );
}

#[tokio::test]
async fn a_known_path_with_another_method_is_a_json_405_naming_the_allowed_ones() {
    use server::api_v1::{Verb, ROUTES};
    let app = TestApp::spawn().await;
    let mut checked = 0;
    for route in ROUTES {
        let path = concrete(route, "p");
        let served: Vec<Verb> = ROUTES
            .iter()
            .filter(|r| r.path == route.path)
            .map(|r| r.verb)
            .collect();
        for (verb, method) in [
            (Verb::Get, reqwest::Method::GET),
            (Verb::Post, reqwest::Method::POST),
        ] {
            if served.contains(&verb) {
                continue;
            }
            let res = script()
                .request(method.clone(), app.url(&path))
                .send()
                .await
                .unwrap();
            let allow = res
                .headers()
                .get("allow")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
                .unwrap_or_default();
            let error = json_of(res, StatusCode::METHOD_NOT_ALLOWED).await;
            assert_eq!(error["status"], 405, "{method} {path}: {error}");
            for verb in &served {
                assert!(
                    allow.contains(&verb.as_str().to_ascii_uppercase()),
                    "{method} {path}: Allow {allow:?}"
                );
            }
            checked += 1;
        }
    }
    // Every single-verb path was asked with the other verb.
    assert!(checked >= ROUTES.len() - 2, "checked {checked}");
    // DELETE is no verb of the API: 405 on every path too.
    let res = script()
        .delete(app.url("/api/v1/projects"))
        .send()
        .await
        .unwrap();
    json_of(res, StatusCode::METHOD_NOT_ALLOWED).await;
}
