//! `claimpool pipeline run --scorer external` as a user runs it, on the shipped demo sample: a
//! good command's run imports; a bad one fails naming the output line, leaves no run file, and
//! so nothing can be imported. The database is of the engine the tests run on.

use crate::support::cli::demo_file;
use crate::support::postgres;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn claimpool(args: &[&str]) -> Output {
    crate::support::cli::command().args(args).output().unwrap()
}

fn standin() -> Option<PathBuf> {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: python3 is not available");
        return None;
    }
    Some(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../crates/pipeline/src/external/testdata/standin_model.py"),
    )
}

#[test]
fn external_scorer_runs_import_and_bad_output_writes_nothing() {
    let Some(script) = standin() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let out = claimpool(&[
        "pipeline",
        "index",
        "--corpus",
        &demo_file("corpus.jsonl"),
        "--index",
        &path("index"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = |mode: &str, out_file: &str| {
        let command = format!("python3 '{}' {mode}", script.display());
        claimpool(&[
            "pipeline",
            "run",
            "--index",
            &path("index"),
            "--claims",
            &demo_file("claims.jsonl"),
            "--k",
            "5",
            "--scorer",
            "external",
            "--command",
            &command,
            "--out",
            &path(out_file),
        ])
    };

    let out = run("good", "good.jsonl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("wrote 200 pairs for 40 claims"));
    let db = postgres::fresh_test_database(dir.path());
    assert!(claimpool(&["--db", &db, "project", "create", "demo"])
        .status
        .success());
    for (kind, file) in [("corpus", "corpus.jsonl"), ("claims", "claims.jsonl")] {
        let out = claimpool(&[
            "--db",
            &db,
            "import",
            kind,
            "--project",
            "demo",
            &demo_file(file),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = claimpool(&[
        "--db",
        &db,
        "import",
        "run",
        "--project",
        "demo",
        "--system",
        "standin",
        &path("good.jsonl"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["rows"], 200);

    for (mode, expected) in [
        ("bad-json-line-3", "bad-json-line-3`:3: "),
        (
            "unknown-doc",
            "unknown-doc`:1: field \"doc_id\": doc no-such-doc was not a candidate",
        ),
        ("exit-1", "failed (exit status: 1)"),
    ] {
        let out = run(mode, "bad.jsonl");
        assert!(!out.status.success(), "{mode}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{mode}: {err}");
        assert!(
            !dir.path().join("bad.jsonl").exists(),
            "{mode}: nothing written"
        );
    }
    let leftovers = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".claimpool-run-")
        })
        .count();
    assert_eq!(leftovers, 0, "no temporary run file is left behind");
}
