//! Run imports write on a connection of their own with SQLite's foreign-key checks off (the
//! import resolves every key itself): these tests check that what they write still satisfies
//! every foreign key, that the pool's connections keep the checks, and that an import that
//! cannot be checked that way (no such project, no such user, a file given twice) writes
//! nothing.

use crate::common;

use app::domain::formats::RunReadOptions;
use app::domain::pool::Role as SystemRole;
use commands::import::{RunImport, SystemSpec};
use std::path::{Path, PathBuf};
use store::Db;

/// A project with documents 1–3 and claims 10 and 11.
async fn project(db: &Db, dir: &Path) -> i64 {
    let project = store::projects::create(db, "p", "", None).await.unwrap();
    let corpus = dir.join("corpus.jsonl");
    std::fs::write(
        &corpus,
        (1..=3)
            .map(|d| format!("{{\"doc_id\": {d}, \"title\": \"T{d}\", \"abstract\": [\"S.\"]}}\n"))
            .collect::<String>(),
    )
    .unwrap();
    commands::import::corpus(
        db,
        &crate::common::operator_lead(db, project).await,
        &corpus,
        None,
    )
    .await
    .unwrap();
    let claims = dir.join("claims.jsonl");
    std::fs::write(
        &claims,
        "{\"id\": 10, \"claim\": \"A.\"}\n{\"id\": 11, \"claim\": \"B.\"}\n",
    )
    .unwrap();
    commands::import::claims(
        db,
        &crate::common::operator_lead(db, project).await,
        &claims,
    )
    .await
    .unwrap();
    project
}

/// A canonical run naming two systems, with one pair of a document not in the corpus.
fn run_file(dir: &Path) -> PathBuf {
    let path = dir.join("run.jsonl");
    std::fs::write(
        &path,
        "{\"system\": \"a\", \"claim_id\": 10, \"doc_id\": 2, \"p_support\": 0.7, \"p_contradict\": 0.25, \"rank\": 1}\n\
         {\"system\": \"a\", \"claim_id\": 10, \"doc_id\": 9, \"p_support\": 0.5, \"p_contradict\": 0.5, \"rank\": 2}\n\
         {\"system\": \"a\", \"claim_id\": 11, \"doc_id\": 1, \"p_support\": 0.125, \"p_contradict\": 0.5}\n\
         {\"system\": \"b\", \"claim_id\": 11, \"doc_id\": 3, \"score\": 4.5, \"rank\": 7}\n",
    )
    .unwrap();
    path
}

fn spec(path: &Path) -> RunImport {
    RunImport {
        path: path.to_owned(),
        format: None,
        options: RunReadOptions::default(),
        system: SystemSpec {
            name: None,
            role: SystemRole::Pooled,
            description: String::new(),
            negative_sampling_ratio: None,
        },
        allow_missing_docs: true,
    }
}

