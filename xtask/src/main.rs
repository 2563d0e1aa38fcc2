//! The workspace's build steps, with no build tool to install: `cargo xtask site` (below) and
//! `cargo xtask test-build` (test_build.rs: the release test build, checked to share the release
//! binary's crates).
//!
//! `cargo xtask site [--release] [--timings]`: builds the site the way `cargo leptos build` does
//! for this workspace (see `[[workspace.metadata.leptos]]` in the root Cargo.toml), without a
//! build tool to install:
//!
//! 1. the front end: `app` as a wasm32 cdylib with the `hydrate` feature (profile `wasm-release`
//!    for a release, `dev` otherwise), in `target/front` as cargo-leptos does;
//! 2. the module split at its lazy points (split.rs), then wasm-bindgen (target `web`) on the
//!    main module into `target/site/pkg`: `claimpool.js` and `claimpool.wasm`, beside the split
//!    modules and their loader;
//! 3. for a release, npm binaryen's `wasm-opt -Oz` on `claimpool.wasm` (Debian's older wasm-opt
//!    writes a module that never hydrates);
//! 4. `style/main.css` as `target/site/pkg/claimpool.css`;
//! 5. the server, `target/{release,debug}/claimpool`;
//! 6. for a release, brotli and gzip copies of the files of 2–4 and their manifest
//!    (compress.rs), which the server sends instead of compressing each response.
//!
//! The server (5) builds at the same time as 1–4: its largest crate, the app with `ssr`, spends
//! minutes in rustc's single-threaded front end, and the front end's build and wasm-opt use the
//! other core meanwhile.

mod compress;
mod rustc_wrapper;
mod split;
mod test_build;

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// `output-name` of the leptos metadata: the file names of the site's package.
const OUTPUT_NAME: &str = "claimpool";
const SITE_PKG_DIR: &str = "pkg";
const STYLE_FILE: &str = "style/main.css";
const LIB_PACKAGE: &str = "app";
const LIB_FEATURES: &str = "hydrate";
const LIB_PROFILE_RELEASE: &str = "wasm-release";
const BIN_PACKAGE: &str = "server";
const BIN_TARGET: &str = "claimpool";
const SITE_ADDR: &str = "127.0.0.1:3000";
const RELOAD_PORT: &str = "3001";
/// cargo-leptos's release flags for wasm-opt.
const WASM_OPT_ARGS: [&str; 3] = [
    "-Oz",
    "--enable-bulk-memory",
    "--enable-nontrapping-float-to-int",
];

const USAGE: &str =
    "usage: cargo xtask site [--release] [--timings] [--deny-warnings] [--with-tests]

Builds the site like `cargo leptos build [--release]`: the wasm front end, wasm-bindgen,
wasm-opt (release), the stylesheet, and the server binary.
  --release        release build (front end with the wasm-release profile and wasm-opt)
  --timings        pass --timings to both cargo builds (reports in target/cargo-timings and
                   target/front/cargo-timings)
  --deny-warnings  the workspace's crates compile with warnings as errors, through the rustc
                   wrapper (xtask/src/rustc_wrapper.rs): the same code, linted
  --with-tests     (release only) the tests too, in the same cargo run as the server, as
                   `cargo xtask test-build --clippy` builds them (`make test`): cargo then
                   compiles test harnesses while the server's last crates leave a core idle.
                   The binary's own build that follows must compile nothing (checked)";

struct Options {
    release: bool,
    timings: bool,
    deny_warnings: bool,
    with_tests: bool,
}

