//! Probes of issue 35's audit on uploads and what they import: a form's project is checked
//! before anything else of it is read, and its text fields are bounded (F6); the server's read
//! limits bound every import kind (F7); a full job queue refuses an upload before its file is
//! received, and a failed upload gives its place back (F8); a run upload is a job in the queue
//! (F9); a claim search's length is bounded (F13); messages name uploaded files, never the
//! server's directories, and ids with control characters are refused (F14).
//!
//! The floods are written by hand on a socket (chunked transfer encoding), so the test knows
//! how much of a body the server had been sent when it answered.

use crate::common::{self, TestApp};
use app::api::imports::JobRow;
use app::domain::account::{ProjectRole, Role};
use app::state::UploadLimits;
use server::http::ServeOptions;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use store::jobs;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedReadHalf;
use tokio::sync::mpsc;

const BOUNDARY: &str = "claimpool-test-boundary";

/// A text field of a multipart body.
fn text_part(name: &str, value: &str) -> Vec<u8> {
    format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
        .into_bytes()
}

/// The head of a file field (its bytes follow).
fn file_head(file_name: &str) -> Vec<u8> {
    format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes()
}

/// The end of a multipart body after a file's bytes.
fn closing() -> Vec<u8> {
    format!("\r\n--{BOUNDARY}--\r\n").into_bytes()
}

/// The session cookie of `name`, logged in with the test password.
async fn session_cookie(app: &TestApp, name: &str) -> String {
    let client = common::client_builder().build().unwrap();
    let res = app.login(&client, name, common::PASSWORD).await;
    assert!(res.status().is_success(), "login of {name}");
    res.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("claimpool_session="))
        .and_then(|v| v.split(';').next())
        .expect("a session cookie")
        .to_owned()
}

/// A multipart POST to `/api/<endpoint>` written by hand: its body goes out in the chunks the
/// test sends, and ends only when the test says so.
struct RawUpload {
    chunks: Option<mpsc::Sender<Vec<u8>>>,
    reader: OwnedReadHalf,
    /// Body bytes written to the socket so far.
    sent: Arc<AtomicU64>,
    writer: tokio::task::JoinHandle<()>,
}

impl RawUpload {
    async fn start(app: &TestApp, endpoint: &str, cookie: &str) -> RawUpload {
        let stream = tokio::net::TcpStream::connect(app.addr).await.unwrap();
        let (reader, mut write) = stream.into_split();
        let head = format!(
            "POST /api/{endpoint} HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://{addr}\r\nCookie: {cookie}\r\nAccept: application/json\r\nContent-Type: multipart/form-data; boundary={BOUNDARY}\r\nTransfer-Encoding: chunked\r\n\r\n",
            addr = app.addr
        );
        write.write_all(head.as_bytes()).await.unwrap();
        // One chunk in flight at most: the body is produced as fast as the server reads it.
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(1);
        let sent = Arc::new(AtomicU64::new(0));
        let counter = sent.clone();
        let writer = tokio::spawn(async move {
            while let Some(chunk) = rx.recv().await {
                let len = chunk.len();
                if len == 0 {
                    continue; // an empty chunk would end the body
                }
                let framed =
                    [format!("{len:x}\r\n").into_bytes(), chunk, b"\r\n".to_vec()].concat();
                if write.write_all(&framed).await.is_err() {
                    return; // the server closed the connection
                }
                counter.fetch_add(len as u64, Ordering::SeqCst);
            }
            let _ = write.write_all(b"0\r\n\r\n").await;
            // Dropping the half would shut the socket's writing down, which hyper reads as the
            // client leaving before its answer: kept until the upload is dropped.
            std::future::pending::<()>().await;
            drop(write);
        });
        RawUpload {
            chunks: Some(tx),
            reader,
            sent,
            writer,
        }
    }

    /// Queues `bytes` of the body; false once the connection is gone.
    async fn send(&self, bytes: Vec<u8>) -> bool {
        match &self.chunks {
            Some(tx) => tx.send(bytes).await.is_ok(),
            None => false,
        }
    }

    /// Ends the body after what was sent.
    fn end(&mut self) {
        self.chunks = None;
    }

