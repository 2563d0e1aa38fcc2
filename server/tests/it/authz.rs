//! The authorization matrix, generated from what the server serves: every registered server
//! function and every page route (and the plain download routes), for each kind of caller:
//! anonymous, an annotator of the project, an annotator of another project, a lead of the
//! project, a lead of another project, and an admin. A server function missing from
//! `app::api::ENDPOINTS`, or from this file's argument table, fails the first test; every cell of
//! the matrix is asserted by the others.

use crate::common;

use app::api::{Access, ENDPOINTS};
use app::domain::account::{ProjectRole, Role};
use common::TestApp;
use reqwest::StatusCode;
use std::collections::BTreeSet;

/// The project every call names; "A" is the other project.
const PROJECT: &str = "B";

/// One caller of the matrix: a name, their account role (None: not logged in), their role in
/// project B if any, and a client.
struct Caller {
    name: &'static str,
    role: Option<Role>,
    in_b: Option<ProjectRole>,
    client: reqwest::Client,
}

/// The arguments each server function is called with: valid enough that a caller who may call
/// it reaches the function body (which may still refuse them as not found or invalid, never as
/// unauthorized), naming project B. `ENTRY` stands for a pooled pair of B.
const ARGUMENTS: &[(&str, Body)] = &[
    (
        "login",
        Body::Form("username=nobody&password=wrong-password&next=/"),
    ),
    ("logout", Body::Form("")),
    ("whoami", Body::Form("")),
    ("sign-in-options", Body::Form("")),
    ("admin/users", Body::Form("")),
    (
        "admin/user/create",
        Body::Form("username=made-by-matrix&role=annotator"),
    ),
    ("admin/user/reset", Body::Form("username=nobody")),
    ("admin/user/role", Body::Form("username=nobody&role=lead")),
    (
        "admin/user/active",
        Body::Form("username=nobody&active=false"),
    ),
    (
        "account/password",
        Body::Form("current=not-the-password&new=a+new+long+password"),
    ),
    ("account/tokens", Body::Form("user=")),
    (
        "account/token/create",
        Body::Form("name=made+by+the+matrix"),
    ),
    (
        "account/token/revoke",
        Body::Form("name=no-such-token&user="),
    ),
    ("work/projects", Body::Form("")),
    ("work/open-count", Body::Form("")),
    ("work/queue", Body::Form("project=B")),
    (
        "work/submit",
        Body::Json(
            r#"{"project": "B", "assignment_id": 999999, "form": {"no_evidence": true}, "seconds_spent": 1.0}"#,
        ),
    ),
    ("work/undo", Body::Form("project=B")),
    (
        "work/history",
        Body::Json(r#"{"project": "B", "filter": {"label": "NEI"}, "page": 0}"#),
    ),
    ("work/skip", Body::Form("project=B&assignment_id=999999")),
    (
        "work/flag",
        Body::Form("project=B&assignment_id=999999&note=x"),
    ),
    ("work/comment", Body::Form("entry_id=ENTRY&body=a+remark")),
    (
        "work/search",
        Body::Form("project=B&claim_id=1&query=x&page=0"),
    ),
    (
        "work/search/judge",
        Body::Json(
            r#"{"project": "B", "found": {"claim_id": "1", "doc_id": "1", "query": "x", "rank": 1, "seconds_searching": 1.0}}"#,
        ),
    ),
    ("guidelines/view", Body::Form("project=B")),
    ("guidelines/confirm", Body::Form("project=B&version=1")),
    ("lead/projects", Body::Form("")),
    ("lead/project", Body::Form("name=B")),
    (
        "lead/project/create",
        Body::Form("name=made+by+the+matrix&description="),
    ),
    ("lead/members", Body::Form("project=B")),
    (
        "lead/members/add",
        Body::Form("project=B&username=nobody&role=annotator"),
    ),
    (
        "lead/members/remove",
        Body::Form("project=B&username=nobody"),
    ),
    ("lead/guidelines", Body::Form("project=B")),
    (
        "lead/guidelines/save",
        Body::Form("project=B&markdown=%23+Rules"),
    ),
    ("lead/claims", Body::Form("project=B&search=&offset=0")),
    ("lead/claim", Body::Form("project=B&claim_id=3")),
    ("lead/systems", Body::Form("project=B")),
    ("lead/runs/upload", Body::Upload),
    ("lead/import/upload", Body::Upload),
    ("lead/jobs", Body::Form("project=B")),
    ("lead/job", Body::Form("project=B&id=999999")),
    ("lead/job/cancel", Body::Form("project=B&id=999999")),
    (
        "lead/pool/preview",
        Body::Form("project=B&strategy=confidence&depths[0]=5"),
    ),
    (
        "lead/pool/build",
        Body::Form("project=B&strategy=confidence&depth=1"),
    ),
    ("lead/pool/stats", Body::Form("project=B")),
    (
        "lead/pool/sample",
        Body::Form("project=B&size=1&strata=1&seed=0"),
    ),
    ("lead/annotation", Body::Form("project=B")),
    (
        "lead/annotation/member",
        Body::Form("project=B&username=nobody&active=true"),
    ),
    ("lead/annotation/open", Body::Form("project=B")),
    (
        "lead/annotation/reassign",
        Body::Form("project=B&assignment_id=999999&to=nobody"),
    ),
    ("lead/annotation/mode", Body::Form("project=B&mode=confirm")),
    (
        "lead/annotation/judging",
        Body::Form("project=B&order=mtf&seed=3&budget="),
    ),
    (
        "lead/annotation/stop-sample",
        Body::Form("project=B&recall=0.9&confidence=0.95&size=&seed=0"),
    ),
    ("lead/suggestions", Body::Form("project=B")),
    ("lead/suggestions/set", Body::Form("project=B&assessor=")),
    ("lead/gold", Body::Form("project=B")),
    (
        "lead/gold/settings",
        Body::Form("project=B&every=&training=0&graded=0&pass=0.8"),
    ),
    (
        "lead/gold/add",
        Body::Form("project=B&source=citation&count=1&seed=0"),
    ),
    ("lead/gold/admit", Body::Form("project=B&username=nobody")),
    (
        "lead/gold/reannotation",
        Body::Form("project=B&reannotate=off"),
    ),
    (
        "lead/annotation/pair",
        Body::Form("project=B&entry_id=ENTRY"),
    ),
    (
        "lead/annotation/adjudicate",
        Body::Json(
            r#"{"project": "B", "entry_id": 999999, "form": {"no_evidence": true}, "seconds_spent": 1.0}"#,
        ),
    ),
    ("pipeline/options", Body::Form("project=B")),
    (
        "pipeline/start",
        Body::Form("project=B&retriever=bm25&k=0&scorer=bm25&system=x&role=pooled"),
    ),
    ("pipeline/job", Body::Form("project=B&id=999999")),
    ("pipeline/jobs", Body::Form("project=B")),
    ("pipeline/cancel", Body::Form("project=B&id=999999")),
    ("lead/webhooks", Body::Form("project=B")),
    (
        "lead/webhook/create",
        Body::Json(
            r#"{"project": "B", "url": "http://127.0.0.1:9/matrix", "events": ["label.final"]}"#,
        ),
    ),
    ("lead/webhook/remove", Body::Form("project=B&id=999999")),
    ("release/overview", Body::Form("project=B")),
    (
        "release/create",
        Body::Form("project=B&partial=false&unjudged=false"),
    ),
    ("release/diff", Body::Form("project=B&a=1&b=2")),
    ("report/judging", Body::Form("project=B")),
    ("report/survey", Body::Form("project=B")),
    ("report/view", Body::Form("project=B")),
];

#[derive(Clone, Copy)]
enum Body {
    Form(&'static str),
    Json(&'static str),
    /// A multipart run upload naming project B (`kind` for the import-job upload).
    Upload,
}

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
    let with_arguments: BTreeSet<String> = ARGUMENTS.iter().map(|(e, _)| (*e).to_owned()).collect();
    assert_eq!(
        with_arguments, table,
        "the matrix's argument table must list every endpoint"
    );
    assert!(
        registered.len() >= 35,
        "{} server functions",
        registered.len()
    );
}

/// Two projects, A and B, each with the demo sample, a run and a pool; and the callers.
async fn setup(app: &TestApp) -> (Vec<Caller>, i64) {
    // Claim 3 against the first ten abstracts.
    let pairs: Vec<(String, String, f64)> = common::demo_lines("corpus.jsonl")
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, d)| {
            (
                "3".to_owned(),
                d["doc_id"].to_string(),
                0.05 + i as f64 / 10.0,
            )
        })
        .collect();
    let mut ids = Vec::new();
    for name in ["A", "B"] {
        ids.push(app.demo_project(name, false, &pairs).await);
    }
    let (a, b) = (ids[0], ids[1]);
    let mut callers = vec![Caller {
        name: "anonymous",
        role: None,
        in_b: None,
        client: app.client(),
    }];
    for (name, role, project, in_project) in [
        (
            "annotator",
            Role::Annotator,
            Some(b),
            Some(ProjectRole::Annotator),
        ),
        (
            "other-annotator",
            Role::Annotator,
            Some(a),
            Some(ProjectRole::Annotator),
        ),
        ("lead", Role::Lead, Some(b), Some(ProjectRole::Lead)),
        ("other-lead", Role::Lead, Some(a), Some(ProjectRole::Lead)),
        ("admin", Role::Admin, None, None),
    ] {
        let id = app.add_user(name, role).await;
        if let (Some(project), Some(in_project)) = (project, in_project) {
            store::projects::add_member(&app.db, project, id, in_project, None)
                .await
                .unwrap();
        }
        callers.push(Caller {
            name,
            role: Some(role),
            in_b: if project == Some(b) { in_project } else { None },
            client: app.logged_in(name).await,
        });
    }
    for project in [a, b] {
        store::pool::build(
            &app.db,
            project,
            app::domain::pool::Strategy::Confidence,
            10,
            None,
        )
        .await
        .unwrap();
    }
    let entry: i64 = sqlx::query_scalar("SELECT MIN(id) FROM pool_entries WHERE project_id = $1")
        .bind(b)
        .fetch_one(&app.db)
        .await
        .unwrap();
    (callers, entry)
}

