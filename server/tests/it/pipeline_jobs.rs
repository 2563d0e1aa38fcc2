//! Pipeline jobs through the server functions, with the job worker running: a lead starts a job,
//! polls it to the end, and finds the new system with its predictions; a failing external
//! command fails the job with its output line and imports nothing; annotators are refused.
//! Data: the demo sample shipped in server/demo (40 claims, 443 abstracts).

use crate::common;

use app::api::pipeline::JobView;
use app::domain::account::Role;
use app::pipeline::job::PipelineSettings;
use common::TestApp;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn demo_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("demo")
        .join(name)
}

/// The stand-in model of the external-scorer tests, or None where python3 is missing.
fn standin() -> Option<String> {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: python3 is not available");
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/pipeline/src/external/testdata/standin_model.py");
    Some(script.display().to_string())
}

async fn demo_project(app: &TestApp) -> i64 {
    let project = store::projects::create(&app.db, "demo", "", None)
        .await
        .unwrap();
    commands::import::corpus(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        &demo_file("corpus.jsonl"),
        None,
    )
    .await
    .unwrap();
    commands::import::claims(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        &demo_file("claims.jsonl"),
    )
    .await
    .unwrap();
    project
}

async fn start(
    app: &TestApp,
    client: &reqwest::Client,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    client
        .post(app.url("/api/pipeline/start"))
        .form(fields)
        .send()
        .await
        .unwrap()
}

/// Polls the job until it has ended, returning what the page would show.
async fn wait(app: &TestApp, client: &reqwest::Client, id: i64) -> JobView {
    app.wait_for_job(client, "/api/pipeline/job", "demo", id, JobView::finished)
        .await
}

/// The predictions of a system: (claim, doc) → (rank, confidence).
async fn predictions(app: &TestApp, system: &str) -> BTreeMap<(String, String), (i64, f64)> {
    let rows: Vec<(String, String, i64, f64)> = sqlx::query_as(
        "SELECT c.claim_id, d.doc_id, p.retrieval_rank, p.confidence FROM predictions p \
         JOIN systems s ON s.id = p.system_id JOIN claims c ON c.id = p.claim_id \
         JOIN documents d ON d.id = p.doc_id WHERE s.name = $1",
    )
    .bind(system)
    .fetch_all(&app.db)
    .await
    .unwrap();
    rows.into_iter()
        .map(|(c, d, r, p)| ((c, d), (r, p)))
        .collect()
}

/// The same run made directly with the library from the shipped files (no database, no job).
fn direct_bm25_run(k: usize) -> BTreeMap<(String, String), (i64, f64)> {
    use app::pipeline::generate;
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    generate::index_corpus(&demo_file("corpus.jsonl"), &index, &|_| {}).unwrap();
    let retriever = app::pipeline::Retriever::open(&index).unwrap();
    let claims = generate::read_claims(&demo_file("claims.jsonl")).unwrap();
    let scorer = generate::Scorer::Bm25(app::pipeline::Bm25Scorer::SCIFACT_TRAIN);
    let mut out = Vec::new();
    generate::generate_run(&retriever, &claims, k, &scorer, 2, &mut out, &|_| {}).unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let p = v["p_support"]
                .as_f64()
                .unwrap()
                .max(v["p_contradict"].as_f64().unwrap());
            let key = (
                v["claim_id"].as_str().unwrap().to_owned(),
                v["doc_id"].as_str().unwrap().to_owned(),
            );
            (key, (v["rank"].as_i64().unwrap(), p))
        })
        .collect()
}

