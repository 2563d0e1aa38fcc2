//! `claimpool simulate --order cal` as a lead runs it, on the shipped demo sample with one
//! pooled BM25 run of 5 abstracts per claim: the cal order's candidates, its evidence and the
//! evidence it finds outside the runs, against a recount from files the pipeline writes by
//! another road (`pipeline index` and `pipeline run --k 1000` at the shell, the same BM25
//! retrieval the command makes from the database's corpus). The database is of the engine the
//! tests run on.

use crate::support::cli::{claimpool, demo_file, failed, ok};
use crate::support::postgres;

use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

type Pairs = HashSet<(String, String)>;

/// An id as text, whether the file gives it as a string or a number.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The (claim, doc) pairs of a run file (canonical JSONL).
fn run_pairs(path: &Path) -> Pairs {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let row: Value = serde_json::from_str(line).unwrap();
            (text(&row["claim_id"]), text(&row["doc_id"]))
        })
        .collect()
}

/// The demo claims' SUPPORT and CONTRADICT evidence pairs, read from the claims file.
fn evidence_pairs() -> Pairs {
    let mut pairs = Pairs::new();
    for line in std::fs::read_to_string(demo_file("claims.jsonl"))
        .unwrap()
        .lines()
    {
        let claim: Value = serde_json::from_str(line).unwrap();
        for (doc, sets) in claim["evidence"].as_object().unwrap() {
            let labels: Vec<&str> = sets
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|set| set["label"].as_str())
                .collect();
            if labels.iter().any(|l| *l == "SUPPORT" || *l == "CONTRADICT") {
                pairs.insert((claim["id"].to_string(), doc.clone()));
            }
        }
    }
    pairs
}

/// A fresh database of the tests' engine with the demo sample's corpus and claims in project
/// `demo`, and `runs` (system, canonical run file) imported as pooled systems.
fn demo_project(dir: &Path, runs: &[(&str, &str)]) -> String {
    let db = postgres::fresh_test_database(dir);
    ok(claimpool(&db, &["project", "create", "demo"]));
    for (kind, file) in [("corpus", "corpus.jsonl"), ("claims", "claims.jsonl")] {
        ok(claimpool(
            &db,
            &["import", kind, "--project", "demo", &demo_file(file)],
        ));
    }
    for (system, file) in runs {
        ok(claimpool(
            &db,
            &[
                "import",
                "run",
                "--project",
                "demo",
                "--system",
                system,
                file,
            ],
        ));
    }
    db
}