async fn counts(db: &Db) -> (i64, i64, i64) {
    sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM imports WHERE kind = 'run'), (SELECT COUNT(*) FROM systems),
                (SELECT COUNT(*) FROM predictions)",
    )
    .fetch_one(db)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_run_import_satisfies_every_foreign_key_and_the_pool_keeps_checking_them() {
    let app = common::TestApp::spawn().await;
    let db = &app.db;
    let project = project(db, app.dir.path()).await;
    let run = run_file(app.dir.path());
    let report = commands::import::run(
        db,
        &crate::common::operator_lead(db, project).await,
        spec(&run),
    )
    .await
    .unwrap();
    assert_eq!(
        (report.rows, report.missing_docs, report.systems),
        (3, 1, vec!["a".to_owned(), "b".to_owned()])
    );
    let stored: Vec<(String, String, String, f64, Option<i64>)> = sqlx::query_as(
        "SELECT s.name, c.claim_id, d.doc_id, p.confidence, p.retrieval_rank
         FROM predictions p JOIN systems s ON s.id = p.system_id
         JOIN claims c ON c.id = p.claim_id JOIN documents d ON d.id = p.doc_id
         WHERE s.project_id = $1 AND c.project_id = $2 AND d.project_id = $3
         ORDER BY s.name, c.claim_id, d.doc_id",
    )
    .bind(project)
    .bind(project)
    .bind(project)
    .fetch_all(db)
    .await
    .unwrap();
    let row = |s: &str, c: &str, d: &str, conf: f64, rank: Option<i64>| {
        (s.to_owned(), c.to_owned(), d.to_owned(), conf, rank)
    };
    assert_eq!(
        stored,
        vec![
            row("a", "10", "2", 0.7, Some(1)),
            row("a", "11", "1", 0.5, None),
            row("b", "11", "3", 4.5, Some(7)),
        ]
    );
    if common::postgres::tests_on_postgres() {
        // The import skipped PostgreSQL's per-row checks (the test cluster's role may): every
        // key holds all the same, and every connection of the pool still checks.
        every_foreign_key_holds_on_postgres(db).await;
        let mut held = Vec::new();
        for _ in 0..db.options().get_max_connections() {
            let mut conn = db.acquire().await.unwrap();
            let role: String =
                sqlx::query_scalar("SELECT current_setting('session_replication_role')")
                    .fetch_one(&mut *conn)
                    .await
                    .unwrap();
            assert_eq!(role, "origin");
            held.push(conn);
        }
        drop(held);
        refuses_a_prediction_of_no_system(db).await;
        // The check finds a key that does not hold: a row written with the checks skipped.
        let mut conn = db.acquire().await.unwrap().detach();
        sqlx::raw_sql(
            "SET session_replication_role = replica;
             INSERT INTO predictions (system_id, claim_id, doc_id, confidence) VALUES (999, 1, 1, 0.5)",
        )
        .execute(&mut conn)
        .await
        .unwrap();
        let found = foreign_key_violation(db)
            .await
            .expect("the orphan row is found");
        assert!(
            found.starts_with("predictions.predictions_system_id_fkey"),
            "{found}"
        );
        return;
    }
    let violations: Vec<(String, Option<i64>, String, i64)> =
        sqlx::query_as("PRAGMA foreign_key_check")
            .fetch_all(db)
            .await
            .unwrap();
    assert!(violations.is_empty(), "{violations:?}");
    // Every connection of the pool still checks foreign keys: hold as many as it has at once.
    let mut held = Vec::new();
    for _ in 0..db.options().get_max_connections() {
        let mut conn = db.acquire().await.unwrap();
        let on: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        assert_eq!(on, 1);
        held.push(conn);
    }
    drop(held);
    refuses_a_prediction_of_no_system(db).await;
}

/// A prediction of a system that does not exist is refused.
async fn refuses_a_prediction_of_no_system(db: &Db) {
    let err = sqlx::query(
        "INSERT INTO predictions (system_id, claim_id, doc_id, confidence) VALUES (999, 1, 1, 0.5)",
    )
    .execute(db)
    .await
    .unwrap_err();
    assert!(
        err.to_string().to_lowercase().contains("foreign key"),
        "{err}"
    );
}

/// Panics unless every foreign key holds on PostgreSQL.
async fn every_foreign_key_holds_on_postgres(db: &Db) {
    if let Some(violation) = foreign_key_violation(db).await {
        panic!("{violation}");
    }
}

/// PostgreSQL's `PRAGMA foreign_key_check`: every foreign key of the schema dropped and added
/// again (adding one checks every row), in a transaction rolled back after; the first that
/// does not hold.
async fn foreign_key_violation(db: &Db) -> Option<String> {
    let keys: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT conrelid::regclass::text, conname::text, pg_get_constraintdef(oid)
         FROM pg_constraint WHERE contype = 'f' ORDER BY 1, 2",
    )
    .fetch_all(db)
    .await
    .unwrap();
    assert!(keys.len() > 20, "{keys:?}");
    let mut tx = db.begin().await.unwrap();
    for (table, name, definition) in &keys {
        let added = sqlx::query(&format!(
            "ALTER TABLE {table} DROP CONSTRAINT {name}, ADD CONSTRAINT {name} {definition}"
        ))
        .execute(&mut *tx)
        .await;
        if let Err(e) = added {
            return Some(format!("{table}.{name} ({definition}): {e}"));
        }
    }
    tx.rollback().await.unwrap();
    None
}

#[tokio::test]
async fn on_postgres_a_role_that_may_not_skip_key_checks_imports_with_them() {
    if !common::postgres::tests_on_postgres() {
        return;
    }
    let Some(url) = common::postgres::fresh_database_of_plain_role() else {
        return;
    };
    let db = store::db::connect(&url.parse().unwrap()).await.unwrap();
    let may: bool =
        sqlx::query_scalar("SELECT has_parameter_privilege('session_replication_role', 'SET')")
            .fetch_one(&db)
            .await
            .unwrap();
    assert!(!may, "the role should not be allowed to skip the checks");
    let dir = tempfile::tempdir().unwrap();
    let project = project(&db, dir.path()).await;
    let run = run_file(dir.path());
    let report = commands::import::run(
        &db,
        &crate::common::operator_lead(&db, project).await,
        spec(&run),
    )
    .await
    .unwrap();
    assert_eq!((report.rows, report.systems.len()), (3, 2));
    assert_eq!(counts(&db).await, (1, 2, 3));
    every_foreign_key_holds_on_postgres(&db).await;
    refuses_a_prediction_of_no_system(&db).await;
}

