//! Malformed input (issue 13): for every importer and format, 1,000 files made by mutating a
//! valid one (seeded, so a failure replays): bytes deleted, inserted and replaced, lines
//! repeated, dropped and swapped, numbers and values swapped for odd ones, files cut short,
//! gzip (whole or cut). Each import either succeeds or fails with an error that names the file
//! (and, for a problem in the file, its line); never a panic, a server fault or an SQL error;
//! and a failed import writes nothing. On the engine the tests run on ([`cases`]).

use crate::common;

use app::domain::annotation::Stage;
use app::domain::formats::{CorpusFormat, RunFormat};
use app::domain::pool::Role as SystemRole;
use commands::import::{RunImport, SystemSpec};
use commands::CommandError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use store::Db;

/// Mutated files per importer and format: 1,000 on SQLite (issue 13). On PostgreSQL 200: the
/// parsers that refuse a file are the same on both engines and get their 1,000 cases in the
/// SQLite pass; what PostgreSQL adds is that a refused import writes nothing there either, which
/// 2,000 files over the ten importers check. 1,000 took 430 s on PostgreSQL (43 ms a file), the
/// longest test of CI's PostgreSQL pass.
fn cases() -> usize {
    if common::postgres::tests_on_postgres() {
        200
    } else {
        1_000
    }
}

/// Odd things to put into a line.
const TOKENS: &[&str] = &[
    "\"",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "null",
    "true",
    "-",
    "1e999",
    "-1",
    "NaN",
    "0.5",
    "\u{0}",
    "é",
    "\n",
    "\t",
    " ",
    "\u{feff}",
    "99999999999999999999",
    "\"REFUTE\"",
    "\"x\"",
    "[]",
    "{}",
    "\"label\": \"SUPPORT\"",
    "\"doc_id\": 2",
    "\"claim_id\": 11",
    "Q0",
    "\\u0000",
    "\\",
];

fn mutate(rng: &mut ChaCha8Rng, seed: &str) -> Vec<u8> {
    let mut text = seed.as_bytes().to_vec();
    for _ in 0..rng.gen_range(1..=3) {
        let at = rng.gen_range(0..=text.len());
        match rng.gen_range(0..9) {
            0 => {
                let end = (at + rng.gen_range(1..16)).min(text.len());
                text.drain(at..end);
            }
            1 => {
                let token = TOKENS[rng.gen_range(0..TOKENS.len())];
                text.splice(at..at, token.bytes());
            }
            2 if at < text.len() => text[at] = rng.gen(),
            3 | 6 | 7 => {
                let mut lines: Vec<Vec<u8>> =
                    text.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
                let i = rng.gen_range(0..lines.len());
                let j = rng.gen_range(0..lines.len());
                match rng.gen_range(0..4) {
                    0 => {
                        let copy = lines[i].clone();
                        lines.insert(j, copy);
                    }
                    1 => {
                        lines.remove(i);
                    }
                    2 => lines.swap(i, j),
                    _ => lines.insert(j, b"   ".to_vec()),
                }
                text = lines.join(&b'\n');
            }
            4 => text.truncate(at),
            5 => {
                // A number becomes an odd value.
                if let Some(start) = text.iter().skip(at).position(u8::is_ascii_digit) {
                    let start = at + start;
                    let len = text[start..]
                        .iter()
                        .take_while(|b| b.is_ascii_digit())
                        .count();
                    let token = [
                        "1e999",
                        "-7",
                        "NaN",
                        "\"3\"",
                        "null",
                        "[]",
                        "4294967296",
                        "0.000001",
                    ][rng.gen_range(0..8)];
                    text.splice(start..start + len, token.bytes());
                }
            }
            _ => {
                let long = "x".repeat(rng.gen_range(1..3000));
                text.splice(at..at, long.bytes());
            }
        }
    }
    if rng.gen_range(0..4) == 0 {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&text).unwrap();
        let mut bytes = gz.finish().unwrap();
        if rng.gen_range(0..3) == 0 {
            let cut = rng.gen_range(0..bytes.len());
            bytes.truncate(cut);
        }
        return bytes;
    }
    text
}

/// Tables an import writes, and the imports.
const WRITTEN: [&str; 8] = [
    "documents",
    "claims",
    "systems",
    "predictions",
    "judgments",
    "final_labels",
    "imports",
    "audit_events",
];

/// Rows of each [`WRITTEN`] table, read in one statement (the check runs up to twice a case).
async fn counts(db: &Db) -> Vec<i64> {
    let columns: Vec<String> = WRITTEN
        .iter()
        .map(|table| format!("(SELECT COUNT(*) FROM {table})"))
        .collect();
    let row = sqlx::query(&format!("SELECT {}", columns.join(", ")))
        .fetch_one(db)
        .await
        .unwrap();
    (0..WRITTEN.len())
        .map(|i| sqlx::Row::get::<i64, _>(&row, i))
        .collect()
}

