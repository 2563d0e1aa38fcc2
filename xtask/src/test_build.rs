//! `cargo xtask test-build [--require-shared] [--timings]`: builds the tests as `make unit` runs
//! them, `cargo test --release --workspace --exclude xtask --no-run`, and with `--require-shared`
//! fails if that build compiled a library or binary again.
//!
//! `make test` builds the release site first, then this: the tests are in the release profile so
//! that they reuse every crate of the release binary and compile only their own targets. Cargo
//! shares a crate between two builds only where the features of the two agree, and a
//! dev-dependency that turns on a feature of a crate the binary has (reqwest did, for hyper and
//! tower) makes that crate and everything above it (leptos, the app, the server: about ten minutes
//! on 2 cores) compile a second time, silently. Cargo's JSON messages say of each unit whether it
//! was fresh; right after the release build, only test targets may have compiled.

use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

pub const USAGE: &str = "usage: cargo xtask test-build [--require-shared] [--timings]

Builds the tests as `make unit` runs them: cargo test --release --workspace --exclude xtask --no-run.
  --require-shared  fail if a library or binary compiled: run right after `cargo xtask site
                    --release`, the tests must reuse every crate of the release binary
  --timings         pass --timings to cargo (report in target/cargo-timings)";

pub struct Options {
    pub require_shared: bool,
    pub timings: bool,
}

impl Options {
    pub fn parse(args: impl Iterator<Item = String>) -> Result<Options> {
        let mut options = Options {
            require_shared: false,
            timings: false,
        };
        for arg in args {
            match arg.as_str() {
                "--require-shared" => options.require_shared = true,
                "--timings" => options.timings = true,
                _ => bail!("unknown argument `{arg}`\n{USAGE}"),
            }
        }
        Ok(options)
    }
}

pub fn run(root: &Path, options: &Options) -> Result<()> {
    let mut cargo = crate::cargo(root);
    cargo.args([
        "test",
        "--release",
        "--workspace",
        "--exclude",
        "xtask",
        "--no-run",
    ]);
    // JSON on stdout (read below), diagnostics and progress rendered on stderr as usual.
    cargo.arg("--message-format=json-render-diagnostics");
    if options.timings {
        cargo.arg("--timings");
    }
    cargo.stdout(Stdio::piped());
    let mut child = cargo.spawn().context("running cargo test --no-run")?;
    let stdout = child.stdout.take().context("cargo's stdout")?;
    let mut units = Units::default();
    for line in BufReader::new(stdout).lines() {
        units.read(&line.context("reading cargo's output")?);
    }
    let status = child.wait().context("waiting for cargo test --no-run")?;
    if !status.success() {
        bail!("cargo test --release --no-run failed: {status}");
    }
    println!("{}", units.summary());
    if options.require_shared {
        units.require_shared()?;
    }
    Ok(())
}

/// What cargo's `compiler-artifact` messages said of the build.
#[derive(Default)]
struct Units {
    total: usize,
    compiled_tests: usize,
    /// Libraries and binaries (not test targets) that compiled: "name (kind)".
    compiled_others: Vec<String>,
}

impl Units {
    fn read(&mut self, line: &str) {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            return;
        };
        if message["reason"] != "compiler-artifact" {
            return;
        }
        self.total += 1;
        if message["fresh"].as_bool() == Some(true) {
            return;
        }
        let kinds: Vec<&str> = message["target"]["kind"]
            .as_array()
            .map(|kinds| kinds.iter().filter_map(|k| k.as_str()).collect())
            .unwrap_or_default();
        if message["profile"]["test"].as_bool() == Some(true) {
            self.compiled_tests += 1;
        } else if !kinds.contains(&"custom-build") {
            // A build script compiles or runs again harmlessly; a library or binary that compiled
            // is a crate the release binary's build had compiled differently.
            let name = message["target"]["name"].as_str().unwrap_or("?");
            self.compiled_others
                .push(format!("{name} ({})", kinds.join(",")));
        }
    }

    fn summary(&self) -> String {
        format!(
            "xtask: test build: {} units, {} test targets compiled, {} libraries and binaries compiled",
            self.total,
            self.compiled_tests,
            self.compiled_others.len()
        )
    }

    fn require_shared(&self) -> Result<()> {
        if self.total == 0 {
            bail!("cargo reported no compiled units: was --message-format honoured?");
        }
        if !self.compiled_others.is_empty() {
            bail!(
                "the release test build compiled again what the release build had compiled:\n  {}\n\
                 The tests' features differ from the binary's: compare `cargo tree -e features \
                 -p server` with `cargo tree -e features,dev --workspace --exclude xtask` and ask \
                 for the missing features in server/Cargo.toml (see its comment on hyper).",
                self.compiled_others.join("\n  ")
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(name: &str, kind: &str, test: bool, fresh: bool) -> String {
        serde_json::json!({
            "reason": "compiler-artifact",
            "target": {"name": name, "kind": [kind]},
            "profile": {"test": test},
            "fresh": fresh,
        })
        .to_string()
    }

    #[test]
    fn only_test_targets_compiled_is_shared() {
        let mut units = Units::default();
        units.read(&artifact("app", "lib", false, true));
        units.read(&artifact("app", "lib", true, false));
        units.read(&artifact(
            "build-script-build",
            "custom-build",
            false,
            false,
        ));
        units.read("not json");
        units.read(r#"{"reason":"build-finished","success":true}"#);
        assert_eq!(units.total, 3);
        assert_eq!(units.compiled_tests, 1);
        assert!(units.require_shared().is_ok());
    }

    #[test]
    fn a_library_compiled_again_fails_and_is_named() {
        let mut units = Units::default();
        units.read(&artifact("hyper", "lib", false, false));
        units.read(&artifact("claimpool", "bin", false, false));
        let error = units.require_shared().unwrap_err().to_string();
        assert!(error.contains("hyper (lib)"), "{error}");
        assert!(error.contains("claimpool (bin)"), "{error}");
    }

    #[test]
    fn no_artifacts_at_all_fails() {
        assert!(Units::default().require_shared().is_err());
    }
}
