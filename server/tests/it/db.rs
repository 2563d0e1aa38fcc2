//! `claimpool db backup` and `claimpool db copy`, run as a user would, on the demo database.

use crate::support::postgres;

use crate::support::cli;
use cli::{claimpool, failed, ok};
use sqlx::{Connection, PgConnection, Row};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A demo database (the shipped sample: corpus, claims, three runs, a pool, final labels) with a
/// release recorded, so that every kind of row is there to back up and copy.
async fn demo_db(dir: &Path) -> PathBuf {
    let path = dir.join("demo.db");
    let db = store::open(&path).await.unwrap();
    server::demo::seed(&db).await.unwrap();
    db.close().await;
    export(path.to_str().unwrap(), &dir.join("release-0"));
    path
}

fn export(db: &str, out: &Path) -> String {
    ok(claimpool(
        db,
        &[
            "export",
            "--project",
            server::demo::PROJECT,
            "--partial",
            "--out",
            out.to_str().unwrap(),
        ],
    ))
}

/// Every file under `dir`, by relative path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                files.insert(name, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

async fn sqlite_counts(db: &store::Db) -> BTreeMap<String, i64> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' \
         AND name NOT IN ('_sqlx_migrations', 'sessions')",
    )
    .fetch_all(db)
    .await
    .unwrap();
    let mut counts = BTreeMap::new();
    for table in tables {
        let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
            .fetch_one(db)
            .await
            .unwrap();
        counts.insert(table, n);
    }
    counts
}

#[tokio::test]
async fn a_backup_is_a_database_that_exports_the_same_release() {
    let dir = tempfile::tempdir().unwrap();
    let source = demo_db(dir.path()).await;
    let source = source.to_str().unwrap();
    let backup = dir.path().join("backup.db");
    let printed = ok(claimpool(
        source,
        &["db", "backup", "--out", backup.to_str().unwrap()],
    ));
    assert!(printed.starts_with("backed up "), "{printed}");

    // A backup never overwrites a file.
    let again = failed(claimpool(
        source,
        &["db", "backup", "--out", backup.to_str().unwrap()],
    ));
    assert!(again.contains("already exists"), "{again}");

    // Restore is a copy of the file: the release it exports is the original's, byte for byte.
    let restored = dir.path().join("restored.db");
    std::fs::copy(&backup, &restored).unwrap();
    let from_source = dir.path().join("from-source");
    let from_backup = dir.path().join("from-backup");
    export(source, &from_source);
    export(restored.to_str().unwrap(), &from_backup);
    let files = tree(&from_source);
    assert!(files.contains_key("claims.jsonl") && files.contains_key("qrels.txt"));
    assert_eq!(tree(&from_backup), files);

    let original = store::open(Path::new(source)).await.unwrap();
    let copy = store::open(&restored).await.unwrap();
    assert_eq!(sqlite_counts(&copy).await, sqlite_counts(&original).await);
}

/// A judgment's id, claim, document, stage, label, rationale, provenance and time.
type Judgment = (i64, i64, i64, String, String, String, String, i64);

