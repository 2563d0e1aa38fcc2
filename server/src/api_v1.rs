//! The HTTP API for scripts (issue 14): JSON under `/api/v1/`, called with a personal API token
//! (`Authorization: Bearer cp_...`) or a session, as the user's account and project roles allow.
//!
//! One table, [`ROUTES`], makes the router (each route's method, path and handler), authorizes
//! every request before its handler runs (the route's [`Access`], through the same
//! [`app::auth::request_user`] and [`app::auth::project_access`] as pages and server functions;
//! a project route's handler receives the [`ProjectCaller`] proof), refuses query parameters the
//! route does not declare, and generates the OpenAPI document ([`crate::openapi`]): the three
//! cannot drift apart. Handlers hold no workflow of their own: each calls the command the server
//! function (and, where there is one, the CLI) calls. Errors are JSON `{"error", "status"}` (a
//! server fault also carries its `reference`, the id the log has the details under).

use app::api::Access;
use app::auth::ProjectCaller;
use app::domain::account::{ProjectRole, Role, User};
use app::error::ApiError;
use app::state::AppState;
use axum::body::Body;
use axum::extract::{Extension, Path, Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{on, MethodFilter, MethodRouter};
use axum::RequestExt;
use axum::{Json, Router};
use commands::Lead;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::HashMap;

/// Where the API lives.
pub const PREFIX: &str = "/api/v1";

/// An HTTP method of the API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Get,
    Post,
}

impl Verb {
    /// The method's name, lower case (OpenAPI's keys).
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::Post => "post",
        }
    }

    fn filter(self) -> MethodFilter {
        match self {
            Verb::Get => MethodFilter::GET,
            Verb::Post => MethodFilter::POST,
        }
    }
}

/// A parameter (query or JSON body field): its name, JSON type and meaning.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub name: &'static str,
    /// `string`, `integer` or `boolean`.
    pub kind: &'static str,
    pub required: bool,
    pub description: &'static str,
}

const fn param(
    name: &'static str,
    kind: &'static str,
    required: bool,
    description: &'static str,
) -> Param {
    Param {
        name,
        kind,
        required,
        description,
    }
}

/// What a route reads from the request body.
#[derive(Clone, Copy, Debug)]
pub enum Input {
    None,
    /// A JSON object with these fields (no others).
    Json(&'static [Param]),
    /// The file itself, streamed to disk (plain or gzip).
    File,
}

/// What a route answers on success.
#[derive(Clone, Copy, Debug)]
pub enum Output {
    /// A JSON value with this status.
    Json(u16),
    /// A `.tar.gz` release archive.
    Archive,
}

/// One route of the API.
pub struct ApiRoute {
    pub verb: Verb,
    /// Under [`PREFIX`], in axum's syntax (`{project}`).
    pub path: &'static str,
    /// OpenAPI's operationId (unique).
    pub operation: &'static str,
    pub summary: &'static str,
    pub access: Access,
    /// The query parameters it accepts (others are refused with 400).
    pub query: &'static [Param],
    pub input: Input,
    pub output: Output,
    handler: fn(MethodFilter) -> MethodRouter<AppState>,
}

impl ApiRoute {
    /// The full path, in axum's (and OpenAPI's) syntax.
    pub fn full_path(&self) -> String {
        format!("{PREFIX}{}", self.path)
    }

    /// The names of the path's parameters, in order.
    pub fn path_params(&self) -> Vec<&'static str> {
        self.path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .collect()
    }
}

const LEAD: Access = Access::Project(ProjectRole::Lead);

const IMPORT_OPTIONS: &[Param] = &[
    param(
        "file_name",
        "string",
        false,
        "The file's name, as messages name it (default: KIND.jsonl)",
    ),
    param(
        "format",
        "string",
        false,
        "corpus: scifact or beir; run: canonical, scifact-open-parquet, leaderboard, verisci, trec, ...; judgments: qrels-labels or scifact (default: detected)",
    ),
    param(
        "system",
        "string",
        false,
        "run: the system's name (default: the file names its systems)",
    ),
    param(
        "role",
        "string",
        false,
        "run: pooled (default) or evaluation-only",
    ),
    param(
        "label_order",
        "string",
        false,
        "run: the order of label probabilities, e.g. REFUTE,NEI,SUPPORT",
    ),
    param("description", "string", false, "run: the system's description"),
    param(
        "annotator",
        "string",
        false,
        "judgments: whose judgments these are (required for judgments)",
    ),
    param(
        "stage",
        "string",
        false,
        "judgments: first, second or final (default)",
    ),
];

