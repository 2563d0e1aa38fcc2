//! Run imports give way to writers of other processes on the same SQLite file (issue 35, R1): a
//! lead's `claimpool import run` at the shell beside the running server made annotators'
//! submissions wait up to 1.9 s, because the writers' queue (`store::write_gate`) is one
//! process's. A writer waiting for the write lock now says so on the file's board
//! (`<database>-writers`), which every process maps; an import reads it before each chunk.
//!
//! On PostgreSQL the writers of every process advance the sequence `writers_began`, which a run
//! import reads between its `COPY` chunks (`import_writer::OtherWriters`).
//!
//! These tests check the import's decision, not latency: the annotate benchmark's
//! `--import-process` measures that.

use crate::support::postgres;
use sqlx::{Connection, SqliteConnection};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use store::{self, import_writer};

/// Runs `claimpool --db DB ARGS...` in a process of its own, without waiting for it.
fn spawn_claimpool(db: &std::path::Path, args: &[&str]) -> Child {
    crate::support::cli::command()
        .arg("--db")
        .arg(db)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("claimpool runs")
}

/// Waits until `db`'s import would give way, or fails if `child` ends first or a minute passes
/// (the child waits at most its busy timeout, 10 s, for the lock).
async fn until_an_import_gives_way(db: &store::Db, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !import_writer::gives_way_now(db) {
        if let Some(status) = child.try_wait().expect("the child's status") {
            panic!("the other process ended ({status}) without an import giving way to it");
        }
        assert!(
            Instant::now() < deadline,
            "no import gave way within a minute"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_gives_way_to_a_writer_waiting_in_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shared.db");
    // This process is the importer's (a lead's `claimpool import run`).
    let db = store::open(&file).await.unwrap();
    assert!(
        !import_writer::gives_way_now(&db),
        "nobody waits: the import writes on"
    );
    // A chunk of the import holds SQLite's write lock...
    let mut importer = SqliteConnection::connect(&format!("sqlite://{}", file.display()))
        .await
        .unwrap();
    let chunk = importer.begin_with("BEGIN IMMEDIATE").await.unwrap();
    // ...while another process (the server, here `claimpool project create`) asks to write.
    let mut server = spawn_claimpool(&file, &["project", "create", "written-meanwhile"]);
    until_an_import_gives_way(&db, &mut server).await;
    // The waiting writer is still waiting (its mark is no left-over): the import yields.
    assert!(server.try_wait().unwrap().is_none());
    assert!(import_writer::gives_way_now(&db));
    chunk.commit().await.unwrap();
    let out = server.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the other process could not write: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !import_writer::gives_way_now(&db),
        "the writer had its turn and cleared its mark: the import writes on"
    );
    let projects: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM projects")
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!(projects, 1);
    assert!(
        store::import_writer::board_file(&db).is_some_and(|f| f.is_file()),
        "the board lies beside the database"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_of_this_process_that_waits_is_given_way_to_as_well() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("own.db");
    let db = store::open(&file).await.unwrap();
    let mut other = SqliteConnection::connect(&format!("sqlite://{}", file.display()))
        .await
        .unwrap();
    let held = other.begin_with("BEGIN IMMEDIATE").await.unwrap();
    let writer = {
        let db = db.clone();
        tokio::spawn(async move { store::projects::create(&db, "waiting", "", None).await })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !import_writer::gives_way_now(&db) {
        assert!(!writer.is_finished(), "the writer did not wait");
        assert!(
            Instant::now() < deadline,
            "no import gave way within a minute"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    held.commit().await.unwrap();
    writer.await.unwrap().unwrap();
    assert!(!import_writer::gives_way_now(&db));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_import_sees_writers_of_other_processes() {
    if !postgres::tests_on_postgres() {
        return; // SQLite's board: the tests above
    }
    let url = postgres::fresh_database().expect("PostgreSQL for CLAIMPOOL_TEST_ENGINE=postgres");
    let db = crate::common::open_db(&url).await;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let mut others = import_writer::OtherWriters::default();
    let window = Duration::from_secs(1);
    assert!(
        !others.began_within(&mut conn, window).await.unwrap(),
        "the first reading: nothing seen to move"
    );
    assert!(
        !others.began_within(&mut conn, window).await.unwrap(),
        "nobody wrote"
    );
    // Another process (the server, here `claimpool project create`) writes once.
    let out = crate::support::cli::claimpool(&url, &["project", "create", "written-elsewhere"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        others.began_within(&mut conn, window).await.unwrap(),
        "the import gives way: a writer of another process began"
    );
    // Nobody writes any more: once the window has passed, the import writes on.
    let short = Duration::from_millis(50);
    tokio::time::sleep(short * 2).await;
    assert!(!others.began_within(&mut conn, short).await.unwrap());
    db.close().await;
}
