//! The rustc wrapper of `cargo xtask test-build` and of `cargo xtask site --deny-warnings`.
//!
//! # Test harnesses at opt-level 0 or 1
//!
//! Test harnesses (the units rustc compiles with `--test`) are built at opt-level 0, or 1 for
//! the crates whose tests compute ([`COMPUTING_TESTS`]), with debug assertions and overflow
//! checks. `make test` builds the tests in the release profile so that
//! they reuse every crate of the release binary (test_build.rs). Cargo has no per-target
//! profile, so without this the test harnesses compile at opt-level 3 too: the app's unit tests
//! are the whole app crate compiled a second time, and with the integration tests and the
//! server's unit tests they took as long as the debug build this replaced. Cargo leaves the
//! wrapper and the flags it adds out of its fingerprints (checked: a release build under a
//! wrapper recompiles nothing), so the libraries stay the release build's, and a later
//! `cargo test --release` runs these harnesses as they are. The test code's own assertions gain
//! debug assertions and overflow checks, as a debug build had them; the code under test is the
//! optimised code users run.
//!
//! # The lint, inside the builds `make test` makes anyway ([`Lint`])
//!
//! `cargo clippy` type-checks every dependency a third time (its check units share nothing with
//! a build's): on a cold 2-core machine (2026-11-29) the release build beside it took 34.5
//! minutes, and clippy was still running at 39. Instead the workspace's own units ("ours": cargo passes `--cap-lints`
//! to every other crate) are linted where they compile:
//! - [`Lint::DenyWarnings`] (the release site build, server and wasm front end): rustc's lints,
//!   warnings as errors, in the code users run, features as they build it;
//! - [`Lint::Clippy`] (the test build): our test harnesses, integration tests and benchmarks
//!   are compiled by `clippy-driver` with warnings as errors (a crate's test harness is the whole
//!   crate with its tests, so clippy sees all of it); our libraries and binaries, the release
//!   binary's units, by rustc with warnings as errors ([`is_clippys`]). The benchmarks are
//!   only checked there (`--emit=metadata`, as `cargo clippy` does): `make test` never runs them.
//!
//! `-D warnings` and clippy change diagnostics only, never the code compiled, so the units stay
//! the ones users' builds make (and cargo's fingerprints leave them out, as the flags above).
//! A unit already compiled is not compiled again, so not linted again: on a warm tree the lint
//! covers what changed; a clean clone (CI) lints everything. `make lint` (`cargo clippy
//! --all-targets`) remains for developers.
//!
//! Cargo runs the wrapper as `WRAPPER RUSTC ARGS...`; an existing RUSTC_WRAPPER (sccache, say) is
//! kept and run in turn (but for clippy's units, which clippy-driver compiles itself).

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::Command;

/// Set (to the chained wrapper, or empty) in the environment of the cargo that test-build runs;
/// its presence makes the xtask binary act as the wrapper.
pub const MARKER: &str = "CLAIMPOOL_XTASK_RUSTC_WRAPPER";

/// Set to a [`Lint`]'s name to lint our units.
pub const LINT: &str = "CLAIMPOOL_XTASK_LINT";

/// Added after cargo's own flags (rustc takes the last value of a `-C` option), with the
/// harness's opt-level ([`harness_opt_level`]).
pub const TEST_HARNESS_FLAGS: [&str; 4] = ["-C", "debug-assertions=on", "-C", "overflow-checks=on"];

/// The crates whose unit tests spend their time in the crate's own code (the domain's
/// estimators and simulations, the pipeline's retrievers, cal's training): their harnesses are
/// built at opt-level 1. Every other harness (the app's, the server's and the store's unit tests,
/// the integration tests) spends it in what it calls, compiled as users run it (the release
/// build's libraries, SQLite's C code, the `claimpool` binary), and is built at opt-level 0:
/// measured on a cold 2-core machine, see the Makefile's `unit`.
pub const COMPUTING_TESTS: [&str; 3] = ["domain", "pipeline", "cal"];

/// The opt-level of a test harness, by its crate's name.
pub fn harness_opt_level(crate_name: &OsStr) -> &'static str {
    if COMPUTING_TESTS.iter().any(|c| OsStr::new(c) == crate_name) {
        "opt-level=1"
    } else {
        "opt-level=0"
    }
}

/// How the wrapper lints the workspace's own units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lint {
    /// rustc's lints, warnings as errors.
    DenyWarnings,
    /// clippy's and rustc's lints, warnings as errors.
    Clippy,
}

impl Lint {
    pub fn name(self) -> &'static str {
        match self {
            Lint::DenyWarnings => "deny-warnings",
            Lint::Clippy => "clippy",
        }
    }

    fn parse(name: &OsStr) -> Option<Lint> {
        [Lint::DenyWarnings, Lint::Clippy]
            .into_iter()
            .find(|lint| OsStr::new(lint.name()) == name)
    }
}

