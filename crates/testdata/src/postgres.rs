//! A throwaway PostgreSQL cluster owned by the test process: `initdb` into a temporary directory,
//! `pg_ctl start` on a free local port, a fresh database per test, and `pg_ctl stop` when the
//! process exits. Debian's `postgresql` package provides the programs (`make test` installs it).
//! Tests run on a cluster that skips flushing to disk; benchmarks on one that keeps PostgreSQL's
//! durable defaults ([`Durability`]).
//!
//! Without PostgreSQL the tests that need it are skipped with a message, unless
//! `CLAIMPOOL_PG_REQUIRED` is set (as `make test` and CI do): then they fail.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    socket_dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

/// What a cluster does to keep committed data through a crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Nothing: `fsync`, `synchronous_commit` and `full_page_writes` off (tests).
    Throwaway,
    /// PostgreSQL's defaults (every commit flushed to the WAL on disk), with the memory and WAL
    /// sizes an operator gives a server that imports millions of rows (benchmarks).
    Durable,
}

impl Durability {
    /// The server settings of a cluster of this durability.
    pub fn settings(self) -> &'static str {
        match self {
            Durability::Throwaway => {
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            }
            Durability::Durable => "-c shared_buffers=1GB -c max_wal_size=4GB",
        }
    }
}

static CLUSTERS: [OnceLock<Option<Cluster>>; 2] = [OnceLock::new(), OnceLock::new()];
static STOP: Mutex<Vec<(PathBuf, PathBuf, bool)>> = Mutex::new(Vec::new());
static NEXT_DB: AtomicU32 = AtomicU32::new(0);
/// Set when anything in the test process panicked (a failed test, a client task): the process's
/// exit then shows what its clusters' logs say went wrong on the server's side.
static PANICKED: AtomicBool = AtomicBool::new(false);

/// Whether the tests run on PostgreSQL: `CLAIMPOOL_TEST_ENGINE=postgres`, as `make test`'s second
/// pass sets. Otherwise they run on SQLite.
pub fn tests_on_postgres() -> bool {
    std::env::var("CLAIMPOOL_TEST_ENGINE").is_ok_and(|e| e == "postgres")
}

/// A fresh database of the engine the tests run on, as `claimpool --db` takes it: the SQLite
/// file `test.db` in `dir`, or a fresh database on the process's throwaway cluster.
pub fn fresh_test_database(dir: &Path) -> String {
    if tests_on_postgres() {
        fresh_database().expect("PostgreSQL for CLAIMPOOL_TEST_ENGINE=postgres")
    } else {
        dir.join("test.db").display().to_string()
    }
}

