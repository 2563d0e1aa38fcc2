//! Webhooks (issue 40), through a real `claimpool serve` and its delivery task: a receiver gets
//! signed events for a final label, a disagreement and a release, each verified with an HMAC
//! computed here from SHA-256 alone (not the server's HMAC code); a receiver that is down gets
//! every attempt, spaced by the retry schedule, and its delivery is listed as failed.

use super::{contradict, setup, support, PROJECT};
use crate::common::TestApp;
use crate::support::serve::Server;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// HMAC-SHA256 (RFC 2104) from the hash alone.
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.iter().map(|k| k ^ byte).collect::<Vec<u8>>();
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One request a receiver got.
#[derive(Clone, Debug)]
struct Received {
    headers: axum::http::HeaderMap,
    body: String,
}

/// A receiver on a free port that answers 204 and keeps what it got.
async fn receiver() -> (String, Arc<Mutex<Vec<Received>>>) {
    let got: Arc<Mutex<Vec<Received>>> = Arc::default();
    let keep = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let keep = keep.clone();
            async move {
                keep.lock().unwrap().push(Received { headers, body });
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, got)
}

/// A URL where nothing listens: a port taken and given back.
fn down_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}/hook")
}

async fn register(server: &Server, lead: &reqwest::Client, url: &str, events: &[&str]) -> String {
    let res = lead
        .post(server.url("/api/lead/webhook/create"))
        .json(&json!({ "project": PROJECT, "url": url, "events": events }))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    let made: Value = res.json().await.unwrap();
    made["secret"].as_str().unwrap().to_owned()
}

