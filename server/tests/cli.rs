//! The command line, run as a user would.

use std::io::Write;
use std::process::{Command, Stdio};

fn claimpool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_claimpool"))
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
    let db = dir.path().join("c.db");
    let add = |name: &str, role: &str, password: &str| {
        let mut child = claimpool()
            .args([
                "--db",
                db.to_str().unwrap(),
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
        .args(["--db", db.to_str().unwrap(), "user", "list"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "alice\tlead\n");
}