#[tokio::test]
async fn a_run_import_that_its_own_checks_refuse_writes_nothing() {
    let app = common::TestApp::spawn().await;
    let db = &app.db;
    let project = project(db, app.dir.path()).await;
    let run = run_file(app.dir.path());
    // The writer checks what the foreign keys it skips would have: the project and the actor
    // exist (a lead's proof names both; the store checks them again).
    let err = store::import::RunWriter::open(db, project + 1, None)
        .await
        .err()
        .expect("no such project")
        .to_string();
    assert_eq!(err, format!("not found: project #{}", project + 1));
    let err = store::import::RunWriter::open(db, project, Some(4242))
        .await
        .err()
        .expect("no such user")
        .to_string();
    assert_eq!(err, "not found: user #4242");
    assert_eq!(counts(db).await, (0, 0, 0));
    commands::import::run(
        db,
        &crate::common::operator_lead(db, project).await,
        spec(&run),
    )
    .await
    .unwrap();
    assert_eq!(counts(db).await, (1, 2, 3));
    let err = commands::import::run(
        db,
        &crate::common::operator_lead(db, project).await,
        spec(&run),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("imported into the project already"), "{err}");
    assert_eq!(counts(db).await, (1, 2, 3));
    // The write lock is free again: another writer goes through at once.
    sqlx::query("UPDATE projects SET description = 'x' WHERE id = $1")
        .bind(project)
        .execute(db)
        .await
        .unwrap();
}

/// A run's last line is bad after more than one chunk (16,384 predictions) was written: the
/// error names the line, and nothing of the run remains or was ever visible.
#[tokio::test]
async fn a_run_refused_at_its_last_line_after_written_chunks_leaves_nothing() {
    let app = common::TestApp::spawn().await;
    let db = &app.db;
    let project = project(db, app.dir.path()).await;
    let path = app.dir.path().join("long.jsonl");
    let mut text = String::new();
    let systems = 4_000;
    for s in 0..systems {
        for claim in [10, 11] {
            for doc in 1..=3 {
                text.push_str(&format!(
                    "{{\"system\": \"s{s}\", \"claim_id\": {claim}, \"doc_id\": {doc}, \"score\": {s}}}\n"
                ));
            }
        }
    }
    text.push_str("{\"system\": \"s0\", \"claim_id\": 12, \"doc_id\": 1, \"score\": 1}\n");
    std::fs::write(&path, text).unwrap();
    let mut import = spec(&path);
    import.allow_missing_docs = false;
    let err = commands::import::run(
        db,
        &crate::common::operator_lead(db, project).await,
        import.clone(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(&format!(
            "long.jsonl:{}: field \"claim_id\": claim 12 is not in the project",
            systems * 6 + 1
        )),
        "{err}"
    );
    assert_eq!(counts(db).await, (0, 0, 0));
    // Without the bad line the same run imports, in several chunks.
    let text = std::fs::read_to_string(&path).unwrap();
    let good: String = text
        .lines()
        .take(systems * 6)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, good).unwrap();
    let report =
        commands::import::run(db, &crate::common::operator_lead(db, project).await, import)
            .await
            .unwrap();
    assert_eq!(report.rows, (systems * 6) as u64);
    assert_eq!(counts(db).await, (1, systems as i64, (systems * 6) as i64));
    let writing: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM imports WHERE state <> 'done' OR lock_token IS NOT NULL",
    )
    .fetch_one(db)
    .await
    .unwrap();
    assert_eq!(writing, 0);
}