#[test]
fn cal_judges_beyond_the_runs_and_counts_what_it_finds_there() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let shell = |args: &[&str]| ok(crate::support::cli::command().args(args).output().unwrap());
    let index = path("index").display().to_string();
    shell(&[
        "pipeline",
        "index",
        "--corpus",
        &demo_file("corpus.jsonl"),
        "--index",
        &index,
    ]);
    for (k, file) in [("5", "bm25-5.jsonl"), ("1000", "bm25-1000.jsonl")] {
        let out = path(file).display().to_string();
        shell(&[
            "pipeline",
            "run",
            "--index",
            &index,
            "--claims",
            &demo_file("claims.jsonl"),
            "--k",
            k,
            "--scorer",
            "bm25",
            "--out",
            &out,
        ]);
    }
    let db = demo_project(
        dir.path(),
        &[("bm25", &path("bm25-5.jsonl").display().to_string())],
    );

    // The recount: the run's pairs, the corpus retrieval's (every abstract sharing a term with
    // the claim: the demo corpus has 443), and the truth.
    let ranked = run_pairs(&path("bm25-5.jsonl"));
    let retrieved = run_pairs(&path("bm25-1000.jsonl"));
    assert!(ranked.is_subset(&retrieved));
    let truth = evidence_pairs();
    let candidates: Pairs = ranked.union(&retrieved).cloned().collect();
    let outside: Pairs = candidates.difference(&ranked).cloned().collect();
    let found_in_runs = truth.intersection(&ranked).count();
    let found_outside = truth.intersection(&outside).count();
    assert!(
        found_outside > 0,
        "the sample has evidence BM25's top 5 misses"
    );

    // `claimpool simulate --project demo ARGS`.
    let simulate =
        |args: &[&str]| claimpool(&db, &[&["simulate", "--project", "demo"], args].concat());

    // Budget enough to judge every candidate: cal finds every evidence pair among them; depth,
    // only what the run ranked.
    let budget = (candidates.len() + 10).to_string();
    let all: Value = serde_json::from_str(&ok(simulate(&[
        "--order",
        "depth,cal",
        "--candidates",
        "1000",
        "--budget",
        &budget,
        "--json",
    ])))
    .unwrap();
    let (depth, cal) = (&all[0], &all[1]);
    assert_eq!(depth["order"], "depth");
    assert_eq!(cal["order"], "cal");
    assert_eq!(cal["evidence_pairs"], truth.len());
    assert_eq!(cal["candidate_pairs"], candidates.len());
    assert_eq!(cal["candidates_outside_runs"], outside.len());
    assert_eq!(cal["candidates_per_claim"], 1000);
    let last = |sim: &Value| sim["curve"].as_array().unwrap().last().unwrap()["evidence"].clone();
    assert_eq!(cal["curve"].as_array().unwrap().len(), candidates.len());
    assert_eq!(last(cal), found_in_runs + found_outside);
    assert_eq!(cal["outside_runs"], found_outside);
    assert_eq!(last(depth), found_in_runs);

    // A small budget: one point per judgment, the same for the same seed, and the searcher's
    // variant spends the same budget.
    let small = |order: &str| {
        ok(simulate(&[
            "--order", order, "--budget", "60", "--seed", "4", "--json",
        ]))
    };
    let once: Value = serde_json::from_str(&small("cal")).unwrap();
    assert_eq!(once["curve"].as_array().unwrap().len(), 60);
    assert_eq!(once["candidates_per_claim"], 100);
    assert_eq!(small("cal"), serde_json::to_string(&once).unwrap() + "\n");
    let searched: Value = serde_json::from_str(&small("cal-search")).unwrap();
    assert_eq!(searched["order"], "cal-search");
    assert_eq!(searched["curve"].as_array().unwrap().len(), 60);

    // The stopping rule: its counts against the recount; judging everything is its only other
    // end.
    let stopping: Value = serde_json::from_str(&ok(simulate(&[
        "--order",
        "cal",
        "--candidates",
        "1000",
        "--budget",
        "10",
        "--stop-recall",
        "0.9",
        "--stop-confidence",
        "0.95",
        "--stop-switch-after",
        "20",
        "--json",
    ])))
    .unwrap();
    let stop = &stopping["stopped_at"];
    let holds = found_in_runs + found_outside;
    assert_eq!(stop["candidates_evidence"], holds);
    let count = |key: &str| stop[key].as_u64().unwrap() as usize;
    assert_eq!(count("judgments"), count("prioritised") + count("sampled"));
    assert!(count("judgments") <= candidates.len());
    assert!(
        count("prioritised") >= 20,
        "the order judges until 20 misses in a row"
    );
    assert!(count("evidence") <= holds);
    if stop["stopped_by_test"] == true {
        assert!(stop["p_value"].as_f64().unwrap() < 0.05);
    } else {
        assert_eq!(count("judgments"), candidates.len());
    }
    if count("evidence") as f64 >= 0.9 * holds as f64 {
        assert!(count("target_reached_at") <= count("judgments"));
    } else {
        assert_eq!(stop["target_reached_at"], Value::Null);
    }
    let said = failed(simulate(&[
        "--order",
        "cal",
        "--budget",
        "10",
        "--stop-recall",
        "1.5",
    ]));
    assert!(said.contains("--stop-recall must be in (0, 1]"), "{said}");
}

