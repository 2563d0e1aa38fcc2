//! The rustc wrapper of `cargo xtask test-build`: test harnesses (the units rustc compiles with
//! `--test`) are built at opt-level 1 with debug assertions and overflow checks; every other unit
//! compiles exactly as cargo asks.
//!
//! `make test` builds the tests in the release profile so that they reuse every crate of the release
//! binary (test_build.rs). Cargo has no per-target profile, so without this the test harnesses
//! compile at opt-level 3 too: the app's unit tests are the whole app crate compiled a second time,
//! and with the integration tests and the server's unit tests they took as long as the debug build
//! this replaced. Cargo leaves the wrapper and the flags it adds out of its fingerprints (checked:
//! a release build under a wrapper recompiles nothing), so the libraries stay the release build's,
//! and a later `cargo test --release` runs these harnesses as they are. The test code's own
//! assertions gain debug assertions and overflow checks, as a debug build had them; the code under
//! test is the optimised code users run.
//!
//! Cargo runs the wrapper as `WRAPPER RUSTC ARGS...`; an existing RUSTC_WRAPPER (sccache, say) is
//! kept and run in turn.

use std::ffi::{OsStr, OsString};
use std::process::Command;

/// Set (to the chained wrapper, or empty) in the environment of the cargo that test-build runs;
/// its presence makes the xtask binary act as the wrapper.
pub const MARKER: &str = "CLAIMPOOL_XTASK_RUSTC_WRAPPER";

/// Added after cargo's own flags (rustc takes the last value of a `-C` option).
pub const TEST_HARNESS_FLAGS: [&str; 6] = [
    "-C",
    "opt-level=1",
    "-C",
    "debug-assertions=on",
    "-C",
    "overflow-checks=on",
];

/// If this process was started as cargo's rustc wrapper, runs rustc and returns its exit code.
pub fn run_if_invoked() -> Option<i32> {
    let chained = std::env::var_os(MARKER)?;
    let mut args = std::env::args_os().skip(1);
    let Some(rustc) = args.next() else {
        eprintln!("xtask: started as a rustc wrapper without a rustc to run");
        return Some(1);
    };
    let args: Vec<OsString> = args.collect();
    let mut command = if chained.is_empty() {
        Command::new(&rustc)
    } else {
        let mut command = Command::new(&chained);
        command.arg(&rustc);
        command
    };
    command.args(rustc_args(&args));
    match command.status() {
        Ok(status) => Some(status.code().unwrap_or(1)),
        Err(e) => {
            eprintln!("xtask: running {}: {e}", rustc.to_string_lossy());
            Some(1)
        }
    }
}

/// The arguments rustc gets: cargo's, plus the test harness flags for a `--test` unit.
fn rustc_args(args: &[OsString]) -> Vec<OsString> {
    let mut out = args.to_vec();
    if args.iter().any(|a| a.as_os_str() == OsStr::new("--test")) {
        out.extend(TEST_HARNESS_FLAGS.iter().map(OsString::from));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_test_harness_gets_the_flags_after_cargos() {
        let args = os(&["--crate-name", "it", "--test", "-C", "opt-level=3"]);
        let out = rustc_args(&args);
        assert_eq!(&out[..args.len()], &args[..]);
        assert_eq!(out[args.len()..], os(&TEST_HARNESS_FLAGS));
    }

    #[test]
    fn libraries_binaries_and_queries_are_left_alone() {
        for args in [
            os(&[
                "--crate-name",
                "app",
                "--crate-type",
                "lib",
                "-C",
                "opt-level=3",
            ]),
            os(&["-vV"]),
            os(&["-", "--crate-name", "___", "--print=file-names"]),
        ] {
            assert_eq!(rustc_args(&args), args);
        }
    }
}
