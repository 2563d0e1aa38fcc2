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

/// The (claim, doc) pairs of a run file (canonical JSONL).
fn run_pairs(path: &Path) -> Pairs {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let row: Value = serde_json::from_str(line).unwrap();
            let text = |v: &Value| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
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
    let db = postgres::fresh_test_database(dir.path());
    ok(claimpool(&db, &["project", "create", "demo"]));
    ok(claimpool(
        &db,
        &[
            "import",
            "corpus",
            "--project",
            "demo",
            &demo_file("corpus.jsonl"),
        ],
    ));
    ok(claimpool(
        &db,
        &[
            "import",
            "claims",
            "--project",
            "demo",
            &demo_file("claims.jsonl"),
        ],
    ));
    let run = path("bm25-5.jsonl").display().to_string();
    ok(claimpool(
        &db,
        &[
            "import",
            "run",
            "--project",
            "demo",
            "--system",
            "bm25",
            &run,
        ],
    ));

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