/// The status a caller must get when `access` refuses them, or None when it lets them through.
fn refusal(access: Access, caller: &Caller) -> Option<StatusCode> {
    let Some(role) = caller.role else {
        return (access != Access::Public).then_some(StatusCode::UNAUTHORIZED);
    };
    let allowed = match access {
        Access::Public => true,
        Access::Role(needed) => role.satisfies(needed),
        Access::Project(needed) => {
            app::domain::account::may_act_in_project(role, caller.in_b, needed)
        }
    };
    (!allowed).then_some(StatusCode::FORBIDDEN)
}

async fn call(
    app: &TestApp,
    client: &reqwest::Client,
    endpoint: &str,
    body: Body,
    entry: i64,
) -> reqwest::Response {
    let url = app.url(&format!("/api/{endpoint}"));
    let request = match body {
        Body::Form(text) => client
            .post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(text.replace("ENTRY", &entry.to_string())),
        Body::Json(text) => client
            .post(url)
            .header("content-type", "application/json")
            .body(text.to_owned()),
        Body::Upload => {
            let form = reqwest::multipart::Form::new()
                .text("project", PROJECT)
                .text("kind", "run")
                .text("system", "uploaded")
                .text("role", "pooled")
                .part(
                    "file",
                    reqwest::multipart::Part::bytes(
                        b"{\"claim_id\": 3, \"doc_id\": 4983, \"p_support\": 0.5, \"p_contradict\": 0.1}\n"
                            .to_vec(),
                    )
                    .file_name("run.jsonl"),
                );
            client.post(url).multipart(form)
        }
    };
    request.send().await.unwrap()
}

