//! How the server serves under load and abuse (issue 35): release downloads stream from the
//! database part by part (F11), connections that send no complete request header in time are
//! closed (F12), and heavy computations run a bounded number at a time with bounded
//! parameters (F10).

use crate::common::TestApp;
use reqwest::StatusCode;
use sha2::{Digest, Sha256};

/// The most bytes one release part holds.
const PART: usize = store::release_parts::PART_BYTES;

/// Records release 1 of `project` directly, from `parts` (written as the store writes them, then
/// made visible), with `archive_bytes` and `sha256` as recorded.
async fn record_release(
    app: &TestApp,
    project: i64,
    parts: &[&[u8]],
    archive_bytes: usize,
    sha256: &str,
) {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO release_rows (project_id, number, partial, manifest, sha256, archive_bytes,
                                   created_by, created_at, state, lock_token)
         VALUES ($1, 1, 0, '{}', $2, $3, NULL, 0, 'writing', 'test') RETURNING id",
    )
    .bind(project)
    .bind(sha256)
    .bind(archive_bytes as i64)
    .fetch_one(&app.db)
    .await
    .unwrap();
    for (seq, bytes) in parts.iter().enumerate() {
        sqlx::query("INSERT INTO release_parts (release_id, seq, bytes) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(seq as i64)
            .bind(bytes.to_vec())
            .execute(&app.db)
            .await
            .unwrap();
    }
    sqlx::query("UPDATE release_rows SET state = 'done', lock_token = NULL WHERE id = $1")
        .bind(id)
        .execute(&app.db)
        .await
        .unwrap();
}

/// A project `p` led by `lead`, logged in.
async fn led_project(app: &TestApp) -> (i64, reqwest::Client) {
    let project = store::projects::create(&app.db, "p", "", None)
        .await
        .unwrap();
    app.add_lead("lead", "p").await;
    (project, app.logged_in("lead").await)
}

/// Pseudo-random bytes (incompressible, as an archive is).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    use rand::{RngCore, SeedableRng};
    let mut bytes = vec![0u8; len];
    rand_chacha::ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut bytes);
    bytes
}

#[tokio::test]
async fn a_release_download_is_the_stored_archive_sent_part_by_part() {
    let app = TestApp::spawn().await;
    let (project, lead) = led_project(&app).await;
    let archive = noise(2 * PART + 4_321, 35);
    let sha = format!("{:x}", Sha256::digest(&archive));
    let parts: Vec<&[u8]> = archive.chunks(PART).collect();
    record_release(&app, project, &parts, archive.len(), &sha).await;

    for path in [
        "/lead/projects/p/releases/1/download".to_owned(),
        "/api/v1/projects/p/releases/1/archive".to_owned(),
    ] {
        let res = lead.get(app.url(&path)).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        assert_eq!(
            res.headers()["content-length"],
            archive.len().to_string().as_str(),
            "{path}"
        );
        let body = res.bytes().await.unwrap();
        assert_eq!(format!("{:x}", Sha256::digest(&body)), sha, "{path}");
    }
}

/// A release whose second part is missing: a download that read the whole archive first
/// answered 500 without a byte; a streamed one has sent the first part, with its status and
/// headers, before it reads the second — so the client gets 200, the first part's bytes, and
/// then a body that ends early.
#[tokio::test]
async fn a_release_download_sends_each_part_before_reading_the_next() {
    let app = TestApp::spawn().await;
    let (project, lead) = led_project(&app).await;
    let archive = noise(3 * PART, 36);
    let sha = format!("{:x}", Sha256::digest(&archive));
    // Part 0 only: parts 1 and 2 are missing.
    let parts = [&archive[..PART]];
    record_release(&app, project, &parts, archive.len(), &sha).await;

    let mut res = lead
        .get(app.url("/lead/projects/p/releases/1/download"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "the response began before the missing part was read"
    );
    let mut received = Vec::new();
    let ended = loop {
        match res.chunk().await {
            Ok(Some(chunk)) => received.extend_from_slice(&chunk),
            Ok(None) => break "the body ended",
            Err(_) => break "the body failed",
        }
    };
    assert_eq!(ended, "the body failed", "fewer bytes than announced");
    assert_eq!(received.len(), PART, "exactly the first part arrived");
    assert_eq!(received, archive[..PART]);
}

/// Connects to `addr`, sends `bytes`, then reads until the server closes the connection:
/// how long that took and what it sent, or None if it was still open after `wait`.
async fn closed_after(
    addr: std::net::SocketAddr,
    bytes: &[u8],
    wait: std::time::Duration,
) -> Option<(std::time::Duration, Vec<u8>)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let start = std::time::Instant::now();
    stream.write_all(bytes).await.unwrap();
    let mut received = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(wait, read).await.ok()?;
    Some((start.elapsed(), received))
}

