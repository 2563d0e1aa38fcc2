//! The HTTP server: Leptos routes and server functions, sessions, the page guard, static files.

use crate::security::{self, PublicOrigin, TrustedProxies};
use anyhow::Context;
use app::auth::ProjectCaller;
use app::domain::account::{ProjectRole, Role};
use app::pipeline::job::PipelineSettings;
use app::state::AppState;
use axum::extract::{Extension, Path, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use commands::Db;
use leptos::prelude::LeptosOptions;
use leptos_axum::{generate_route_list, LeptosRoutes};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, Session, SessionManagerLayer};

/// Where the compiled site (pkg/claimpool.js, .wasm, .css) lives: `LEPTOS_SITE_ROOT`, else
/// `site/` beside the binary's target directory (target/release/claimpool → target/site), else
/// `target/site` under the working directory.
pub fn site_root() -> PathBuf {
    if let Some(root) = std::env::var_os("LEPTOS_SITE_ROOT") {
        return PathBuf::from(root);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent()?.parent().map(|target| target.join("site")))
        .filter(|site| site.join("pkg").is_dir())
        .unwrap_or_else(|| PathBuf::from("target/site"))
}

/// Leptos options for a server on `addr` whose pages name the site's package `pkg_dir`
/// ([`crate::assets::Assets::pkg_dir`]).
pub fn leptos_options(addr: SocketAddr, pkg_dir: &str) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name("claimpool")
        .site_root(site_root().to_string_lossy().into_owned())
        .site_pkg_dir(pkg_dir)
        .site_addr(addr)
        .build()
}

/// What `serve` and `demo` are told besides the database and the address.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// What pipeline jobs may use (the job worker, [`crate::jobs::spawn`], runs them).
    pub pipeline: Arc<PipelineSettings>,
    /// The reverse proxies whose `X-Forwarded-For` names the client (for the login throttle).
    pub trusted_proxies: TrustedProxies,
    /// The public URL, when it is not the request's Host (behind a proxy); https makes cookies
    /// `Secure`.
    pub public: PublicOrigin,
    /// How much a browser may upload.
    pub limits: app::state::UploadLimits,
    /// How long a connection may keep the server waiting for a request.
    pub timeouts: ConnectionTimeouts,
    /// How many heavy computations (reports, release diffs) run and wait at once.
    pub heavy: app::state::HeavyWork,
    /// Where the corpus search indexes are kept (None: a temporary directory of the server's,
    /// removed when it stops, so each start builds them again when first searched).
    pub search_cache: Option<std::path::PathBuf>,
    /// Jobs' leases, and how the server stops.
    pub lifecycle: Lifecycle,
    /// Who may scrape `/metrics`.
    pub metrics_allow: crate::metrics::MetricsAccess,
    /// Single sign-on through an OpenID provider (`serve --oidc-issuer`), if configured.
    pub sso: Option<Arc<commands::sso::Sso>>,
    /// How webhook deliveries are sent and retried.
    pub webhooks: commands::webhooks::DeliverySettings,
}

/// How a server shares the job queue with others and how it stops.
#[derive(Clone, Debug)]
pub struct Lifecycle {
    /// How long a job's lease lasts unrenewed (`serve --job-lease-secs`).
    pub job_lease: std::time::Duration,
    /// How long a stopping server waits for its requests and its job (`serve --drain-secs`).
    pub drain: std::time::Duration,
    /// Set once the server is stopping: `/readyz` then answers 503, so a load balancer sends
    /// no more requests here.
    pub draining: Arc<std::sync::atomic::AtomicBool>,
    /// Whether this server runs background jobs (`serve --no-jobs`: another server does).
    pub jobs: bool,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle {
            job_lease: crate::jobs::DEFAULT_LEASE,
            drain: std::time::Duration::from_secs(30),
            draining: Arc::default(),
            jobs: true,
        }
    }
}