/// Makes `cargo` run its rustc through this wrapper (a wrapper already set kept behind it).
pub fn wrap(cargo: &mut Command) -> anyhow::Result<()> {
    let exe =
        std::env::current_exe().map_err(|e| anyhow::anyhow!("the xtask binary's path: {e}"))?;
    let chained = std::env::var_os("RUSTC_WRAPPER").unwrap_or_default();
    cargo.env(MARKER, chained);
    cargo.env("RUSTC_WRAPPER", exe);
    Ok(())
}

/// [`wrap`], linting our units with `lint`.
pub fn lint_with(cargo: &mut Command, lint: Lint) -> anyhow::Result<()> {
    wrap(cargo)?;
    cargo.env(LINT, lint.name());
    Ok(())
}

/// If this process was started as cargo's rustc wrapper, runs rustc and returns its exit code.
pub fn run_if_invoked() -> Option<i32> {
    let chained = std::env::var_os(MARKER)?;
    let lint = match std::env::var_os(LINT) {
        None => None,
        Some(name) => match Lint::parse(&name) {
            Some(lint) => Some(lint),
            None => {
                eprintln!("xtask: {LINT}={} is no lint", name.to_string_lossy());
                return Some(1);
            }
        },
    };
    let mut args = std::env::args_os().skip(1);
    let Some(rustc) = args.next() else {
        eprintln!("xtask: started as a rustc wrapper without a rustc to run");
        return Some(1);
    };
    let args: Vec<OsString> = args.collect();
    let unit = Unit::of(&args);
    let mut command = if lint == Some(Lint::Clippy) && unit == Unit::Ours && is_clippys(&args) {
        // clippy-driver runs as a wrapper itself: `clippy-driver RUSTC ARGS...`. It is the
        // toolchain's, beside its rustc.
        let driver = Path::new(&rustc).with_file_name("clippy-driver");
        if !driver.exists() {
            eprintln!(
                "xtask: {} is missing: install clippy (`rustup component add clippy`)",
                driver.display()
            );
            return Some(1);
        }
        let mut command = Command::new(driver);
        command.arg(&rustc);
        command
    } else if chained.is_empty() {
        Command::new(&rustc)
    } else {
        let mut command = Command::new(&chained);
        command.arg(&rustc);
        command
    };
    command.args(rustc_args(&args, lint));
    match command.status() {
        Ok(status) => Some(status.code().unwrap_or(1)),
        Err(e) => {
            eprintln!("xtask: running {}: {e}", rustc.to_string_lossy());
            Some(1)
        }
    }
}

/// What cargo asks rustc for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    /// A query (`-vV`, `--print`), no crate.
    Query,
    /// A crate of the workspace: cargo caps the lints of every other.
    Ours,
    /// A dependency.
    Theirs,
}

impl Unit {
    fn of(args: &[OsString]) -> Unit {
        let has = |flag: &str| args.iter().any(|a| a.as_os_str() == OsStr::new(flag));
        let prints = args
            .iter()
            .any(|a| a.to_str().is_some_and(|a| a.starts_with("--print")));
        if !has("--crate-name") || prints {
            Unit::Query
        } else if has("--cap-lints") {
            Unit::Theirs
        } else {
            Unit::Ours
        }
    }
}

/// The arguments rustc gets: cargo's, plus the test harness flags for a `--test` unit and
/// warnings as errors for our units when linting.
fn rustc_args(args: &[OsString], lint: Option<Lint>) -> Vec<OsString> {
    let mut out = args.to_vec();
    if args.iter().any(|a| a.as_os_str() == OsStr::new("--test")) {
        let crate_name = value_of(args, "--crate-name").unwrap_or_default();
        out.extend(["-C", harness_opt_level(crate_name)].map(OsString::from));
        out.extend(TEST_HARNESS_FLAGS.iter().map(OsString::from));
    }
    if lint.is_some() && Unit::of(args) == Unit::Ours {
        out.extend(["-D", "warnings"].map(OsString::from));
    }
    if lint == Some(Lint::Clippy) && is_benchmark(args) {
        // Type-checked and linted, not compiled to code: `make test` never runs a benchmark,
        // and their code generation at opt-level 3 was 440 s of the test build (one unit each,
        // the server's generic code instantiated again in every one).
        for arg in out.iter_mut() {
            if arg.to_str().is_some_and(|a| a.starts_with("--emit=")) {
                *arg = OsString::from("--emit=dep-info,metadata");
            }
        }
    }
    out
}

/// The units of ours that clippy compiles under [`Lint::Clippy`]: test harnesses and
/// benchmarks. A crate's test harness is the whole crate with its tests, so clippy sees every
/// library and binary there; their plain units (the release binary's) compile with rustc,
/// warnings as errors, so that clippy's passes never lengthen the release build, whose last
/// crates (the app, then the server) compile one after the other.
fn is_clippys(args: &[OsString]) -> bool {
    args.iter().any(|a| a.as_os_str() == OsStr::new("--test")) || is_benchmark(args)
}