#[tokio::test]
async fn a_lead_generates_a_bm25_run_that_becomes_a_system() {
    let app = TestApp::spawn_with_jobs(PipelineSettings::default()).await;
    demo_project(&app).await;
    app.add_lead("lead", "demo").await;
    let lead = app.logged_in("lead").await;

    let res = start(
        &app,
        &lead,
        &[
            ("project", "demo"),
            ("retriever", "bm25"),
            ("k", "10"),
            ("scorer", "bm25"),
            ("system", "bm25-k10"),
            ("role", "pooled"),
        ],
    )
    .await;
    assert!(
        res.status().is_success(),
        "{}",
        common::error_message(res).await
    );
    let job: JobView = res.json().await.unwrap();
    assert!(job.status == "queued" || job.status == "running", "{job:?}");
    assert_eq!(job.system, "bm25-k10");

    let job = wait(&app, &lead, job.id).await;
    assert_eq!(job.status, "done", "{job:?}");
    assert_eq!((job.done, job.total), (40, Some(40)));
    let imported = predictions(&app, "bm25-k10").await;
    assert_eq!(job.imported, Some(imported.len() as u64));
    // The job's run is the run the library makes from the same files (BM25 scores are f32 sums
    // whose order depends on how the index was split while building: equal to about 1e-7).
    let direct = direct_bm25_run(10);
    assert_eq!(imported.len(), direct.len());
    // Two documents whose scores differ by such an amount may swap ranks: a rank may differ
    // only where the direct run holds the same score (to 1e-6) at the rank the job gave.
    let at_rank: BTreeMap<(&str, i64), f64> = direct
        .iter()
        .map(|((claim, _), (rank, confidence))| ((claim.as_str(), *rank), *confidence))
        .collect();
    for (pair, (rank, confidence)) in &direct {
        let (got_rank, got_confidence) = imported[pair];
        assert!(
            (got_confidence - confidence).abs() < 1e-6,
            "{pair:?}: {got_confidence} {confidence}"
        );
        if got_rank != *rank {
            let there = at_rank[&(pair.0.as_str(), got_rank)];
            assert!(
                (there - confidence).abs() < 1e-6,
                "{pair:?}: rank {got_rank}, not {rank}, without a tie ({there} vs {confidence})"
            );
        }
    }
    // The page's list shows it; a second job may not reuse the name.
    let jobs: Vec<JobView> = lead
        .post(app.url("/api/pipeline/jobs"))
        .form(&[("project", "demo")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(jobs.first().map(|j| j.id), Some(job.id));
    let res = start(
        &app,
        &lead,
        &[
            ("project", "demo"),
            ("retriever", "bm25"),
            ("k", "10"),
            ("scorer", "bm25"),
            ("system", "bm25-k10"),
            ("role", "pooled"),
        ],
    )
    .await;
    assert_eq!(res.status(), reqwest::StatusCode::CONFLICT);
}

#[tokio::test]
async fn external_jobs_run_only_configured_commands_and_bad_output_imports_nothing() {
    let Some(script) = standin() else { return };
    let settings = PipelineSettings::from_options(
        &[
            format!("standin=python3 {script}"),
            format!("broken=python3 {script} prob-1.5"),
        ],
        &[],
        None,
    )
    .unwrap();
    let app = TestApp::spawn_with_jobs(settings).await;
    demo_project(&app).await;
    app.add_lead("lead", "demo").await;
    let lead = app.logged_in("lead").await;
    let external = |command: &'static str, system: &'static str| {
        [
            ("project", "demo"),
            ("retriever", "bm25"),
            ("k", "5"),
            ("scorer", "external"),
            ("command", command),
            ("system", system),
            ("role", "pooled"),
        ]
    };

    let options: serde_json::Value = lead
        .post(app.url("/api/pipeline/options"))
        .form(&[("project", "demo")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        options["commands"],
        serde_json::json!(["standin", "broken"])
    );
    assert_eq!(options["hybrid"], false);

    let job: JobView = start(&app, &lead, &external("standin", "standin"))
        .await
        .json()
        .await
        .unwrap();
    let job = wait(&app, &lead, job.id).await;
    assert_eq!(job.status, "done", "{job:?}");
    let imported = predictions(&app, "standin").await;
    let bm25_top5 = direct_bm25_run(5);
    let keys = |m: &BTreeMap<(String, String), (i64, f64)>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(&imported),
        keys(&bm25_top5),
        "one prediction per retrieved pair"
    );
    for (pair, (rank, _)) in &bm25_top5 {
        assert_eq!(imported[pair].0, *rank, "the retrieval rank is kept");
    }

    let job: JobView = start(&app, &lead, &external("broken", "broken"))
        .await
        .json()
        .await
        .unwrap();
    let job = wait(&app, &lead, job.id).await;
    assert_eq!(job.status, "failed");
    let message = job.message.unwrap_or_default();
    assert!(
        message.contains("prob-1.5`:2: field \"p_support\""),
        "{message}"
    );
    assert!(
        predictions(&app, "broken").await.is_empty(),
        "nothing imported"
    );
    let systems: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM systems WHERE name = 'broken'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(systems, 0);

    // A command the server does not offer is refused, whatever its text.
    let res = start(&app, &lead, &external("sh", "evil")).await;
    assert_eq!(res.status(), reqwest::StatusCode::BAD_REQUEST);
    assert!(common::error_message(res)
        .await
        .contains("no external command named \"sh\""));
}

#[tokio::test]
async fn annotators_are_refused_and_choices_the_server_lacks_are_rejected() {
    let app = TestApp::spawn_with_jobs(PipelineSettings::default()).await;
    app.add_user("ann", Role::Annotator).await;
    demo_project(&app).await;
    app.add_lead("lead", "demo").await;
    let ann = app.logged_in("ann").await;
    let fields = [
        ("project", "demo"),
        ("retriever", "bm25"),
        ("k", "10"),
        ("scorer", "bm25"),
        ("system", "x"),
        ("role", "pooled"),
    ];
    let res = start(&app, &ann, &fields).await;
    assert_eq!(res.status(), reqwest::StatusCode::FORBIDDEN);
    for endpoint in ["/api/pipeline/options", "/api/pipeline/jobs"] {
        let res = ann
            .post(app.url(endpoint))
            .form(&[("project", "demo")])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), reqwest::StatusCode::FORBIDDEN, "{endpoint}");
    }
    let jobs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(jobs, 0, "a refused start records no job");

    let lead = app.logged_in("lead").await;
    let mut hybrid = fields;
    hybrid[1] = ("retriever", "hybrid");
    let res = start(&app, &lead, &hybrid).await;
    assert_eq!(res.status(), reqwest::StatusCode::BAD_REQUEST);
    assert!(common::error_message(res)
        .await
        .contains("hybrid retriever is not set up"));
    let mut trained = fields.to_vec();
    trained[3] = ("scorer", "trained");
    trained.push(("model", "/etc/passwd"));
    let res = start(&app, &lead, &trained).await;
    assert_eq!(res.status(), reqwest::StatusCode::BAD_REQUEST);
}