    /// The answer (status and body), if it comes within `within`.
    async fn answer(&mut self, within: Duration) -> Option<(u16, String)> {
        match tokio::time::timeout(within, read_answer(&mut self.reader)).await {
            Ok(Ok(answer)) => Some(answer),
            Ok(Err(e)) => {
                eprintln!("no answer: {e}");
                None
            }
            Err(_) => {
                eprintln!("no answer within {within:?}");
                None
            }
        }
    }
}

impl Drop for RawUpload {
    fn drop(&mut self) {
        self.writer.abort();
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads one HTTP/1.1 response: its status and body (by content-length, or chunked).
async fn read_answer(reader: &mut OwnedReadHalf) -> std::io::Result<(u16, String)> {
    let mut buf = Vec::new();
    let mut piece = [0u8; 16 * 1024];
    let (head, body_at) = loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            break (String::from_utf8_lossy(&buf[..end]).to_string(), end + 4);
        }
        let n = reader.read(&mut piece).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&piece[..n]);
    };
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    };
    let mut body = buf.split_off(body_at);
    if let Some(len) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        while body.len() < len {
            let n = reader.read(&mut piece).await?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&piece[..n]);
        }
        body.truncate(len);
    } else if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        while find(&body, b"0\r\n\r\n").is_none() {
            let n = reader.read(&mut piece).await?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&piece[..n]);
        }
        let mut decoded = Vec::new();
        let mut rest = &body[..];
        while let Some(line_end) = find(rest, b"\r\n") {
            let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..line_end]).trim(), 16)
                .unwrap_or(0);
            if size == 0 {
                break;
            }
            let start = line_end + 2;
            decoded.extend_from_slice(&rest[start..(start + size).min(rest.len())]);
            rest = &rest[(start + size + 2).min(rest.len())..];
        }
        body = decoded;
    }
    Ok((status, String::from_utf8_lossy(&body).to_string()))
}

/// The message of an error answer's body.
fn message(body: &str) -> String {
    serde_json::from_str::<app::error::ApiError>(body)
        .map(|e| e.to_string())
        .unwrap_or_else(|_| body.to_owned())
}

/// Sends `head` and then up to 2,000 text fields of about 64 KiB (125 MiB), as fast as the
/// server reads them, never ending the body: the answer, if it comes within 30 s, and how many
/// body bytes the server had been sent by then.
async fn flood(
    app: &TestApp,
    cookie: &str,
    head: Vec<u8>,
    tail: Vec<u8>,
) -> (Option<(u16, String)>, u64) {
    let mut upload = RawUpload::start(app, "lead/import/upload", cookie).await;
    let value = "x".repeat(64 * 1024 - 64);
    let chunks = upload.chunks.clone().expect("open");
    let producer = tokio::spawn(async move {
        if chunks.send(head).await.is_err() {
            return;
        }
        for i in 0..2_000 {
            if chunks
                .send(text_part(&format!("f{i}"), &value))
                .await
                .is_err()
            {
                return;
            }
        }
        let _ = chunks.send(tail).await;
        // The body never ends: the sender is kept until the test ends.
        std::future::pending::<()>().await;
    });
    let answer = upload.answer(Duration::from_secs(30)).await;
    let sent = upload.sent.load(Ordering::SeqCst);
    producer.abort();
    (answer, sent)
}

/// Far below the 125 MiB a flood offers; room for the sockets' buffers.
const READ_AT_MOST: u64 = 24 * 1024 * 1024;