/// How long a connection may keep the server waiting (issue 35: 200 connections that sent half
/// a header, and 200 that sent nothing, stayed open for as long as their clients liked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionTimeouts {
    /// The longest the server waits for a request's complete header: from the moment it starts
    /// waiting, when the connection opens and again after each response. A connection that has
    /// not sent a whole header by then is closed; so is a kept-alive connection idle that long
    /// (hyper's header read timeout covers both: it runs whenever a request is awaited).
    /// Requests being handled, and bodies being sent or received, are not limited by it.
    pub header: std::time::Duration,
}

/// `serve --header-timeout-secs`'s default.
pub const DEFAULT_HEADER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

impl Default for ConnectionTimeouts {
    fn default() -> Self {
        ConnectionTimeouts {
            header: DEFAULT_HEADER_TIMEOUT,
        }
    }
}

/// The whole application as one router, with no pipeline commands or models set up.
pub async fn router(db: Db, addr: SocketAddr) -> anyhow::Result<Router> {
    router_with(db, addr, ServeOptions::default()).await
}

/// The whole application as one router, for `serve`, `demo` and the tests.
pub async fn router_with(
    db: Db,
    addr: SocketAddr,
    options: ServeOptions,
) -> anyhow::Result<Router> {
    let ServeOptions {
        pipeline,
        trusted_proxies,
        public,
        limits,
        // Applied by serve_connections, not the router.
        timeouts: _,
        heavy,
        search_cache,
        lifecycle,
        metrics_allow,
        sso,
        // Used by serve's delivery task, not the router.
        webhooks: _,
    } = options;
    let searches = Arc::new(match search_cache {
        Some(dir) => commands::search::Searches::in_dir(dir),
        None => commands::search::Searches::temporary()
            .context("a temporary directory for the search indexes")?,
    });
    let metrics = crate::metrics::Metrics::new(db.clone(), metrics_allow)?;
    let session_store = session_store(&db).await?;
    let sessions = SessionManagerLayer::new(session_store)
        .with_name("claimpool_session")
        .with_http_only(true)
        .with_same_site(SameSite::Strict)
        .with_secure(public.is_https())
        .with_expiry(Expiry::OnInactivity(
            tower_sessions::cookie::time::Duration::hours(12),
        ));

    let assets = Arc::new(crate::assets::Assets::load(&site_root().join("pkg"))?);
    let leptos_options = leptos_options(addr, &assets.pkg_dir());
    let state = AppState {
        leptos_options: leptos_options.clone(),
        db,
        pipeline,
        limits,
        heavy,
        searches,
        sso,
    };
    let routes = generate_route_list(app::App);
    let app_state = state.clone();
    let mut router = Router::new();
    if assets.loaded() {
        router = router
            .route(
                "/v/{version}/pkg/{file}",
                get(crate::assets::versioned).with_state(assets.clone()),
            )
            .route("/pkg/{file}", get(crate::assets::plain).with_state(assets));
    }
    let router = router
        .route("/lead/projects/{name}/report/csv/{table}", get(report_csv))
        .route(commands::sso::START_PATH, get(crate::sso_http::start))
        .route(commands::sso::CALLBACK_PATH, get(crate::sso_http::callback))
        .route(
            "/metrics",
            get(crate::metrics::scrape).with_state(metrics.clone()),
        )
        .merge(crate::health::router(crate::health::Health {
            db: state.db.clone(),
            draining: lifecycle.draining.clone(),
        }))
        .merge(crate::api_v1::router(&state))
        .leptos_routes_with_context(
            &state,
            routes,
            move || leptos::prelude::provide_context(app_state.clone()),
            move || app::shell(leptos_options.clone()),
        )
        .route(
            crate::release_http::DOWNLOAD_ROUTE,
            axum::routing::get(crate::release_http::download),
        )
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(
            app::shell,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), guard_pages))
        .layer(sessions)
        .layer(middleware::from_fn_with_state(
            Arc::new(trusted_proxies),
            security::resolve_client,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::new(public),
            security::refuse_cross_site,
        ))
        .layer(middleware::from_fn(security::headers))
        .layer(middleware::from_fn_with_state(
            metrics,
            crate::metrics::track,
        ))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            panic_response,
        ))
        .with_state(state);
    Ok(router)
}