const REPORT_OPTIONS: &[Param] = &[
    param(
        "step",
        "integer",
        false,
        "The depth curve's step (default: from the pool's depth)",
    ),
    param(
        "bootstrap",
        "integer",
        false,
        "Bootstrap resamples (default 1000)",
    ),
    param("seed", "integer", false, "The bootstrap's seed (default 0)"),
];

/// Every route of the API: what builds the router, authorizes requests and writes the OpenAPI
/// document.
pub static ROUTES: &[ApiRoute] = &[
    ApiRoute {
        verb: Verb::Post,
        path: "/projects",
        operation: "createProject",
        summary: "Create a project; its creator leads it",
        access: Access::Role(Role::Lead),
        query: &[],
        input: Input::Json(&[
            param("name", "string", true, "1 to 100 printable characters"),
            param("description", "string", false, "Free text"),
        ]),
        output: Output::Json(201),
        handler: |m| on(m, create_project),
    },
    ApiRoute {
        verb: Verb::Post,
        path: "/projects/{project}/imports/{kind}",
        operation: "importFile",
        summary: "Upload a corpus, claims, a run or judgments (kind); the body is the file. \
                  Queued as a background job with the command line's checks: 202 with the job",
        access: LEAD,
        query: IMPORT_OPTIONS,
        input: Input::File,
        output: Output::Json(202),
        handler: |m| on(m, import_file),
    },
    ApiRoute {
        verb: Verb::Get,
        path: "/projects/{project}/jobs/{id}",
        operation: "getJob",
        summary: "A job's status: queued, running, done, failed or cancelled, progress, message",
        access: LEAD,
        query: &[],
        input: Input::None,
        output: Output::Json(200),
        handler: |m| on(m, job),
    },
    ApiRoute {
        verb: Verb::Post,
        path: "/projects/{project}/pool",
        operation: "buildPool",
        summary: "Build the pool, or grow it (deeper, or after adding a system): judgments stay",
        access: LEAD,
        query: &[],
        input: Input::Json(&[
            param("depth", "integer", true, "The pool depth"),
            param(
                "strategy",
                "string",
                false,
                "confidence (default; SciFact-Open) or per-claim (TREC depth-k)",
            ),
        ]),
        output: Output::Json(200),
        handler: |m| on(m, build_pool),
    },
    ApiRoute {
        verb: Verb::Get,
        path: "/projects/{project}/pool/stats",
        operation: "getPoolStats",
        summary: "The pool's statistics (404 before the first build)",
        access: LEAD,
        query: &[],
        input: Input::None,
        output: Output::Json(200),
        handler: |m| on(m, pool_stats),
    },
    ApiRoute {
        verb: Verb::Get,
        path: "/projects/{project}/report",
        operation: "getReport",
        summary: "The lead report as JSON (what `claimpool report --json` prints)",
        access: LEAD,
        query: REPORT_OPTIONS,
        input: Input::None,
        output: Output::Json(200),
        handler: |m| on(m, report),
    },
    ApiRoute {
        verb: Verb::Get,
        path: "/projects/{project}/releases",
        operation: "listReleases",
        summary: "How complete the collection is, and its releases (latest first, with SHA-256)",
        access: LEAD,
        query: &[],
        input: Input::None,
        output: Output::Json(200),
        handler: |m| on(m, list_releases),
    },
    ApiRoute {
        verb: Verb::Post,
        path: "/projects/{project}/releases",
        operation: "createRelease",
        summary: "Release the current state (201), or answer the latest release when nothing \
                  changed (200)",
        access: LEAD,
        query: &[],
        input: Input::Json(&[
            param(
                "partial",
                "boolean",
                false,
                "Release although pooled pairs lack a final label",
            ),
            param(
                "unjudged",
                "boolean",
                false,
                "List unjudged pooled pairs in qrels.txt with relevance -1",
            ),
            param(
                "model_qrels",
                "boolean",
                false,
                "Also write qrels-model.txt, the model assessors' labels (never in qrels.txt)",
            ),
        ]),
        output: Output::Json(201),
        handler: |m| on(m, create_release),
    },
    ApiRoute {
        verb: Verb::Get,
        path: "/projects/{project}/releases/{number}/archive",
        operation: "downloadRelease",
        summary: "A release's .tar.gz archive",
        access: LEAD,
        query: &[],
        input: Input::None,
        output: Output::Archive,
        handler: |m| on(m, download_release),
    },
];

