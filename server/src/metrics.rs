//! Prometheus metrics at `GET /metrics` (text format 0.0.4), from a registry of the server's own
//! (the `prometheus` crate): HTTP requests by route, method and status with a latency histogram,
//! and, read at each scrape, the jobs by state, the database pool's connections and the
//! judgments stored (a counter: judgments are append-only, so its rate is the annotation
//! throughput of every server of the database); and how long this server's write transactions
//! waited to begin, for their turn and for the database's write lock (on PostgreSQL one advisory
//! lock that the writers of every server take: this histogram says what that costs).
//!
//! A scrape is answered only to the addresses `serve --metrics-allow` names (loopback by
//! default): the numbers are not a project's data, but they are nobody else's business either.

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use commands::Db;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder,
};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

/// The server's metrics.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    jobs: IntGaugeVec,
    pool: IntGaugeVec,
    judgments: prometheus::IntGauge,
    db: Db,
    allowed: MetricsAccess,
}

/// Who may scrape `/metrics` (`serve --metrics-allow`): addresses or networks; loopback only by
/// default.
#[derive(Clone, Debug)]
pub struct MetricsAccess(crate::security::TrustedProxies);

impl MetricsAccess {
    /// The addresses or networks (IP/CIDR) `specs` names.
    pub fn parse_all(specs: &[String]) -> Result<MetricsAccess, String> {
        crate::security::TrustedProxies::parse_all(specs).map(MetricsAccess)
    }

    fn allows(&self, ip: std::net::IpAddr) -> bool {
        self.0.contains(ip)
    }
}

impl Default for MetricsAccess {
    fn default() -> Self {
        MetricsAccess::parse_all(&["127.0.0.0/8".to_owned(), "::1/128".to_owned()])
            .unwrap_or_else(|_| MetricsAccess(crate::security::TrustedProxies::default()))
    }
}

/// The latency histogram's buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// The write waits' buckets, in seconds: most are well under a millisecond.
const WAIT_BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// The job states the gauge always lists (0 when none).
const JOB_STATES: [&str; 5] = ["queued", "running", "done", "failed", "cancelled"];

impl Metrics {
    /// A registry for the server on `db`, answering scrapes from `allowed`.
    pub fn new(db: Db, allowed: MetricsAccess) -> anyhow::Result<Arc<Metrics>> {
        let registry = Registry::new_custom(Some("claimpool".into()), None)?;
        let requests = IntCounterVec::new(
            Opts::new(
                "http_requests_total",
                "HTTP requests answered, by route, method and status",
            ),
            &["route", "method", "status"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "Time from a request's arrival to its response's head, by route and method",
            )
            .buckets(BUCKETS.to_vec()),
            &["route", "method"],
        )?;
        let jobs = IntGaugeVec::new(
            Opts::new("jobs", "Background jobs of the database, by state"),
            &["state"],
        )?;
        let pool = IntGaugeVec::new(
            Opts::new(
                "db_pool_connections",
                "This server's database connections, by state",
            ),
            &["state"],
        )?;
        let write_wait = HistogramVec::new(
            HistogramOpts::new(
                "write_wait_seconds",
                "Time a write transaction of this server waited before it could write: its turn \
                 among the server's writers (stage turn), then the database's write lock (stage \
                 lock: on PostgreSQL the writers' advisory lock every server's writers take; on \
                 SQLite BEGIN IMMEDIATE, a pooled connection included)",
            )
            .buckets(WAIT_BUCKETS.to_vec()),
            &["stage"],
        )?;
        for wait in commands::db::WriteWait::ALL {
            write_wait.with_label_values(&[wait.name()]);
        }
        let watched = write_wait.clone();
        commands::db::watch_waits(
            &db,
            Arc::new(
                move |wait: commands::db::WriteWait, took: std::time::Duration| {
                    watched
                        .with_label_values(&[wait.name()])
                        .observe(took.as_secs_f64());
                },
            ),
        );
        let judgments = prometheus::IntGauge::new(
            "judgments_stored_total",
            "Judgments stored in the database by every server (append-only: its rate is the annotation throughput)",
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(jobs.clone()))?;
        registry.register(Box::new(pool.clone()))?;
        registry.register(Box::new(judgments.clone()))?;
        registry.register(Box::new(write_wait))?;
        Ok(Arc::new(Metrics {
            registry,
            requests,
            latency,
            jobs,
            pool,
            judgments,
            db,
            allowed,
        }))
    }

