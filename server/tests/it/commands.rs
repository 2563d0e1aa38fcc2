//! The command layer (issue 14): every entry point acts through one typed command per action
//! (`commands`), which runs only with a proof of the caller's authority.
//!
//! - The source check: outside the commands crate (`crates/commands/`), no product code calls
//!   the store's writes of a commanded action, and only the command line's modules make an
//!   `Operator` (the shell's authority); a new entry point that bypasses the commands fails here.
//!   The app crate (pages, server functions) cannot call the store at all: it does not depend
//!   on it (issue 37), which the compiler enforces and the manifest check below keeps so.
//! - The job worker checks the starter again when a job runs: an import queued by a lead who
//!   is no longer a lead of the project when the worker takes it does not run, and writes
//!   nothing.

use crate::common;

use app::domain::account::Role;
use common::TestApp;
use std::path::{Path, PathBuf};

/// The store's writes that only the command layer may call (its actions), as written in calls.
const COMMANDED_WRITES: &[&str] = &[
    "import::begin_chunked(",
    "import::write_documents(",
    "import::write_claims(",
    "RunWriter::open(",
    "import::write_judgments(",
    "import::complete_judgments(",
    "pool::build(",
    "build_sample(",
    "projects::create(",
    "projects::add_member(",
    "projects::remove_member(",
    "set_judging(",
    "users::create(",
    "accounts::set_password(",
    "accounts::set_role(",
    "accounts::set_active(",
    "release::record(",
    "assessors::create(",
];

