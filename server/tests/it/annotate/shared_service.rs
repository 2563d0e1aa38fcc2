//! Several `claimpool serve` processes on one PostgreSQL database, as a team runs them behind a
//! load balancer (issue 40): they start together, share the annotators and the job queue, an
//! upload received by one is run by another, and a server killed while it runs a job leaves the
//! job to be failed only once its lease has expired, never by a server starting up.
//!
//! PostgreSQL only (the pass of `make test` with CLAIMPOOL_TEST_ENGINE=postgres): SQLite's
//! servers are on one machine by nature.

use super::{clearly_nei, setup, PROJECT};
use crate::common::{self, postgres, TestApp};
use crate::support::serve::Server;
use app::model::annotate::QueueHead;
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Two servers started at the same moment on a fresh database: both come up, 10 times out of 10
/// (the sessions table used to be created by both at once, and one exited).
#[tokio::test]
async fn two_servers_started_together_on_a_fresh_database_both_serve() {
    if !postgres::tests_on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for round in 0..10 {
        let url = postgres::fresh_database().expect("PostgreSQL");
        let mut a = Server::start(&url, &dir.path().join(format!("a{round}")), &[]);
        let mut b = Server::start(&url, &dir.path().join(format!("b{round}")), &[]);
        let (ready_a, ready_b) = tokio::join!(a.ready(), b.ready());
        assert!(
            ready_a,
            "round {round}: server A did not start: {}",
            a.log()
        );
        assert!(
            ready_b,
            "round {round}: server B did not start: {}",
            b.log()
        );
    }
}

/// Polls job `id` of the project through `server` until `done` holds (two minutes at most).
async fn job_until(
    server: &Server,
    lead: &reqwest::Client,
    id: i64,
    done: impl Fn(&app::api::imports::JobRow) -> bool,
) -> app::api::imports::JobRow {
    for _ in 0..1200 {
        let job: app::api::imports::JobRow = lead
            .post(server.url("/api/lead/job"))
            .form(&[("project", PROJECT), ("id", &id.to_string())])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if done(&job) {
            return job;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("job {id} did not get there in two minutes");
}

/// The upload directories in `dir`.
fn uploads_in(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(commands::import::UPLOAD_DIR_PREFIX)
                })
                .count()
        })
        .unwrap_or(0)
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&app.db).await.unwrap()
}

/// The job's lease as stored: its owner and when it expires.
async fn lease(app: &TestApp, id: i64) -> (Option<String>, Option<i64>, String) {
    sqlx::query_as("SELECT lease_owner, lease_expires_at, status FROM jobs WHERE id = $1")
        .bind(id)
        .fetch_one(&app.db)
        .await
        .unwrap()
}

