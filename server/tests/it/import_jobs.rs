//! Imports from the browser as background jobs (issue 14), over HTTP with the job worker
//! running: a lead uploads the demo corpus, claims, a run and judgments into an empty project;
//! each becomes a job that ends `done` with the counts the command line gives; a rejected file
//! fails its job with every problem and its line, writing nothing; a cancelled import writes
//! nothing; the jobs list says who started what and how it ended; annotators are refused.
//! Data: the demo sample shipped in server/demo (40 claims, 443 abstracts).

use crate::common;

use app::api::imports::JobRow;
use app::domain::account::Role;
use app::pipeline::job::PipelineSettings;
use common::TestApp;
use std::path::Path;
use std::time::Duration;

fn demo_bytes(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("demo")
            .join(name),
    )
    .unwrap()
}

/// Uploads `file` as `name` with these fields (the project first).
async fn upload(
    app: &TestApp,
    client: &reqwest::Client,
    fields: &[(&str, &str)],
    name: &str,
    file: Vec<u8>,
) -> reqwest::Response {
    let mut form = reqwest::multipart::Form::new();
    for (field, value) in fields {
        form = form.text(field.to_string(), value.to_string());
    }
    form = form.part(
        "file",
        reqwest::multipart::Part::bytes(file).file_name(name.to_owned()),
    );
    client
        .post(app.url("/api/lead/import/upload"))
        .multipart(form)
        .send()
        .await
        .unwrap()
}

async fn queued(res: reqwest::Response) -> JobRow {
    assert!(
        res.status().is_success(),
        "{}",
        common::error_message(res).await
    );
    let job: JobRow = res.json().await.unwrap();
    assert_eq!(job.kind, "import");
    job
}

/// Polls the job until it has ended.
async fn wait(app: &TestApp, client: &reqwest::Client, id: i64) -> JobRow {
    app.wait_for_job(client, "/api/lead/job", "p", id, JobRow::finished)
        .await
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&app.db).await.unwrap()
}