#[tokio::test]
async fn a_form_is_refused_before_its_fields_are_read() {
    let app = TestApp::spawn().await;
    for name in ["p", "q"] {
        store::projects::create(&app.db, name, "", None)
            .await
            .unwrap();
    }
    app.add_lead("lead", "p").await;
    app.add_lead("other", "q").await;
    let other = session_cookie(&app, "other").await;
    let lead = session_cookie(&app, "lead").await;
    let cases = [
        // The audit's case: a lead of another project, the project named first.
        (
            &other,
            text_part("project", "p"),
            Vec::new(),
            403,
            String::new(),
        ),
        // Fields before the project: refused at the first, before the caller's role is known.
        (
            &other,
            Vec::new(),
            text_part("project", "p"),
            400,
            "names its project first".to_owned(),
        ),
        // The project's own lead: fields past the bound are refused.
        (
            &lead,
            text_part("project", "p"),
            Vec::new(),
            400,
            format!("more than {} fields", app::api::upload::MAX_FORM_FIELDS),
        ),
    ];
    for (i, (cookie, head, tail, status, expected)) in cases.into_iter().enumerate() {
        let (answer, sent) = flood(&app, cookie, head, tail).await;
        let (got, body) = answer.unwrap_or_else(|| {
            panic!("case {i}: no answer within 30 s ({sent} bytes of the body read)")
        });
        let text = message(&body);
        eprintln!("case {i}: {got} after {sent} bytes: {text}");
        assert_eq!(got, status, "case {i}: {text}");
        assert!(text.contains(&expected), "case {i}: {text}");
        assert!(sent < READ_AT_MOST, "case {i}: {sent} bytes read");
    }
    assert_eq!(jobs::held(&app.db), 0);
}

/// Queues `n` jobs directly (no worker runs them).
async fn queue_jobs(app: &TestApp, project: i64, n: usize) -> Vec<i64> {
    let mut ids = Vec::new();
    for _ in 0..n {
        let slot = jobs::reserve(&app.db).await.expect("a place");
        ids.push(
            jobs::create(
                &app.db,
                slot,
                jobs::NewJob {
                    project_id: project,
                    kind: "import",
                    params: &serde_json::json!({}),
                    created_by: None,
                    upload_id: None,
                },
            )
            .await
            .unwrap(),
        );
    }
    ids
}

async fn waiting(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')")
        .fetch_one(&app.db)
        .await
        .unwrap()
}

/// The head of a run upload to `p`, up to its file's first bytes.
fn run_upload_head(system: &str) -> Vec<u8> {
    [
        text_part("project", "p"),
        text_part("kind", "run"),
        text_part("system", system),
        file_head("run.jsonl"),
        b"{\"claim_id\": 10, \"doc_id\": 1, ".to_vec(),
    ]
    .concat()
}

