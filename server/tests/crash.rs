//! kill -9 during a run import (issue 13): the `claimpool import run` process is killed at 20
//! random moments. Afterwards the database passes `PRAGMA integrity_check`, nothing of the
//! killed import is visible (no system, no prediction, no import), and the same command then
//! succeeds.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const SYSTEMS: usize = 3;
const KILLS: usize = 20;

fn claimpool(db: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_claimpool"));
    cmd.arg("--db").arg(db);
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    cmd
}

fn ok(mut cmd: Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn demo(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("demo")
        .join(file)
}

/// A canonical run of SYSTEMS systems, each predicting every pair of the demo sample.
fn run_file(dir: &Path) -> PathBuf {
    let ids = |file: &str, field: &str| -> Vec<String> {
        std::fs::read_to_string(demo(file))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()[field].to_string())
            .collect()
    };
    let (claims, docs) = (ids("claims.jsonl", "id"), ids("corpus.jsonl", "doc_id"));
    let mut text = String::new();
    for s in 0..SYSTEMS {
        for (c, claim) in claims.iter().enumerate() {
            for (d, doc) in docs.iter().enumerate() {
                let p = ((s * 7 + c * 13 + d * 31) % 1000) as f64 / 1000.0;
                text.push_str(&format!(
                    "{{\"system\": \"k{s}\", \"claim_id\": {claim}, \"doc_id\": {doc}, \"p_support\": {p}, \"p_contradict\": 0.0}}\n"
                ));
            }
        }
    }
    let path = dir.join("run.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

/// (integrity_check, systems, ready systems, predictions, run imports, imports writing)
async fn state(db: &Path) -> (String, i64, i64, i64, i64, i64) {
    let pool = app::store::open(db).await.unwrap();
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&pool)
        .await
        .unwrap();
    let counts: (i64, i64, i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM systems), (SELECT COUNT(*) FROM systems WHERE ready = 1),
                (SELECT COUNT(*) FROM predictions), (SELECT COUNT(*) FROM imports WHERE kind = 'run'),
                (SELECT COUNT(*) FROM imports WHERE state = 'writing')",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    pool.close().await;
    (integrity, counts.0, counts.1, counts.2, counts.3, counts.4)
}

/// A copy of the database at `from` (with what its write-ahead log holds) at `to`.
async fn copy_db(from: &Path, to: &Path) {
    let pool = app::store::open(from).await.unwrap();
    sqlx::query("VACUUM INTO ?")
        .bind(to.to_str().unwrap())
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
}

/// A small deterministic generator for the kill moments (no dependency for one test).
struct Moments(u64);

impl Moments {
    fn next_fraction(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[tokio::test]
async fn a_run_import_killed_at_any_moment_leaves_nothing_and_can_be_repeated() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.db");
    let mut create = claimpool(&base);
    create.args(["project", "create", "p"]);
    ok(create);
    let mut corpus = claimpool(&base);
    corpus
        .args(["import", "corpus", "--project", "p"])
        .arg(demo("corpus.jsonl"));
    ok(corpus);
    let mut claims = claimpool(&base);
    claims
        .args(["import", "claims", "--project", "p"])
        .arg(demo("claims.jsonl"));
    ok(claims);
    let run = run_file(dir.path());
    let import = |db: &Path| {
        let mut cmd = claimpool(db);
        cmd.args(["import", "run", "--project", "p"]).arg(&run);
        cmd
    };
    let lines = (SYSTEMS * 40 * 443) as i64;
    // One uninterrupted import gives the time over which the kills spread.
    let whole = dir.path().join("whole.db");
    copy_db(&base, &whole).await;
    let started = Instant::now();
    ok(import(&whole));
    let took = started.elapsed();
    let done = ("ok".to_owned(), SYSTEMS as i64, SYSTEMS as i64, lines, 1, 0);
    assert_eq!(state(&whole).await, done);
    let mut moments = Moments(20261124);
    let (mut interrupted, mut mid_write) = (0, 0);
    for kill in 0..KILLS {
        let db = dir.path().join(format!("kill-{kill}.db"));
        copy_db(&base, &db).await;
        let mut child = import(&db).spawn().unwrap();
        let at = took.mul_f64(moments.next_fraction() * 1.1);
        std::thread::sleep(at);
        let finished = child.try_wait().unwrap().is_some();
        child.kill().unwrap();
        child.wait().unwrap();
        let after = state(&db).await;
        assert_eq!(after.0, "ok", "kill {kill} at {at:?}: integrity");
        if after == done {
            // The import had committed its last transaction before the kill.
            continue;
        }
        assert!(!finished, "kill {kill}: the import ended without finishing");
        interrupted += 1;
        if after.5 == 1 {
            mid_write += 1;
        }
        // Nothing of the killed import is visible; what it wrote waits for reclaim.
        assert_eq!(after.2, 0, "kill {kill} at {at:?}: a system is visible");
        let visible: i64 = {
            let pool = app::store::open(&db).await.unwrap();
            let n = sqlx::query_scalar(
                "SELECT COUNT(*) FROM predictions p JOIN systems s ON s.id = p.system_id WHERE s.ready = 1",
            )
            .fetch_one(&pool)
            .await
            .unwrap();
            pool.close().await;
            n
        };
        assert_eq!(visible, 0, "kill {kill} at {at:?}: predictions are visible");
        // The same command then succeeds, and nothing of the killed import remains.
        ok(import(&db));
        assert_eq!(state(&db).await, done, "kill {kill} at {at:?}: the rerun");
        std::fs::remove_file(&db).ok();
    }
    eprintln!(
        "{interrupted} of {KILLS} kills interrupted the import, {mid_write} of them while it wrote (whole import: {took:?})"
    );
    assert!(
        mid_write >= KILLS / 4,
        "only {mid_write} of {KILLS} kills hit the import while it wrote"
    );
}