/// The sessions' store: the table `sessions` of the database.
async fn session_store(db: &Db) -> anyhow::Result<commands::sessions::Sessions> {
    commands::sessions::Sessions::open(db)
        .await
        .context("opening the session table")
}

/// How often `serve` deletes expired sessions.
const SESSION_PURGE_PERIOD: std::time::Duration = std::time::Duration::from_secs(600);

/// Deletes the sessions whose expiry has passed (a session expires after 12 hours unused), on a
/// store of its own (`serve` keeps one for its periodic purge).
pub async fn purge_expired_sessions(db: &Db) -> anyhow::Result<()> {
    use tower_sessions::ExpiredDeletion;
    session_store(db)
        .await?
        .delete_expired()
        .await
        .context("deleting expired sessions")
}

/// What a page path needs: nothing, an account role, or a role in the project the path names.
#[derive(Debug, PartialEq, Eq)]
enum PageAccess {
    Open,
    Role(Role),
    /// `/lead/projects/{name}/...` (a lead of the project, who holds the lead role) and
    /// `/work/{project}` (a member).
    Project {
        name: String,
        role: ProjectRole,
    },
}

/// What the page (or download) at `path` needs.
fn page_access(path: &str) -> PageAccess {
    let under = |prefix: &str| path == prefix || path.starts_with(&format!("{prefix}/"));
    let project = |rest: &str| {
        let segment = rest.split('/').next().unwrap_or_default();
        percent_encoding::percent_decode_str(segment)
            .decode_utf8_lossy()
            .into_owned()
    };
    if path == "/login"
        || under("/pkg")
        || under("/v")
        || under("/api")
        || path == "/favicon.ico"
        || path == "/healthz"
        || path == "/readyz"
        || path == "/metrics"
        || under("/auth/sso")
    {
        PageAccess::Open
    } else if under("/admin") {
        PageAccess::Role(Role::Admin)
    } else if let Some(rest) = path.strip_prefix("/lead/projects/") {
        PageAccess::Project {
            name: project(rest),
            role: ProjectRole::Lead,
        }
    } else if under("/lead") {
        PageAccess::Role(Role::Lead)
    } else if let Some(rest) = path.strip_prefix("/work/") {
        PageAccess::Project {
            name: project(rest),
            role: ProjectRole::Annotator,
        }
    } else {
        PageAccess::Role(Role::Annotator)
    }
}

/// Whether `path` is normalised: no `.` or `..` segment, plain or percent-encoded. The guard
/// decides by the path's prefix, and a router or a browser that resolves `..` would serve
/// `/work/x/../../lead/...` as a lead page; such paths are refused outright.
fn is_normalised(path: &str) -> bool {
    path.split('/').all(|segment| {
        let decoded = segment.replace("%2e", ".").replace("%2E", ".");
        decoded != "." && decoded != ".."
    })
}

/// A page the caller may not see: 403 (or 404 for a project that does not exist), as HTML.
fn page_refused(status: StatusCode, message: &str) -> Response {
    let title = if status == StatusCode::NOT_FOUND {
        "Not found"
    } else {
        "Forbidden"
    };
    message_page(status, title, message, ("/", "Go home"))
}

/// A page of its own, for a request refused or failed before the app renders it: `title`,
/// `message` (both escaped here) and the link `back` (address, text).
pub(crate) fn message_page(
    status: StatusCode,
    title: &str,
    message: &str,
    (href, text): (&str, &str),
) -> Response {
    let title = html_escape::encode_text(title);
    let message = html_escape::encode_text(message);
    let href = html_escape::encode_double_quoted_attribute(href);
    let text = html_escape::encode_text(text);
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        format!(
            "<!DOCTYPE html><html lang=en><meta charset=utf-8><title>{title}</title>\
             <link rel=stylesheet href=/pkg/claimpool.css>\
             <main class='page narrow'><h1>{title}</h1><p role=alert>{message}.</p>\
             <p><a href=\"{href}\">{text}</a></p></main>"
        ),
    )
        .into_response()
}

