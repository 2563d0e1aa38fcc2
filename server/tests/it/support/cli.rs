//! Running the `claimpool` binary as a user would, for the integration tests.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::process::{Command, Output};

/// Runs `claimpool --db DB ARGS...` (a SQLite file or a PostgreSQL URL).
pub fn claimpool(db: impl AsRef<OsStr>, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_claimpool"))
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

/// The standard output of a run that must succeed.
pub fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The standard error of a run that must fail.
pub fn failed(out: Output) -> String {
    assert!(
        !out.status.success(),
        "succeeded, but should not have: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).unwrap()
}
