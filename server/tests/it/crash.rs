//! kill -9 (issue 13): the `claimpool` process is killed at 20 seeded random moments during each
//! import kind (corpus, claims, run, judgments), a pool build and a release export. Afterwards
//! the database passes `PRAGMA integrity_check` (SQLite), what a reader sees is either everything
//! the command does or nothing of it, and the same command then succeeds. On the engine the
//! tests run on: SQLite files, or databases of the test process's PostgreSQL cluster.

use crate::common;
use common::{open_db as open, postgres};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Kills per command (issue 13: 20 or more): each costs a database copy, the killed run and a
/// rerun. `make test` runs the release binary here (`support::cli::claimpool_bin`), in which they
/// take a fraction of a debug build's time.
const KILLS: usize = 20;
/// Systems of the generated run.
const SYSTEMS: usize = 3;
/// Copies of the demo sample's abstracts and claims in the generated corpus and claims, so
/// that each command runs long enough for kills to land inside it.
const COPIES: usize = 8;

fn claimpool(db: &str) -> Command {
    let mut cmd = crate::support::cli::command();
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

fn demo_lines(file: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(demo(file))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The id of copy `copy` of a demo id: copy 0 keeps it.
fn copied(id: &serde_json::Value, copy: usize) -> u64 {
    id.as_u64().unwrap() + copy as u64 * 1_000_000_000
}

/// The generated inputs: COPIES copies of the demo corpus and claims under new ids (each
/// claim's evidence and citations point to its own copy of the abstracts) and a canonical run
/// of SYSTEMS systems over the first copy's claims × documents.
struct Inputs {
    corpus: PathBuf,
    claims: PathBuf,
    run: PathBuf,
}

fn inputs(dir: &Path) -> Inputs {
    let (docs, claims) = (demo_lines("corpus.jsonl"), demo_lines("claims.jsonl"));
    let mut corpus = String::new();
    let mut claims_text = String::new();
    for copy in 0..COPIES {
        for doc in &docs {
            let mut doc = doc.clone();
            doc["doc_id"] = copied(&doc["doc_id"], copy).into();
            corpus.push_str(&format!("{doc}\n"));
        }
        for claim in &claims {
            let mut claim = claim.clone();
            claim["id"] = copied(&claim["id"], copy).into();
            let evidence: serde_json::Map<String, serde_json::Value> = claim["evidence"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(doc, sets)| {
                    let doc: u64 = doc.parse().unwrap();
                    (
                        (doc + copy as u64 * 1_000_000_000).to_string(),
                        sets.clone(),
                    )
                })
                .collect();
            claim["evidence"] = evidence.into();
            let cited: Vec<u64> = claim["cited_doc_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| copied(d, copy))
                .collect();
            claim["cited_doc_ids"] = cited.into();
            claims_text.push_str(&format!("{claim}\n"));
        }
    }
    let mut run = String::new();
    for s in 0..SYSTEMS {
        for (c, claim) in claims.iter().enumerate() {
            for (d, doc) in docs.iter().enumerate() {
                let p = ((s * 7 + c * 13 + d * 31) % 1000) as f64 / 1000.0;
                run.push_str(&format!(
                    "{{\"system\": \"k{s}\", \"claim_id\": {}, \"doc_id\": {}, \"p_support\": {p}, \"p_contradict\": 0.0}}\n",
                    claim["id"], doc["doc_id"]
                ));
            }
        }
    }
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    Inputs {
        corpus: write("corpus.jsonl", corpus),
        claims: write("claims.jsonl", claims_text),
        run: write("run.jsonl", run),
    }
}

/// A copy of the database `from` (on SQLite with what its write-ahead log holds, into `dir` as
/// `name`.db; on PostgreSQL a new database of the cluster), as `--db` takes it.
///
/// On SQLite the log is checkpointed into the file, which is then copied as it is: `from` is a
/// step's database, which nothing writes any more. `VACUUM INTO` rebuilt every table and index
/// of each copy instead (the pool/export test alone: 95.9 s with it, 87.2 s without).
async fn copy_db(from: &str, dir: &Path, name: &str) -> String {
    if postgres::tests_on_postgres() {
        return postgres::copy_database(from);
    }
    let to = dir.join(format!("{name}.db"));
    let pool = open(from).await;
    let (busy, _, _): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(busy, 0, "{from}: the log could not be checkpointed");
    pool.close().await;
    std::fs::copy(from, &to).unwrap();
    to.display().to_string()
}

fn remove_db(db: &str) {
    if postgres::tests_on_postgres() {
        postgres::drop_database(db);
    } else {
        std::fs::remove_file(db).ok();
    }
}

/// What a reader of the database sees: its integrity, then each query's count. On SQLite the
/// integrity is `PRAGMA integrity_check`'s answer; PostgreSQL has no such check to run (its
/// write-ahead log replays or drops whole transactions), and it is "ok".
async fn visible(db: &str, queries: &[&str]) -> (String, Vec<i64>) {
    let pool = open(db).await;
    let integrity: String = match store::engine(&pool) {
        store::Engine::Sqlite => sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_one(&pool)
            .await
            .unwrap(),
        store::Engine::Postgres => "ok".to_owned(),
    };
    let counts = counts_on(&pool, queries).await;
    pool.close().await;
    (integrity, counts)
}

/// Each query's count (SELECT COUNT(*) ...) on `pool`.
async fn counts_on(pool: &store::Db, queries: &[&str]) -> Vec<i64> {
    let mut counts = Vec::new();
    for sql in queries {
        counts.push(sqlx::query_scalar(sql).fetch_one(pool).await.unwrap());
    }
    counts
}

/// One command killed at KILLS moments.
struct Scenario<'a> {
    name: &'a str,
    /// The database the command starts from.
    base: &'a str,
    /// The command on a database.
    command: &'a dyn Fn(&str) -> Command,
    /// Counts of what readers see (SELECT COUNT(*) ...), which the command changes.
    visible: &'a [&'a str],
    /// A directory the command writes (release export): absent or complete after each kill.
    out: Option<&'a Path>,
}

/// How many kills interrupted the command, and the state on which it was done.
struct Killed {
    interrupted: usize,
    /// Kills after which an import or a pool build was left `writing` (its rows not visible).
    mid_write: usize,
    /// Kills after which a pool build left `writing` had written some of its entries.
    mid_chunks: usize,
}

fn files_in(dir: &Path) -> usize {
    walk(dir).len()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// What a killed command left half done: imports and pool builds left `writing` (their rows
/// hidden), and the entries such pool builds wrote. Read after [`visible`] has checked the
/// database's integrity.
async fn left_writing(db: &str) -> (i64, i64) {
    let pool = open(db).await;
    let counts = counts_on(
        &pool,
        &[
            "SELECT (SELECT COUNT(*) FROM imports WHERE state = 'writing')
                + (SELECT COUNT(*) FROM pool_build_rows WHERE state = 'writing')",
            "SELECT COUNT(*) FROM pool_entry_rows e JOIN pool_build_rows b ON b.id = e.build_id
           WHERE b.state = 'writing'",
        ],
    )
    .await;
    pool.close().await;
    (counts[0], counts[1])
}

async fn kill_at_random(s: Scenario<'_>, seed: u64) -> Killed {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let before = visible(s.base, s.visible).await;
    assert_eq!(before.0, "ok");
    // One uninterrupted run gives the state after it and the time over which the kills spread.
    let whole = copy_db(s.base, dir, "whole").await;
    let started = Instant::now();
    ok((s.command)(&whole));
    // The kills spread over this span; it shrinks to the moment of any kill that finds the
    // command already ended (a first run slowed by a busy machine would otherwise put most kills
    // after the end of the faster runs that follow).
    let mut took = started.elapsed();
    let first_run = took;
    let done = visible(&whole, s.visible).await;
    assert_ne!(done, before, "{}: the command changed nothing", s.name);
    let complete = s.out.map(files_in);
    if let Some(out) = s.out {
        assert!(complete > Some(0), "{}: nothing written", s.name);
        std::fs::remove_dir_all(out).unwrap();
    }
    let mut moments = ChaCha8Rng::seed_from_u64(seed);
    let mut killed = Killed {
        interrupted: 0,
        mid_write: 0,
        mid_chunks: 0,
    };
    for kill in 0..KILLS {
        let db = copy_db(s.base, dir, &format!("kill-{kill}")).await;
        let mut child = (s.command)(&db).spawn().unwrap();
        let at = took.mul_f64(moments.gen_range(0.2..1.1));
        std::thread::sleep(at);
        let finished = child.try_wait().unwrap().is_some();
        child.kill().unwrap();
        child.wait().unwrap();
        if postgres::tests_on_postgres() {
            // PostgreSQL ends the killed process's sessions, and frees its locks, when it sees
            // their connections closed: soon, not at once.
            let pool = open(&db).await;
            postgres::until_writer_locks_are_freed(&pool).await;
            pool.close().await;
        }
        let after = visible(&db, s.visible).await;
        let what = format!("{}: kill {kill} at {at:?} of {took:?}", s.name);
        assert_eq!(after.0, "ok", "{what}: integrity");
        assert!(
            after == before || after == done,
            "{what}: a partial state is visible: {:?} (before {:?}, done {:?})",
            after.1,
            before.1,
            done.1
        );
        let files = s.out.map(files_in);
        if let (Some(files), Some(complete)) = (files, complete) {
            assert!(
                files == 0 || files == complete,
                "{what}: {files} of {complete} release files written"
            );
        }
        if after == done && files == complete {
            // The command had finished before the kill.
            if finished {
                took = took.min(at);
            }
            if let Some(out) = s.out {
                std::fs::remove_dir_all(out).unwrap();
            }
            remove_db(&db);
            continue;
        }
        assert!(!finished, "{what}: the command ended without finishing");
        killed.interrupted += 1;
        let (writing, hidden_entries) = left_writing(&db).await;
        if writing > 0 {
            killed.mid_write += 1;
        }
        if hidden_entries > 0 {
            killed.mid_chunks += 1;
        }
        // The same command then succeeds, and leaves what an uninterrupted run leaves.
        ok((s.command)(&db));
        assert_eq!(visible(&db, s.visible).await, done, "{what}: the rerun");
        assert_eq!(left_writing(&db).await.0, 0, "{what}: the rerun");
        if let Some(out) = s.out {
            assert_eq!(Some(files_in(out)), complete, "{what}: the rerun's files");
            std::fs::remove_dir_all(out).unwrap();
        }
        remove_db(&db);
    }
    eprintln!(
        "{}: {} of {KILLS} kills interrupted it, {} left an import or a pool build writing, {} a pool build with entries written (whole command: {first_run:?}, kills spread over {took:?} at the end)",
        s.name, killed.interrupted, killed.mid_write, killed.mid_chunks
    );
    assert!(
        killed.interrupted >= KILLS / 4,
        "{}: only {} of {KILLS} kills interrupted the command",
        s.name,
        killed.interrupted
    );
    killed
}

/// Databases at each step of a project's life: `created` (project and the judging user), then
/// `corpus`, `claims`, `run` and `pooled` (pool at depth 300 with two annotators).
struct Steps {
    dir: tempfile::TempDir,
    inputs: Inputs,
    /// Each step's database, as `--db` takes it.
    dbs: std::collections::HashMap<&'static str, String>,
}

impl Steps {
    fn db(&self, step: &str) -> &str {
        &self.dbs[step]
    }

    async fn new() -> Steps {
        let dir = tempfile::tempdir().unwrap();
        let inputs = inputs(dir.path());
        let mut steps = Steps {
            dbs: [("created", postgres::fresh_test_database(dir.path()))].into(),
            dir,
            inputs,
        };
        let created = steps.db("created").to_owned();
        let mut create = claimpool(&created);
        create.args(["project", "create", "p"]);
        ok(create);
        for name in ["judge", "ann1", "ann2"] {
            let mut add = claimpool(&created);
            add.args(["user", "add", "--username", name, "--role", "annotator"])
                .arg("--password-stdin")
                .stdin(Stdio::piped());
            let mut child = add.spawn().unwrap();
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(b"a long password\n")
                .unwrap();
            assert!(child.wait().unwrap().success());
        }
        // The judge's judgments are imported below: judgments are a member's (issue 35).
        let mut member = claimpool(&created);
        member.args([
            "project",
            "member",
            "add",
            "--project",
            "p",
            "--user",
            "judge",
        ]);
        member.args(["--role", "annotator"]);
        ok(member);
        let mut previous = created;
        for (step, command) in [
            ("corpus", steps.import_corpus()),
            ("claims", steps.import_claims()),
            ("run", steps.import_run()),
            (
                "pooled",
                Box::new(pool_build) as Box<dyn Fn(&str) -> Command>,
            ),
        ] {
            let db = copy_db(&previous, steps.dir.path(), step).await;
            if step == "pooled" {
                for name in ["ann1", "ann2"] {
                    add_member(&db, name).await;
                }
            }
            ok(command(&db));
            steps.dbs.insert(step, db.clone());
            previous = db;
        }
        steps
    }

    fn import_corpus(&self) -> Box<dyn Fn(&str) -> Command> {
        import("corpus", self.inputs.corpus.clone())
    }

    fn import_claims(&self) -> Box<dyn Fn(&str) -> Command> {
        import("claims", self.inputs.claims.clone())
    }

    fn import_run(&self) -> Box<dyn Fn(&str) -> Command> {
        import("run", self.inputs.run.clone())
    }
}

/// `claimpool import KIND --project p FILE` on a database.
fn import(kind: &'static str, file: PathBuf) -> Box<dyn Fn(&str) -> Command> {
    Box::new(move |db| {
        let mut cmd = claimpool(db);
        cmd.args(["import", kind, "--project", "p"]).arg(&file);
        cmd
    })
}

fn pool_build(db: &str) -> Command {
    let mut cmd = claimpool(db);
    cmd.args(["pool", "build", "--project", "p", "--depth", "300"]);
    cmd
}

async fn add_member(db: &str, name: &str) {
    let pool = open(db).await;
    let user: i64 = sqlx::query_scalar("SELECT id FROM users WHERE username = $1")
        .bind(name)
        .fetch_one(&pool)
        .await
        .unwrap();
    let project = store::projects::id_by_name(&pool, "p").await.unwrap();
    store::projects::add_member(
        &pool,
        project,
        user,
        app::domain::account::ProjectRole::Annotator,
        None,
    )
    .await
    .unwrap();
    pool.close().await;
}

const IMPORTS: &str = "SELECT COUNT(*) FROM imports WHERE state = 'done'";
const AUDIT: &str = "SELECT COUNT(*) FROM audit_events";

#[tokio::test]
async fn imports_killed_at_any_moment_leave_all_or_nothing_and_can_be_repeated() {
    let steps = Steps::new().await;
    kill_at_random(
        Scenario {
            name: "corpus",
            base: steps.db("created"),
            command: &steps.import_corpus(),
            visible: &["SELECT COUNT(*) FROM documents", IMPORTS, AUDIT],
            out: None,
        },
        1,
    )
    .await;
    kill_at_random(
        Scenario {
            name: "claims",
            base: steps.db("corpus"),
            command: &steps.import_claims(),
            visible: &[
                "SELECT COUNT(*) FROM claims",
                "SELECT COUNT(*) FROM judgments",
                "SELECT COUNT(*) FROM final_labels",
                IMPORTS,
                AUDIT,
            ],
            out: None,
        },
        2,
    )
    .await;
    let run = kill_at_random(
        Scenario {
            name: "run",
            base: steps.db("claims"),
            command: &steps.import_run(),
            visible: &[
                "SELECT COUNT(*) FROM systems WHERE ready = 1",
                "SELECT COUNT(*) FROM predictions p JOIN systems s ON s.id = p.system_id WHERE s.ready = 1",
                IMPORTS,
                AUDIT,
            ],
            out: None,
        },
        3,
    )
    .await;
    // A run import writes in chunks: kills must also land between its transactions.
    assert!(
        run.mid_write >= KILLS / 4,
        "only {} of {KILLS} kills hit the run import while it wrote",
        run.mid_write
    );
    // Final judgments of every pooled pair without a final label yet, from a qrels file.
    let pooled = steps.db("pooled");
    let qrels = steps.dir.path().join("judgments.qrels");
    {
        let pool = open(pooled).await;
        let pairs: Vec<(String, String)> = sqlx::query_as(
            "SELECT c.claim_id, d.doc_id FROM pool_entries e JOIN claims c ON c.id = e.claim_id
             JOIN documents d ON d.id = e.doc_id
             WHERE NOT EXISTS (SELECT 1 FROM final_labels f
                               WHERE f.claim_id = e.claim_id AND f.doc_id = e.doc_id)
             ORDER BY e.id",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        pool.close().await;
        assert!(pairs.len() >= 300, "{} pooled pairs", pairs.len());
        let text: String = pairs
            .iter()
            .enumerate()
            .map(|(i, (c, d))| {
                let label = ["SUPPORT", "CONTRADICT", "NEI"][i % 3];
                format!("{c} 0 {d} {label}\n")
            })
            .collect();
        std::fs::write(&qrels, text).unwrap();
    }
    kill_at_random(
        Scenario {
            name: "judgments",
            base: pooled,
            command: &|db| {
                let mut cmd = claimpool(db);
                cmd.args([
                    "import",
                    "judgments",
                    "--project",
                    "p",
                    "--annotator",
                    "judge",
                ])
                .args(["--stage", "final", "--format", "qrels-labels"])
                .arg(&qrels);
                cmd
            },
            visible: &[
                "SELECT COUNT(*) FROM judgments",
                "SELECT COUNT(*) FROM final_labels",
                IMPORTS,
                AUDIT,
            ],
            out: None,
        },
        4,
    )
    .await;
}

#[tokio::test]
async fn a_pool_build_and_a_release_export_killed_at_any_moment_leave_all_or_nothing() {
    let steps = Steps::new().await;
    // A pool grown from depth 300 (544 pairs) to 10,000 (10,244 pairs): 9,700 new pairs with
    // their ranks (3 each) and first passes, about ten chunks of 5,000 rows.
    let pool = kill_at_random(
        Scenario {
            name: "pool",
            base: steps.db("pooled"),
            command: &|db| {
                let mut cmd = claimpool(db);
                cmd.args(["pool", "build", "--project", "p", "--depth", "10000"]);
                cmd
            },
            visible: &[
                "SELECT COUNT(*) FROM pool_entries",
                "SELECT COUNT(*) FROM pool_ranks",
                "SELECT COUNT(*) FROM pool_builds",
                // Open items of a build being written are hidden with its entries.
                "SELECT COUNT(*) FROM assignments a JOIN pool_entries e ON e.id = a.pool_entry_id",
                "SELECT pool_depth FROM projects",
                AUDIT,
            ],
            out: None,
        },
        5,
    )
    .await;
    // It writes in chunks: kills must also land between its transactions.
    assert!(
        pool.mid_chunks >= KILLS / 10,
        "only {} of {KILLS} kills hit the pool build between its chunks",
        pool.mid_chunks
    );
    let out = steps.dir.path().join("release");
    kill_at_random(
        Scenario {
            name: "export",
            base: steps.db("pooled"),
            command: &|db| {
                let mut cmd = claimpool(db);
                cmd.args([
                    "export",
                    "--project",
                    "p",
                    "--partial",
                    "--unjudged",
                    "--out",
                ])
                .arg(&out);
                cmd
            },
            visible: &["SELECT COUNT(*) FROM releases", AUDIT],
            out: Some(&out),
        },
        6,
    )
    .await;
}