/// The API's router: [`ROUTES`], each behind its authorization, the OpenAPI document, and a
/// JSON 404 for any other path under [`PREFIX`].
pub fn router(state: &AppState) -> Router<AppState> {
    // One method router per path (a path may serve several verbs, each authorized by its own
    // route), whose fallback answers other methods with a JSON 405 naming the allowed ones.
    let mut paths: Vec<(String, MethodRouter<AppState>, Vec<&'static str>)> = Vec::new();
    for route in ROUTES {
        let authorize = middleware::from_fn_with_state((state.clone(), route), authorize);
        let handler = (route.handler)(route.verb.filter()).route_layer(authorize);
        let path = route.full_path();
        match paths.iter_mut().find(|(p, _, _)| *p == path) {
            Some((_, methods, verbs)) => {
                *methods = std::mem::replace(methods, MethodRouter::new()).merge(handler);
                verbs.push(route.verb.as_str());
            }
            None => paths.push((path, handler, vec![route.verb.as_str()])),
        }
    }
    let mut router = Router::new();
    for (path, methods, verbs) in paths {
        let allow = verbs.join(", ").to_ascii_uppercase();
        router = router.route(
            &path,
            methods.fallback(move |req: Request| async move { method_not_allowed(&allow, &req) }),
        );
    }
    router
        .route(
            crate::openapi::PATH,
            axum::routing::get(|| async { Json(crate::openapi::document()) }),
        )
        .route(
            &format!("{PREFIX}/{{*rest}}"),
            axum::routing::any(|req: Request| async move {
                Failure(ApiError::NotFound(format!(
                    "no API route {} {} (see {})",
                    req.method(),
                    req.uri().path(),
                    crate::openapi::PATH
                )))
            }),
        )
}

/// Whether the page guard leaves `path` to this module (which authorizes its routes itself).
/// A known path asked with another method: 405, as JSON like every API error, with `Allow`.
fn method_not_allowed(allow: &str, req: &Request) -> Response {
    let body = serde_json::json!({
        "error": format!(
            "{} is not allowed on {} (use {allow})",
            req.method(),
            req.uri().path()
        ),
        "status": StatusCode::METHOD_NOT_ALLOWED.as_u16(),
    });
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(axum::http::header::ALLOW, allow.to_owned())],
        Json(body),
    )
        .into_response()
}

pub fn owns(path: &str) -> bool {
    path == crate::openapi::PATH || path.starts_with(&format!("{PREFIX}/"))
}

/// The caller of a request, as [`authorize`] found them.
#[derive(Clone, Debug)]
pub struct ApiUser(pub User);

/// An error answer: JSON `{"error", "status"}` with the error's status (opaque for faults).
pub struct Failure(pub ApiError);

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Failure(e)
    }
}

impl From<commands::CommandError> for Failure {
    fn from(e: commands::CommandError) -> Self {
        Failure(e.into())
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let error = self.0.opaque();
        let status = error.status();
        let mut body = serde_json::json!({
            "error": error.to_string(),
            "status": status.as_u16(),
        });
        if let ApiError::Internal(message) = &error {
            if let Some(id) = message
                .strip_prefix("reference ")
                .and_then(|r| r.split(';').next())
            {
                body["reference"] = id.into();
            }
        }
        if let ApiError::Throttled {
            retry_after_secs, ..
        } = &error
        {
            body["retry_after_secs"] = (*retry_after_secs).into();
        }
        if let ApiError::Overloaded(_) = &error {
            // Busy with heavy work: a report takes seconds to a minute.
            return (
                status,
                [(axum::http::header::RETRY_AFTER, "30")],
                Json(body),
            )
                .into_response();
        }
        (status, Json(body)).into_response()
    }
}

type Answer = Result<Response, Failure>;

