//! A `claimpool serve` process of the binary under test, as an operator starts it: its own
//! temporary directory, its log in a file beside it, ready once `/readyz` answers.

#![allow(dead_code)]

use super::cli::command;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// One `claimpool serve` process, killed when dropped.
pub struct Server {
    pub child: Child,
    pub base: String,
    /// Its temporary directory (TMPDIR): where it saves uploads, its own.
    pub tmp: PathBuf,
    db: String,
    args: Vec<String>,
}

/// Spawns `claimpool serve` on a port free a moment ago; the process and its base URL.
fn spawn(db: &str, tmp: &Path, args: &[String]) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = std::fs::File::create(tmp.with_extension("log")).unwrap();
    let child = command()
        .args(["serve", "--db", db, "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .args(args)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    (child, format!("http://127.0.0.1:{port}"))
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts a server on `db` with `args`, its temporary directory `tmp` (made if missing).
    pub fn start(db: &str, tmp: &Path, args: &[&str]) -> Server {
        std::fs::create_dir_all(tmp).unwrap();
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let (child, base) = spawn(db, tmp, &args);
        Server {
            child,
            base,
            tmp: tmp.to_owned(),
            db: db.to_owned(),
            args,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.tmp.with_extension("log")).unwrap_or_default()
    }

    /// Waits (60 s at most) until `/readyz` answers 200; false if the process exited first.
    /// A server whose port another process took between the test's pick and its own bind (the
    /// tests run at once) starts again on another port.
    pub async fn ready(&mut self) -> bool {
        let client = crate::common::client_builder().build().unwrap();
        let start = Instant::now();
        let mut respawns = 0;
        while start.elapsed() < Duration::from_secs(60) {
            if let Ok(Some(_)) = self.child.try_wait() {
                if respawns < 5 && self.log().contains("Address already in use") {
                    respawns += 1;
                    (self.child, self.base) = spawn(&self.db, &self.tmp, &self.args);
                    continue;
                }
                return false;
            }
            if let Ok(res) = client.get(self.url("/readyz")).send().await {
                if res.status() == 200 {
                    return true;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    pub async fn logged_in(&self, name: &str) -> reqwest::Client {
        let client = crate::common::client_builder()
            .cookie_store(true)
            .build()
            .unwrap();
        let res = client
            .post(self.url("/api/login"))
            .form(&[
                ("username", name),
                ("password", crate::common::PASSWORD),
                ("next", "/"),
            ])
            .send()
            .await
            .unwrap();
        assert!(
            res.status().is_success(),
            "login of {name}: {}",
            res.status()
        );
        client
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Server {
    /// Sends SIGTERM (what a service manager sends to stop it) and waits (at most `within`) for
    /// the process to exit; its exit status.
    pub fn terminate(&mut self, within: Duration) -> std::process::ExitStatus {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: kill(2) on the test's own child process.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("the child") {
                return status;
            }
            assert!(
                start.elapsed() < within,
                "the server did not stop in {within:?}: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Server {
    /// Starts, through this server as `lead`, a pipeline job of `project` whose external
    /// command never ends (the servers must offer `--pipeline-command hang=sleep 600`); its id.
    pub async fn start_hanging_job(&self, lead: &reqwest::Client, project: &str) -> i64 {
        let res = lead
            .post(self.url("/api/pipeline/start"))
            .form(&[
                ("project", project),
                ("retriever", "bm25"),
                ("k", "5"),
                ("scorer", "external"),
                ("command", "hang"),
                ("system", "hanging"),
                ("role", "pooled"),
            ])
            .send()
            .await
            .unwrap();
        assert!(
            res.status().is_success(),
            "{}",
            crate::common::error_message(res).await
        );
        let job: serde_json::Value = res.json().await.unwrap();
        job["id"].as_i64().expect("the job's id")
    }
}