/// The value after `flag` in `args`.
fn value_of<'a>(args: &'a [OsString], flag: &str) -> Option<&'a OsStr> {
    let at = args
        .iter()
        .position(|a| a.as_os_str() == OsStr::new(flag))?;
    args.get(at + 1).map(|a| a.as_os_str())
}

/// A benchmark target: its source is a `.rs` file in a `benches` directory of a package.
fn is_benchmark(args: &[OsString]) -> bool {
    args.iter().any(|a| {
        let path = Path::new(a);
        path.extension() == Some(OsStr::new("rs"))
            && path
                .parent()
                .and_then(|dir| dir.file_name())
                .is_some_and(|dir| dir == "benches")
    })
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
        let out = rustc_args(&args, None);
        assert_eq!(&out[..args.len()], &args[..]);
        assert_eq!(out[args.len()..args.len() + 2], os(&["-C", "opt-level=0"]));
        assert_eq!(out[args.len() + 2..], os(&TEST_HARNESS_FLAGS));
        let domain = os(&["--crate-name", "domain", "--test", "-C", "opt-level=3"]);
        assert_eq!(
            rustc_args(&domain, None)[domain.len()..domain.len() + 2],
            os(&["-C", "opt-level=1"])
        );
    }

    #[test]
    fn clippy_only_checks_the_benchmarks() {
        let bench = os(&[
            "--crate-name",
            "annotate",
            "--edition=2021",
            "server/benches/annotate.rs",
            "--crate-type",
            "bin",
            "--emit=dep-info,link",
        ]);
        let out = rustc_args(&bench, Some(Lint::Clippy));
        assert!(out.contains(&OsString::from("--emit=dep-info,metadata")));
        assert!(!out.contains(&OsString::from("--emit=dep-info,link")));
        // Built as usual outside the lint, and a test or binary is never a benchmark.
        assert_eq!(rustc_args(&bench, None), bench);
        assert_eq!(
            rustc_args(&bench, Some(Lint::DenyWarnings))[bench.len()..],
            os(&["-D", "warnings"])
        );
        for source in [
            "server/tests/it/main.rs",
            "server/src/main.rs",
            "benches.rs",
        ] {
            let mut other = bench.clone();
            other[3] = OsString::from(source);
            assert!(rustc_args(&other, Some(Lint::Clippy)).contains(&bench[6]));
        }
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
            assert_eq!(rustc_args(&args, None), args);
        }
    }

    #[test]
    fn linting_denies_warnings_in_our_units_only() {
        let ours = os(&["--crate-name", "domain", "--crate-type", "lib"]);
        let theirs = os(&["--crate-name", "serde", "--cap-lints", "allow"]);
        let query = os(&["-", "--crate-name", "___", "--print=file-names"]);
        assert_eq!(Unit::of(&ours), Unit::Ours);
        assert_eq!(Unit::of(&theirs), Unit::Theirs);
        assert_eq!(Unit::of(&query), Unit::Query);
        assert_eq!(Unit::of(&os(&["-vV"])), Unit::Query);
        for lint in [Lint::DenyWarnings, Lint::Clippy] {
            assert_eq!(
                rustc_args(&ours, Some(lint))[ours.len()..],
                os(&["-D", "warnings"])
            );
            assert_eq!(rustc_args(&theirs, Some(lint)), theirs);
            assert_eq!(rustc_args(&query, Some(lint)), query);
        }
        // A test harness of ours: both.
        let harness = os(&["--crate-name", "it", "--test"]);
        let out = rustc_args(&harness, Some(Lint::Clippy));
        assert_eq!(
            out[harness.len() + 2..harness.len() + 6],
            os(&TEST_HARNESS_FLAGS)
        );
        assert_eq!(out[harness.len() + 6..], os(&["-D", "warnings"]));
    }

    #[test]
    fn clippy_compiles_test_harnesses_and_benchmarks_only() {
        let lib = os(&[
            "--crate-name",
            "app",
            "--crate-type",
            "lib",
            "app/src/lib.rs",
        ]);
        assert!(!is_clippys(&lib));
        assert!(is_clippys(&os(&[
            "--crate-name",
            "app",
            "--test",
            "app/src/lib.rs"
        ])));
        assert!(is_clippys(&os(&[
            "--crate-name",
            "eval",
            "server/benches/eval.rs"
        ])));
    }

    #[test]
    fn lint_names_read_back() {
        for lint in [Lint::DenyWarnings, Lint::Clippy] {
            assert_eq!(Lint::parse(OsStr::new(lint.name())), Some(lint));
        }
        assert_eq!(Lint::parse(OsStr::new("pedantic")), None);
    }
}