/// Checks a request against its route before the handler runs: the caller (token or session;
/// a bad token is 401), the account role, the role in the project the path names (the handler
/// then receives the [`ProjectCaller`]), and the query's parameter names.
async fn authorize(
    State((state, route)): State<(AppState, &'static ApiRoute)>,
    mut req: Request,
    next: Next,
) -> Response {
    match authorized(&state, route, &mut req).await {
        Ok(()) => next.run(req).await,
        Err(e) => Failure(e).into_response(),
    }
}

async fn authorized(state: &AppState, route: &ApiRoute, req: &mut Request) -> Result<(), ApiError> {
    let session = req
        .extensions()
        .get::<tower_sessions::Session>()
        .cloned()
        .ok_or_else(|| ApiError::Internal("no session layer".into()))?;
    let user = app::auth::request_user(req.headers(), &session, &state.db).await?;
    if route.access != Access::Public {
        let user = user.as_ref().ok_or(ApiError::Unauthenticated)?;
        if let Some(role) = route.access.account_role() {
            if !user.role.satisfies(role) {
                return Err(ApiError::Forbidden(format!("this needs the {role} role")));
            }
        }
    }
    if let (Access::Project(role), Some(user)) = (route.access, &user) {
        let Path(params): Path<HashMap<String, String>> = req
            .extract_parts()
            .await
            .map_err(|e| ApiError::Invalid(format!("path: {e}")))?;
        let project = params
            .get("project")
            .ok_or_else(|| ApiError::Internal(format!("{}: no {{project}}", route.path)))?;
        let caller = app::auth::project_access(&state.db, user.clone(), project, role).await?;
        // A lead route's handler takes the command layer's proof, made here once.
        if role == ProjectRole::Lead {
            req.extensions_mut().insert(Lead::of(&caller)?);
        }
        req.extensions_mut().insert(caller);
    }
    if let Some(query) = req.uri().query() {
        for (name, _) in form_pairs(query) {
            if !route.query.iter().any(|p| p.name == name) {
                let known: Vec<&str> = route.query.iter().map(|p| p.name).collect();
                return Err(ApiError::Invalid(format!(
                    "query parameter {name:?}: unknown here (this route takes: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                )));
            }
        }
    }
    if let Some(user) = user {
        req.extensions_mut().insert(ApiUser(user));
    }
    Ok(())
}

/// The names and values of a query string.
fn form_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(&s.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (decode(k), decode(v))
        })
        .collect()
}

/// The largest JSON body a route reads.
const MAX_JSON_BODY: usize = 64 * 1024;

/// A route's JSON body (an empty body is `{}`); 400 naming what is wrong.
async fn json_body<T: DeserializeOwned>(body: Body) -> Result<T, ApiError> {
    let bytes = axum::body::to_bytes(body, MAX_JSON_BODY)
        .await
        .map_err(|e| ApiError::Invalid(format!("body: {e}")))?;
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        &bytes
    };
    serde_json::from_slice(bytes).map_err(|e| ApiError::Invalid(format!("body: {e}")))
}

fn json<T: serde::Serialize>(status: StatusCode, value: &T) -> Answer {
    Ok((status, Json(value)).into_response())
}

/// An integer query parameter, if given; 400 naming it when it is not one.
fn number<T: std::str::FromStr>(
    query: &HashMap<String, String>,
    name: &str,
) -> Result<Option<T>, ApiError>
where
    T::Err: std::fmt::Display,
{
    query
        .get(name)
        .map(|v| {
            v.trim()
                .parse()
                .map_err(|e| ApiError::Invalid(format!("{name}: {v:?} is not a number ({e})")))
        })
        .transpose()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewProject {
    name: String,
    #[serde(default)]
    description: String,
}

async fn create_project(
    State(state): State<AppState>,
    Extension(ApiUser(user)): Extension<ApiUser>,
    body: Body,
) -> Answer {
    let request: NewProject = json_body(body).await?;
    let name =
        app::api::projects::new_project(&state.db, &user, &request.name, &request.description)
            .await?;
    json(
        StatusCode::CREATED,
        &serde_json::json!({ "name": name, "led_by": user.username }),
    )
}

async fn import_file(
    State(state): State<AppState>,
    Extension(caller): Extension<ProjectCaller>,
    Path((_, kind)): Path<(String, String)>,
    Query(options): Query<HashMap<String, String>>,
    body: Body,
) -> Answer {
    let job = app::api::imports::queue_body(&state.db, caller, &kind, options, body, &state.limits)
        .await?;
    json(StatusCode::ACCEPTED, &job)
}

async fn job(
    State(state): State<AppState>,
    Extension(caller): Extension<ProjectCaller>,
    Path((_, id)): Path<(String, String)>,
) -> Answer {
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError::NotFound(format!("job {id:?}")))?;
    json(
        StatusCode::OK,
        &app::api::imports::job_of(&state.db, &caller, id).await?,
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PoolRequest {
    depth: u32,
    #[serde(default = "confidence")]
    strategy: String,
}

fn confidence() -> String {
    "confidence".into()
}

async fn build_pool(
    State(state): State<AppState>,
    Extension(lead): Extension<Lead>,
    body: Body,
) -> Answer {
    let request: PoolRequest = json_body(body).await?;
    let built = app::api::pool::build(&state.db, &lead, &request.strategy, request.depth).await?;
    json(StatusCode::OK, &built)
}

async fn pool_stats(State(state): State<AppState>, Extension(lead): Extension<Lead>) -> Answer {
    let stats = app::api::pool::stats(&state.db, &lead)
        .await?
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "a pool of {:?}: build it first (POST {PREFIX}/projects/{{project}}/pool)",
                lead.project()
            ))
        })?;
    json(StatusCode::OK, &stats)
}