#[tokio::test]
async fn a_full_queue_refuses_an_upload_before_its_file_and_a_failed_upload_gives_its_place_back() {
    // No job worker: queued jobs stay queued.
    let app = TestApp::spawn_with(ServeOptions {
        limits: UploadLimits {
            max_file_bytes: 1 << 20,
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let project = store::projects::create(&app.db, "p", "", None)
        .await
        .unwrap();
    app.add_lead("lead", "p").await;
    let cookie = session_cookie(&app, "lead").await;
    let queued = queue_jobs(&app, project, (jobs::MAX_WAITING - 1) as usize).await;

    // Upload A holds the last place while its file is on its way.
    let mut a = RawUpload::start(&app, "lead/import/upload", &cookie).await;
    assert!(a.send(run_upload_head("a")).await);
    for _ in 0..500 {
        if jobs::held(&app.db) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(jobs::held(&app.db), 1, "upload A holds a place");

    // Upload B is refused at once, its file never ended.
    let mut b = RawUpload::start(&app, "lead/import/upload", &cookie).await;
    assert!(b.send(run_upload_head("b")).await);
    let (status, body) = b
        .answer(Duration::from_secs(20))
        .await
        .expect("B answered before its body ended");
    let text = message(&body);
    assert_eq!(status, 409, "{text}");
    assert!(text.contains("job queue is full"), "{text}");
    // So is a run upload (its body never ends either).
    let mut c = RawUpload::start(&app, "lead/runs/upload", &cookie).await;
    assert!(c.send(run_upload_head("c")).await);
    let (status, _) = c
        .answer(Duration::from_secs(20))
        .await
        .expect("answered before the body ended");
    assert_eq!(status, 409);

    // A's file ends: queued in the place it held.
    assert!(
        a.send(
            [
                b"\"p_support\": 0.9, \"p_contradict\": 0.0}\n".to_vec(),
                closing()
            ]
            .concat()
        )
        .await
    );
    a.end();
    let (status, body) = a.answer(Duration::from_secs(20)).await.expect("A answered");
    assert_eq!(status, 200, "{}", message(&body));
    let job: JobRow = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (job.status.as_str(), job.what.as_str()),
        ("queued", "run from run.jsonl")
    );
    assert_eq!(waiting(&app).await, jobs::MAX_WAITING);
    assert_eq!(jobs::held(&app.db), 0);

    // A place frees; an upload that fails (its file over the server's limit) gives it back.
    jobs::cancel(&app.db, project, queued[0], None)
        .await
        .unwrap();
    let mut d = RawUpload::start(&app, "lead/import/upload", &cookie).await;
    let chunks = d.chunks.clone().expect("open");
    let producer = tokio::spawn(async move {
        if chunks.send(run_upload_head("d")).await.is_err() {
            return;
        }
        for _ in 0..64 {
            if chunks.send(vec![b' '; 64 * 1024]).await.is_err() {
                return;
            }
        }
        std::future::pending::<()>().await;
    });
    let (status, body) = d.answer(Duration::from_secs(20)).await.expect("D answered");
    producer.abort();
    let text = message(&body);
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("upload limit of 1 MiB"), "{text}");
    assert_eq!(jobs::held(&app.db), 0);
    assert_eq!(waiting(&app).await, jobs::MAX_WAITING - 1);
    // The place is free: a whole upload is queued.
    let mut e = RawUpload::start(&app, "lead/import/upload", &cookie).await;
    assert!(
        e.send(
            [
                run_upload_head("e"),
                b"\"p_support\": 0.9, \"p_contradict\": 0.0}\n".to_vec(),
                closing()
            ]
            .concat()
        )
        .await
    );
    e.end();
    let (status, body) = e.answer(Duration::from_secs(20)).await.expect("E answered");
    assert_eq!(status, 200, "{}", message(&body));
    assert_eq!(waiting(&app).await, jobs::MAX_WAITING);
}

#[tokio::test]
async fn a_run_upload_is_a_job_in_the_queue() {
    // No job worker: the upload is queued, not imported in the request.
    let app = TestApp::spawn().await;
    let project = store::projects::create(&app.db, "p", "", None)
        .await
        .unwrap();
    app.add_lead("lead", "p").await;
    let lead = app.logged_in("lead").await;
    let upload = |system: &'static str| {
        let form = reqwest::multipart::Form::new()
            .text("project", "p")
            .text("system", system)
            .text("role", "pooled")
            .part(
                "file",
                reqwest::multipart::Part::bytes(
                    b"{\"claim_id\": 10, \"doc_id\": 1, \"p_support\": 0.9, \"p_contradict\": 0.0}\n"
                        .to_vec(),
                )
                .file_name("run.jsonl"),
            );
        lead.post(app.url("/api/lead/runs/upload"))
            .multipart(form)
            .send()
    };
    let res = upload("s1").await.unwrap();
    assert_eq!(res.status(), 200);
    let job: JobRow = res.json().await.unwrap();
    assert_eq!(
        (job.kind.as_str(), job.status.as_str(), job.what.as_str()),
        ("import", "queued", "run from run.jsonl")
    );
    let systems: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM systems")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(systems, 0, "nothing is imported in the request");
    // Under the queue's bound.
    queue_jobs(&app, project, (jobs::MAX_WAITING - 1) as usize).await;
    let res = upload("s2").await.unwrap();
    assert_eq!(res.status(), 409);
    assert!(common::error_message(res)
        .await
        .contains("job queue is full"));
}

/// `text` gzipped.
fn gzip(text: &str) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap()
}

/// A project `p` holding doc 1 and claim 10 (imported directly); its id.
async fn project_with_a_claim(app: &TestApp) -> i64 {
    let project = store::projects::create(&app.db, "p", "", None)
        .await
        .unwrap();
    let corpus = app.dir.path().join("corpus.jsonl");
    std::fs::write(
        &corpus,
        "{\"doc_id\": 1, \"title\": \"T\", \"abstract\": [\"A.\"]}\n",
    )
    .unwrap();
    commands::import::corpus(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        &corpus,
        None,
    )
    .await
    .unwrap();
    let claims = app.dir.path().join("claims.jsonl");
    std::fs::write(&claims, "{\"id\": 10, \"claim\": \"C\"}\n").unwrap();
    commands::import::claims(
        &app.db,
        &crate::common::operator_lead(&app.db, project).await,
        &claims,
    )
    .await
    .unwrap();
    project
}