/// Waits (10 s at most) until no session of `db` holds a writer's lock: an import's, a pool
/// build's or a release's (`store::writer_lock`, whose PostgreSQL keys carry the 16-bit
/// prefixes 0x6331 to 0x6333). A test that drops a live writer, as a killed process leaves it,
/// calls this before it expects the writer to be seen as gone: PostgreSQL frees a session's lock
/// when it sees the connection close, soon but not at once. On SQLite the operating system frees
/// a lock file with its handle, at once.
pub async fn until_writer_locks_are_freed(db: &sqlx::AnyPool) {
    if !tests_on_postgres() {
        return;
    }
    let start = std::time::Instant::now();
    loop {
        let held = held_writer_locks(db).await;
        if held == 0 {
            return;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "{held} writer locks still held after 10 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// How many writers' locks the sessions of `db` (PostgreSQL) hold.
pub async fn held_writer_locks(db: &sqlx::AnyPool) -> i64 {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM pg_locks
         WHERE locktype = 'advisory' AND objsubid = 1 AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND (classid::bigint >> 16) BETWEEN 25393 AND 25395",
    )
    .fetch_one(db)
    .await
    .expect("read pg_locks")
}

/// A fresh, empty database on the test process's cluster, as a `postgres://` URL; `None` (the
/// caller returns) when PostgreSQL is not installed and not required.
pub fn fresh_database() -> Option<String> {
    fresh_database_on(Durability::Throwaway)
}

/// A fresh, empty database on the process's cluster of `durability`, as a `postgres://` URL;
/// `None` when PostgreSQL is not installed and not required.
pub fn fresh_database_on(durability: Durability) -> Option<String> {
    let (cluster, name) = cluster_and_name(durability, "t")?;
    cluster.psql(&format!("CREATE DATABASE {name}"));
    Some(format!(
        "postgres://postgres@127.0.0.1:{}/{name}",
        cluster.port
    ))
}

/// A copy of the database at `url`, a database of the test process's throwaway cluster that
/// nobody writes to any more, as a URL (`CREATE DATABASE ... TEMPLATE`, which wants no session
/// on the source).
pub fn copy_database(url: &str) -> String {
    let (cluster, name) =
        cluster_and_name(Durability::Throwaway, "t").expect("PostgreSQL to copy a database");
    // A pool the test closed may leave a session ending for a moment after `close()` returns
    // (seen here: one idle session, its last query the test's last read): end it.
    cluster.psql(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{}'",
        database_name(url)
    ));
    cluster.psql(&format!(
        "CREATE DATABASE {name} TEMPLATE {}",
        database_name(url)
    ));
    format!("postgres://postgres@127.0.0.1:{}/{name}", cluster.port)
}

/// Drops the database at `url` of the test process's throwaway cluster, ending its sessions.
pub fn drop_database(url: &str) {
    let cluster = CLUSTERS[Durability::Throwaway as usize]
        .get()
        .and_then(Option::as_ref)
        .expect("the cluster of the database");
    cluster.psql(&format!(
        "DROP DATABASE {} WITH (FORCE)",
        database_name(url)
    ));
}

/// The database a URL of [`fresh_database`] names (a name this file made: no quoting needed).
fn database_name(url: &str) -> &str {
    let name = url.rsplit('/').next().unwrap_or_default();
    assert!(
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        "not a test database: {url}"
    );
    name
}

/// A fresh, empty database on the test process's cluster owned by a new role that is no
/// superuser and has no grants, as a `postgres://` URL that connects as that role; `None` when
/// PostgreSQL is not installed and not required.
pub fn fresh_database_of_plain_role() -> Option<String> {
    let (cluster, name) = cluster_and_name(Durability::Throwaway, "plain")?;
    cluster.psql(&format!("CREATE ROLE {name} LOGIN NOSUPERUSER"));
    cluster.psql(&format!("CREATE DATABASE {name} OWNER {name}"));
    Some(format!(
        "postgres://{name}@127.0.0.1:{}/{name}",
        cluster.port
    ))
}

/// The process's cluster of `durability` (started on first use) and a name no other database
/// or role of it has.
fn cluster_and_name(durability: Durability, prefix: &str) -> Option<(&'static Cluster, String)> {
    let cluster = CLUSTERS[durability as usize]
        .get_or_init(|| start(durability))
        .as_ref()?;
    let name = format!(
        "{prefix}{}_{}",
        std::process::id(),
        NEXT_DB.fetch_add(1, Ordering::SeqCst)
    );
    Some((cluster, name))
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

fn start(durability: Durability) -> Option<Cluster> {
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
        "-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections=200 {}",
        path_str(&cluster.socket_dir),
        durability.settings()
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
    let mut stop = STOP.lock().unwrap();
    if stop.is_empty() {
        note_panics();
        unsafe {
            libc::atexit(stop_at_exit);
        }
    }
    stop.push((cluster.bin.clone(), cluster.data.clone(), as_postgres));
    Some(cluster)
}

extern "C" fn stop_at_exit() {
    let clusters = STOP
        .lock()
        .map(|mut s| std::mem::take(&mut *s))
        .unwrap_or_default();
    for (bin, data, as_postgres) in clusters {
        if PANICKED.load(Ordering::SeqCst) {
            if let Some(summary) = data
                .parent()
                .and_then(|root| log_problems(&root.join("server.log")))
            {
                eprintln!("{summary}");
            }
        }
        let mut command = tool(&bin, "pg_ctl", as_postgres);
        command.args(["-D", path_str(&data), "-m", "immediate", "stop"]);
        let _ = command.output();
        if let Some(root) = data.parent() {
            let _ = std::fs::remove_dir_all(root);
        }
    }
}

/// Chains a panic hook that sets [`PANICKED`] (once per process), except for a panic on one of
/// the store's bulk threads (`crates/store/src/background.rs` names them `bulk: …`): such a panic
/// reaches its caller as an error, and fails a test only through a panic of the test's own
/// thread. (A test makes one on purpose.)
fn note_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let bulk = std::thread::current()
            .name()
            .is_some_and(|name| name.starts_with("bulk: "));
        if !bulk {
            PANICKED.store(true, Ordering::SeqCst);
        }
        previous(info);
    }));
}

/// The errors, fatal errors, panics and crash recoveries of a cluster's log, each distinct
/// message once with its count and first time; `None` when the log has none (or is unreadable).
fn log_problems(log: &Path) -> Option<String> {
    const SIGNS: [&str; 5] = [
        " ERROR:",
        " FATAL:",
        " PANIC:",
        "server process",
        "terminating",
    ];
    let text = std::fs::read_to_string(log).ok()?;
    // "2026-11-27 04:01:02.123 UTC [12345] ERROR:  message": grouped by what follows the pid.
    let mut seen: Vec<(String, &str, usize)> = Vec::new();
    for line in text.lines().filter(|l| SIGNS.iter().any(|s| l.contains(s))) {
        let (when, what) = match line.find("] ") {
            Some(i) => (
                line[..i].rsplit_once(" [").map_or("", |(w, _)| w),
                &line[i + 2..],
            ),
            None => ("", line),
        };
        let what: String = what.chars().take(200).collect();
        match seen.iter_mut().find(|(w, _, _)| *w == what) {
            Some(entry) => entry.2 += 1,
            None => seen.push((what, when, 1)),
        }
    }
    if seen.is_empty() {
        return None;
    }
    let mut out = format!(
        "PostgreSQL test cluster log {} (a test panicked):",
        log.display()
    );
    for (what, when, count) in seen.iter().take(40) {
        out.push_str(&format!("\n  {count:>5} × {what}   (first at {when})"));
    }
    if seen.len() > 40 {
        out.push_str(&format!(
            "\n  … and {} more distinct messages",
            seen.len() - 40
        ));
    }
    Some(out)
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
