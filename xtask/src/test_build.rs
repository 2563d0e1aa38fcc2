//! `cargo xtask test-build [--require-shared] [--timings]`: builds the tests as `make unit` runs
//! them, `cargo test --release --workspace --exclude xtask --no-run`, and with `--require-shared`
//! fails if that build compiled again a library or binary of the release binary's build.
//!
//! `make test` builds the release site first, then this: the tests are in the release profile so
//! that they reuse every crate of the release binary and compile only their own targets. Cargo
//! shares a crate between two builds only where the features of the two agree, and a
//! dev-dependency that turns on a feature of a crate the binary has (reqwest did, for hyper and
//! tower) makes that crate and everything above it (leptos, the app, the server: about ten minutes
//! on 2 cores) compile a second time, silently. Cargo's JSON messages name each unit and say
//! whether it was fresh: the release binary's units (listed by a `cargo build` of it, which is
//! fresh right after the site build) must all be fresh in the test build.
//!
//! The test targets themselves compile at opt-level 0 or 1 with debug assertions, through the rustc
//! wrapper of rustc_wrapper.rs: the release profile's opt-level 3 made them as slow to build as
//! the whole debug build.

use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

pub const USAGE: &str = "usage: cargo xtask test-build [--require-shared] [--timings] [--clippy]

Builds the tests as `make unit` runs them: cargo test --release --workspace --exclude xtask --no-run,
the test harnesses at opt-level 0 or 1 with debug assertions (see xtask/src/rustc_wrapper.rs).
  --require-shared  fail if the test build compiled a library or binary of the release binary's
                    build: run right after `cargo xtask site --release`, the tests must reuse them
  --timings         pass --timings to cargo (report in target/cargo-timings)
  --clippy          check the benchmarks too, and compile the workspace's units with clippy,
                    warnings as errors (the lint of `make test`: see xtask/src/rustc_wrapper.rs)";

pub struct Options {
    pub require_shared: bool,
    pub timings: bool,
    pub clippy: bool,
}

impl Options {
    pub fn parse(args: impl Iterator<Item = String>) -> Result<Options> {
        let [require_shared, timings, clippy] =
            crate::switches(args, ["--require-shared", "--timings", "--clippy"], USAGE)?;
        Ok(Options {
            require_shared,
            timings,
            clippy,
        })
    }
}

pub fn run(root: &Path, options: &Options) -> Result<()> {
    // The release binary's units, as the site build made them (`cargo xtask site --release`).
    let release = if options.require_shared {
        let mut cargo = crate::cargo(root);
        cargo.args(["build", "--release"]);
        cargo.args(crate::server_build_args());
        let units = units_of(cargo, "cargo build --release (the binary's units)")?;
        println!(
            "xtask: the release binary's build has {} units",
            units.all.len()
        );
        Some(units)
    } else {
        None
    };

    let cargo = command(root, options.timings, options.clippy)?;
    let tests = units_of(cargo, "cargo test --release --no-run")?;
    println!(
        "xtask: test build: {} units; compiled: {} test targets, {} libraries, binaries or build \
         scripts",
        tests.all.len(),
        tests.compiled_tests,
        tests.compiled.len()
    );
    if let Some(release) = release {
        require_shared(&release, &tests)?;
    }
    Ok(())
}

/// The test build's cargo command: `cargo test --release --workspace --exclude xtask --no-run`,
/// through the rustc wrapper.
pub fn command(root: &Path, timings: bool, clippy: bool) -> Result<Command> {
    let mut cargo = through_wrapper(root, clippy)?;
    cargo.args(["--release", "--workspace", "--exclude", "xtask"]);
    cargo.arg("--no-run");
    if timings {
        cargo.arg("--timings");
    }
    if clippy {
        // The benchmarks too, so that clippy sees them (checked, not built or run).
        cargo.arg("--all-targets");
    }
    Ok(cargo)
}

