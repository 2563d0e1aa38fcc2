//! Running the `claimpool` binary as a user would, for the integration tests.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output};

/// The `claimpool` binary the tests run: `CLAIMPOOL_BIN` when it is set, as for the browser tests
/// (`make test` sets it to the release binary it has just built from the same tree, the one users
/// run; the crash tests' commands run several times faster in it than in a debug build), else
/// this build's own.
pub fn claimpool_bin() -> PathBuf {
    match std::env::var_os("CLAIMPOOL_BIN") {
        Some(path) => {
            let path = PathBuf::from(path);
            assert!(
                path.is_absolute() && path.is_file(),
                "CLAIMPOOL_BIN={} is not the absolute path of a file",
                path.display()
            );
            path
        }
        None => PathBuf::from(env!("CARGO_BIN_EXE_claimpool")),
    }
}

/// The path of a file of the shipped demo sample (`server/demo/NAME`), as an argument.
pub fn demo_file(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("demo")
        .join(name)
        .display()
        .to_string()
}

/// A command of the binary the tests run ([`claimpool_bin`]).
pub fn command() -> Command {
    Command::new(claimpool_bin())
}

/// Runs `claimpool --db DB ARGS...` (a SQLite file or a PostgreSQL URL).
pub fn claimpool(db: impl AsRef<OsStr>, args: &[&str]) -> Output {
    command().arg("--db").arg(db).args(args).output().unwrap()
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