/// Checks every page request against the session's user before the page renders: the account's
/// role, and for a project's pages the user's role in that project, whose proof
/// ([`app::auth::ProjectCaller`]) the request then carries for the handlers behind. Server
/// functions (/api) are checked against [`app::api::ENDPOINTS`] here and check their project
/// themselves. Paths with dot segments are refused first.
async fn guard_pages(
    State(state): State<AppState>,
    session: Session,
    mut req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path().to_owned();
    if !is_normalised(&path) {
        return (StatusCode::BAD_REQUEST, "path with . or .. segments").into_response();
    }
    if crate::api_v1::owns(&path) {
        // The HTTP API authorizes each route by its table (crate::api_v1::ROUTES).
        return next.run(req).await;
    }
    if let Some(endpoint) = path.strip_prefix("/api/") {
        return guard_api(&state, &session, endpoint, req, next).await;
    }
    let access = page_access(&path);
    if access == PageAccess::Open {
        return next.run(req).await;
    }
    let user = match app::auth::request_user(req.headers(), &session, &state.db).await {
        Ok(Some(user)) => {
            req.extensions_mut()
                .insert(app::auth::ResolvedCaller(user.clone()));
            user
        }
        Ok(None) => {
            let target = req
                .uri()
                .path_and_query()
                .map(|p| p.as_str())
                .unwrap_or("/");
            return Redirect::to(&format!("/login?next={}", encode_query_value(target)))
                .into_response();
        }
        Err(e) => {
            let e = e.opaque();
            if e.status().is_server_error() {
                tracing::error!(error = %e, "page guard");
            }
            return (e.status(), e.to_string()).into_response();
        }
    };
    match access {
        PageAccess::Open => {}
        PageAccess::Role(role) => {
            if !user.role.satisfies(role) {
                return page_refused(
                    StatusCode::FORBIDDEN,
                    &format!("This page needs the {role} role"),
                );
            }
        }
        PageAccess::Project { name, role } => {
            // The account role first: a project's lead pages are refused to annotators whether
            // or not the project exists.
            let account = app::api::Access::Project(role).account_role();
            if let Some(needed) = account.filter(|needed| !user.role.satisfies(*needed)) {
                return page_refused(
                    StatusCode::FORBIDDEN,
                    &format!("This page needs the {needed} role"),
                );
            }
            match app::auth::project_access(&state.db, user, &name, role).await {
                Ok(caller) => {
                    req.extensions_mut().insert(caller);
                }
                Err(e) => {
                    let e = app::error::ApiError::from(e).opaque();
                    if e.status().is_server_error() {
                        tracing::error!(error = %e, "page guard");
                    }
                    return page_refused(e.status(), &e.to_string());
                }
            }
        }
    }
    next.run(req).await
}

/// An error response of a server function: its status and its JSON body.
fn api_error(error: app::error::ApiError) -> Response {
    let error = error.opaque();
    let body = serde_json::to_string(&error).unwrap_or_else(|_| "\"error\"".to_owned());
    (
        error.status(),
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// Checks a server-function request against [`app::api::ENDPOINTS`] before the function reads
/// its arguments: an unknown endpoint is 404, a caller without the role 401 or 403. Arguments
/// the function cannot read are the client's fault: 400, not 500.
async fn guard_api(
    state: &AppState,
    session: &Session,
    endpoint: &str,
    mut req: Request,
    next: Next,
) -> Response {
    use app::error::ApiError;
    let Some(access) = app::api::access(endpoint) else {
        return api_error(ApiError::NotFound(format!(
            "no server function /api/{endpoint}"
        )));
    };
    if app::api::needs_session(endpoint) && app::auth::authorization(req.headers()).is_some() {
        return api_error(ApiError::Forbidden(app::auth::SESSION_ONLY.into()));
    }
    if let Some(role) = access.account_role() {
        match app::auth::request_user(req.headers(), session, &state.db).await {
            Ok(Some(user)) if user.role.satisfies(role) => {
                req.extensions_mut().insert(app::auth::ResolvedCaller(user));
            }
            Ok(Some(_)) => {
                return api_error(ApiError::Forbidden(format!("this needs the {role} role")))
            }
            Ok(None) => return api_error(ApiError::Unauthenticated),
            Err(e) => return api_error(e),
        }
    }
    if app::api::MULTIPART_ENDPOINTS.contains(&endpoint) && !is_multipart(req.headers()) {
        return api_error(ApiError::Invalid(
            "expected a multipart form (multipart/form-data with a boundary)".into(),
        ));
    }
    client_faults_are_400(next.run(req).await).await
}

/// Whether the request's body is declared a multipart form with its boundary.
fn is_multipart(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.starts_with("multipart/form-data") && v.contains("boundary=")
        })
}