fn main() {
    // Started by cargo as the rustc wrapper of `cargo xtask test-build`.
    if let Some(code) = rustc_wrapper::run_if_invoked() {
        std::process::exit(code);
    }
    if let Err(e) = run() {
        eprintln!("xtask: error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("site") => {}
        Some("test-build") => {
            let options = test_build::Options::parse(args)?;
            return test_build::run(&workspace_root(), &options);
        }
        Some("test") => return test_build::run_tests(&workspace_root(), args),
        Some("-h" | "--help" | "help") => {
            println!(
                "{USAGE}\n\n{}\n\n{}",
                test_build::USAGE,
                test_build::RUN_USAGE
            );
            return Ok(());
        }
        _ => bail!(
            "{USAGE}\n\n{}\n\n{}",
            test_build::USAGE,
            test_build::RUN_USAGE
        ),
    }
    let [release, timings, deny_warnings, with_tests] = switches(
        args,
        ["--release", "--timings", "--deny-warnings", "--with-tests"],
        USAGE,
    )?;
    if with_tests && !release {
        bail!("--with-tests builds the release profile's tests: add --release\n{USAGE}");
    }
    let options = Options {
        release,
        timings,
        deny_warnings,
        with_tests,
    };
    let root = workspace_root();
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    };
    site(&root, &target, &options)
}