/// A multipart upload of `file` (named `run.jsonl`) with these form fields.
async fn upload(
    app: &common::TestApp,
    client: &reqwest::Client,
    fields: &[(&'static str, String)],
    file: Vec<u8>,
) -> reqwest::Response {
    let mut form = reqwest::multipart::Form::new();
    for (name, value) in fields {
        form = form.text(*name, value.clone());
    }
    form = form.part(
        "file",
        reqwest::multipart::Part::bytes(file).file_name("run.jsonl"),
    );
    client
        .post(app.url("/api/lead/runs/upload"))
        .multipart(form)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn browser_uploads_are_bounded_and_an_oversized_one_writes_nothing() {
    let app = common::TestApp::spawn_with_options_and_jobs(server::http::ServeOptions {
        limits: app::state::UploadLimits {
            max_file_bytes: 4096,
            max_decompressed_bytes: 64 * 1024,
            max_line_bytes: 512,
            max_sentences: 8,
            max_field_bytes: 64,
        },
        ..Default::default()
    })
    .await;
    project(&app.db, app.dir.path()).await;
    app.add_lead("lead", "p").await;
    let lead = app.logged_in("lead").await;
    let line = "{\"claim_id\": 10, \"doc_id\": 1, \"predicted_label\": \"SUPPORT\", \"p_support\": 0.9, \"p_contradict\": 0.0}\n";
    let fields = |description: &str| {
        vec![
            ("project", "p".to_owned()),
            ("system", "s1".to_owned()),
            ("role", "pooled".to_owned()),
            ("description", description.to_owned()),
        ]
    };
    // The upload queues a job (issue 35, F9); its end.
    let job = |res: reqwest::Response| {
        let (app, lead) = (&app, &lead);
        async move {
            assert!(
                res.status().is_success(),
                "{}",
                common::error_message(res).await
            );
            let job: app::api::imports::JobRow = res.json().await.unwrap();
            app.wait_for_job(
                lead,
                "/api/lead/job",
                "p",
                job.id,
                app::api::imports::JobRow::finished,
            )
            .await
        }
    };
    // Within the limits: imported.
    let res = upload(&app, &lead, &fields("small"), line.as_bytes().to_vec()).await;
    let done = job(res).await;
    assert_eq!(done.status, "done", "{:?}", done.message);
    let count = |sql: &'static str| {
        let db = app.db.clone();
        async move {
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(&db)
                .await
                .unwrap()
        }
    };
    let (predictions, systems) = (
        count("SELECT COUNT(*) FROM predictions").await,
        count("SELECT COUNT(*) FROM systems").await,
    );
    // A file over the limit: refused, naming the limit, nothing written.
    let big = line.repeat(4096 / line.len() + 2).replace("s1", "s2");
    let mut f = fields("big");
    f[1].1 = "s2".to_owned();
    let res = upload(&app, &lead, &f, big.into_bytes()).await;
    assert_eq!(res.status(), 400);
    let text = common::error_message(res).await;
    assert!(text.contains("upload limit of 4 KiB"), "{text}");
    // A field over the limit: refused.
    let mut f = fields(&"x".repeat(65));
    f[1].1 = "s3".to_owned();
    let res = upload(&app, &lead, &f, line.as_bytes().to_vec()).await;
    assert_eq!(res.status(), 400);
    let text = common::error_message(res).await;
    assert!(
        text.contains("field description: longer than 64 bytes"),
        "{text}"
    );
    // A small gzip that decompresses past the limit (the audit's 196 KB that stored 190 MB),
    // a line past the line limit, a prediction listing too many sentences: each refused with
    // the limit and the line.
    let gzip = |text: &str| {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(text.as_bytes()).unwrap();
        gz.finish().unwrap()
    };
    let mut blank_then_line = "\n".repeat(70 * 1024);
    blank_then_line.push_str(line);
    let cases = [
        (
            gzip(&blank_then_line),
            "run.jsonl:65537: read error: the file holds more than 64 KiB (decompressed), the limit of this server",
        ),
        (
            format!("{line}{{\"claim_id\": 10, \"doc_id\": 2, \"p_support\": 0.5, \"p_contradict\": 0.0, \"description\": \"{}\"}}\n", "y".repeat(600)).into_bytes(),
            "run.jsonl:2: the line is longer than 512 bytes, the limit of this server",
        ),
        (
            format!("{line}{{\"claim_id\": 10, \"doc_id\": 2, \"p_support\": 0.5, \"p_contradict\": 0.0, \"sentences\": [0,1,2,3,4,5,6,7,8]}}\n").into_bytes(),
            "run.jsonl:2: field \"sentences\": 9 predicted sentences; this server takes at most 8 per prediction",
        ),
    ];
    for (i, (file, expected)) in cases.into_iter().enumerate() {
        let mut f = fields("limits");
        f[1].1 = format!("limited-{i}");
        let res = upload(&app, &lead, &f, file).await;
        let ended = job(res).await;
        let text = ended.message.unwrap_or_default();
        assert_eq!(ended.status, "failed", "case {i}: {text}");
        assert!(text.contains(expected), "case {i}: {text}");
    }
    assert_eq!(count("SELECT COUNT(*) FROM predictions").await, predictions);
    assert_eq!(count("SELECT COUNT(*) FROM systems").await, systems);
}
