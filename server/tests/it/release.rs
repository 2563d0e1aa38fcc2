//! `claimpool export`, run as a user would, on the real SciFact corpus and dev claims (skipped
//! when ../shared is absent). Expected values come from the raw JSON files, read here with
//! serde_json alone.

use crate::common;
use crate::support::cli;
use cli::{claimpool, failed, ok};
use common::postgres;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn data() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    if dir.join("scifact/corpus.jsonl").is_file() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is absent", dir.display());
        None
    }
}

fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn id(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
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
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// SciFact's evidence flattened as SciFact-Open writes it: claim -> doc -> (label, sorted
/// union of the rationale sets).
type Flat = BTreeMap<String, BTreeMap<String, (String, Vec<u64>)>>;

fn flattened_input(claims: &[Value]) -> Flat {
    claims
        .iter()
        .map(|claim| {
            let evidence = claim["evidence"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(doc, sets)| {
                    let sets = sets.as_array().unwrap();
                    let label = sets[0]["label"].as_str().unwrap().to_owned();
                    let sentences: BTreeSet<u64> = sets
                        .iter()
                        .flat_map(|s| s["sentences"].as_array().unwrap())
                        .map(|x| x.as_u64().unwrap())
                        .collect();
                    (doc.clone(), (label, sentences.into_iter().collect()))
                })
                .collect();
            (id(&claim["id"]), evidence)
        })
        .collect()
}

fn flattened_release(claims: &[Value]) -> Flat {
    claims
        .iter()
        .map(|claim| {
            let evidence = claim["evidence"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(doc, e)| {
                    assert_eq!(e["provenance"], "citation", "{doc}");
                    assert_eq!(e["model_ranks"], Value::Null, "{doc}");
                    let sentences = e["sentences"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_u64().unwrap())
                        .collect();
                    (
                        doc.clone(),
                        (e["label"].as_str().unwrap().to_owned(), sentences),
                    )
                })
                .collect();
            (id(&claim["id"]), evidence)
        })
        .collect()
}

/// The UTC day of a millisecond timestamp, found by walking the calendar a day at a time.
fn utc_day(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let (mut y, mut m, mut d) = (1970i64, 1i64, 1i64);
    for _ in 0..days {
        let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        let len = [
            31,
            if leap { 29 } else { 28 },
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ];
        d += 1;
        if d > len[(m - 1) as usize] {
            d = 1;
            m += 1;
            if m > 12 {
                m = 1;
                y += 1;
            }
        }
    }
    format!("{y:04}-{m:02}-{d:02}")
}

#[test]
fn dev_claims_export_round_trips_and_exports_again_byte_for_byte() {
    let Some(data) = data() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = postgres::fresh_test_database(dir.path());
    let db = db.as_str();
    ok(claimpool(db, &["project", "create", "scifact"]));
    let corpus = data.join("scifact/corpus.jsonl");
    let claims_file = data.join("scifact/claims_dev.jsonl");
    ok(claimpool(
        db,
        &[
            "import",
            "corpus",
            "--project",
            "scifact",
            corpus.to_str().unwrap(),
        ],
    ));
    ok(claimpool(
        db,
        &[
            "import",
            "claims",
            "--project",
            "scifact",
            claims_file.to_str().unwrap(),
        ],
    ));

    let out1 = dir.path().join("r1");
    let started = Instant::now();
    let printed = ok(claimpool(
        db,
        &[
            "export",
            "--project",
            "scifact",
            "--out",
            out1.to_str().unwrap(),
        ],
    ));
    eprintln!(
        "export of the dev-claims release: {:.3} s (debug build, including process start)",
        started.elapsed().as_secs_f64()
    );
    let report: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(report["new"], true);
    assert_eq!(report["release"]["number"], 1);
    assert_eq!(report["release"]["partial"], false);

    // claims.jsonl: the 300 claims with their texts, and exactly the input's evidence, flattened.
    let input = json_lines(&claims_file);
    let released = json_lines(&out1.join("claims.jsonl"));
    assert_eq!(released.len(), 300);
    let texts = |lines: &[Value]| -> BTreeMap<String, String> {
        lines
            .iter()
            .map(|c| (id(&c["id"]), c["claim"].as_str().unwrap().to_owned()))
            .collect()
    };
    assert_eq!(texts(&released), texts(&input));
    let flat = flattened_input(&input);
    assert_eq!(flattened_release(&released), flat);
    let evidence_pairs: usize = flat.values().map(BTreeMap::len).sum();
    assert_eq!(evidence_pairs, 209); // SciFact dev, SOURCES.md

    // qrels-labels.txt: the evidence, and each cited abstract without evidence as NEI.
    let mut want: BTreeSet<(String, String, String)> = BTreeSet::new();
    for claim in &input {
        let c = id(&claim["id"]);
        for (doc, (label, _)) in &flat[&c] {
            want.insert((c.clone(), doc.clone(), label.clone()));
        }
        for doc in claim["cited_doc_ids"].as_array().unwrap() {
            if !flat[&c].contains_key(&id(doc)) {
                want.insert((c.clone(), id(doc), "NEI".to_owned()));
            }
        }
    }
    let got: BTreeSet<(String, String, String)> =
        std::fs::read_to_string(out1.join("qrels-labels.txt"))
            .unwrap()
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                assert_eq!(f.len(), 4, "{l}");
                assert_eq!(f[1], "0");
                (f[0].to_owned(), f[2].to_owned(), f[3].to_owned())
            })
            .collect();
    assert_eq!(got, want);
    // corpus_candidates.jsonl: the judged abstracts, as the corpus gives them.
    let judged: BTreeSet<String> = want.iter().map(|(_, d, _)| d.clone()).collect();
    let corpus_lines: BTreeMap<String, Value> = json_lines(&corpus)
        .into_iter()
        .map(|d| (id(&d["doc_id"]), d))
        .collect();
    let candidates = json_lines(&out1.join("corpus_candidates.jsonl"));
    assert_eq!(
        candidates
            .iter()
            .map(|d| id(&d["doc_id"]))
            .collect::<BTreeSet<_>>(),
        judged
    );
    for doc in &candidates {
        assert_eq!(doc, &corpus_lines[&id(&doc["doc_id"])]);
    }

    // The manifest: the date of the latest change (the claims import), and every file's hash.
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(out1.join("MANIFEST.json")).unwrap()).unwrap();
    let files = tree(&out1);
    for entry in manifest["files"].as_array().unwrap() {
        let path = entry["path"].as_str().unwrap();
        use sha2::Digest;
        let hash: String = sha2::Sha256::digest(&files[path])
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(entry["sha256"], hash.as_str(), "{path}");
    }
    assert_eq!(manifest["files"].as_array().unwrap().len() + 1, files.len());
    let latest_import: i64 = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let db = common::open_db(db).await;
        sqlx::query_scalar(
            "SELECT MAX(t) FROM (SELECT imported_at AS t FROM imports
               UNION ALL SELECT created_at FROM judgments UNION ALL SELECT decided_at FROM final_labels
               UNION ALL SELECT created_at FROM projects) changes",
        )
            .fetch_one(&db)
            .await
            .unwrap()
    });
    assert_eq!(manifest["date"], utc_day(latest_import).as_str());

    // The same state again: release 1 again, byte for byte; a non-empty directory needs --force.
    let out2 = dir.path().join("r2");
    let printed = ok(claimpool(
        db,
        &[
            "export",
            "--project",
            "scifact",
            "--out",
            out2.to_str().unwrap(),
        ],
    ));
    let again: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(
        (&again["new"], &again["release"]["number"]),
        (&false.into(), &1.into())
    );
    assert_eq!(tree(&out2), files);
    let err = failed(claimpool(
        db,
        &[
            "export",
            "--project",
            "scifact",
            "--out",
            out1.to_str().unwrap(),
        ],
    ));
    assert!(err.contains("the directory is not empty"), "{err}");
    std::fs::write(out1.join("claims.jsonl"), "changed").unwrap();
    ok(claimpool(
        db,
        &[
            "export",
            "--project",
            "scifact",
            "--out",
            out1.to_str().unwrap(),
            "--force",
        ],
    ));
    assert_eq!(tree(&out1), files);

    // A pool with pairs nobody has judged: refused, unless partial.
    let run = data.join("scifact-runs/hybrid_rag_kaikoepchen/predictions_dev_6d32d0d.jsonl");
    ok(claimpool(
        db,
        &[
            "import",
            "run",
            "--project",
            "scifact",
            "--system",
            "hybrid",
            run.to_str().unwrap(),
        ],
    ));
    ok(claimpool(
        db,
        &["pool", "build", "--project", "scifact", "--depth", "60"],
    ));
    let pool: Value = serde_json::from_str(&ok(claimpool(
        db,
        &["pool", "list", "--project", "scifact", "--json"],
    )))
    .unwrap();
    let unjudged: BTreeSet<(String, String)> = pool
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["final_label"].is_null())
        .map(|row| (id(&row["claim_id"]), id(&row["doc_id"])))
        .collect();
    assert!(!unjudged.is_empty());
    let out3 = dir.path().join("r3");
    let err = failed(claimpool(
        db,
        &[
            "export",
            "--project",
            "scifact",
            "--out",
            out3.to_str().unwrap(),
        ],
    ));
    assert!(
        err.contains(&format!(
            "{} pooled pairs have no final label yet (e.g. claim ",
            unjudged.len()
        )),
        "{err}"
    );
    assert!(!out3.exists(), "a refused export writes nothing");
    let printed = ok(claimpool(
        db,
        &[
            "export",
            "--project",
            "scifact",
            "--out",
            out3.to_str().unwrap(),
            "--partial",
            "--unjudged",
        ],
    ));
    let partial: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(partial["release"]["number"], 2);
    assert_eq!(partial["release"]["partial"], true);
    let minus_one: BTreeSet<(String, String)> = std::fs::read_to_string(out3.join("qrels.txt"))
        .unwrap()
        .lines()
        .filter(|l| l.ends_with(" -1"))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[0].to_owned(), f[2].to_owned())
        })
        .collect();
    assert_eq!(minus_one, unjudged);
    // The published run has every pair of the file (379, SOURCES.md) with its label and
    // rationale; a label-only run gets no made-up score.
    let published: BTreeSet<(String, String, String, String)> =
        json_lines(&out3.join("runs/hybrid.jsonl"))
            .iter()
            .map(|r| {
                assert_eq!(r["system"], "hybrid");
                assert!(
                    r.get("score").is_none() && r.get("p_support").is_none(),
                    "{r}"
                );
                (
                    id(&r["claim_id"]),
                    id(&r["doc_id"]),
                    r["predicted_label"].as_str().unwrap().to_owned(),
                    r["sentences"].to_string(),
                )
            })
            .collect();
    let in_file: BTreeSet<(String, String, String, String)> = json_lines(&run)
        .iter()
        .flat_map(|line| {
            let claim = id(&line["id"]);
            line["evidence"]
                .as_object()
                .unwrap()
                .iter()
                .map(move |(doc, p)| {
                    (
                        claim.clone(),
                        doc.clone(),
                        p["label"].as_str().unwrap().to_owned(),
                        p["sentences"].to_string(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(in_file.len(), 379);
    assert_eq!(published, in_file);
    // Evaluating against the release gives what the SciFact claims file gives. Which pairs are
    // judged (cited abstracts without evidence are judged NEI) is in the release's qrels.txt,
    // not its claims.jsonl, which lists evidence only.
    let eval = |claims: &Path, qrels: Option<&Path>| {
        let mut cmd = crate::support::cli::command();
        cmd.args(["eval", "--json", "--claims"])
            .arg(claims)
            .arg("--run")
            .arg(&run);
        if let Some(qrels) = qrels {
            cmd.arg("--qrels").arg(qrels);
        }
        serde_json::from_str::<serde_json::Value>(&ok(cmd.output().unwrap())).unwrap()
    };
    let mut scifact = eval(&claims_file, None);
    let mut released = eval(&out1.join("claims.jsonl"), Some(&out1.join("qrels.txt")));
    assert_eq!(released["incomplete"]["judged_from"]["kind"], "qrels");
    assert_eq!(scifact["incomplete"]["judged_from"]["kind"], "claims");
    for figures in [&mut released, &mut scifact] {
        figures["incomplete"]["judged_from"] = serde_json::Value::Null;
    }
    assert_eq!(released, scifact);
    assert_eq!(scifact["incomplete"]["judged_pairs"], 339);
    // Without the qrels only the evidence counts as judged: the same scores, fewer judged pairs.
    let evidence_only = eval(&out1.join("claims.jsonl"), None);
    assert_eq!(evidence_only["incomplete"]["judged_pairs"], 209);
    for key in ["precision", "recall", "f1", "average_precision", "counts"] {
        assert_eq!(evidence_only[key], scifact[key], "{key}");
    }
}
