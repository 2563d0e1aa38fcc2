//! A throwaway PostgreSQL cluster owned by the test process: `initdb` into a temporary directory,
//! `pg_ctl start` on a free local port, a fresh database per test, and `pg_ctl stop` when the
//! process exits. Debian's `postgresql` package provides the programs (`make test` installs it).
//!
//! Without PostgreSQL the tests that need it are skipped with a message, unless
//! `CLAIMPOOL_PG_REQUIRED` is set (as `make test` and CI do): then they fail.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    socket_dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();
static STOP: Mutex<Option<(PathBuf, PathBuf, bool)>> = Mutex::new(None);
static NEXT_DB: AtomicU32 = AtomicU32::new(0);

/// A fresh, empty database on the test process's cluster, as a `postgres://` URL; `None` (the
/// caller returns) when PostgreSQL is not installed and not required.
pub fn fresh_database() -> Option<String> {
    let cluster = CLUSTER.get_or_init(start).as_ref()?;
    let name = format!(
        "t{}_{}",
        std::process::id(),
        NEXT_DB.fetch_add(1, Ordering::SeqCst)
    );
    cluster.psql(&format!("CREATE DATABASE {name}"));
    Some(format!(
        "postgres://postgres@127.0.0.1:{}/{name}",
        cluster.port
    ))
}

/// The directory holding PostgreSQL's server programs (15 or later), if installed.
pub fn server_bin() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAIMPOOL_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    // Debian: /usr/lib/postgresql/<major>/bin, newest first.
    let mut majors: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            (major >= 15 && bin.join("initdb").is_file()).then_some((major, bin))
        })
        .collect();
    majors.sort();
    majors.pop().map(|(_, bin)| bin)
}

fn start() -> Option<Cluster> {
    let Some(bin) = server_bin() else {
        if std::env::var_os("CLAIMPOOL_PG_REQUIRED").is_some() {
            panic!(
                "CLAIMPOOL_PG_REQUIRED is set but PostgreSQL 15+ is not installed \
                 (apt-get install postgresql, or set CLAIMPOOL_PG_BIN)"
            );
        }
        eprintln!("PostgreSQL 15+ is not installed: skipping this PostgreSQL test");
        return None;
    };
    // The server refuses to run as root: then it runs as the `postgres` user.
    let as_postgres = unsafe { libc::geteuid() } == 0;
    let root = tempfile::Builder::new()
        .prefix("claimpool-pg-")
        .tempdir()
        .expect("temp dir")
        .keep();
    let data = root.join("data");
    if as_postgres {
        run(Command::new("chown").arg("-R").arg("postgres").arg(&root));
    }
    let port = free_port();
    let cluster = Cluster {
        bin,
        data,
        socket_dir: root.clone(),
        port,
        as_postgres,
    };
    cluster.run_tool(
        "initdb",
        &[
            "-D",
            path_str(&cluster.data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ],
    );
    let options = format!(
        "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
         -c full_page_writes=off -c max_connections=200",
        path_str(&cluster.socket_dir)
    );
    let log = root.join("server.log");
    cluster.run_tool(
        "pg_ctl",
        &[
            "-D",
            path_str(&cluster.data),
            "-o",
            &options,
            "-l",
            path_str(&log),
            "-w",
            "start",
        ],
    );
    *STOP.lock().unwrap() = Some((cluster.bin.clone(), cluster.data.clone(), as_postgres));
    unsafe {
        libc::atexit(stop_at_exit);
    }
    Some(cluster)
}

extern "C" fn stop_at_exit() {
    let Some((bin, data, as_postgres)) = STOP.lock().ok().and_then(|mut s| s.take()) else {
        return;
    };
    let mut command = tool(&bin, "pg_ctl", as_postgres);
    command.args(["-D", path_str(&data), "-m", "immediate", "stop"]);
    let _ = command.output();
    if let Some(root) = data.parent() {
        let _ = std::fs::remove_dir_all(root);
    }
}

impl Cluster {
    fn run_tool(&self, name: &str, args: &[&str]) {
        let mut command = tool(&self.bin, name, self.as_postgres);
        command.args(args);
        run(&mut command);
    }

    fn psql(&self, sql: &str) {
        let mut command = tool(&self.bin, "psql", self.as_postgres);
        command.args([
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            "127.0.0.1",
            "-p",
            &self.port.to_string(),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-c",
            sql,
        ]);
        run(&mut command);
    }
}

fn tool(bin: &Path, name: &str, as_postgres: bool) -> Command {
    // psql is a client: Debian keeps it in the same bin directory.
    let program = bin.join(name);
    if as_postgres {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn run(command: &mut Command) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temp path")
}