/// An app with the job worker and small read limits (64 KiB decompressed, lines of 512
/// bytes), a project `p` holding doc 1 and claim 10, its lead (logged in) and annotator `ann`.
async fn limited_app() -> (TestApp, reqwest::Client) {
    let app = TestApp::spawn_with_options_and_jobs(ServeOptions {
        limits: UploadLimits {
            max_decompressed_bytes: 64 * 1024,
            max_line_bytes: 512,
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let project = project_with_a_claim(&app).await;
    app.add_lead("lead", "p").await;
    let ann = app.add_user("ann", Role::Annotator).await;
    store::projects::add_member(&app.db, project, ann, ProjectRole::Annotator, None)
        .await
        .unwrap();
    let lead = app.logged_in("lead").await;
    (app, lead)
}

/// Uploads `file` as `name` through the import form with these fields, and waits for its job
/// to end.
async fn import_job(
    app: &TestApp,
    lead: &reqwest::Client,
    fields: &[(&str, &str)],
    name: &str,
    file: Vec<u8>,
) -> JobRow {
    let mut form = reqwest::multipart::Form::new().text("project", "p");
    for (field, value) in fields {
        form = form.text(field.to_string(), value.to_string());
    }
    form = form.part(
        "file",
        reqwest::multipart::Part::bytes(file).file_name(name.to_owned()),
    );
    let res = lead
        .post(app.url("/api/lead/import/upload"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert!(
        res.status().is_success(),
        "{}",
        common::error_message(res).await
    );
    let job: JobRow = res.json().await.unwrap();
    app.wait_for_job(lead, "/api/lead/job", "p", job.id, JobRow::finished)
        .await
}

async fn count(app: &TestApp, table: &str) -> i64 {
    sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
        .fetch_one(&app.db)
        .await
        .unwrap()
}

/// An import kind's form fields, a file name, a good line and a line over 512 bytes.
type Kind = (
    &'static [(&'static str, &'static str)],
    &'static str,
    String,
    String,
);

#[tokio::test]
async fn the_servers_read_limits_bound_every_import_kind() {
    let (app, lead) = limited_app().await;
    let long = "y".repeat(600);
    // Each kind: its form fields, a file name, a good line and a line over 512 bytes.
    let kinds: [Kind; 4] = [
        (
            &[("kind", "corpus")],
            "corpus.jsonl",
            "{\"doc_id\": 2, \"title\": \"T\", \"abstract\": [\"A.\"]}".into(),
            format!("{{\"doc_id\": 3, \"title\": \"{long}\", \"abstract\": [\"A.\"]}}"),
        ),
        (
            &[("kind", "claims")],
            "claims.jsonl",
            "{\"id\": 11, \"claim\": \"C\"}".into(),
            format!("{{\"id\": 12, \"claim\": \"{long}\"}}"),
        ),
        (
            &[("kind", "run"), ("system", "r")],
            "run.jsonl",
            "{\"claim_id\": 10, \"doc_id\": 1, \"p_support\": 0.9, \"p_contradict\": 0.0}".into(),
            format!("{{\"claim_id\": 10, \"doc_id\": 1, \"p_support\": 0.9, \"p_contradict\": 0.0, \"description\": \"{long}\"}}"),
        ),
        (
            &[
                ("kind", "judgments"),
                ("annotator", "ann"),
                ("format", "qrels-labels"),
            ],
            "judgments.txt",
            "10 0 1 SUPPORT".into(),
            format!("10 0 1 SUPPORT{}", " ".repeat(600)),
        ),
    ];
    let before: Vec<i64> = {
        let mut c = Vec::new();
        for table in ["documents", "claims", "predictions", "judgments", "imports"] {
            c.push(count(&app, table).await);
        }
        c
    };
    for (fields, name, good, too_long) in kinds {
        // A small gzip that decompresses past 64 KiB (blank lines, then a good line).
        let mut blank_then_line = "\n".repeat(70 * 1024);
        blank_then_line.push_str(&good);
        blank_then_line.push('\n');
        let job = import_job(&app, &lead, fields, name, gzip(&blank_then_line)).await;
        let text = job.message.clone().unwrap_or_default();
        assert_eq!(job.status, "failed", "{name} (gzip): {text}");
        assert!(
            text.contains(&format!("{name}:65537"))
                && text.contains(
                    "the file holds more than 64 KiB (decompressed), the limit of this server"
                ),
            "{name} (gzip): {text}"
        );
        // A line past 512 bytes.
        let job = import_job(
            &app,
            &lead,
            fields,
            name,
            format!("{good}\n{too_long}\n").into_bytes(),
        )
        .await;
        let text = job.message.clone().unwrap_or_default();
        assert_eq!(job.status, "failed", "{name} (line): {text}");
        assert!(
            text.contains(&format!(
                "{name}:2: the line is longer than 512 bytes, the limit of this server"
            )),
            "{name} (line): {text}"
        );
    }
    // Nothing was written.
    let mut after = Vec::new();
    for table in ["documents", "claims", "predictions", "judgments", "imports"] {
        after.push(count(&app, table).await);
    }
    assert_eq!(after, before);
}

#[tokio::test]
async fn import_messages_name_uploads_and_ids_with_control_characters_are_refused() {
    let (app, lead) = limited_app().await;
    // The same run twice: the second is refused naming both files as uploaded.
    let run = b"{\"claim_id\": 10, \"doc_id\": 1, \"p_support\": 0.9, \"p_contradict\": 0.0}\n";
    let fields = [("kind", "run"), ("system", "r")];
    let first = import_job(&app, &lead, &fields, "first run.jsonl", run.to_vec()).await;
    assert_eq!(first.status, "done", "{:?}", first.message);
    let again = import_job(&app, &lead, &fields, "again.jsonl", run.to_vec()).await;
    let text = again.message.clone().unwrap_or_default();
    assert_eq!(again.status, "failed", "{text}");
    assert!(
        text.starts_with("again.jsonl: this file was imported into the project already"),
        "{text}"
    );
    assert!(text.contains("first_run.jsonl)"), "{text}");
    assert!(!text.contains("claimpool-upload-"), "{text}");
    assert!(
        !text.contains(&std::env::temp_dir().display().to_string()),
        "{text}"
    );

    // A doc id with a control character: refused, naming the file, the line and the field.
    let documents = count(&app, "documents").await;
    let job = import_job(
        &app,
        &lead,
        &[("kind", "corpus")],
        "corpus.jsonl",
        b"{\"doc_id\": 5, \"title\": \"T\", \"abstract\": [\"A.\"]}\n{\"doc_id\": \"a\\u0000b\", \"title\": \"T\", \"abstract\": [\"A.\"]}\n".to_vec(),
    )
    .await;
    let text = job.message.clone().unwrap_or_default();
    assert_eq!(job.status, "failed", "{text}");
    assert!(
        text.contains("corpus.jsonl:2")
            && text.contains("doc_id")
            && text.contains("control character"),
        "{text}"
    );
    assert_eq!(count(&app, "documents").await, documents);
}

#[tokio::test]
async fn a_long_claim_search_is_refused_naming_the_field() {
    let app = TestApp::spawn().await;
    project_with_a_claim(&app).await;
    app.add_lead("lead", "p").await;
    let lead = app.logged_in("lead").await;
    let search = |text: String| {
        let lead = lead.clone();
        let url = app.url("/api/lead/claims");
        async move {
            lead.post(url)
                .form(&[("project", "p"), ("search", &text), ("offset", "0")])
                .send()
                .await
                .unwrap()
        }
    };
    let res = search("x".repeat(100_000)).await;
    assert_eq!(res.status(), 400);
    let text = common::error_message(res).await;
    assert!(
        text.starts_with("search: at most 1000 characters"),
        "{text}"
    );
    // At the bound, a search is answered.
    let res = search("é".repeat(store::projects::MAX_SEARCH_CHARS)).await;
    assert_eq!(res.status(), 200);
    let res = search("C".into()).await;
    assert_eq!(res.status(), 200);
    let page: serde_json::Value = res.json().await.unwrap();
    assert_eq!(page["total"], 1);
}