/// Reads a subcommand's arguments, each one of the on/off `names`: which were given, in the
/// order of `names`. Anything else is refused with the subcommand's `usage`.
fn switches<const N: usize>(
    args: impl Iterator<Item = String>,
    names: [&str; N],
    usage: &str,
) -> Result<[bool; N]> {
    let mut given = [false; N];
    for arg in args {
        match names.iter().position(|name| *name == arg) {
            Some(i) => given[i] = true,
            None => bail!("unknown argument `{arg}`\n{usage}"),
        }
    }
    Ok(given)
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

fn site(root: &Path, target: &Path, options: &Options) -> Result<()> {
    let start = Instant::now();
    let site_root = target.join("site");
    let pkg = site_root.join(SITE_PKG_DIR);
    std::fs::create_dir_all(&pkg).with_context(|| format!("creating {}", pkg.display()))?;
    let envs = leptos_envs(root, &site_root);

    // 5. The server, with the environment cargo-leptos gives it, beside steps 1-4 (with
    //    --with-tests, the tests' build, which compiles the server binary among them).
    let server_build = |lint: bool| -> Result<Command> {
        let mut cargo = cargo(root);
        cargo.arg("build");
        cargo.args(server_build_args());
        if options.release {
            cargo.arg("--release");
        }
        if options.timings && !options.with_tests {
            cargo.arg("--timings");
        }
        cargo.envs(envs.iter().map(|(k, v)| (k, v)));
        if lint {
            rustc_wrapper::lint_with(&mut cargo, rustc_wrapper::Lint::DenyWarnings)?;
        }
        Ok(cargo)
    };
    let server_started = Instant::now();
    let mut server = if options.with_tests {
        println!("xtask: server and tests (beside the front end)");
        let mut cargo = test_build::command(root, options.timings, true)?;
        cargo.envs(envs.iter().map(|(k, v)| (k, v)));
        Running::spawn(cargo)?
    } else {
        println!("xtask: server (beside the front end)");
        Running::spawn(server_build(options.deny_warnings)?)?
    };
    front_end(root, target, &pkg, &envs, options)?;
    println!("xtask: waiting for the server");
    server.wait()?;
    if options.with_tests {
        // The binary as `cargo xtask site --release` builds it: every unit of it must be one the
        // tests' build has just compiled, or users would run a binary CI never built.
        let built = test_build::units_of(
            server_build(true)?,
            "cargo build --release (the server binary)",
        )?;
        test_build::require_fresh(&built)?;
    }
    println!(
        "xtask: server took {:.1} s",
        server_started.elapsed().as_secs_f64()
    );

    let profile = if options.release { "release" } else { "debug" };
    println!(
        "xtask: site built in {:.1} s: {} and {}",
        start.elapsed().as_secs_f64(),
        pkg.strip_prefix(root).unwrap_or(&pkg).display(),
        Path::new("target").join(profile).join(BIN_TARGET).display()
    );
    Ok(())
}

/// A cargo build running beside the others; killed if it is dropped unwaited (a failed front
/// end ends the whole build).
struct Running {
    child: Option<std::process::Child>,
    what: String,
}

impl Running {
    fn spawn(mut cmd: Command) -> Result<Running> {
        let what = format!("{cmd:?}");
        let child = cmd.spawn().with_context(|| format!("running {what}"))?;
        Ok(Running {
            child: Some(child),
            what,
        })
    }

    fn wait(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let status = child
            .wait()
            .with_context(|| format!("waiting for {}", self.what))?;
        if !status.success() {
            bail!("{} failed: {status}", self.what);
        }
        Ok(())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Steps 1-4: the wasm front end, wasm-bindgen, wasm-opt and the stylesheet, into `pkg`.
fn front_end(
    root: &Path,
    target: &Path,
    pkg: &Path,
    envs: &[(&'static str, String)],
    options: &Options,
) -> Result<()> {
    // 1. The front end, in its own target directory as cargo-leptos builds it (its own build
    //    lock: it does not wait for the server's builds, and `cargo leptos` reuses it).
    let front_target = target.join("front");
    let wasm_profile = if options.release {
        LIB_PROFILE_RELEASE
    } else {
        "dev"
    };
    step("front end (wasm)", || {
        let mut cargo = cargo(root);
        cargo.args(["build", "--package", LIB_PACKAGE, "--lib"]);
        cargo.arg("--target-dir").arg(&front_target);
        cargo.args(["--target", "wasm32-unknown-unknown"]);
        cargo.args(["--no-default-features", "--features", LIB_FEATURES]);
        cargo.args(["--profile", wasm_profile]);
        if options.timings {
            cargo.arg("--timings");
        }
        cargo.envs(envs.iter().map(|(k, v)| (k, v)));
        // As cargo-leptos builds the front end (no effect on the wasm; `cargo leptos build
        // --release` then reuses what is compiled in target/front).
        cargo.env("LEPTOS_OUTPUT_NAME", OUTPUT_NAME);
        if options.deny_warnings {
            rustc_wrapper::lint_with(&mut cargo, rustc_wrapper::Lint::DenyWarnings)?;
        }
        run_command(&mut cargo)
    })?;
    let wasm_dir = if options.release {
        LIB_PROFILE_RELEASE
    } else {
        "debug"
    };
    let input = front_target
        .join("wasm32-unknown-unknown")
        .join(wasm_dir)
        .join(format!("{LIB_PACKAGE}.wasm"));

    // 2a. The split at the lazy points (split.rs): the main module goes on to wasm-bindgen.
    let main_module = input.with_file_name(format!("{LIB_PACKAGE}_split.wasm"));
    let mut split_modules = Vec::new();
    step("wasm-split", || {
        split_modules = split::split(&input, pkg, &main_module)?;
        println!("xtask: {} split modules", split_modules.len());
        Ok(())
    })?;

    // 2. wasm-bindgen, as the CLI's `--target web --out-name claimpool` does; the wasm is renamed
    //    from claimpool_bg.wasm to claimpool.wasm as cargo-leptos renames it (the name leptos's
    //    <HydrationScripts> asks for in a server built with LEPTOS_OUTPUT_NAME, as cargo-leptos
    //    builds it).
    let wasm = pkg.join(format!("{OUTPUT_NAME}.wasm"));
    step("wasm-bindgen", || {
        let mut bindgen = wasm_bindgen_cli_support::Bindgen::new();
        bindgen
            .input_path(&main_module)
            // The split modules call the main module's functions by the linker's export names.
            .keep_lld_exports(true)
            .out_name(OUTPUT_NAME)
            .web(true)?
            .typescript(false)
            .debug(false)
            .keep_debug(false);
        bindgen
            .generate(pkg)
            .with_context(|| format!("wasm-bindgen on {}", input.display()))?;
        let emitted = pkg.join(format!("{OUTPUT_NAME}_bg.wasm"));
        std::fs::rename(&emitted, &wasm)
            .with_context(|| format!("renaming {} to {}", emitted.display(), wasm.display()))
    })?;

    // 3. wasm-opt, release only, npm binaryen's (end2end/node_modules).
    if options.release {
        step("wasm-opt", || {
            let wasm_opt = root.join("end2end/node_modules/.bin/wasm-opt");
            if !wasm_opt.exists() {
                bail!(
                    "{} is missing: run `make setup-build` (or `cd end2end && npm ci`)",
                    wasm_opt.display()
                );
            }
            for module in std::iter::once(&wasm).chain(&split_modules) {
                let mut cmd = Command::new(&wasm_opt);
                cmd.args(WASM_OPT_ARGS).arg(module).arg("-o").arg(module);
                run_command(&mut cmd)?;
            }
            Ok(())
        })?;
    }
    // A server built without LEPTOS_OUTPUT_NAME (this build's, and any plain `cargo build -p
    // server`) asks for wasm-bindgen's own name, claimpool_bg.wasm: the same module under it.
    let plain = pkg.join(format!("{OUTPUT_NAME}_bg.wasm"));
    let _ = std::fs::remove_file(&plain);
    std::fs::hard_link(&wasm, &plain)
        .or_else(|_| std::fs::copy(&wasm, &plain).map(drop))
        .with_context(|| format!("writing {}", plain.display()))?;

    // 4. The stylesheet.
    let css = pkg.join(format!("{OUTPUT_NAME}.css"));
    std::fs::copy(root.join(STYLE_FILE), &css)
        .with_context(|| format!("copying {STYLE_FILE} to {}", css.display()))?;

    // 6. Release only: the compressed copies the server sends (compress.rs).
    if options.release {
        step("compress", || {
            let (plain, br) = compress::precompress(pkg)?;
            println!("xtask: {plain} bytes of js, wasm and css, {br} with brotli");
            Ok(())
        })
    } else {
        compress::remove(pkg)
    }
}

/// What cargo-leptos sets for both cargo builds, but `LEPTOS_OUTPUT_NAME`. Only that one changes
/// what is compiled (leptos reads it with `option_env!`: set, <HydrationScripts> asks for
/// `claimpool.wasm`; unset, for `claimpool_bg.wasm`, and the site has both); the others are read
/// at run time by `get_configuration`, which the server does not use. Without it the server is
/// exactly what `cargo build -p server [--release]` builds: `cargo test`, `cargo bench` and a plain
/// release build share its compiled dependencies instead of rebuilding leptos and everything that
/// depends on it whenever one follows the other.
fn leptos_envs(root: &Path, site_root: &Path) -> Vec<(&'static str, String)> {
    let site_root = site_root.strip_prefix(root).unwrap_or(site_root);
    vec![
        ("LEPTOS_SITE_ROOT", site_root.display().to_string()),
        ("LEPTOS_SITE_PKG_DIR", SITE_PKG_DIR.to_string()),
        ("LEPTOS_SITE_ADDR", SITE_ADDR.to_string()),
        ("LEPTOS_RELOAD_PORT", RELOAD_PORT.to_string()),
        ("LEPTOS_LIB_DIR", LIB_PACKAGE.to_string()),
        ("LEPTOS_BIN_DIR", BIN_PACKAGE.to_string()),
        // cargo-leptos minifies the JS glue with swc; this build does not (it would mean
        // compiling swc), so it says so.
        ("LEPTOS_JS_MINIFY", "false".to_string()),
        ("LEPTOS_HASH_FILES", "false".to_string()),
    ]
}

/// What `cargo build` builds for the server binary (the profile aside): the same in the site
/// build and in test_build's list of the binary's units.
fn server_build_args() -> [&'static str; 5] {
    [
        "--package",
        BIN_PACKAGE,
        "--bin",
        BIN_TARGET,
        "--no-default-features",
    ]
}

fn cargo(root: &Path) -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root);
    cmd
}

fn run_command(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("running {:?}", cmd.get_program()))?;
    if !status.success() {
        bail!("{cmd:?} failed: {status}");
    }
    Ok(())
}

/// Runs one step and prints how long it took.
fn step(name: &str, f: impl FnOnce() -> Result<()>) -> Result<()> {
    println!("xtask: {name}");
    let start = Instant::now();
    f()?;
    println!("xtask: {name} took {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}