/// A canonical run file's row: (claim, doc), predicted label, confidence, rank.
type Row = ((String, String), String, f64, u64);

/// A canonical run file's rows.
fn run_rows(path: &Path) -> Vec<Row> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let row: Value = serde_json::from_str(line).unwrap();
            let confidence = row["p_support"]
                .as_f64()
                .unwrap()
                .max(row["p_contradict"].as_f64().unwrap());
            (
                (text(&row["claim_id"]), text(&row["doc_id"])),
                row["predicted_label"].as_str().unwrap().to_owned(),
                confidence,
                row["rank"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Each claim's top `depth` pairs of a run by confidence (ties by retrieval rank).
fn top_per_claim(rows: &[Row], depth: usize) -> Pairs {
    let mut by_claim: std::collections::BTreeMap<&str, Vec<&Row>> = Default::default();
    for row in rows {
        by_claim.entry(row.0 .0.as_str()).or_default().push(row);
    }
    by_claim
        .into_values()
        .flat_map(|mut list| {
            list.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.3.cmp(&b.3)));
            list.into_iter().take(depth).map(|row| row.0.clone())
        })
        .collect()
}

/// The demo claims' evidence with its label (the first evidence set's).
fn evidence_labels() -> std::collections::HashMap<(String, String), String> {
    let mut labels = std::collections::HashMap::new();
    for line in std::fs::read_to_string(demo_file("claims.jsonl"))
        .unwrap()
        .lines()
    {
        let claim: Value = serde_json::from_str(line).unwrap();
        for (doc, sets) in claim["evidence"].as_object().unwrap() {
            if let Some(label) = sets[0]["label"].as_str() {
                labels.insert((claim["id"].to_string(), doc.clone()), label.to_owned());
            }
        }
    }
    labels
}

/// Micro F1 of a run's rows against the labelled pairs of `gold`, as SciFact-Open counts it:
/// a SUPPORT or CONTRADICT prediction is correct when the gold has that label.
fn f1(rows: &[Row], gold: &std::collections::HashMap<(String, String), String>) -> f64 {
    let predicted: Vec<_> = rows.iter().filter(|r| r.1 != "NEI").collect();
    let correct = predicted
        .iter()
        .filter(|r| gold.get(&r.0) == Some(&r.1))
        .count() as f64;
    let (p, r) = (
        if predicted.is_empty() {
            0.0
        } else {
            correct / predicted.len() as f64
        },
        if gold.is_empty() {
            0.0
        } else {
            correct / gold.len() as f64
        },
    );
    if p + r == 0.0 {
        0.0
    } else {
        2.0 * p * r / (p + r)
    }
}