/// Issue 40's service test: server A (no job worker) and B on one database, 50 annotators split
/// between them; a run uploaded to A is imported by B from the database; then B is killed -9
/// while it runs a pipeline job, a server C starts at once and leaves the job alone until its
/// lease has expired, and then fails it. Every accepted submission is one judgment row, and no
/// pair has two final labels.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn servers_share_annotators_uploads_and_jobs_and_a_dead_servers_job_waits_for_its_lease() {
    if !postgres::tests_on_postgres() {
        return;
    }
    let app = TestApp::spawn().await;
    let names: Vec<String> = (1..=50).map(|i| format!("s{i:02}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    setup(&app, &refs, 120).await;
    let tmp = app.dir.path();
    let lease_secs = "6";
    let common_args = [
        "--job-lease-secs",
        lease_secs,
        "--pipeline-command",
        "hang=sleep 600",
    ];
    let mut a = Server::start(
        &app.db_arg,
        &tmp.join("a"),
        &[&common_args[..], &["--no-jobs"]].concat(),
    );
    let mut b = Server::start(&app.db_arg, &tmp.join("b"), &common_args);
    assert!(a.ready().await, "A: {}", a.log());
    assert!(b.ready().await, "B: {}", b.log());

    // 50 annotators, half on each server, each submitting until their queue is empty.
    let accepted = Arc::new(AtomicUsize::new(0));
    let mut annotators = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let server = if i % 2 == 0 { &a } else { &b };
        let (client, base) = (server.logged_in(name).await, server.base.clone());
        let accepted = accepted.clone();
        annotators.push(tokio::spawn(async move {
            let deadline = Instant::now() + Duration::from_secs(60);
            let res = client
                .post(format!("{base}/api/work/queue"))
                .form(&[("project", PROJECT)])
                .send()
                .await
                .unwrap();
            assert!(res.status().is_success(), "queue: {}", res.status());
            let mut head: QueueHead = res.json().await.unwrap();
            while let Some(item) = head.current.as_ref().and_then(|c| c.assignment_id) {
                assert!(Instant::now() < deadline, "the annotators took over a minute");
                let res = client
                    .post(format!("{base}/api/work/submit"))
                    .json(&json!({ "project": PROJECT, "assignment_id": item, "form": clearly_nei(), "seconds_spent": 1.0 }))
                    .send()
                    .await
                    .unwrap();
                let status = res.status();
                let text = res.text().await.unwrap();
                assert!(status.is_success(), "submit: {status}: {text}");
                accepted.fetch_add(1, Ordering::SeqCst);
                head = serde_json::from_str(&text).unwrap();
            }
        }));
    }

    // Meanwhile the lead uploads a run to A, which runs no jobs: B imports it, from the
    // database (A's copy is gone from A's disk; B has its own temporary directory).
    let lead = a.logged_in("lead").await;
    let run: String = (0..40)
        .map(|i| {
            format!(
                "{}\n",
                json!({ "claim_id": common::demo_lines("claims.jsonl")[i]["id"], "doc_id": common::demo_lines("corpus.jsonl")[i]["doc_id"], "predicted_label": "SUPPORT", "p_support": 0.5, "p_contradict": 0.1 })
            )
        })
        .collect();
    let form = reqwest::multipart::Form::new()
        .text("project", PROJECT)
        .text("kind", "run")
        .text("system", "uploaded")
        .text("format", "canonical")
        .part(
            "file",
            reqwest::multipart::Part::bytes(run.into_bytes()).file_name("uploaded.jsonl"),
        );
    let res = lead
        .post(a.url("/api/lead/import/upload"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert!(
        res.status().is_success(),
        "{}",
        common::error_message(res).await
    );
    let job: app::api::imports::JobRow = res.json().await.unwrap();
    assert_eq!(uploads_in(&a.tmp), 0, "A keeps no copy of the upload");
    let done = job_until(&a, &lead, job.id, app::api::imports::JobRow::finished).await;
    assert_eq!(done.status, "done", "{done:?}\nB: {}", b.log());
    let (owner, _, _) = lease(&app, job.id).await;
    assert!(
        owner
            .as_deref()
            .is_some_and(|o| o.contains(&format!(":{}:", b.pid()))),
        "B ran it: {owner:?}"
    );
    assert_eq!(count(&app, "SELECT COUNT(*) FROM uploads").await, 0);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM upload_parts").await, 0);
    assert_eq!(uploads_in(&b.tmp), 0, "B removed its copy");

    for t in annotators {
        t.await.unwrap();
    }
    let accepted = accepted.load(Ordering::SeqCst) as i64;
    assert!(accepted >= 120, "{accepted} submissions");
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM judgment_rows").await,
        accepted
    );
    assert_eq!(
        count(&app, "SELECT COUNT(*) FROM (SELECT claim_id, doc_id FROM final_labels GROUP BY claim_id, doc_id HAVING COUNT(*) > 1) twice").await,
        0
    );

    // A pipeline job that never ends (its command sleeps) runs on B, the only worker.
    let hanging = a.start_hanging_job(&lead, PROJECT).await;
    job_until(&a, &lead, hanging, |j| j.status == "running").await;
    // Killed mid-job (SIGKILL), B cannot renew its lease; C starts at once.
    b.child.kill().unwrap();
    let _ = b.child.wait();
    let killed_at = store::now_ms();
    let (_, expires, _) = lease(&app, hanging).await;
    let expires = expires.expect("a running job's lease");
    let mut c = Server::start(&app.db_arg, &tmp.join("c"), &common_args);
    assert!(c.ready().await, "C: {}", c.log());
    // Until the lease expires, the job stays running: C's start did not fail it.
    let (_, _, status) = lease(&app, hanging).await;
    let now = store::now_ms();
    assert!(
        now < expires,
        "C took {} ms to start, past the lease ({} ms after the kill)",
        now - killed_at,
        expires - killed_at
    );
    assert_eq!(status, "running", "failed before its lease expired");
    // Then C (A has no worker) fails it, after the expiry.
    let ended = job_until(&a, &lead, hanging, app::api::imports::JobRow::finished).await;
    assert_eq!(ended.status, "failed", "{ended:?}");
    assert!(
        ended
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("lease"),
        "{ended:?}"
    );
    let finished: i64 = sqlx::query_scalar("SELECT finished_at FROM jobs WHERE id = $1")
        .bind(hanging)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert!(
        finished >= expires,
        "failed at {finished}, its lease ran to {expires}"
    );
    drop(c);
    drop(a);
}