/// Whether a source file is one of the command line's modules, the only product code that
/// acts as the shell's operator: `cli.rs`, the demo it creates, and the `*_cmd.rs` modules it
/// dispatches its subcommands to.
fn is_shell_module(relative: &str) -> bool {
    matches!(relative, "server/src/cli.rs" | "server/src/demo.rs")
        || (relative.starts_with("server/src/") && relative.ends_with("_cmd.rs"))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// The file's text without its test modules (a `#[cfg(test)]` module runs in no entry point).
fn product_text(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a source file");
    match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

#[test]
fn entry_points_act_only_through_commands() {
    let root = root();
    let mut files = testdata::rust_sources(&root.join("app/src"));
    files.extend(testdata::rust_sources(&root.join("server/src")));
    // The entry points' crates (the domain, store and pipeline crates cannot name a command or
    // be one; the commands crate is the command layer): 86 files when the store left the app
    // crate, 75 when the commands left it.
    assert!(files.len() > 60, "found only {} source files", files.len());
    let mut bypasses = Vec::new();
    for path in &files {
        let relative = path
            .strip_prefix(&root)
            .expect("under the root")
            .to_string_lossy()
            .into_owned();
        // The commands may call them (their crate, like the store's, is not scanned); so may
        // test-only files.
        if relative.contains("/tests/") || relative.ends_with("/tests.rs") {
            continue;
        }
        let text = product_text(path);
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for call in COMMANDED_WRITES {
                if line.contains(call) && line.contains("store") {
                    bypasses.push(format!("{relative}:{}: {}", n + 1, line.trim()));
                }
            }
            if line.contains("Operator::at_the_shell(") && !is_shell_module(&relative) {
                bypasses.push(format!("{relative}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        bypasses.is_empty(),
        "these lines act without a command (or make the shell's authority outside the \
         command line):\n{}",
        bypasses.join("\n")
    );
}

#[test]
fn the_source_check_finds_a_bypass() {
    // The check above must be able to fail: a line like an entry point's bypass is caught.
    let line = "    crate::store::pool::build(&db, id, strategy, depth, None).await?;";
    assert!(COMMANDED_WRITES
        .iter()
        .any(|call| line.contains(call) && line.contains("store")));
    // Pages, server functions, the API and the job worker are no shell modules.
    for path in [
        "server/src/http.rs",
        "server/src/api_v1.rs",
        "server/src/jobs.rs",
        "app/src/api/pool.rs",
        "crates/commands/src/proof.rs",
    ] {
        assert!(!is_shell_module(path), "{path}");
    }
    assert!(is_shell_module("server/src/release_diff_cmd.rs"));
}

#[test]
fn the_app_does_not_depend_on_the_store() {
    // Issue 37: the crate with the pages and server functions reaches data only through the
    // commands crate; with the store out of its dependencies, the compiler refuses any call.
    let manifest =
        std::fs::read_to_string(root().join("app/Cargo.toml")).expect("the app's manifest");
    let names_store = manifest.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("store ") || line.starts_with("store=") || line.contains("dep:store")
    });
    assert!(
        !names_store,
        "app/Cargo.toml names the store crate: the pages and server functions must reach data \
         through the commands crate"
    );
    assert!(
        manifest.contains("commands = { path = \"../crates/commands\""),
        "the app reaches data through the commands crate"
    );
}

/// The server binary's calls into the store that have not moved into the commands yet (issue
/// 37), each as its source file and the call as written: a list that only shrinks. Once it is
/// empty the server's manifest must not name the store (below), and the compiler refuses any
/// new call.
const SERVER_STORE_CALLS_LEFT: &[(&str, &str)] = &[];

/// Whether a line of Rust names the store crate as a path (`store::...`), not as the end of
/// another name (`session_store(`, `sessions_store::`).
fn names_store_path(line: &str) -> bool {
    line.match_indices("store::").any(|(at, _)| {
        let before = line[..at].chars().next_back();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Whether a manifest's normal dependencies (`[dependencies]`, and a target's) name the store.
fn depends_on_store(manifest: &str) -> bool {
    let mut normal = false;
    for line in manifest.lines() {
        let line = line.trim_start();
        if line.starts_with('[') {
            let header = line.trim_end();
            normal = header == "[dependencies]"
                || (header.starts_with("[target.") && header.ends_with(".dependencies]"));
            continue;
        }
        if normal
            && (line.starts_with("store ")
                || line.starts_with("store=")
                || line.contains("dep:store"))
        {
            return true;
        }
    }
    false
}

#[test]
fn the_server_reaches_the_store_only_through_the_commands() {
    // Issue 37: the command line, the HTTP API and the job worker call commands, taking the
    // caller's proof, and nothing below them.
    let root = root();
    let files = testdata::rust_sources(&root.join("server/src"));
    assert!(files.len() > 15, "found only {} source files", files.len());
    let mut calls = Vec::new();
    for path in &files {
        let relative = path
            .strip_prefix(&root)
            .expect("under the root")
            .to_string_lossy()
            .into_owned();
        for (n, line) in product_text(path).lines().enumerate() {
            if !line.trim_start().starts_with("//") && names_store_path(line) {
                calls.push((relative.clone(), n + 1, line.trim().to_owned()));
            }
        }
    }
    let unlisted: Vec<String> = calls
        .iter()
        .filter(|(file, _, line)| {
            !SERVER_STORE_CALLS_LEFT
                .iter()
                .any(|(left, call)| left == file && line.contains(call))
        })
        .map(|(file, n, line)| format!("{file}:{n}: {line}"))
        .collect();
    assert!(
        unlisted.is_empty(),
        "these lines of the server call the store instead of a command:\n{}",
        unlisted.join("\n")
    );
    // A call that moved leaves the list.
    for (file, call) in SERVER_STORE_CALLS_LEFT {
        assert!(
            calls
                .iter()
                .any(|(f, _, line)| f == file && line.contains(call)),
            "{file} no longer calls {call}: remove it from SERVER_STORE_CALLS_LEFT"
        );
    }
    let manifest =
        std::fs::read_to_string(root.join("server/Cargo.toml")).expect("the server's manifest");
    if SERVER_STORE_CALLS_LEFT.is_empty() {
        assert!(
            !depends_on_store(&manifest),
            "server/Cargo.toml's [dependencies] name the store crate: the server must reach data \
             through the commands crate (tests and benchmarks may, as dev-dependencies)"
        );
    } else {
        assert!(
            depends_on_store(&manifest),
            "the server no longer depends on the store: empty SERVER_STORE_CALLS_LEFT"
        );
    }
}

#[test]
fn the_server_check_finds_a_store_call_and_a_store_dependency() {
    assert!(names_store_path("    let db = store::open(path).await?;"));
    assert!(names_store_path("use store::{jobs, Db};"));
    assert!(!names_store_path(
        "async fn session_store(db: &Db) -> Sessions {"
    ));
    assert!(!names_store_path("    commands::sessions_store::open(db)"));
    let manifest = "[package]\nname = \"server\"\n\n[dependencies]\ncommands = { path = \"c\" }\n\
                    store = { path = \"s\" }\n\n[dev-dependencies]\n";
    assert!(depends_on_store(manifest));
    let tests_only = "[dependencies]\ncommands = { path = \"c\" }\n\n[dev-dependencies]\n\
                      store = { path = \"s\" }\n";
    assert!(!depends_on_store(tests_only));
    let target = "[target.'cfg(unix)'.dependencies]\nstore = { path = \"s\" }\n";
    assert!(depends_on_store(target));
}

#[tokio::test]
async fn a_job_runs_only_while_its_starter_still_leads_the_project() {
    // Queued without a worker, so that the lead's removal comes before the job runs.
    let app = TestApp::spawn().await;
    store::projects::create(&app.db, "p", "", None)
        .await
        .expect("project");
    app.add_lead("lead", "p").await;
    app.add_user("boss", Role::Admin).await;
    let lead = app.logged_in("lead").await;
    let corpus = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("demo/corpus.jsonl"))
        .expect("demo corpus");
    let form = reqwest::multipart::Form::new()
        .text("project", "p")
        .text("kind", "corpus")
        .part(
            "file",
            reqwest::multipart::Part::bytes(corpus).file_name("corpus.jsonl"),
        );
    let res = lead
        .post(app.url("/api/lead/import/upload"))
        .multipart(form)
        .send()
        .await
        .expect("upload");
    assert!(
        res.status().is_success(),
        "{}",
        common::error_message(res).await
    );
    let job: app::api::imports::JobRow = res.json().await.expect("a job");

    // An admin removes the lead from the project; then the worker starts.
    let admin = app.logged_in("boss").await;
    let res = app
        .post_form(
            &admin,
            "/api/lead/members/remove",
            &[("project", "p"), ("username", "lead")],
        )
        .await;
    assert!(
        res.status().is_success(),
        "{}",
        common::error_message(res).await
    );
    let _worker = server::jobs::spawn(
        app.db.clone(),
        Default::default(),
        server::jobs::DEFAULT_LEASE,
    );
    let ended = app
        .wait_for_job(
            &admin,
            "/api/lead/job",
            "p",
            job.id,
            app::api::imports::JobRow::finished,
        )
        .await;
    assert_eq!(ended.status, "failed", "{ended:?}");
    let message = ended.message.unwrap_or_default();
    assert!(message.contains("do not lead"), "{message}");
    let documents: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM documents")
        .fetch_one(&app.db)
        .await
        .expect("count");
    assert_eq!(documents, 0);
}