#[tokio::test]
async fn a_lead_imports_a_whole_project_from_the_browser_as_jobs() {
    let app = TestApp::spawn_with_jobs(PipelineSettings::default()).await;
    let project = store::projects::create(&app.db, "p", "", None)
        .await
        .unwrap();
    app.add_lead("lead", "p").await;
    let a1 = app.add_user("a1", Role::Annotator).await;
    // Judgments are a member's (issue 35): a1's final labels are imported below.
    store::projects::add_member(
        &app.db,
        project,
        a1,
        app::domain::account::ProjectRole::Annotator,
        None,
    )
    .await
    .unwrap();
    let lead = app.logged_in("lead").await;

    // The corpus, then the claims (their evidence becomes citation labels).
    let corpus = demo_bytes("corpus.jsonl");
    let job = queued(
        upload(
            &app,
            &lead,
            &[("project", "p"), ("kind", "corpus")],
            "corpus.jsonl",
            corpus.clone(),
        )
        .await,
    )
    .await;
    assert_eq!(job.what, "corpus from corpus.jsonl");
    assert_eq!(job.started_by.as_deref(), Some("lead"));
    let done = wait(&app, &lead, job.id).await;
    assert_eq!(done.status, "done", "{:?}", done.message);
    assert_eq!(
        (done.done, done.total),
        (corpus.len() as i64, Some(corpus.len() as i64))
    );
    assert_eq!(done.outcome.as_deref(), Some("443 rows"));
    assert_eq!(count(&app, "SELECT COUNT(*) FROM documents").await, 443);

    let job = queued(
        upload(
            &app,
            &lead,
            &[("project", "p"), ("kind", "claims")],
            "claims.jsonl",
            demo_bytes("claims.jsonl"),
        )
        .await,
    )
    .await;
    let done = wait(&app, &lead, job.id).await;
    assert_eq!(done.status, "done", "{:?}", done.message);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM claims").await, 40);
    let citation = count(&app, "SELECT COUNT(*) FROM final_labels").await;
    assert!(citation > 0);

    // A run with a broken line: the job fails naming the line and field; nothing is written.
    let claim_doc: (String, String) = sqlx::query_as(
        "SELECT c.claim_id, d.doc_id FROM claims c, documents d ORDER BY c.id, d.id LIMIT 1",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    let good_line = format!(
        "{{\"claim_id\": {}, \"doc_id\": {}, \"p_support\": 0.9, \"p_contradict\": 0.05}}\n",
        claim_doc.0, claim_doc.1
    );
    let broken = format!("{good_line}{{\"claim_id\": 999999, \"doc_id\": 1}}\n");
    let job = queued(
        upload(
            &app,
            &lead,
            &[
                ("project", "p"),
                ("kind", "run"),
                ("system", "broken"),
                ("role", "pooled"),
            ],
            "broken.jsonl",
            broken.into_bytes(),
        )
        .await,
    )
    .await;
    let failed = wait(&app, &lead, job.id).await;
    assert_eq!(failed.status, "failed");
    let message = failed.message.unwrap_or_default();
    assert!(message.contains("broken.jsonl:2"), "{message}");
    assert!(
        !message.contains("claimpool-upload-"),
        "no server path: {message}"
    );
    assert_eq!(count(&app, "SELECT COUNT(*) FROM systems").await, 0);

    // A good run.
    let job = queued(
        upload(
            &app,
            &lead,
            &[
                ("project", "p"),
                ("kind", "run"),
                ("system", "s1"),
                ("role", "pooled"),
            ],
            "s1.jsonl",
            good_line.clone().into_bytes(),
        )
        .await,
    )
    .await;
    let done = wait(&app, &lead, job.id).await;
    assert_eq!(done.status, "done", "{:?}", done.message);
    assert_eq!(done.outcome.as_deref(), Some("1 row, 1 system"));
    assert_eq!(count(&app, "SELECT COUNT(*) FROM predictions").await, 1);

    // Judgments need a pool: build it, then import a final label for the pooled pair.
    let project = store::projects::id_by_name(&app.db, "p").await.unwrap();
    store::pool::build(
        &app.db,
        project,
        app::domain::pool::Strategy::Confidence,
        1,
        None,
    )
    .await
    .unwrap();
    let qrels = format!("{} 0 {} SUPPORT\n", claim_doc.0, claim_doc.1);
    let already_final = count(&app, &format!(
        "SELECT COUNT(*) FROM final_labels f JOIN claims c ON c.id = f.claim_id JOIN documents d ON d.id = f.doc_id WHERE c.claim_id = '{}' AND d.doc_id = '{}'",
        claim_doc.0, claim_doc.1
    ))
    .await;
    let job = queued(
        upload(
            &app,
            &lead,
            &[
                ("project", "p"),
                ("kind", "judgments"),
                ("annotator", "a1"),
                ("stage", "final"),
            ],
            "final.qrels",
            qrels.into_bytes(),
        )
        .await,
    )
    .await;
    let done = wait(&app, &lead, job.id).await;
    if already_final == 0 {
        assert_eq!(done.status, "done", "{:?}", done.message);
        assert_eq!(
            count(&app, "SELECT COUNT(*) FROM final_labels").await,
            citation + 1
        );
    } else {
        // The pair came with citation evidence: the import is refused, naming the line.
        assert_eq!(done.status, "failed");
        assert!(done.message.unwrap_or_default().contains("final.qrels:1"));
    }

    // The jobs list: newest first, who started each and how it ended.
    let jobs: Vec<JobRow> = lead
        .post(app.url("/api/lead/jobs"))
        .form(&[("project", "p")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let statuses: Vec<&str> = jobs.iter().map(|j| j.status.as_str()).collect();
    assert_eq!(statuses.len(), 5);
    assert_eq!(&statuses[1..], ["done", "failed", "done", "done"]);
    assert!(jobs.iter().all(|j| j.started_by.as_deref() == Some("lead")));
    // The uploads' directories are gone once their jobs ended.
    for job in &jobs {
        let params: serde_json::Value = serde_json::from_str(
            &sqlx::query_scalar::<_, String>("SELECT params FROM jobs WHERE id = $1")
                .bind(job.id)
                .fetch_one(&app.db)
                .await
                .unwrap(),
        )
        .unwrap();
        let path = Path::new(params["path"].as_str().unwrap());
        assert!(!path.exists(), "{} left behind", path.display());
    }

    // An annotator cannot upload (refused before the file is read), nor list jobs.
    let annotator = app.logged_in("a1").await;
    let res = upload(
        &app,
        &annotator,
        &[("project", "p"), ("kind", "corpus")],
        "c.jsonl",
        b"{}".to_vec(),
    )
    .await;
    assert_eq!(res.status(), reqwest::StatusCode::FORBIDDEN);
    let res = annotator
        .post(app.url("/api/lead/jobs"))
        .form(&[("project", "p")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), reqwest::StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_cancelled_import_writes_nothing_and_bad_options_are_refused_at_once() {
    let app = TestApp::spawn_with_jobs(PipelineSettings::default()).await;
    store::projects::create(&app.db, "p", "", None)
        .await
        .unwrap();
    app.add_lead("lead", "p").await;
    let lead = app.logged_in("lead").await;

    // Options are checked before a job is queued.
    let res = upload(
        &app,
        &lead,
        &[("project", "p"), ("kind", "corpus"), ("format", "csv")],
        "c.jsonl",
        b"{}".to_vec(),
    )
    .await;
    assert_eq!(res.status(), reqwest::StatusCode::BAD_REQUEST);
    assert!(common::error_message(res).await.contains("csv"));
    let res = upload(
        &app,
        &lead,
        &[("project", "p"), ("kind", "pictures")],
        "c.jsonl",
        b"{}".to_vec(),
    )
    .await;
    assert_eq!(res.status(), reqwest::StatusCode::BAD_REQUEST);

    // A large corpus (about 60 MB), cancelled as soon as it runs.
    let mut corpus = Vec::new();
    let abstract_text = "An abstract sentence about a protein and a disease. ".repeat(40);
    for i in 0..30_000 {
        corpus.extend_from_slice(
            format!(
                "{{\"doc_id\": {i}, \"title\": \"T{i}\", \"abstract\": [\"{abstract_text}\"]}}\n"
            )
            .as_bytes(),
        );
    }
    let job = queued(
        upload(
            &app,
            &lead,
            &[("project", "p"), ("kind", "corpus")],
            "big.jsonl",
            corpus,
        )
        .await,
    )
    .await;
    // Cancel once it runs: the worker sees the cancel at its next tick (300 ms), while it is
    // still reading (waiting for the first progress too, a quiet machine had read the whole
    // file by the tick after: the import ended done).
    let mut cancelled = None;
    for _ in 0..2000 {
        let now: JobRow = lead
            .post(app.url("/api/lead/job"))
            .form(&[("project", "p"), ("id", &job.id.to_string())])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if now.status == "running" {
            eprintln!("cancelling at {} of {:?} bytes", now.done, now.total);
            let res = lead
                .post(app.url("/api/lead/job/cancel"))
                .form(&[("project", "p"), ("id", &job.id.to_string())])
                .send()
                .await
                .unwrap();
            assert!(
                res.status().is_success(),
                "{}",
                common::error_message(res).await
            );
            cancelled = Some(res.json::<JobRow>().await.unwrap());
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(cancelled.is_some(), "the job could not be cancelled");
    let ended = wait(&app, &lead, job.id).await;
    eprintln!("ended: {} {:?}", ended.status, ended.message);
    assert_eq!(ended.status, "cancelled", "{:?}", ended.message);
    assert!(ended
        .message
        .unwrap_or_default()
        .contains("cancelled by a lead after"));
    assert_eq!(count(&app, "SELECT COUNT(*) FROM documents").await, 0);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM document_rows").await, 0);
    assert_eq!(count(&app, "SELECT COUNT(*) FROM imports").await, 0);
}