/// Issue 13 #11: a running job is cancelled from the page (its external command killed, nothing
/// imported), a queued one at once; a job past the server's time limit is stopped; at most
/// `MAX_WAITING` jobs wait or run; each start, cancel and end is in the audit trail.
#[tokio::test]
async fn jobs_are_cancelled_stopped_at_their_time_limit_and_queued_within_bounds() {
    let mut settings =
        PipelineSettings::from_options(&["hang=sleep 600".to_owned()], &[], None).unwrap();
    settings.job_timeout = Some(Duration::from_secs(3));
    let app = TestApp::spawn_with_jobs(settings).await;
    demo_project(&app).await;
    app.add_lead("lead", "demo").await;
    let lead = app.logged_in("lead").await;
    let hang = |system: &str| {
        [
            ("project", "demo".to_owned()),
            ("retriever", "bm25".to_owned()),
            ("k", "5".to_owned()),
            ("scorer", "external".to_owned()),
            ("command", "hang".to_owned()),
            ("system", system.to_owned()),
            ("role", "pooled".to_owned()),
        ]
    };
    let begin = |system: &str| {
        let (lead, url, form) = (lead.clone(), app.url("/api/pipeline/start"), hang(system));
        async move { lead.post(url).form(&form).send().await.unwrap() }
    };
    // pipeline/cancel or pipeline/job of one job.
    let call = |endpoint: &str, id: i64| {
        let (lead, url) = (lead.clone(), app.url(&format!("/api/pipeline/{endpoint}")));
        async move {
            lead.post(url)
                .form(&[("project", "demo"), ("id", &id.to_string())])
                .send()
                .await
                .unwrap()
        }
    };
    let cancel = |id: i64| call("cancel", id);
    let status = |id: i64| async move { call("job", id).await.json::<JobView>().await.unwrap() };
    // The first job runs (its command never answers); the queue fills up behind it.
    let first: JobView = begin("h0").await.json().await.unwrap();
    for _ in 0..100 {
        if status(first.id).await.status == "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut queued = Vec::new();
    for i in 1..store::jobs::MAX_WAITING {
        let res = begin(&format!("h{i}")).await;
        assert!(
            res.status().is_success(),
            "{}",
            common::error_message(res).await
        );
        queued.push(res.json::<JobView>().await.unwrap().id);
    }
    let res = begin("one-too-many").await;
    assert_eq!(res.status(), reqwest::StatusCode::CONFLICT);
    assert!(common::error_message(res)
        .await
        .contains("job queue is full"));
    // A queued job is cancelled at once; an ended one cannot be.
    let last = *queued.last().unwrap();
    let view: JobView = cancel(last).await.json().await.unwrap();
    assert_eq!(view.status, "cancelled");
    assert_eq!(cancel(last).await.status(), reqwest::StatusCode::CONFLICT);
    // The running one stops within a couple of seconds: its `sleep 600` is killed.
    let view: JobView = cancel(first.id).await.json().await.unwrap();
    assert!(view.cancelling || view.status == "cancelled", "{view:?}");
    let ended = wait(&app, &lead, first.id).await;
    assert_eq!(ended.status, "cancelled", "{ended:?}");
    assert_eq!(
        ended.message.as_deref(),
        Some("cancelled by a lead after 0 of 40 claims")
    );
    // The next queued job runs into the time limit (3 s here).
    let next = wait(&app, &lead, queued[0]).await;
    assert_eq!(next.status, "failed", "{next:?}");
    assert!(
        next.message
            .as_deref()
            .unwrap_or_default()
            .starts_with("stopped after 3 seconds, the server's limit for a job"),
        "{next:?}"
    );
    // The rest are cancelled, the one the worker may have taken by now as well: the test ends
    // with no job running.
    for id in &queued[1..queued.len() - 1] {
        cancel(*id).await;
        let ended = wait(&app, &lead, *id).await;
        assert_eq!(ended.status, "cancelled", "{ended:?}");
    }
    let systems: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM systems")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(systems, 0, "a stopped job imports nothing");
    let audit: Vec<(String, String)> = sqlx::query_as(
        "SELECT action, entity_id FROM audit_events WHERE entity = 'job' AND entity_id IN ($1, $2, $3) ORDER BY id",
    )
    .bind(first.id.to_string())
    .bind(queued[0].to_string())
    .bind(last.to_string())
    .fetch_all(&app.db)
    .await
    .unwrap();
    let (a, b, c) = (
        first.id.to_string(),
        queued[0].to_string(),
        last.to_string(),
    );
    let expected: Vec<(String, String)> = [
        ("job-start", &a),
        ("job-start", &b),
        ("job-start", &c),
        ("job-cancel", &c),
        ("job-cancel", &a),
        ("job-cancelled", &a),
        ("job-failed", &b),
    ]
    .into_iter()
    .map(|(x, y)| (x.to_owned(), y.clone()))
    .collect();
    assert_eq!(audit, expected);
}

/// A server stopped while a job's external command runs (its runtime dropped, as at the end of
/// `claimpool serve`) stops at once and leaves no command behind: the command is killed, not
/// waited for. Before, the runtime waited for the job's thread, that is for the command's end
/// (here ten minutes; it hung a CI run).
#[test]
fn a_server_stopped_during_a_job_kills_its_command_and_does_not_wait_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let hang = format!(
        "hang=sh -c 'echo $$ > {}; exec sleep 600'",
        pid_file.display()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let pid: String = runtime.block_on(async {
        let settings = PipelineSettings::from_options(&[hang], &[], None).unwrap();
        let app = TestApp::spawn_with_jobs(settings).await;
        demo_project(&app).await;
        app.add_lead("lead", "demo").await;
        let lead = app.logged_in("lead").await;
        let fields = [
            ("project", "demo"),
            ("retriever", "bm25"),
            ("k", "5"),
            ("scorer", "external"),
            ("command", "hang"),
            ("system", "h"),
            ("role", "pooled"),
        ];
        let res = start(&app, &lead, &fields).await;
        assert!(
            res.status().is_success(),
            "{}",
            common::error_message(res).await
        );
        for _ in 0..1200 {
            match std::fs::read_to_string(&pid_file) {
                Ok(pid) if pid.ends_with('\n') => return pid.trim().to_owned(),
                _ => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
        panic!("the job's command did not start in a minute");
    });
    let alive = || {
        std::process::Command::new("kill")
            .args(["-0", &pid])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success()
    };
    assert!(alive(), "the command runs");
    let stopping = std::time::Instant::now();
    drop(runtime);
    assert!(
        stopping.elapsed() < Duration::from_secs(60),
        "the runtime waited {:?} for the job",
        stopping.elapsed()
    );
    assert!(!alive(), "the job's command {pid} outlived the server");
}