#[tokio::test]
async fn every_server_function_checks_the_account_and_project_role() {
    let app = TestApp::spawn().await;
    let (callers, entry) = setup(&app).await;
    // A lead's list of projects holds the projects they lead; an admin's all (before the
    // matrix below creates one).
    for (who, expected) in [
        ("lead", vec!["B"]),
        ("other-lead", vec!["A"]),
        ("admin", vec!["A", "B"]),
    ] {
        let caller = callers.iter().find(|c| c.name == who).unwrap();
        let listed: Vec<serde_json::Value> = caller
            .client
            .post(app.url("/api/lead/projects"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let names: Vec<&str> = listed.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, expected, "{who}");
    }
    let (cells, wrong) = server_function_cells(&app, &callers, entry, false).await;
    assert!(cells >= 6 * 40, "{cells} cells");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Without its arguments, a function refuses a caller without the account role before it
    // reads them, and answers 400 (not 500) to one with it.
    for (endpoint, access) in ENDPOINTS {
        let Some(role) = access.account_role() else {
            continue;
        };
        for caller in &callers {
            let res = caller
                .client
                .post(app.url(&format!("/api/{endpoint}")))
                .header("content-type", "application/x-www-form-urlencoded")
                .body("")
                .send()
                .await
                .unwrap();
            let status = res.status();
            let ok = match caller.role {
                None => status == StatusCode::UNAUTHORIZED,
                Some(have) if !have.satisfies(role) => status == StatusCode::FORBIDDEN,
                Some(_) => !status.is_server_error() && status != StatusCode::UNAUTHORIZED,
            };
            assert!(
                ok,
                "{endpoint} without arguments as {}: {status}",
                caller.name
            );
        }
    }
    // An endpoint that is no server function: 404 for everyone.
    for caller in &callers {
        let res = caller
            .client
            .post(app.url("/api/lead/nothing"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{}", caller.name);
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
        assert_eq!(
            res.status(),
            StatusCode::UNAUTHORIZED,
            "{who} ({role}) after logout"
        );
    }
}

/// Calls every server function (but logout) as every caller; the number of calls and the
/// answers that do not match the function's [`Access`]. Callers `with_tokens` are refused
/// account management (`app::api::needs_session`) with 403 (issue 35).
async fn server_function_cells(
    app: &TestApp,
    callers: &[Caller],
    entry: i64,
    with_tokens: bool,
) -> (usize, Vec<String>) {
    let mut wrong = Vec::new();
    let mut cells = 0;
    for (endpoint, access) in ENDPOINTS {
        if *endpoint == "logout" {
            continue; // below, with clients of its own
        }
        let body = ARGUMENTS
            .iter()
            .find(|(e, _)| e == endpoint)
            .map(|(_, b)| *b)
            .unwrap_or_else(|| panic!("no arguments for {endpoint}"));
        for caller in callers {
            let res = call(app, &caller.client, endpoint, body, entry).await;
            let status = res.status();
            cells += 1;
            let expected =
                if with_tokens && caller.role.is_some() && app::api::needs_session(endpoint) {
                    Some(StatusCode::FORBIDDEN)
                } else {
                    refusal(*access, caller)
                };
            let ok = match expected {
                // A public function's 4xx (wrong credentials) is its answer, not a refusal.
                None if *access == Access::Public => !status.is_server_error(),
                Some(expected) => status == expected,
                None => {
                    status != StatusCode::UNAUTHORIZED
                        && status != StatusCode::FORBIDDEN
                        && !status.is_server_error()
                }
            };
            if !ok {
                let body = res.text().await.unwrap_or_default();
                wrong.push(format!("{endpoint} as {}: {status} {body}", caller.name));
            }
        }
    }
    (cells, wrong)
}

/// Requests every page as every caller; the answers that do not match what the page needs.
async fn page_cells(
    app: &TestApp,
    callers: &[Caller],
    pages: &[String],
    with_tokens: bool,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for page in pages {
        let needed = if *page == "/login" {
            Access::Public
        } else if page.starts_with("/admin") {
            Access::Role(Role::Admin)
        } else if page.starts_with("/lead/projects/") {
            Access::Project(ProjectRole::Lead)
        } else if page.starts_with("/lead") {
            Access::Role(Role::Lead)
        } else if page.starts_with("/work/") {
            Access::Project(ProjectRole::Annotator)
        } else {
            Access::Role(Role::Annotator)
        };
        for caller in callers {
            let res = caller.client.get(app.url(page)).send().await.unwrap();
            let status = res.status();
            let to_login = status.is_redirection()
                && res
                    .headers()
                    .get("location")
                    .and_then(|l| l.to_str().ok())
                    .is_some_and(|l| l.starts_with("/login?next="));
            // The account and admin pages manage accounts: a token gets 403 there (issue 35;
            // their server functions need a browser session).
            let manages_accounts = page == "/account" || page.starts_with("/admin");
            let expected = if with_tokens && caller.role.is_some() && manages_accounts {
                Some(StatusCode::FORBIDDEN)
            } else {
                refusal(needed, caller)
            };
            let ok = match expected {
                Some(StatusCode::UNAUTHORIZED) => to_login,
                Some(expected) => status == expected,
                None => !to_login && status != StatusCode::FORBIDDEN && !status.is_server_error(),
            };
            if !ok {
                wrong.push(format!("{page} as {}: {status}", caller.name));
            }
        }
    }
    wrong
}

/// Every page route with its parameters filled in (project pages name project B), and the
/// plain routes (report CSV, release download) that live under the project's pages.
fn page_paths() -> Vec<String> {
    let mut paths: BTreeSet<String> = leptos_axum::generate_route_list(app::App)
        .iter()
        .map(|route| {
            route
                .path()
                .split('/')
                .enumerate()
                .map(|(i, segment)| {
                    let param = segment.starts_with(':') || segment.starts_with('{');
                    match (param, i) {
                        // /lead/projects/:name and /work/:project
                        (true, 2 | 3) => PROJECT,
                        (true, _) => "1",
                        (false, _) => segment,
                    }
                })
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect();
    paths.insert(format!("/lead/projects/{PROJECT}/report/csv/systems"));
    paths.insert(format!("/lead/projects/{PROJECT}/releases/1/download"));
    paths.into_iter().collect()
}

#[tokio::test]
async fn every_page_checks_the_account_and_project_role_on_the_server() {
    let app = TestApp::spawn().await;
    let (callers, _) = setup(&app).await;
    let pages = page_paths();
    assert!(pages.len() >= 13, "{pages:?}");
    assert!(pages.contains(&"/work/B".to_owned()), "{pages:?}");
    let wrong = page_cells(&app, &callers, &pages, false).await;
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // A project that does not exist is not found, for everyone who may look for one.
    let admin = callers.iter().find(|c| c.name == "admin").unwrap();
    let res = admin
        .client
        .get(app.url("/lead/projects/nowhere"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
}

/// The arguments each HTTP API route (by operationId) is called with, naming project B: its
/// query string and body. Path parameters: `{project}` B, `{kind}` run, `{id}` a job that does
/// not exist, `{number}` release 1. A route of `server::api_v1::ROUTES` missing here fails the
/// test.
const API_ARGUMENTS: &[(&str, &str, &str)] = &[
    ("createProject", "", r#"{"name": "made by the API matrix"}"#),
    (
        "importFile",
        "?system=via-api&role=pooled",
        "{\"claim_id\": 3, \"doc_id\": 4983, \"p_support\": 0.5, \"p_contradict\": 0.1}\n",
    ),
    ("getJob", "", ""),
    ("buildPool", "", r#"{"depth": 10}"#),
    ("getPoolStats", "", ""),
    ("getReport", "?bootstrap=10", ""),
    ("listReleases", "", ""),
    ("createRelease", "", r#"{"partial": true}"#),
    ("downloadRelease", "", ""),
];

#[tokio::test]
async fn every_api_route_checks_the_token_and_project_role() {
    use server::api_v1::{Verb, ROUTES};
    let app = TestApp::spawn().await;
    let (callers, _) = setup(&app).await;
    let table: BTreeSet<&str> = API_ARGUMENTS.iter().map(|(op, _, _)| *op).collect();
    let routes: BTreeSet<&str> = ROUTES.iter().map(|r| r.operation).collect();
    assert_eq!(
        table, routes,
        "the API argument table must list every route of server::api_v1::ROUTES"
    );
    // Each logged-in caller's token; a token that is no token.
    let mut tokens: Vec<(&Caller, Option<String>)> = Vec::new();
    for caller in &callers {
        let token = match caller.role {
            None => None,
            Some(_) => {
                let id = store::users::id_by_name(&app.db, caller.name)
                    .await
                    .unwrap();
                let issued = store::api_tokens::create(&app.db, id, "matrix", None)
                    .await
                    .unwrap();
                Some(issued.secret)
            }
        };
        tokens.push((caller, token));
    }
    let bad = Caller {
        name: "bad token",
        role: None,
        in_b: None,
        client: app.client(),
    };
    let bad_token =
        "cp_0000000000000000000000000000000000000000000000000000000000000000".to_owned();
    tokens.push((&bad, Some(bad_token.clone())));
    let script = common::client_builder().build().unwrap();
    let mut wrong = Vec::new();
    let mut cells = 0;
    for route in ROUTES {
        let (_, query, body) = API_ARGUMENTS
            .iter()
            .find(|(op, _, _)| *op == route.operation)
            .unwrap();
        let path = route
            .full_path()
            .replace("{project}", PROJECT)
            .replace("{kind}", "run")
            .replace("{id}", "999999")
            .replace("{number}", "1");
        let method = match route.verb {
            Verb::Get => reqwest::Method::GET,
            Verb::Post => reqwest::Method::POST,
        };
        for (caller, token) in &tokens {
            let mut request = script
                .request(method.clone(), app.url(&format!("{path}{query}")))
                .body(body.to_string());
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let res = request.send().await.unwrap();
            let status = res.status();
            cells += 1;
            let expected = if token.as_deref() == Some(bad_token.as_str()) {
                Some(StatusCode::UNAUTHORIZED)
            } else {
                refusal(route.access, caller)
            };
            let ok = match expected {
                Some(expected) => status == expected,
                None => {
                    status != StatusCode::UNAUTHORIZED
                        && status != StatusCode::FORBIDDEN
                        && !status.is_server_error()
                }
            };
            let body = res.text().await.unwrap_or_default();
            let is_json = serde_json::from_str::<serde_json::Value>(&body).is_ok();
            if !ok || (!status.is_success() && !is_json) {
                wrong.push(format!(
                    "{} {path} as {}: {status} {body}",
                    route.verb.as_str(),
                    caller.name
                ));
            }
        }
    }
    assert_eq!(cells, ROUTES.len() * 7);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The callers of [`setup`] with their API tokens instead of their sessions: clients without
/// cookies that send `Authorization: Bearer` (anonymous stays anonymous).
async fn token_callers(app: &TestApp, callers: &[Caller]) -> Vec<Caller> {
    let mut out = Vec::new();
    for caller in callers {
        let mut headers = reqwest::header::HeaderMap::new();
        if caller.role.is_some() {
            let id = store::users::id_by_name(&app.db, caller.name)
                .await
                .unwrap();
            let token = store::api_tokens::create(&app.db, id, "session-free", None)
                .await
                .unwrap()
                .secret;
            headers.insert(
                reqwest::header::AUTHORIZATION,
                format!("Bearer {token}").parse().unwrap(),
            );
        }
        out.push(Caller {
            name: caller.name,
            role: caller.role,
            in_b: caller.in_b,
            client: common::client_builder()
                .default_headers(headers)
                .build()
                .unwrap(),
        });
    }
    out
}

/// A token is accepted wherever the session is, with the same answers, but for account
/// management (403: it needs a browser session): the whole server function and page matrices
/// again, each caller with their token and no cookie.
#[tokio::test]
async fn every_server_function_and_page_answers_a_token_as_its_users_session() {
    let app = TestApp::spawn().await;
    let (sessions, entry) = setup(&app).await;
    let callers = token_callers(&app, &sessions).await;
    let (cells, mut wrong) = server_function_cells(&app, &callers, entry, true).await;
    assert!(cells >= 6 * 40, "{cells} cells");
    wrong.extend(page_cells(&app, &callers, &page_paths(), true).await);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