/// `cargo test` with the environment of the test build: test harnesses at opt-level 0 or 1
/// (rustc_wrapper.rs), a wrapper already set kept behind it; with `clippy`, our units linted as
/// they compile.
///
/// Running the tests needs this very environment, not a plain `cargo test`: a build script that
/// uses the `cc` crate (ring's, under rustls) declares `rerun-if-env-changed=RUSTC_WRAPPER`, so a
/// plain `cargo test` after the test build compiled ring again and everything above it (rustls,
/// reqwest, openidconnect, the commands, the app, the server: 7.5 minutes of the cold CI of
/// 78a0f53), and the test targets above those at the release profile's opt-level 3.
fn through_wrapper(root: &Path, clippy: bool) -> Result<Command> {
    let mut cargo = crate::cargo(root);
    cargo.arg("test");
    if clippy {
        crate::rustc_wrapper::lint_with(&mut cargo, crate::rustc_wrapper::Lint::Clippy)?;
    } else {
        crate::rustc_wrapper::wrap(&mut cargo)?;
    }
    Ok(cargo)
}

pub const RUN_USAGE: &str =
    "usage: cargo xtask test [--clippy] [--require-built] -- CARGO-TEST-ARGS...

Runs `cargo test CARGO-TEST-ARGS...` in the environment of `cargo xtask test-build` (give
--clippy if the test build had it), so that the tests it built are run as they are, not built
again.
  --require-built  first build them (`--no-run`) and fail if that compiled anything at all";

/// `cargo xtask test`: see [`RUN_USAGE`].
pub fn run_tests(root: &Path, args: impl Iterator<Item = String>) -> Result<()> {
    let mut args = args.peekable();
    let mut switches = Vec::new();
    while let Some(arg) = args.next_if(|arg| arg != "--") {
        switches.push(arg);
    }
    if args.next().is_none() {
        bail!("no `--` before cargo test's arguments\n{RUN_USAGE}");
    }
    let cargo_args: Vec<String> = args.collect();
    let [clippy, require_built] = crate::switches(
        switches.into_iter(),
        ["--clippy", "--require-built"],
        RUN_USAGE,
    )?;
    if require_built {
        let mut build = through_wrapper(root, clippy)?;
        build.args(&cargo_args).arg("--no-run");
        let built = units_of(build, "cargo test --no-run")?;
        none_compiled_again(&built.compiled, "cargo test", "cargo xtask test-build")?;
        if built.compiled_tests > 0 {
            bail!(
                "cargo test {} compiled {} test targets again: run `cargo xtask test-build` with \
                 the same flags first",
                cargo_args.join(" "),
                built.compiled_tests
            );
        }
    }
    let mut cargo = through_wrapper(root, clippy)?;
    cargo.args(&cargo_args);
    let status = cargo
        .status()
        .with_context(|| format!("running cargo test {}", cargo_args.join(" ")))?;
    if !status.success() {
        bail!("cargo test {} failed: {status}", cargo_args.join(" "));
    }
    Ok(())
}

/// A unit as cargo's JSON messages name it: package id, target name and kinds.
type Unit = String;

/// What cargo's `compiler-artifact` messages said of one build.
#[derive(Default)]
pub struct Units {
    all: BTreeSet<Unit>,
    /// Units that compiled (were not fresh), test targets excepted.
    compiled: BTreeSet<Unit>,
    compiled_tests: usize,
}

impl Units {
    fn read(&mut self, line: &str) {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            return;
        };
        if message["reason"] != "compiler-artifact" {
            return;
        }
        let kinds: Vec<&str> = message["target"]["kind"]
            .as_array()
            .map(|kinds| kinds.iter().filter_map(|k| k.as_str()).collect())
            .unwrap_or_default();
        let unit = format!(
            "{} {} ({})",
            message["package_id"].as_str().unwrap_or("?"),
            message["target"]["name"].as_str().unwrap_or("?"),
            kinds.join(",")
        );
        self.all.insert(unit.clone());
        if message["fresh"].as_bool() == Some(true) {
            return;
        }
        if message["profile"]["test"].as_bool() == Some(true) {
            self.compiled_tests += 1;
        } else {
            self.compiled.insert(unit);
        }
    }
}