/// Imports [`cases`] mutations of `seed` (which must import as it is) with `import`; returns how
/// many succeeded.
async fn fuzz<F, Fut>(db: &Db, dir: &Path, name: &str, seed: &str, import: F) -> usize
where
    F: Fn(PathBuf, usize) -> Fut,
    Fut: Future<Output = Result<(), CommandError>>,
{
    let path = dir.join(format!("{name}-seed.jsonl"));
    std::fs::write(&path, seed).unwrap();
    import(path, usize::MAX)
        .await
        .unwrap_or_else(|e| panic!("{name}: the seed does not import: {e}"));
    let mut rng = ChaCha8Rng::seed_from_u64(20261124);
    let mut succeeded = 0;
    let cases = cases();
    for case in 0..cases {
        let bytes = mutate(&mut rng, seed);
        let path = dir.join(format!("{name}-{case}.jsonl"));
        std::fs::write(&path, &bytes).unwrap();
        let before = counts(db).await;
        if std::env::var_os("FUZZ_TRACE").is_some() {
            eprintln!("{name} case {case}");
        }
        let imported = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            import(path.clone(), case),
        )
        .await
        .unwrap_or_else(|_| panic!("{name} case {case}: the import did not end in 60 s"));
        match imported {
            Ok(()) => succeeded += 1,
            Err(e @ CommandError::Internal(_)) => {
                panic!("{name} case {case}: {e} ({})", path.display())
            }
            Err(e) => {
                let message = e.to_string();
                let file = path.display().to_string();
                assert!(
                    message.contains(&file),
                    "{name} case {case}: the error does not name the file: {message}"
                );
                if message.contains("problem") {
                    assert!(
                        message.contains(&format!("{file}:")),
                        "{name} case {case}: no line named: {message}"
                    );
                }
                assert_eq!(
                    counts(db).await,
                    before,
                    "{name} case {case}: a refused import wrote something: {message}"
                );
            }
        }
        std::fs::remove_file(&path).ok();
    }
    eprintln!("{name}: {succeeded} of {cases} mutated files imported, the rest refused cleanly");
    succeeded
}

const CORPUS: &str = "{\"doc_id\": 1, \"title\": \"T1\", \"abstract\": [\"S one.\", \"S two.\"]}\n\
{\"doc_id\": 2, \"title\": \"T2\", \"abstract\": [\"S three.\"]}\n\
{\"doc_id\": 3, \"title\": \"T3\", \"abstract\": [\"S four.\", \"S five.\", \"S six.\"]}\n";

fn run(path: PathBuf, format: RunFormat, system: String) -> RunImport {
    RunImport {
        path,
        format: Some(format),
        options: Default::default(),
        system: SystemSpec {
            name: Some(system),
            role: SystemRole::Pooled,
            description: String::new(),
            negative_sampling_ratio: None,
        },
        allow_missing_docs: false,
    }
}