async fn report(
    State(state): State<AppState>,
    Extension(lead): Extension<Lead>,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let (step, bootstrap, seed) = (
        number(&query, "step")?,
        number(&query, "bootstrap")?,
        number(&query, "seed")?,
    );
    let (_, computed) =
        app::api::report::web_report(&state.db, &lead, &state.heavy, step, bootstrap, seed).await?;
    json(StatusCode::OK, &computed.report)
}

async fn list_releases(
    State(state): State<AppState>,
    Extension(caller): Extension<ProjectCaller>,
) -> Answer {
    json(
        StatusCode::OK,
        &app::api::release::overview(&state.db, &caller).await?,
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReleaseRequest {
    #[serde(default)]
    partial: bool,
    #[serde(default)]
    unjudged: bool,
    #[serde(default)]
    model_qrels: bool,
}

async fn create_release(
    State(state): State<AppState>,
    Extension(lead): Extension<Lead>,
    body: Body,
) -> Answer {
    let request: ReleaseRequest = json_body(body).await?;
    let created = app::api::release::create(
        &state.db,
        &lead,
        request.partial,
        request.unjudged,
        request.model_qrels,
    )
    .await?;
    let status = if created.new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    json(status, &created)
}

async fn download_release(
    State(state): State<AppState>,
    Extension(lead): Extension<Lead>,
    Path((_, number)): Path<(String, String)>,
) -> Answer {
    Ok(crate::release_http::archive(&state.db, &lead, &number).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        let mut operations = std::collections::BTreeSet::new();
        let mut routes = std::collections::BTreeSet::new();
        for route in ROUTES {
            assert!(operations.insert(route.operation), "{}", route.operation);
            assert!(
                routes.insert((route.verb.as_str(), route.path)),
                "{} {}",
                route.verb.as_str(),
                route.path
            );
            if matches!(route.access, Access::Project(_)) {
                assert_eq!(
                    route.path_params().first(),
                    Some(&"project"),
                    "{}",
                    route.path
                );
            }
            if route.verb == Verb::Get {
                assert!(matches!(route.input, Input::None), "{}", route.path);
            }
        }
    }

    #[tokio::test]
    async fn errors_are_json_and_faults_opaque_with_a_reference() {
        let body = |res: Response| async move {
            let status = res.status();
            let bytes = axum::body::to_bytes(res.into_body(), 1 << 16)
                .await
                .unwrap();
            let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            (status, value)
        };
        let (status, value) =
            body(Failure(ApiError::Internal("disk full at /srv/db".into())).into_response()).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(value["status"], 500);
        let message = value["error"].as_str().unwrap();
        assert!(
            !message.contains("disk") && !message.contains("/srv"),
            "{message}"
        );
        let reference = value["reference"].as_str().unwrap();
        assert_eq!(reference.len(), 8, "{value}");
        assert!(message.contains(reference), "{value}");
        let (status, value) =
            body(Failure(ApiError::Invalid("depth: not a number".into())).into_response()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(value["error"], "depth: not a number");
        assert!(value.get("reference").is_none());
        let (status, _) = body(Failure(ApiError::BadToken).into_response()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }

    #[test]
    fn query_strings_are_decoded() {
        assert_eq!(
            form_pairs("system=a+b&role=&x%20y=%C3%A9&flag"),
            vec![
                ("system".to_owned(), "a b".to_owned()),
                ("role".to_owned(), String::new()),
                ("x y".to_owned(), "é".to_owned()),
                ("flag".to_owned(), String::new()),
            ]
        );
    }
}