#[tokio::test]
async fn a_connection_without_a_whole_header_in_time_is_closed_and_so_is_an_idle_one() {
    use std::time::Duration;
    // The test app serves with axum::serve, as `serve` did: no header timeout at all.
    let app = TestApp::spawn().await;
    let partial = b"GET /login HTTP/1.1\r\nHost: localhost\r\nX-Slow: ";
    assert!(
        closed_after(app.addr, partial, Duration::from_secs(3))
            .await
            .is_none(),
        "without a header timeout half a header holds the connection open"
    );

    // `serve`'s connections, with a header timeout of 1 s.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = server::http::router_with(app.db.clone(), addr, Default::default())
        .await
        .unwrap();
    let timeouts = server::http::ConnectionTimeouts {
        header: Duration::from_secs(1),
    };
    tokio::spawn(server::http::serve_connections(
        listener,
        router,
        timeouts,
        std::future::pending(),
    ));
    let within = |elapsed: Duration| {
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(5)
    };
    // Half a header: closed after the timeout.
    let (elapsed, _) = closed_after(addr, partial, Duration::from_secs(10))
        .await
        .expect("a partial header is closed");
    assert!(within(elapsed), "closed after {elapsed:?}");
    // Nothing at all: closed too.
    let (elapsed, _) = closed_after(addr, b"", Duration::from_secs(10))
        .await
        .expect("a silent connection is closed");
    assert!(within(elapsed), "closed after {elapsed:?}");
    // A whole request is answered; the kept-alive connection, idle after it, is then closed.
    let (elapsed, answer) = closed_after(
        addr,
        b"GET /login HTTP/1.1\r\nHost: localhost\r\n\r\n",
        Duration::from_secs(10),
    )
    .await
    .expect("an idle kept-alive connection is closed");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:.200}");
    assert!(within(elapsed), "closed after {elapsed:?}");
    // Each request carries its connection's address (the login throttle keys on it).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let peer =
        axum::Router::new().route(
            "/peer",
            axum::routing::get(
                |axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<
                    std::net::SocketAddr,
                >| async move { peer.ip().to_string() },
            ),
        );
    tokio::spawn(server::http::serve_connections(
        listener,
        peer,
        timeouts,
        std::future::pending(),
    ));
    let client = crate::common::client_builder().build().unwrap();
    let res = client
        .get(format!("http://{addr}/peer"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.text().await.unwrap(), "127.0.0.1");
}

/// A project `p` with the demo sample, one run of a pair per claim and its pool at `depth`,
/// led by `lead` (logged in), on an app whose heavy work is `heavy`.
async fn reported_project(heavy: &app::state::HeavyWork, depth: u32) -> (TestApp, reqwest::Client) {
    let app = TestApp::spawn_with(server::http::ServeOptions {
        heavy: heavy.clone(),
        ..Default::default()
    })
    .await;
    let doc = crate::common::demo_lines("corpus.jsonl")[0]["doc_id"].to_string();
    let pairs: Vec<(String, String, f64)> = crate::common::demo_lines("claims.jsonl")
        .iter()
        .enumerate()
        .map(|(i, c)| (c["id"].to_string(), doc.clone(), 0.9 - i as f64 * 0.01))
        .collect();
    let project = app.demo_project("p", false, &pairs).await;
    store::pool::build(
        &app.db,
        project,
        app::domain::pool::Strategy::Confidence,
        depth,
        None,
    )
    .await
    .unwrap();
    app.add_lead("lead", "p").await;
    let lead = app.logged_in("lead").await;
    (app, lead)
}

#[tokio::test]
async fn reports_beyond_the_servers_turns_are_refused_busy_and_the_waiting_one_runs_after() {
    use std::time::Duration;
    // One report at a time, one more waiting.
    let heavy = app::state::HeavyWork::new(1, 1);
    let (app, lead) = reported_project(&heavy, 40).await;
    let report = app.url("/api/v1/projects/p/report");
    // Unhindered, a report is computed.
    let res = lead.get(&report).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);

    // Another computation holds the turn: the next report waits for it ...
    let held = heavy.turn("a test's computation").await.unwrap();
    let waiting = tokio::spawn({
        let (lead, report) = (lead.clone(), report.clone());
        async move { lead.get(&report).send().await.unwrap() }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!waiting.is_finished(), "the report waits for its turn");
    // ... and one more, beyond the one that may wait, is refused at once, page and CSV alike.
    for url in [
        report.clone(),
        app.url("/lead/projects/p/report/csv/depth_curve"),
    ] {
        let res = lead.get(&url).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE, "{url}");
        if url == report {
            assert_eq!(res.headers()["retry-after"], "30");
        }
        let text = res.text().await.unwrap();
        assert!(
            text.contains("busy") && text.contains("try again"),
            "{text}"
        );
    }
    let res = lead
        .post(app.url("/api/report/survey"))
        .header("Origin", format!("http://{}", app.addr))
        .form(&[("project", "p")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE, "estimates");
    // The turn is free: the waiting report is computed.
    drop(held);
    let res = tokio::time::timeout(Duration::from_secs(60), waiting)
        .await
        .expect("the waiting report ran")
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    // And the refused ones may come again.
    let res = lead.get(&report).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
}

#[tokio::test]
async fn report_parameters_beyond_the_bounds_are_400_naming_the_field() {
    let (app, lead) = reported_project(&app::state::HeavyWork::default(), 250).await;
    for (query, field) in [
        ("step=1", "step: at least 3 for this pool's depth 250"),
        ("step=2&bootstrap=10", "step: at least 3"),
        ("bootstrap=10001", "bootstrap: at most 10000"),
    ] {
        for path in [
            format!("/api/v1/projects/p/report?{query}"),
            format!("/lead/projects/p/report/csv/depth_curve?{query}"),
        ] {
            let res = lead.get(app.url(&path)).send().await.unwrap();
            assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{path}");
            let text = res.text().await.unwrap();
            assert!(text.contains(field), "{path}: {text}");
        }
    }
    // Within them: computed.
    let res = lead
        .get(app.url("/api/v1/projects/p/report?step=3&bootstrap=10"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
}