/// A panic while serving a request: 500 with an opaque message; the detail goes to the log
/// with the message's id (see [`app::error::ApiError::opaque`]).
fn panic_response(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let detail = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic without a message".to_owned());
    api_error(app::error::ApiError::Internal(format!("panic: {detail}")))
}

/// The largest error body [`client_faults_are_400`] reads.
const MAX_ERROR_BODY: usize = 1 << 20;

/// A server function's 500 whose error is about its arguments (missing, undecodable) becomes 400.
async fn client_faults_are_400(res: Response) -> Response {
    use app::error::ApiError;
    use leptos::server_fn::error::ServerFnErrorErr;
    if res.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "server error").into_response();
    };
    if let Ok(ApiError::ServerFn(
        ServerFnErrorErr::Args(_)
        | ServerFnErrorErr::MissingArg(_)
        | ServerFnErrorErr::Deserialization(_),
    )) = serde_json::from_slice::<ApiError>(&bytes)
    {
        parts.status = StatusCode::BAD_REQUEST;
    }
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

/// The options of a report CSV download, as the dashboard's links give them.
#[derive(serde::Deserialize)]
struct ReportCsvQuery {
    step: Option<u32>,
    bootstrap: Option<u32>,
    seed: Option<u64>,
}

/// `GET /lead/projects/{name}/report/csv/{table}`: one table of the lead report as a CSV file
/// (`app::domain::report::CSV_TABLES`). The page guard lets only the project's leads through,
/// with the proof this handler requires.
async fn report_csv(
    State(state): State<AppState>,
    Extension(caller): Extension<ProjectCaller>,
    Path((project, table)): Path<(String, String)>,
    Query(query): Query<ReportCsvQuery>,
) -> Response {
    match report_csv_text(&state, &caller, &table, query).await {
        Ok(csv) => {
            let stem: String = format!("{project}-{table}")
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            (
                [
                    (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
                    (
                        header::CONTENT_DISPOSITION,
                        format!("attachment; filename=\"{stem}.csv\""),
                    ),
                ],
                csv,
            )
                .into_response()
        }
        Err(e) => {
            let e = e.opaque();
            (e.status(), e.to_string()).into_response()
        }
    }
}

async fn report_csv_text(
    state: &AppState,
    caller: &ProjectCaller,
    table: &str,
    query: ReportCsvQuery,
) -> Result<String, app::error::ApiError> {
    use app::error::ApiError;
    if !app::domain::report::CSV_TABLES.contains(&table) {
        return Err(ApiError::NotFound(format!(
            "report table {table:?} (one of: {})",
            app::domain::report::CSV_TABLES.join(", ")
        )));
    }
    let (_, computed) = app::api::report::web_report(
        &state.db,
        &commands::Lead::of(caller)?,
        &state.heavy,
        query.step,
        query.bootstrap,
        query.seed,
    )
    .await?;
    computed
        .report
        .to_csv(table)
        .ok_or_else(|| ApiError::NotFound(format!("report table {table:?}")))
}

/// Percent-encodes a query value (RFC 3986 unreserved characters and '/' pass through).
fn encode_query_value(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// Serves until Ctrl-C, with the job worker running. Prints the address once the socket is bound.
pub async fn serve(db: Db, addr: SocketAddr, options: ServeOptions) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let bound = listener.local_addr()?;
    let stale = app::api::runs::remove_stale_upload_dirs(
        &std::env::temp_dir(),
        std::time::Duration::from_secs(6 * 3600),
    );
    if stale > 0 {
        tracing::info!(
            stale,
            "removed upload directories left by an earlier server"
        );
    }
    // Rows of chunked writers a crashed process left (each kind hidden while `writing`).
    for (what, reclaimed) in [
        (
            "imports",
            commands::upkeep::reclaim_abandoned_imports(&db).await,
        ),
        (
            "pool builds",
            commands::upkeep::reclaim_abandoned_pool_builds(&db).await,
        ),
        (
            "releases",
            commands::upkeep::reclaim_abandoned_releases(&db).await,
        ),
        (
            "uploads never imported",
            commands::upkeep::remove_stale_uploads(&db).await,
        ),
    ] {
        let abandoned = reclaimed
            .with_context(|| format!("removing the rows of {what} a crashed process left"))?;
        if abandoned > 0 {
            tracing::info!(
                abandoned,
                "removed the rows of {what} a crashed process left"
            );
        }
    }
    let lifecycle = options.lifecycle.clone();
    let worker = lifecycle
        .jobs
        .then(|| crate::jobs::spawn(db.clone(), options.pipeline.clone(), lifecycle.job_lease));
    let deliveries = if lifecycle.jobs {
        Some(crate::webhooks::spawn(
            db.clone(),
            options.webhooks.clone(),
            lifecycle.draining.clone(),
        )?)
    } else {
        None
    };
    if let Some(sso) = &options.sso {
        match sso.check().await {
            Ok(()) => {
                tracing::info!(issuer = %sso.config().issuer, redirect_uri = %sso.redirect_uri(), "single sign-on ready")
            }
            Err(e) => {
                tracing::warn!(error = %e, "single sign-on: the identity provider cannot be reached now; sign-ins will try again")
            }
        }
    }
    let timeouts = options.timeouts;
    let app = router_with(db.clone(), bound, options).await?;
    // One store (and its connection pool) for every purge, opened once.
    let sessions = session_store(&db).await?;
    tokio::spawn(async move {
        use tower_sessions::ExpiredDeletion;
        let mut every = tokio::time::interval(SESSION_PURGE_PERIOD);
        loop {
            every.tick().await;
            if let Err(e) = sessions.delete_expired().await {
                tracing::warn!(error = %e, "session purge");
            }
        }
    });
    println!("claimpool is serving on http://{bound}");
    let draining = lifecycle.draining.clone();
    let (stopping, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = serve_connections(listener, app, timeouts, async move {
        stop_signal().await;
        draining.store(true, std::sync::atomic::Ordering::SeqCst);
        tracing::info!("stopping: no new connections; finishing requests and the running job");
        let _ = stopping.send(());
    });
    // Requests still running when the drain time is over are cut off.
    let drain = lifecycle.drain;
    tokio::select! {
        () = serving => {}
        () = async move {
            let _ = stopped.await;
            tokio::time::sleep(drain).await;
        } => tracing::warn!(seconds = drain.as_secs(), "requests still running after the drain time are cut off"),
    }
    // The requests have ended (or the drain time ran out, below); the job goes back to the
    // queue for another server.
    if let Some(worker) = worker {
        worker.drain(lifecycle.drain).await;
    }
    if let Some(deliveries) = deliveries {
        // It stops after the attempts in hand (each at most the delivery timeout).
        if tokio::time::timeout(lifecycle.drain, deliveries)
            .await
            .is_err()
        {
            tracing::warn!("webhook deliveries still being sent after the drain time are cut off");
        }
    }
    tracing::info!("stopped");
    Ok(())
}

/// Resolves at Ctrl-C or, on Unix, SIGTERM (what service managers and orchestrators send).
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM; Ctrl-C still stops");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Serves `app` on the connections `listener` accepts (HTTP/1.1, with each request's
/// [`axum::extract::ConnectInfo`]) under `timeouts`, until `shutdown` resolves; then lets the
/// open connections finish their requests and returns. axum's own `serve` sets no timer, so
/// hyper's header read timeout cannot be set through it; this is the same loop with it set.
pub async fn serve_connections(
    listener: tokio::net::TcpListener,
    app: Router,
    timeouts: ConnectionTimeouts,
    shutdown: impl std::future::Future<Output = ()>,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use tower::ServiceExt;
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(timeouts.header)
        .keep_alive(true);
    // `stop` tells the connections to finish; each holds a `running` receiver until it ends.
    let (stop, stopped) = tokio::sync::watch::channel(());
    let (all_done, running) = tokio::sync::watch::channel(());
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: wait a moment rather than spin.
                    tracing::warn!(error = %e, "accepting a connection");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service =
            app.clone()
                .map_request(move |req: axum::http::Request<hyper::body::Incoming>| {
                    let mut req = req.map(axum::body::Body::new);
                    req.extensions_mut()
                        .insert(axum::extract::ConnectInfo(remote));
                    req
                });
        let connection = http1.serve_connection(
            TokioIo::new(stream),
            hyper_util::service::TowerToHyperService::new(service),
        );
        let mut stopped = stopped.clone();
        let running = running.clone();
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => ended,
                _ = stopped.changed() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = ended {
                tracing::debug!(error = %e, %remote, "connection ended");
            }
            drop(running);
        });
    }
    drop(listener);
    let _ = stop.send(());
    drop(running);
    all_done.closed().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal names what was refused (a project name from the path): its markup is text.
    #[tokio::test]
    async fn a_refusal_page_escapes_its_message() {
        let res = page_refused(
            StatusCode::NOT_FOUND,
            r#"project "p</title><meta http-equiv=refresh content=0>" & more"#,
        );
        let body = axum::body::to_bytes(res.into_body(), 1 << 16)
            .await
            .unwrap();
        let body = String::from_utf8(body.to_vec()).unwrap();
        assert!(
            body.contains(
                "project \"p&lt;/title&gt;&lt;meta http-equiv=refresh content=0&gt;\" &amp; more."
            ),
            "{body}"
        );
        assert!(!body.contains("<meta http-equiv"), "{body}");
    }

    #[test]
    fn page_roles() {
        let project = |name: &str, role| PageAccess::Project {
            name: name.to_owned(),
            role,
        };
        assert_eq!(page_access("/login"), PageAccess::Open);
        assert_eq!(page_access("/pkg/claimpool.js"), PageAccess::Open);
        assert_eq!(
            page_access("/v/0123456789abcdef/pkg/claimpool.wasm"),
            PageAccess::Open
        );
        assert_eq!(page_access("/api/login"), PageAccess::Open);
        assert_eq!(page_access("/admin/users"), PageAccess::Role(Role::Admin));
        assert_eq!(page_access("/lead"), PageAccess::Role(Role::Lead));
        assert_eq!(page_access("/lead/projects"), PageAccess::Role(Role::Lead));
        assert_eq!(
            page_access("/lead/projects/x"),
            project("x", ProjectRole::Lead)
        );
        assert_eq!(
            page_access("/lead/projects/a%20b/report/csv/systems"),
            project("a b", ProjectRole::Lead)
        );
        assert_eq!(
            page_access("/work/sci%C3%A9nce"),
            project("sciénce", ProjectRole::Annotator)
        );
        assert_eq!(page_access("/leader"), PageAccess::Role(Role::Annotator));
        assert_eq!(page_access("/"), PageAccess::Role(Role::Annotator));
    }

    #[test]
    fn dot_segments_are_not_normalised() {
        for bad in [
            "/work/x/../../lead/projects/p",
            "/work/x/%2e%2e/%2E%2E/lead",
            "/api/../lead",
            "/./lead",
            "/lead/..",
            "/work/x/%2e./lead",
        ] {
            assert!(!is_normalised(bad), "{bad}");
        }
        for good in [
            "/",
            "/lead/projects/a.b",
            "/work/..x",
            "/pkg/claimpool.js",
            "/lead/projects/x/claims/...y",
        ] {
            assert!(is_normalised(good), "{good}");
        }
    }

    #[test]
    fn query_values_are_encoded() {
        assert_eq!(
            encode_query_value("/lead/projects/a b?q=1&x"),
            "/lead/projects/a%20b%3Fq%3D1%26x"
        );
    }
}