// FUZZ_TRACE=1 names each case; the 60 s bound per import turns a stall into a failure naming
// the case. (Until the store read through sqlx's lent handles, this harness stalled in some runs
// in the pool build's reads; see store::raw_rows.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_importer_refuses_malformed_files_cleanly_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = common::fresh_db(dir.path()).await;
    let db = &db;
    let base = dir.path().join("base-corpus.jsonl");
    std::fs::write(&base, CORPUS).unwrap();

    // Corpora, in both formats, into a project of their own.
    for (name, seed) in [
        ("corpus-scifact", CORPUS.replace("\"doc_id\": ", "\"doc_id\": 10")),
        (
            "corpus-beir",
            "{\"_id\": \"b1\", \"title\": \"T\", \"text\": \"One. Two.\"}\n{\"_id\": \"b2\", \"title\": \"U\", \"text\": \"Three.\"}\n".to_owned(),
        ),
    ] {
        let project = store::projects::create(db, name, "", None).await.unwrap();
        let format = if name.ends_with("beir") {
            CorpusFormat::Beir
        } else {
            CorpusFormat::SciFact
        };
        fuzz(db, dir.path(), name, &seed, |path, _| async move {
            commands::import::corpus(db, &crate::common::operator_lead(db, project).await, &path, Some(format))
                .await
                .map(drop)
        })
        .await;
    }

    // Claims with evidence and cited documents.
    let claims_project = store::projects::create(db, "claims", "", None)
        .await
        .unwrap();
    commands::import::corpus(
        db,
        &crate::common::operator_lead(db, claims_project).await,
        &base,
        None,
    )
    .await
    .unwrap();
    let claims = "{\"id\": 10, \"claim\": \"A.\", \"evidence\": {\"1\": [{\"sentences\": [0], \"label\": \"SUPPORT\"}]}, \"cited_doc_ids\": [1, 2]}\n\
{\"id\": 11, \"claim\": \"B.\", \"evidence\": {}, \"cited_doc_ids\": [3]}\n";
    fuzz(db, dir.path(), "claims", claims, |path, _| async move {
        commands::import::claims(
            db,
            &crate::common::operator_lead(db, claims_project).await,
            &path,
        )
        .await
        .map(drop)
    })
    .await;

    // Runs in every line format, against a project with documents 1–3 and claims 10, 11.
    let project = store::projects::create(db, "runs", "", None).await.unwrap();
    commands::import::corpus(
        db,
        &crate::common::operator_lead(db, project).await,
        &base,
        None,
    )
    .await
    .unwrap();
    let bare = dir.path().join("bare-claims.jsonl");
    std::fs::write(
        &bare,
        "{\"id\": 10, \"claim\": \"A.\"}\n{\"id\": 11, \"claim\": \"B.\"}\n",
    )
    .unwrap();
    commands::import::claims(db, &crate::common::operator_lead(db, project).await, &bare)
        .await
        .unwrap();
    let runs = [
        (
            RunFormat::Canonical,
            "{\"claim_id\": 10, \"doc_id\": 1, \"predicted_label\": \"SUPPORT\", \"p_support\": 0.7, \"p_contradict\": 0.2, \"rank\": 1, \"sentences\": [0]}\n\
{\"claim_id\": 10, \"doc_id\": 2, \"p_support\": 0.1, \"p_contradict\": 0.6, \"rank\": 2}\n\
{\"claim_id\": 11, \"doc_id\": 3, \"score\": 4.5}\n",
        ),
        (
            RunFormat::Leaderboard,
            "{\"id\": 10, \"evidence\": {\"1\": {\"label\": \"SUPPORT\", \"sentences\": [0], \"label_probs\": [0.1, 0.2, 0.7]}}}\n\
{\"id\": 11, \"evidence\": {\"3\": {\"label\": \"CONTRADICT\", \"label_probs\": [0.6, 0.2, 0.2]}}}\n",
        ),
        (RunFormat::Trec, "10 Q0 1 1 14.5 bm25\n10 Q0 2 2 3.25 bm25\n11 Q0 3 1 2.0 bm25\n"),
        (
            RunFormat::VeriSci,
            "{\"claim_id\": 10, \"labels\": {\"1\": {\"label\": \"SUPPORT\", \"confidence\": 0.75}, \"2\": {\"label\": \"NOT_ENOUGH_INFO\", \"confidence\": 0.5}}}\n",
        ),
        (
            RunFormat::SentenceScores,
            "{\"claim_id\": 10, \"evidence\": {\"1\": [0.1, 0.9], \"2\": [0.2]}}\n{\"claim_id\": 11, \"evidence\": {\"3\": [0.5, 0.6, 0.7]}}\n",
        ),
        (
            RunFormat::RetrievedClaims,
            "{\"id\": 10, \"claim\": \"A.\", \"evidence\": {}, \"cited_doc_ids\": [1], \"doc_ids\": [\"1\", \"2\"]}\n",
        ),
    ];
    for (format, seed) in runs {
        let name = format!("run-{}", format.as_str());
        let prefix = name.clone();
        fuzz(db, dir.path(), &name, seed, |path, case| {
            let system = format!("{prefix}-{case}");
            async move {
                commands::import::run(
                    db,
                    &crate::common::operator_lead(db, project).await,
                    run(path, format, system),
                )
                .await
                .map(drop)
            }
        })
        .await;
    }

    // Judgments (qrels with labels) on the pool of one of those runs.
    let annotator = sqlx::query_scalar::<_, i64>(
        "INSERT INTO users (username, role, password_hash, created_at) VALUES ('a1', 'annotator', '$argon2id$v=19$m=19456,t=2,p=1$bm8$bm8', 0) RETURNING id",
    )
    .fetch_one(db)
    .await
    .unwrap();
    store::projects::add_member(
        db,
        project,
        annotator,
        app::domain::account::ProjectRole::Annotator,
        None,
    )
    .await
    .unwrap();
    store::pool::build(
        db,
        project,
        app::domain::pool::Strategy::Confidence,
        50,
        None,
    )
    .await
    .unwrap();
    let pooled: Vec<(String, String)> = sqlx::query_as(
        "SELECT c.claim_id, d.doc_id FROM pool_entries e JOIN claims c ON c.id = e.claim_id
         JOIN documents d ON d.id = e.doc_id WHERE e.project_id = $1 ORDER BY e.id",
    )
    .bind(project)
    .fetch_all(db)
    .await
    .unwrap();
    let qrels: String = pooled
        .iter()
        .take(3)
        .map(|(c, d)| format!("{c} 0 {d} SUPPORT\n"))
        .collect();
    fuzz(
        db,
        dir.path(),
        "judgments-qrels",
        &qrels,
        |path, _| async move {
            commands::import::judgments(
                db,
                &crate::common::operator_lead(db, project).await,
                commands::import::JudgmentsImport {
                    path,
                    format: Some(commands::import::JudgmentsFormat::QrelsLabels),
                    annotator: "a1".into(),
                    stage: Stage::Final,
                },
            )
            .await
            .map(drop)
        },
    )
    .await;
    if store::engine(db) == store::Engine::Sqlite {
        let integrity: String = sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_one(db)
            .await
            .unwrap();
        assert_eq!(integrity, "ok");
    }
}
