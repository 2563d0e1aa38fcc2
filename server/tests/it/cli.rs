//! The command line, run as a user would, on the engine the tests run on.

use crate::common;
use common::postgres;

use std::io::Write;
use std::process::{Command, Stdio};

fn claimpool() -> Command {
    crate::support::cli::command()
}

#[test]
fn a_bad_db_path_is_a_clear_error_not_a_panic() {
    for path in ["/nonexistent-dir/claimpool.db", "/proc/claimpool.db"] {
        let out = claimpool()
            .args(["--db", path, "user", "list"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{path}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("cannot open the database {path}")),
            "{path}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn user_add_reads_the_password_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let db = postgres::fresh_test_database(dir.path());
    let add = |name: &str, role: &str, password: &str| {
        let mut child = claimpool()
            .args([
                "--db",
                &db,
                "user",
                "add",
                "--username",
                name,
                "--role",
                role,
                "--password-stdin",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(password.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = add("alice", "lead", "a long password\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("created alice (lead)"));
    let out = add("alice", "lead", "a long password\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("a user named alice exists already"));
    let out = add("bob", "boss", "a long password\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown role"));
    let out = add("bob", "annotator", "short\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("a password has 8 to 1024 characters"));
    let out = claimpool()
        .args(["--db", &db, "user", "list"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "alice\tlead\n");
}

/// Runs `claimpool --db DB ARGS` with `stdin`; returns (success, stdout, stderr).
fn run(db: &str, args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = claimpool()
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn accounts_and_project_members_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = postgres::fresh_test_database(dir.path());
    let ok = |args: &[&str], stdin: &str| {
        let (success, out, err) = run(&db, args, stdin);
        assert!(success, "{args:?}: {err}");
        out
    };
    ok(
        &[
            "user",
            "add",
            "--username",
            "root",
            "--role",
            "admin",
            "--password-stdin",
        ],
        "a long password\n",
    );
    ok(
        &[
            "user",
            "add",
            "--username",
            "lea",
            "--role",
            "lead",
            "--password-stdin",
        ],
        "a long password\n",
    );
    ok(
        &[
            "user",
            "add",
            "--username",
            "ann",
            "--role",
            "annotator",
            "--password-stdin",
        ],
        "a long password\n",
    );
    ok(&["project", "create", "p"], "");
    ok(
        &[
            "project",
            "member",
            "add",
            "--project",
            "p",
            "--user",
            "lea",
            "--role",
            "lead",
        ],
        "",
    );
    ok(
        &[
            "project",
            "member",
            "add",
            "--project",
            "p",
            "--user",
            "ann",
            "--role",
            "annotator",
        ],
        "",
    );
    // An annotator cannot lead a project, nor a lead annotate one.
    let (success, _, err) = run(
        &db,
        &[
            "project",
            "member",
            "add",
            "--project",
            "p",
            "--user",
            "ann",
            "--role",
            "lead",
        ],
        "",
    );
    assert!(!success && err.contains("ann is an annotator"), "{err}");
    let (success, _, err) = run(
        &db,
        &[
            "project",
            "member",
            "add",
            "--project",
            "p",
            "--user",
            "lea",
            "--role",
            "boss",
        ],
        "",
    );
    assert!(!success && err.contains("--role"), "{err}");
    let listed: serde_json::Value = serde_json::from_str(&ok(
        &["project", "member", "list", "--project", "p", "--json"],
        "",
    ))
    .unwrap();
    assert_eq!(
        listed,
        serde_json::json!([
            { "username": "lea", "role": "lead", "active": true },
            { "username": "ann", "role": "annotator", "active": true },
        ])
    );
    ok(
        &[
            "project",
            "member",
            "remove",
            "--project",
            "p",
            "--user",
            "lea",
        ],
        "",
    );
    assert_eq!(
        ok(&["project", "member", "list", "--project", "p"], ""),
        "lea\tlead (inactive)\nann\tannotator\n"
    );
    // Passwords, roles and deactivation.
    ok(
        &["user", "passwd", "ann", "--password-stdin"],
        "another long password\n",
    );
    let (success, _, err) = run(
        &db,
        &["user", "passwd", "ann", "--password-stdin"],
        "short\n",
    );
    assert!(!success && err.contains("password"), "{err}");
    assert_eq!(
        ok(&["user", "role", "lea", "annotator"], ""),
        "lea is now annotator\n"
    );
    ok(&["user", "deactivate", "ann"], "");
    let users = ok(&["user", "list"], "");
    assert!(users.contains("ann\tannotator (inactive)"), "{users}");
    ok(&["user", "reactivate", "ann"], "");
    let (success, _, err) = run(&db, &["user", "deactivate", "root"], "");
    assert!(!success && err.contains("last active admin"), "{err}");
    let (success, _, err) = run(&db, &["user", "role", "nobody", "lead"], "");
    assert!(!success && err.contains("nobody"), "{err}");
}

#[test]
fn project_judging_sets_the_order_seed_and_budget() {
    let dir = tempfile::tempdir().unwrap();
    let db = postgres::fresh_test_database(dir.path());
    let (ok, _, err) = run(&db, &["project", "create", "p"], "");
    assert!(ok, "{err}");
    // No option: the settings as they are (depth, pre-assigned).
    let (ok, out, err) = run(&db, &["project", "judging", "--project", "p"], "");
    assert!(ok, "{err}");
    assert!(out.contains("order\tdepth\nseed\t0\nbudget\tnone"), "{out}");
    let (ok, out, err) = run(
        &db,
        &[
            "project",
            "judging",
            "--project",
            "p",
            "--order",
            "mab-thompson",
            "--seed",
            "7",
            "--budget",
            "250",
        ],
        "",
    );
    assert!(ok, "{err}");
    assert!(
        out.contains(
            "order\tmab-thompson\nseed\t7\nbudget\t250\ncal candidates per claim\t100\nfirst passes spent\t0"
        ),
        "{out}"
    );
    // Options left out keep their value; --no-budget lifts the budget.
    let (ok, out, err) = run(
        &db,
        &[
            "project",
            "judging",
            "--project",
            "p",
            "--order",
            "mtf",
            "--no-budget",
        ],
        "",
    );
    assert!(ok, "{err}");
    assert!(out.contains("order\tmtf\nseed\t7\nbudget\tnone"), "{out}");
    let (ok, _, err) = run(
        &db,
        &[
            "project",
            "judging",
            "--project",
            "p",
            "--order",
            "sideways",
        ],
        "",
    );
    assert!(!ok);
    assert!(err.contains("--order"), "{err}");
    let (ok, _, err) = run(
        &db,
        &[
            "project",
            "judging",
            "--project",
            "p",
            "--budget",
            "3",
            "--no-budget",
        ],
        "",
    );
    assert!(!ok, "--budget and --no-budget together: {err}");
    // cal searches the project's corpus for each claim's top --candidates first.
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("demo");
    for (what, file) in [("corpus", "corpus.jsonl"), ("claims", "claims.jsonl")] {
        let path = demo.join(file).display().to_string();
        let (ok, _, err) = run(&db, &["import", what, "--project", "p", &path], "");
        assert!(ok, "{err}");
    }
    let cal = ["project", "judging", "--project", "p", "--order", "cal"];
    let (ok, _, err) = run(&db, &[&cal[..], &["--candidates", "0"]].concat(), "");
    assert!(!ok && err.contains("--candidates"), "{err}");
    let (ok, out, err) = run(&db, &[&cal[..], &["--candidates", "3"]].concat(), "");
    assert!(ok, "{err}");
    assert!(out.contains("each claim's top 3 (bm25)"), "{out}");
    assert!(out.contains("order\tcal\n"), "{out}");
    assert!(out.contains("cal candidates per claim\t3\n"), "{out}");
    assert!(
        out.contains("cal retrievals\t3 per claim (bm25), 0 pairs added, 0 outside the runs\n"),
        "{out}"
    );
    // A stopping sample from the shell: none yet, then one of 2 pairs waiting for labels.
    let stop = ["project", "stop-sample", "--project", "p"];
    let (ok, out, err) = run(&db, &[&stop[..], &["--status"]].concat(), "");
    assert!(ok && out.trim() == "null", "{out} {err}");
    let (ok, _, err) = run(&db, &[&stop[..], &["--recall", "1.5"]].concat(), "");
    assert!(!ok && err.contains("--recall"), "{err}");
    let drawn = [
        &stop[..],
        &["--recall", "0.5", "--confidence", "0.8", "--size", "2"],
    ]
    .concat();
    let (ok, out, err) = run(&db, &drawn, "");
    assert!(ok, "{err}");
    assert!(out.starts_with("Drew 2 of the "), "{out}");
    let json: serde_json::Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    assert_eq!(
        (&json["size"], &json["judged"], &json["stopping"]["status"]),
        (
            &serde_json::json!(2),
            &serde_json::json!(0),
            &serde_json::json!("waiting")
        )
    );
    // Each change is audited.
    assert_eq!(judging_audits(&db), 3);
}

/// The `set_judging` audit events in the database `db`.
fn judging_audits(db: &str) -> i64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let db = common::open_db(db).await;
        sqlx::query_scalar("SELECT COUNT(*) FROM audit_events WHERE action = 'set_judging'")
            .fetch_one(&db)
            .await
            .unwrap()
    })
}