/// Runs a cargo build with JSON messages on stdout (diagnostics and progress rendered on stderr as
/// usual) and reads its units.
pub fn units_of(mut cargo: Command, what: &str) -> Result<Units> {
    cargo.arg("--message-format=json-render-diagnostics");
    cargo.stdout(Stdio::piped());
    let mut child = cargo.spawn().with_context(|| format!("running {what}"))?;
    let stdout = child.stdout.take().context("cargo's stdout")?;
    let mut units = Units::default();
    for line in BufReader::new(stdout).lines() {
        units.read(&line.with_context(|| format!("reading the output of {what}"))?);
    }
    let status = child
        .wait()
        .with_context(|| format!("waiting for {what}"))?;
    if !status.success() {
        bail!("{what} failed: {status}");
    }
    Ok(units)
}

fn require_shared(release: &Units, tests: &Units) -> Result<()> {
    if release.all.is_empty() {
        bail!("cargo listed no units of the release binary: was --message-format honoured?");
    }
    none_compiled_again(
        tests.compiled.intersection(&release.all),
        "the release test build",
        "the release binary's build",
    )
}

/// The converse of [`require_shared`], for `cargo xtask site --release --with-tests`: the
/// binary's own build (`built`), run after the tests' build, compiled nothing.
pub fn require_fresh(built: &Units) -> Result<()> {
    none_compiled_again(
        &built.compiled,
        "the server binary's build",
        "the tests' build",
    )
}

/// Fails, naming them, if `again` holds units that `second` compiled again after `first` had.
fn none_compiled_again<'a>(
    again: impl IntoIterator<Item = &'a Unit>,
    second: &str,
    first: &str,
) -> Result<()> {
    let list: Vec<&str> = again.into_iter().map(|u| u.as_str()).collect();
    if !list.is_empty() {
        bail!(
            "{second} compiled again what {first} had compiled:\n  {}\nThe tests' features \
             differ from the binary's: compare `cargo tree -e features -p server` with `cargo tree \
             -e features,dev --workspace --exclude xtask` and ask for the missing features in \
             server/Cargo.toml (see its comment on hyper).",
            list.join("\n  ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(package: &str, name: &str, kind: &str, test: bool, fresh: bool) -> String {
        serde_json::json!({
            "reason": "compiler-artifact",
            "package_id": package,
            "target": {"name": name, "kind": [kind]},
            "profile": {"test": test},
            "fresh": fresh,
        })
        .to_string()
    }

    fn release() -> Units {
        let mut units = Units::default();
        units.read(&artifact("hyper@1", "hyper", "lib", false, true));
        units.read(&artifact("server", "claimpool", "bin", false, false));
        units.read("not json");
        units.read(r#"{"reason":"build-finished","success":true}"#);
        units
    }

    #[test]
    fn test_targets_and_crates_the_binary_lacks_may_compile() {
        let release = release();
        assert_eq!(release.all.len(), 2);
        let mut tests = Units::default();
        tests.read(&artifact("hyper@1", "hyper", "lib", false, true));
        tests.read(&artifact("server", "it", "test", true, false));
        tests.read(&artifact("recall", "recall", "lib", false, false));
        assert_eq!(tests.compiled_tests, 1);
        assert_eq!(tests.compiled.len(), 1);
        assert!(require_shared(&release, &tests).is_ok());
    }

    #[test]
    fn a_crate_of_the_binary_compiled_again_fails_and_is_named() {
        let mut tests = Units::default();
        tests.read(&artifact("hyper@1", "hyper", "lib", false, false));
        tests.read(&artifact("server", "claimpool", "bin", false, false));
        let error = require_shared(&release(), &tests).unwrap_err().to_string();
        assert!(error.contains("hyper@1 hyper (lib)"), "{error}");
        assert!(error.contains("server claimpool (bin)"), "{error}");
    }

    #[test]
    fn an_empty_list_of_the_binarys_units_fails() {
        assert!(require_shared(&Units::default(), &Units::default()).is_err());
    }
}