#[test]
fn leaving_each_system_out_scores_it_against_what_the_others_judged() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let shell = |args: &[&str]| ok(crate::support::cli::command().args(args).output().unwrap());
    let index = path("index");
    shell(&[
        "pipeline",
        "index",
        "--corpus",
        &demo_file("corpus.jsonl"),
        "--index",
        &index,
    ]);
    let pipeline_run = |out: &str, scorer: &[&str]| {
        let base = [
            "pipeline",
            "run",
            "--index",
            &index,
            "--claims",
            &demo_file("claims.jsonl"),
            "--k",
            "20",
            "--out",
            out,
        ];
        shell(&[&base[..], scorer].concat());
    };
    pipeline_run(&path("bm25.jsonl"), &["--scorer", "bm25"]);
    let model = demo_file("models/trained-r0.json.gz");
    let corpus = demo_file("corpus.jsonl");
    pipeline_run(
        &path("trained.jsonl"),
        &[
            "--scorer", "trained", "--model", &model, "--corpus", &corpus,
        ],
    );
    let db = demo_project(
        dir.path(),
        &[
            ("bm25", &path("bm25.jsonl")),
            ("trained", &path("trained.jsonl")),
        ],
    );
    ok(claimpool(
        &db,
        &[
            "pool",
            "build",
            "--project",
            "demo",
            "--strategy",
            "per-claim",
            "--depth",
            "3",
        ],
    ));
    let args = [
        "simulate",
        "--project",
        "demo",
        "--leave-one-out",
        "3",
        "--seed",
        "5",
        "--json",
    ];
    let text = ok(claimpool(&db, &args));
    let table: Value = serde_json::from_str(&text).unwrap();
    // The same seed, the same table.
    assert_eq!(ok(claimpool(&db, &args)), text);

    // The recount from the run files and the claims file.
    let truth = evidence_labels();
    let rows = |system: &str| run_rows(Path::new(&path(&format!("{system}.jsonl"))));
    let qrels = |judged: &Pairs| {
        truth
            .iter()
            .filter(|(pair, _)| judged.contains(*pair))
            .map(|(pair, label)| (pair.clone(), label.clone()))
            .collect::<std::collections::HashMap<_, _>>()
    };
    let pooled: Pairs = top_per_claim(&rows("bm25"), 3)
        .union(&top_per_claim(&rows("trained"), 3))
        .cloned()
        .collect();
    assert_eq!(table["depth"], 3);
    assert_eq!(table["strategy"], "per-claim");
    assert_eq!(table["evidence_pairs"], truth.len());
    assert_eq!(table["pooled_pairs"], pooled.len());
    assert_eq!(table["pooled_evidence"], qrels(&pooled).len());
    let systems = table["systems"].as_array().unwrap();
    assert_eq!(systems.len(), 2);
    let close = |a: &Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-12;
    for (row, (left, other)) in systems
        .iter()
        .zip([("bm25", "trained"), ("trained", "bm25")])
    {
        assert_eq!(row["system"], left);
        let others = top_per_claim(&rows(other), 3);
        assert_eq!(row["judgments"], others.len(), "{left}");
        assert_eq!(row["evidence_depth"], qrels(&others).len(), "{left}");
        let run = rows(left);
        assert!(close(&row["f1_truth"], f1(&run, &truth)), "{left}: {row}");
        assert!(
            close(&row["f1_pooled"], f1(&run, &qrels(&pooled))),
            "{left}: {row}"
        );
        assert!(
            close(&row["f1_depth"], f1(&run, &qrels(&others))),
            "{left}: {row}"
        );
        let drop = row["f1_pooled"].as_f64().unwrap() - row["f1_depth"].as_f64().unwrap();
        assert!(close(&row["drop_depth"], drop), "{left}: {row}");
        // cal judged as many pairs, so it found at most as much evidence as it judged.
        let cal = row["evidence_cal"].as_u64().unwrap() as usize;
        assert!(cal <= others.len() && cal <= truth.len(), "{left}: {row}");
        assert!(row["cal_outside_runs"].as_u64().unwrap() as usize <= cal);
        // cal's drop is against cal over every system, not against the depth pool.
        let value = |key: &str| row[key].as_f64().unwrap();
        assert!(
            close(&row["drop_cal"], value("f1_pooled_cal") - value("f1_cal")),
            "{left}: {row}"
        );
        assert!(
            close(
                &row["drop_cal_from_depth_pool"],
                value("f1_pooled") - value("f1_cal")
            ),
            "{left}: {row}"
        );
    }
    let mean = |key: &str| {
        systems
            .iter()
            .map(|r| r[key].as_f64().unwrap())
            .sum::<f64>()
            / 2.0
    };
    assert!(close(&table["mean_drop_cal"], mean("drop_cal")), "{table}");
    assert!(
        close(&table["mean_drop_depth"], mean("drop_depth")),
        "{table}"
    );
    let pooled_cal = table["pooled_cal_evidence"].as_u64().unwrap() as usize;
    assert!(pooled_cal <= pooled.len().min(truth.len()), "{table}");
    let said = failed(claimpool(
        &db,
        &["simulate", "--project", "demo", "--order", "cal"],
    ));
    assert!(said.contains("--budget"), "{said}");
}