    /// The text a scrape gets: the database's numbers read now.
    async fn render(&self) -> anyhow::Result<String> {
        let counts = commands::upkeep::service_counts(&self.db).await?;
        for state in JOB_STATES {
            let n = counts
                .jobs
                .iter()
                .find(|(s, _)| s == state)
                .map_or(0, |(_, n)| *n);
            self.jobs.with_label_values(&[state]).set(n);
        }
        self.judgments.set(counts.judgments);
        let size = i64::from(self.db.size());
        let idle = i64::try_from(self.db.num_idle()).unwrap_or(i64::MAX);
        self.pool.with_label_values(&["idle"]).set(idle);
        self.pool.with_label_values(&["in_use"]).set(size - idle);
        let mut out = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut out)?;
        Ok(String::from_utf8(out)?)
    }
}

/// The label a request's route gets: the router's pattern (`/work/{project}`), the path itself
/// for the server functions' endpoints (one pattern serves them all; they are a fixed set), and
/// `unmatched` for what no route answered (so that probes of random paths add no series).
fn route_label(matched: Option<&str>, path: &str, status: StatusCode) -> String {
    if status == StatusCode::NOT_FOUND {
        return "unmatched".to_owned();
    }
    match matched {
        Some(pattern) if pattern.contains("{*") && path.starts_with("/api/") => path.to_owned(),
        Some(pattern) => pattern.to_owned(),
        None => "unmatched".to_owned(),
    }
}

/// Counts and times every request (a middleware around the whole router).
pub async fn track(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let matched = request
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_owned());
    let response = next.run(request).await;
    let route = route_label(matched.as_deref(), &path, response.status());
    metrics
        .requests
        .with_label_values(&[&route, &method, response.status().as_str()])
        .inc();
    metrics
        .latency
        .with_label_values(&[&route, &method])
        .observe(started.elapsed().as_secs_f64());
    response
}

/// Who asks for the metrics: the peer, or, for a request a proxy forwarded, the client the
/// trusted proxy names. A forwarded request from a proxy that is not trusted has no known client
/// (a proxy on the server's own machine would otherwise pass as loopback): None.
fn scraper(
    peer: SocketAddr,
    headers: &axum::http::HeaderMap,
    client: Option<std::net::IpAddr>,
) -> Option<std::net::IpAddr> {
    let forwarded = ["x-forwarded-for", "forwarded", "x-real-ip"]
        .iter()
        .any(|h| headers.contains_key(*h));
    if !forwarded {
        return Some(peer.ip());
    }
    client.filter(|c| *c != peer.ip())
}

/// `GET /metrics`.
pub async fn scrape(
    State(metrics): State<Arc<Metrics>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    client: Option<axum::Extension<app::auth::ClientAddress>>,
    headers: axum::http::HeaderMap,
) -> Response {
    let asker = scraper(peer, &headers, client.map(|c| c.0 .0));
    if !asker.is_some_and(|ip| metrics.allowed.allows(ip)) {
        return (
            StatusCode::FORBIDDEN,
            "metrics are not served to this address\n",
        )
            .into_response();
    }
    match metrics.render().await {
        Ok(text) => ([(header::CONTENT_TYPE, prometheus::TEXT_FORMAT)], text).into_response(),
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "metrics");
            (StatusCode::SERVICE_UNAVAILABLE, "metrics are unavailable\n").into_response()
        }
    }
}