/// Waits (at most `within`) until `done` holds.
async fn until(within: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < within, "waited {within:?} for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn signed_events_reach_the_receiver_and_a_receiver_that_is_down_is_retried_then_failed() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1", "a2"], 2).await;
    let mut server = Server::start(
        &app.db_arg,
        &app.dir.path().join("server"),
        &["--webhook-attempts", "3", "--webhook-retry-secs", "1"],
    );
    assert!(server.ready().await, "{}", server.log());
    let lead = server.logged_in("lead").await;
    let (url, got) = receiver().await;
    let secret = register(
        &server,
        &lead,
        &url,
        &[
            "label.final",
            "disagreement",
            "release.made",
            "import.finished",
        ],
    )
    .await;
    let down = down_url();
    register(&server, &lead, &down, &["release.made"]).await;

    // Pair 1: both passes agree (final). Pair 2: they disagree.
    let a1 = server.logged_in("a1").await;
    let a2 = server.logged_in("a2").await;
    for (first_form, second_form) in [(support(), support()), (support(), contradict())] {
        let (first, second) = if queue_at(&server, &a1).await.is_some() {
            (&a1, &a2)
        } else {
            (&a2, &a1)
        };
        let item = queue_at(&server, first).await.unwrap();
        assert!(submit_at(&server, first, item, first_form).await);
        let item = queue_at(&server, second).await.unwrap();
        assert!(submit_at(&server, second, item, second_form).await);
    }
    let res = lead
        .post(server.url("/api/release/create"))
        .form(&[
            ("project", PROJECT),
            ("partial", "true"),
            ("unjudged", "false"),
        ])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());

    until(Duration::from_secs(30), "three deliveries", || {
        got.lock().unwrap().len() >= 3
    })
    .await;
    // An import from the lead's shell, beside the server, says it finished too.
    let run = app.dir.path().join("shell-run.jsonl");
    let (claim, doc): (String, String) = sqlx::query_as(
        "SELECT c.claim_id, d.doc_id FROM claims c, documents d ORDER BY c.id, d.id LIMIT 1",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    std::fs::write(
        &run,
        format!("{{\"claim_id\": {claim}, \"doc_id\": {doc}, \"p_support\": 0.5, \"p_contradict\": 0.1}}\n"),
    )
    .unwrap();
    crate::support::cli::ok(crate::support::cli::claimpool(
        &app.db_arg,
        &[
            "import",
            "run",
            "--project",
            PROJECT,
            "--system",
            "from-the-shell",
            run.to_str().unwrap(),
        ],
    ));
    until(Duration::from_secs(30), "four deliveries", || {
        got.lock().unwrap().len() >= 4
    })
    .await;
    let received = got.lock().unwrap().clone();
    let events: Vec<&str> = received
        .iter()
        .map(|r| r.headers["claimpool-event"].to_str().unwrap())
        .collect();
    assert_eq!(
        events,
        [
            "label.final",
            "disagreement",
            "release.made",
            "import.finished"
        ]
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    for r in &received {
        let timestamp = r.headers["claimpool-timestamp"].to_str().unwrap();
        assert!((now - timestamp.parse::<i64>().unwrap()).abs() < 120);
        let expected = format!(
            "v1={}",
            hex(&hmac_sha256(
                secret.as_bytes(),
                format!("{timestamp}.{}", r.body).as_bytes()
            ))
        );
        assert_eq!(r.headers["claimpool-signature"].to_str().unwrap(), expected);
        let body: Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(body["project"], PROJECT);
        assert_eq!(
            body["event"],
            r.headers["claimpool-event"].to_str().unwrap()
        );
    }
    let body = |i: usize| serde_json::from_str::<Value>(&received[i].body).unwrap();
    assert_eq!(body(0)["data"]["label"], "SUPPORT");
    assert_eq!(body(0)["data"]["stage"], "second");
    assert!(body(1)["data"]["claim"].is_string() || body(1)["data"]["claim"].is_number());
    assert_eq!(body(2)["data"]["number"], 1);
    assert_eq!(body(3)["data"]["kind"], "run");
    assert!(body(3)["data"]["file"]
        .as_str()
        .unwrap()
        .ends_with("shell-run.jsonl"));
    // Tampering shows: another secret or another body does not verify.
    let ts = received[2].headers["claimpool-timestamp"].to_str().unwrap();
    assert_ne!(
        format!(
            "v1={}",
            hex(&hmac_sha256(
                b"another",
                format!("{ts}.{}", received[2].body).as_bytes()
            ))
        ),
        received[2].headers["claimpool-signature"].to_str().unwrap()
    );

    // The receiver that is down: three attempts, 1 s then 2 s apart, then failed, as the
    // lead's page data lists it.
    let page = || async {
        let res = lead
            .post(server.url("/api/lead/webhooks"))
            .form(&[("project", PROJECT)])
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success());
        res.json::<Value>().await.unwrap()
    };
    let start = Instant::now();
    let failed = loop {
        let v = page().await;
        let failed = v["deliveries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["state"] == "failed")
            .cloned();
        if let Some(d) = failed {
            break d;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no failed delivery: {v}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(failed["event"], "release.made");
    assert_eq!(failed["attempts"], 3);
    assert!(failed["last_status"].is_null());
    let error = failed["last_error"].as_str().unwrap();
    assert!(error.starts_with("cannot connect"), "{error}");
    let spent = failed["ended_at_ms"].as_i64().unwrap() - failed["created_at_ms"].as_i64().unwrap();
    assert!(spent >= 3_000, "the retries waited 1 s and 2 s: {spent} ms");
    // Every delivery to the good receiver is delivered, each once.
    let v = page().await;
    let delivered: Vec<&Value> = v["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["state"] == "delivered")
        .collect();
    assert_eq!(delivered.len(), 4);
    assert!(delivered
        .iter()
        .all(|d| d["attempts"] == 1 && d["last_status"] == 204));
    assert_eq!(got.lock().unwrap().len(), 4, "nothing was sent twice");
    let exit = tokio::task::block_in_place(|| server.terminate(Duration::from_secs(30)));
    assert!(exit.success(), "{}", server.log());
}

async fn queue_at(server: &Server, client: &reqwest::Client) -> Option<i64> {
    let res = client
        .post(server.url("/api/work/queue"))
        .form(&[("project", PROJECT)])
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    let head: app::model::annotate::QueueHead = res.json().await.unwrap();
    head.current.and_then(|c| c.assignment_id)
}

async fn submit_at(
    server: &Server,
    client: &reqwest::Client,
    assignment: i64,
    form: Value,
) -> bool {
    client
        .post(server.url("/api/work/submit"))
        .json(&json!({ "project": PROJECT, "assignment_id": assignment, "form": form, "seconds_spent": 4.5 }))
        .send()
        .await
        .unwrap()
        .status()
        .is_success()
}

#[tokio::test]
async fn only_a_projects_leads_manage_its_webhooks_and_bad_input_is_named() {
    let app = TestApp::spawn().await;
    setup(&app, &["a1"], 1).await;
    let lead = app.logged_in("lead").await;
    let create = |client: reqwest::Client, body: Value| {
        let url = app.url("/api/lead/webhook/create");
        async move { client.post(url).json(&body).send().await.unwrap() }
    };
    let res = create(
        lead.clone(),
        json!({ "project": PROJECT, "url": "ftp://example.org", "events": ["label.final"] }),
    )
    .await;
    assert_eq!(res.status(), 400);
    assert!(crate::common::error_message(res).await.contains("URL"));
    let res = create(
        lead.clone(),
        json!({ "project": PROJECT, "url": "http://127.0.0.1:9/x", "events": [] }),
    )
    .await;
    assert_eq!(res.status(), 400);
    assert!(crate::common::error_message(res).await.contains("events"));
    let annotator = app.logged_in("a1").await;
    let res = create(
        annotator,
        json!({ "project": PROJECT, "url": "http://127.0.0.1:9/x", "events": ["label.final"] }),
    )
    .await;
    assert_eq!(res.status(), 403);
    // Nothing was registered, and no submission waits on a hook.
    let hooks: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM webhooks")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(hooks, 0);
}
