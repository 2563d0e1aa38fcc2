//! Running claimpool as a service (issue 40): health checks, Prometheus metrics, JSON logs, and
//! a SIGTERM that drains: the running job goes back to the queue and another server runs it.

use crate::common::{self, TestApp};
use crate::support::serve::Server;
use std::collections::HashMap;
use std::time::Duration;

/// The samples of a metric in a Prometheus text exposition, parsed by a parser of its own
/// (prometheus-parse), by their labels.
fn samples(text: &str, metric: &str) -> Vec<(HashMap<String, String>, f64)> {
    let lines = text.lines().map(|l| Ok(l.to_owned()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("the text format");
    scrape
        .samples
        .into_iter()
        .filter(|s| s.metric == metric)
        .map(|s| {
            let labels = s
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let value = match s.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => v,
                prometheus_parse::Value::Histogram(buckets) => {
                    buckets.last().map_or(0.0, |b| b.count)
                }
                prometheus_parse::Value::Summary(_) => f64::NAN,
            };
            (labels, value)
        })
        .collect()
}

/// The value of `metric`'s sample with every label of `want`.
fn value(text: &str, metric: &str, want: &[(&str, &str)]) -> Option<f64> {
    samples(text, metric)
        .into_iter()
        .find(|(labels, _)| {
            want.iter()
                .all(|(k, v)| labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, v)| v)
}

async fn scrape(app: &TestApp, client: &reqwest::Client) -> String {
    let res = client.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers()[reqwest::header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    res.text().await.unwrap()
}

#[tokio::test]
async fn health_checks_and_metrics_count_what_was_asked() {
    let app = TestApp::spawn().await;
    let client = app.client();
    // No login needed for either check.
    let res = client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let res = client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.unwrap(), "ready\n");

    // Requests of three kinds, counted by route, method and status.
    for _ in 0..6 {
        let res = client.get(app.url("/healthz")).send().await.unwrap();
        assert_eq!(res.status(), 200);
    }
    for _ in 0..3 {
        let res = app.login(&client, "nobody", "wrong").await;
        assert_eq!(res.status(), 401);
    }
    let res = client
        .get(app.url("/no/such/page/at/all.php"))
        .send()
        .await
        .unwrap();
    let missing = res.status().as_u16().to_string();
    let text = scrape(&app, &client).await;
    let requests = "claimpool_http_requests_total";
    let healthz = [("route", "/healthz"), ("method", "GET"), ("status", "200")];
    assert_eq!(value(&text, requests, &healthz), Some(7.0), "{text}");
    let readyz = [("route", "/readyz"), ("method", "GET"), ("status", "200")];
    assert_eq!(value(&text, requests, &readyz), Some(1.0), "{text}");
    let login = [
        ("route", "/api/login"),
        ("method", "POST"),
        ("status", "401"),
    ];
    assert_eq!(value(&text, requests, &login), Some(3.0), "{text}");
    // A path no route has is counted once under one label, never under its own path.
    let unmatched = [("method", "GET"), ("status", missing.as_str())];
    let unmatched_routes: Vec<String> = samples(&text, requests)
        .into_iter()
        .filter(|(labels, _)| {
            unmatched
                .iter()
                .all(|(k, v)| labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(labels, _)| labels["route"].clone())
        .collect();
    assert!(!text.contains("all.php"), "{text}");
    assert!(!unmatched_routes.is_empty(), "{text}");
    // The latency histogram saw as many.
    let latency = "claimpool_http_request_duration_seconds_count";
    assert_eq!(
        value(&text, latency, &[("route", "/healthz"), ("method", "GET")]),
        Some(7.0),
        "{text}"
    );
    // The database's numbers, read at the scrape.
    for state in ["queued", "running", "done", "failed", "cancelled"] {
        let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE status = $1")
            .bind(state)
            .fetch_one(&app.db)
            .await
            .unwrap();
        assert_eq!(
            value(&text, "claimpool_jobs", &[("state", state)]),
            Some(stored as f64),
            "{state}: {text}"
        );
    }
    let judgments: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM judgment_rows")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(
        value(&text, "claimpool_judgments_stored_total", &[]),
        Some(judgments as f64)
    );
    assert!(value(&text, "claimpool_db_pool_connections", &[("state", "idle")]).is_some());
    // The scrape itself is counted from the next one on.
    let again = scrape(&app, &client).await;
    let metrics = [("route", "/metrics"), ("method", "GET"), ("status", "200")];
    assert_eq!(value(&again, requests, &metrics), Some(1.0), "{again}");

    // Each write transaction's two waits, turn then lock: three writes, three of each at least
    // (the server's own background writers may add theirs).
    let waits = "claimpool_write_wait_seconds_count";
    let before: Vec<f64> = ["turn", "lock"]
        .iter()
        .map(|stage| value(&again, waits, &[("stage", stage)]).expect("both stages listed"))
        .collect();
    for k in 0..3 {
        store::projects::create(&app.db, &format!("metrics-{k}"), "", None)
            .await
            .unwrap();
    }
    let after = scrape(&app, &client).await;
    for (stage, before) in ["turn", "lock"].iter().zip(before) {
        let now = value(&after, waits, &[("stage", stage)]).unwrap();
        assert!(now - before >= 3.0, "{stage}: {before} then {now}\n{after}");
        // The histogram's sum is of durations: not negative, and not more than a minute each.
        let sum = value(
            &after,
            "claimpool_write_wait_seconds_sum",
            &[("stage", stage)],
        )
        .unwrap();
        assert!((0.0..60.0 * now).contains(&sum), "{stage}: sum {sum}");
    }
}

#[tokio::test]
async fn metrics_are_refused_to_addresses_not_allowed() {
    let app = TestApp::spawn_with(server::http::ServeOptions {
        metrics_allow: server::metrics::MetricsAccess::parse_all(&["10.1.0.0/16".to_owned()])
            .unwrap(),
        ..Default::default()
    })
    .await;
    let res = app.client().get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(res.status(), 403);
}

/// Through a reverse proxy on the server's own machine every request comes from loopback: a
/// forwarded scrape is judged by the client a trusted proxy names, and refused when the proxy is
/// not trusted.
#[tokio::test]
async fn a_forwarded_scrape_is_judged_by_its_client() {
    let scrape = |app: &TestApp, forwarded_for: &str| {
        let request = app
            .client()
            .get(app.url("/metrics"))
            .header("X-Forwarded-For", forwarded_for.to_owned());
        async move { request.send().await.unwrap().status().as_u16() }
    };
    // No trusted proxy: the loopback default does not let a forwarded request through.
    let app = TestApp::spawn().await;
    assert_eq!(scrape(&app, "127.0.0.1").await, 403);
    assert_eq!(scrape(&app, "203.0.113.9").await, 403);
    assert_eq!(
        app.client()
            .get(app.url("/metrics"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // A trusted proxy on loopback: the client it names must be allowed.
    let app = TestApp::spawn_with(server::http::ServeOptions {
        trusted_proxies: server::security::TrustedProxies::parse_all(&["127.0.0.1".to_owned()])
            .unwrap(),
        metrics_allow: server::metrics::MetricsAccess::parse_all(&["10.9.0.0/16".to_owned()])
            .unwrap(),
        ..Default::default()
    })
    .await;
    assert_eq!(scrape(&app, "10.9.1.2").await, 200);
    assert_eq!(scrape(&app, "203.0.113.9").await, 403);
}

/// Polls `status` every 50 ms until it says `running` (30 s at most).
async fn until_running<F: std::future::Future<Output = String>>(status: &impl Fn() -> F) {
    for _ in 0..600 {
        if status().await == "running" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status().await, "running");
}

/// `serve --log-format json` writes one JSON object per line; SIGTERM stops the server
/// cleanly, and the job it was running goes back to the queue, where another server takes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_puts_the_running_job_back_in_the_queue_for_another_server() {
    let app = TestApp::spawn().await;
    let project = store::projects::create(&app.db, "demo", "", None)
        .await
        .unwrap();
    let lead = common::operator_lead(&app.db, project).await;
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
    commands::import::corpus(&app.db, &lead, &demo.join("corpus.jsonl"), None)
        .await
        .unwrap();
    commands::import::claims(&app.db, &lead, &demo.join("claims.jsonl"))
        .await
        .unwrap();
    app.add_lead("lead", "demo").await;
    let args = [
        "--log-format",
        "json",
        "--pipeline-command",
        "hang=sleep 600",
        "--drain-secs",
        "10",
    ];
    let mut first = Server::start(&app.db_arg, &app.dir.path().join("first"), &args);
    assert!(first.ready().await, "{}", first.log());
    let client = first.logged_in("lead").await;
    let id = first.start_hanging_job(&client, "demo").await;
    let status = || async {
        sqlx::query_scalar::<_, String>("SELECT status FROM jobs WHERE id = $1")
            .bind(id)
            .fetch_one(&app.db)
            .await
            .unwrap()
    };
    until_running(&status).await;
    let exit = tokio::task::block_in_place(|| first.terminate(Duration::from_secs(30)));
    assert!(exit.success(), "{exit:?}: {}", first.log());
    assert_eq!(status().await, "queued", "back in the queue");
    let requeued: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM audit_events WHERE action = 'job-requeued' AND entity_id = $1",
    )
    .bind(id.to_string())
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(requeued, 1);
    // Every log line is a JSON object; the last says the server stopped.
    let log = first.log();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .filter(|l| !l.starts_with("claimpool is serving"))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(lines.iter().all(|l| l["level"].is_string()), "{log}");
    assert!(lines.iter().any(|l| l["message"] == "stopped"), "{log}");
    // Another server takes it.
    let mut second = Server::start(&app.db_arg, &app.dir.path().join("second"), &args);
    assert!(second.ready().await, "{}", second.log());
    until_running(&status).await;
    let owner: String = sqlx::query_scalar("SELECT lease_owner FROM jobs WHERE id = $1")
        .bind(id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert!(owner.contains(&format!(":{}:", second.pid())), "{owner}");
}