#[tokio::test]
async fn the_demo_database_copies_into_postgres_with_every_row() {
    let Some(url) = postgres::fresh_database() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let source_path = demo_db(dir.path()).await;
    let source = source_path.to_str().unwrap();

    let printed = ok(claimpool(
        source,
        &["db", "copy", "--from", source, "--to", &url],
    ));
    assert!(printed.contains("counts and checksums agree"), "{printed}");

    // Independently of the copy's own check: the same count in every table.
    let sqlite = store::open(&source_path).await.unwrap();
    let counts = sqlite_counts(&sqlite).await;
    assert!(
        counts["judgment_rows"] > 0 && counts["release_parts"] > 0,
        "{counts:?}"
    );
    let mut pg = PgConnection::connect(&url).await.unwrap();
    for (table, n) in &counts {
        let copied: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
            .fetch_one(&mut pg)
            .await
            .unwrap();
        assert_eq!(copied, *n, "{table}");
        let line = format!("{table} ");
        let shown = printed.lines().find(|l| l.starts_with(&line)).unwrap();
        assert!(shown.contains(&format!(" {n} rows")), "{shown}");
    }

    // And the same rows: judgments field by field, release archives byte for byte.
    let judgments = "SELECT id, claim_id, doc_id, stage, label, rationale, provenance, created_at \
                     FROM judgment_rows ORDER BY id";
    let left: Vec<Judgment> = sqlx::query_as(judgments).fetch_all(&sqlite).await.unwrap();
    let right: Vec<Judgment> = sqlx::query_as(judgments).fetch_all(&mut pg).await.unwrap();
    assert_eq!(right, left);
    let parts = "SELECT release_id, seq, bytes FROM release_parts ORDER BY release_id, seq";
    let left: Vec<(i64, i64, Vec<u8>)> = sqlx::query_as(parts).fetch_all(&sqlite).await.unwrap();
    let right: Vec<(i64, i64, Vec<u8>)> = sqlx::query_as(parts).fetch_all(&mut pg).await.unwrap();
    assert_eq!(right, left);
    let confidence = "SELECT SUM(confidence) FROM predictions";
    let left: f64 = sqlx::query_scalar(confidence)
        .fetch_one(&sqlite)
        .await
        .unwrap();
    let right: f64 = sqlx::query_scalar(confidence)
        .fetch_one(&mut pg)
        .await
        .unwrap();
    assert!((left - right).abs() < 1e-9, "{left} vs {right}");

    // The product runs on the copy: a new release (unjudged pairs listed, so not the one
    // recorded) computed on PostgreSQL is the one computed on SQLite, byte for byte.
    let from_sqlite = dir.path().join("release-sqlite");
    let from_postgres = dir.path().join("release-postgres");
    let unjudged = |db: &str, out: &Path| {
        let printed = ok(claimpool(
            db,
            &[
                "export",
                "--project",
                server::demo::PROJECT,
                "--partial",
                "--unjudged",
                "--out",
                out.to_str().unwrap(),
            ],
        ));
        let printed: serde_json::Value = serde_json::from_str(&printed).unwrap();
        assert_eq!(printed["new"], true, "{printed}");
        assert_eq!(printed["release"]["number"], 2, "{printed}");
    };
    unjudged(source, &from_sqlite);
    unjudged(&url, &from_postgres);
    let files = tree(&from_sqlite);
    assert!(files.contains_key("claims.jsonl") && files.contains_key("qrels.txt"));
    assert_eq!(tree(&from_postgres), files);

    // The append-only guarantees hold on PostgreSQL too.
    let update = sqlx::query("UPDATE judgment_rows SET label = 'NEI'")
        .execute(&mut pg)
        .await
        .unwrap_err();
    assert!(
        update.to_string().contains("judgments are append-only"),
        "{update}"
    );
    let delete = sqlx::query("DELETE FROM audit_events")
        .execute(&mut pg)
        .await
        .unwrap_err();
    assert!(
        delete
            .to_string()
            .contains("the audit trail is append-only"),
        "{delete}"
    );
    let release = sqlx::query("UPDATE release_rows SET sha256 = 'x'")
        .execute(&mut pg)
        .await
        .unwrap_err();
    assert!(
        release.to_string().contains("a release never changes"),
        "{release}"
    );

    // New rows get ids after the copied ones.
    let max_id: i64 = sqlx::query_scalar("SELECT MAX(id) FROM audit_events")
        .fetch_one(&mut pg)
        .await
        .unwrap();
    let id: i64 = sqlx::query(
        "INSERT INTO audit_events (action, entity, at) VALUES ('test', 'db', 0) RETURNING id",
    )
    .fetch_one(&mut pg)
    .await
    .unwrap()
    .get(0);
    assert_eq!(id, max_id + 1);

    // A backup through pg_dump, restored as the README says, holds the same rows.
    let dump = dir.path().join("claimpool.dump");
    let bin = postgres::server_bin().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let printed = ok(crate::support::cli::command()
        .env("PATH", &path)
        .args([
            "--db",
            &url,
            "db",
            "backup",
            "--out",
            dump.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    assert!(printed.starts_with("backed up postgres://"), "{printed}");
    let restored_url = postgres::fresh_database().unwrap();
    let restore = Command::new(bin.join("pg_restore"))
        .args(["--no-owner", "--exit-on-error", "--dbname", &restored_url])
        .arg(&dump)
        .output()
        .unwrap();
    assert!(
        restore.status.success(),
        "{}",
        String::from_utf8_lossy(&restore.stderr)
    );
    let mut restored = PgConnection::connect(&restored_url).await.unwrap();
    for table in [
        "judgment_rows",
        "audit_events",
        "predictions",
        "release_parts",
    ] {
        let count = format!("SELECT COUNT(*) FROM {table}");
        let a: i64 = sqlx::query_scalar(&count).fetch_one(&mut pg).await.unwrap();
        let b: i64 = sqlx::query_scalar(&count)
            .fetch_one(&mut restored)
            .await
            .unwrap();
        assert_eq!(b, a, "{table}");
    }

    // A second copy into the now non-empty database is refused and writes nothing.
    let before: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM judgment_rows")
        .fetch_one(&mut pg)
        .await
        .unwrap();
    let refused = failed(claimpool(
        source,
        &["db", "copy", "--from", source, "--to", &url],
    ));
    assert!(refused.contains("already holds data"), "{refused}");
    let after: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM judgment_rows")
        .fetch_one(&mut pg)
        .await
        .unwrap();
    assert_eq!(after, before);
}

#[test]
fn a_postgres_url_is_shown_without_its_password() {
    // Nothing listens on port 1: the connection fails, naming the database without the secret.
    let err = failed(claimpool(
        "postgres://ann:pw@127.0.0.1:1/claims",
        &["user", "list"],
    ));
    assert!(
        err.contains("postgres://ann:***@127.0.0.1:1/claims"),
        "{err}"
    );
    assert!(!err.contains(":pw@"), "{err}");
    let err = failed(claimpool("mysql://x@y/z", &["user", "list"]));
    assert!(err.contains("unknown database scheme mysql"), "{err}");
    let err = failed(claimpool("postgres://ann@127.0.0.1:1/claims", &["demo"]));
    assert!(err.contains("the demo recreates a SQLite file"), "{err}");
}
