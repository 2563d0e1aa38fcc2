//! `claimpool eval`, run as a user would: on every staged real SciFact dev run (skipped when
//! ../shared is absent) its figures equal an independent computation written here from the raw
//! JSON (no claimpool code involved); malformed inputs are refused naming file and line.

mod trec_eval;

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Instant;

fn data() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    if dir.join("scifact/claims_dev.jsonl").is_file() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is absent", dir.display());
        None
    }
}

fn eval(args: &[&str]) -> Output {
    crate::support::cli::command()
        .arg("eval")
        .args(args)
        .output()
        .unwrap()
}

fn id(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum L {
    S,
    C,
    N,
}

fn label(text: &str) -> L {
    match text {
        "SUPPORT" | "SUPPORTS" => L::S,
        "CONTRADICT" | "REFUTE" | "REFUTES" => L::C,
        "NEI" | "NOT_ENOUGH_INFO" | "NOINFO" => L::N,
        other => panic!("label {other}"),
    }
}

/// One predicted pair: the stated label (None: label-less run), the label a point of the
/// precision/recall curve is judged with, and the confidence.
struct Pair {
    claim: String,
    doc: String,
    stated: Option<L>,
    curve: Option<L>,
    confidence: f64,
}

/// How the staged files are read (SOURCES.md gives each schema).
#[derive(Clone, Copy)]
enum Kind {
    /// `{"id", "evidence": {doc: {"label", "label_probs"?}}}`, probabilities in `order`.
    Leaderboard { order: [L; 3] },
    /// `{"claim_id", "labels": {doc: {"label", "confidence"}}}`: the confidence is the
    /// label's probability; the pair's score is it for S/C and one minus it for NEI.
    VeriSci,
    /// `{"claim_id", "evidence": {doc: [sentence scores]}}`: no label, score = best sentence.
    SentenceScores,
    /// SciFact claims with `doc_ids`: no label, no score.
    Retrieved,
}

fn pairs_of(path: &Path, kind: Kind) -> Vec<Pair> {
    let mut pairs = Vec::new();
    for line in json_lines(path) {
        match kind {
            Kind::Leaderboard { order } => {
                for (doc, p) in line["evidence"].as_object().unwrap() {
                    let stated = label(p["label"].as_str().unwrap());
                    let (curve, confidence) = match p.get("label_probs") {
                        Some(probs) => {
                            let probs: Vec<f64> = probs
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|x| x.as_f64().unwrap())
                                .collect();
                            let of = |l: L| probs[order.iter().position(|&o| o == l).unwrap()];
                            let (s, c) = (of(L::S), of(L::C));
                            (if s >= c { L::S } else { L::C }, s.max(c))
                        }
                        None => (stated, if stated == L::N { 0.0 } else { 1.0 }),
                    };
                    pairs.push(Pair {
                        claim: id(&line["id"]),
                        doc: doc.clone(),
                        stated: Some(stated),
                        curve: Some(curve),
                        confidence,
                    });
                }
            }
            Kind::VeriSci => {
                for (doc, p) in line["labels"].as_object().unwrap() {
                    let stated = label(p["label"].as_str().unwrap());
                    let c = p["confidence"].as_f64().unwrap();
                    pairs.push(Pair {
                        claim: id(&line["claim_id"]),
                        doc: doc.clone(),
                        stated: Some(stated),
                        curve: Some(stated),
                        confidence: if stated == L::N { 1.0 - c } else { c },
                    });
                }
            }
            Kind::SentenceScores => {
                for (doc, scores) in line["evidence"].as_object().unwrap() {
                    let best = scores
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_f64().unwrap())
                        .fold(f64::NEG_INFINITY, f64::max);
                    pairs.push(Pair {
                        claim: id(&line["claim_id"]),
                        doc: doc.clone(),
                        stated: None,
                        curve: None,
                        confidence: if best.is_finite() { best } else { 0.0 },
                    });
                }
            }
            Kind::Retrieved => {
                for doc in line["doc_ids"].as_array().unwrap() {
                    pairs.push(Pair {
                        claim: id(&line["id"]),
                        doc: id(doc),
                        stated: None,
                        curve: None,
                        confidence: 0.0,
                    });
                }
            }
        }
    }
    pairs
}

/// SciFact's gold: every claim, and claim -> doc -> evidence label.
fn gold_of(claims: &Path) -> BTreeMap<String, HashMap<String, L>> {
    json_lines(claims)
        .iter()
        .map(|c| {
            let evidence = c["evidence"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(doc, sets)| (doc.clone(), label(sets[0]["label"].as_str().unwrap())))
                .collect();
            (id(&c["id"]), evidence)
        })
        .collect()
}

/// A predicted label is right when the pair is gold evidence and the label is the gold one (a
/// label-less prediction is right on any gold evidence).
fn right(predicted: Option<L>, gold: Option<L>) -> bool {
    match (predicted, gold) {
        (_, None) | (Some(L::N), _) => false,
        (None, Some(_)) => true,
        (Some(p), Some(g)) => p == g,
    }
}

struct Expected {
    precision: f64,
    recall: f64,
    f1: f64,
    average_precision: f64,
    /// claim -> (gold, predicted, correct)
    by_claim: BTreeMap<String, (u64, u64, u64)>,
}

fn expected(gold: &BTreeMap<String, HashMap<String, L>>, pairs: &[Pair]) -> Expected {
    let gold_total: usize = gold.values().map(HashMap::len).sum();
    let mut by_claim: BTreeMap<String, (u64, u64, u64)> = gold
        .iter()
        .map(|(c, docs)| (c.clone(), (docs.len() as u64, 0, 0)))
        .collect();
    let g = |p: &Pair| gold.get(&p.claim).and_then(|d| d.get(&p.doc)).copied();
    for p in pairs {
        let Some(counts) = by_claim.get_mut(&p.claim) else {
            continue;
        };
        if p.stated != Some(L::N) {
            counts.1 += 1;
            if right(p.stated, g(p)) {
                counts.2 += 1;
            }
        }
    }
    let predicted: u64 = by_claim.values().map(|c| c.1).sum();
    let correct: u64 = by_claim.values().map(|c| c.2).sum();
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let precision = ratio(correct, predicted);
    let recall = ratio(correct, gold_total as u64);
    let f1 = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    // Average precision: thresholds at each distinct confidence, highest first.
    let mut ranked: Vec<&Pair> = pairs
        .iter()
        .filter(|p| gold.contains_key(&p.claim))
        .collect();
    ranked.sort_by(|a, b| b.confidence.partial_cmp(&a.confidence).unwrap());
    let (mut retrieved, mut hits, mut previous_recall, mut ap) = (0u64, 0u64, 0.0, 0.0);
    let mut i = 0;
    while i < ranked.len() {
        let threshold = ranked[i].confidence;
        while i < ranked.len() && ranked[i].confidence == threshold {
            retrieved += 1;
            hits += u64::from(right(ranked[i].curve, g(ranked[i])));
            i += 1;
        }
        let recall_here = ratio(hits, gold_total as u64);
        ap += (recall_here - previous_recall) * ratio(hits, retrieved);
        previous_recall = recall_here;
    }
    Expected {
        precision,
        recall,
        f1,
        average_precision: ap,
        by_claim,
    }
}

const REFUTE_ORDER: [L; 3] = [L::C, L::N, L::S];
const DEFAULT_ORDER: [L; 3] = [L::C, L::N, L::S];

/// Every staged dev run that is a label or score prediction, with how to read it.
fn runs(data: &Path) -> Vec<(PathBuf, Kind, &'static str)> {
    let runs = data.join("scifact-runs");
    let mut list = Vec::new();
    for commit in [
        "2021-03-27_21c6c29",
        "2021-04-11_6683be0",
        "2021-04-20_1e22954",
    ] {
        let dir = runs.join("arsjoint").join(commit);
        list.push((
            dir.join("label_predictions.jsonl"),
            Kind::VeriSci,
            "CONTRADICT,NEI,SUPPORT",
        ));
        list.push((
            dir.join("merged_predictions.jsonl"),
            Kind::Leaderboard {
                order: DEFAULT_ORDER,
            },
            "CONTRADICT,NEI,SUPPORT",
        ));
    }
    for file in [
        "claims_dev_retrieved_tfidf.jsonl",
        "claims_dev_retrieved.jsonl",
    ] {
        list.push((
            runs.join("arsjoint").join(file),
            Kind::Retrieved,
            "CONTRADICT,NEI,SUPPORT",
        ));
    }
    for ckpt in [
        "scifact",
        "fever_sci",
        "citint",
        "finetuned_fever_sci",
        "covidfact",
        "healthver",
        "fever",
    ] {
        let file = if ckpt == "finetuned_fever_sci" {
            "finetuned_fever_sci_scifact_rw0_dev.jsonl".to_owned()
        } else {
            format!("{ckpt}_scifact_dev.jsonl")
        };
        list.push((
            runs.join("multivers_jedick/dev").join(file),
            Kind::Leaderboard {
                order: REFUTE_ORDER,
            },
            "REFUTE,NEI,SUPPORT",
        ));
    }
    for commit in ["a780913", "6d32d0d"] {
        list.push((
            runs.join(format!(
                "hybrid_rag_kaikoepchen/predictions_dev_{commit}.jsonl"
            )),
            Kind::Leaderboard {
                order: DEFAULT_ORDER,
            },
            "CONTRADICT,NEI,SUPPORT",
        ));
    }
    list.push((
        runs.join(
            "rationale_scores_neverneverendup/k30_scores_baseline_predicted_rationale_selection.jsonl",
        ),
        Kind::SentenceScores,
        "CONTRADICT,NEI,SUPPORT",
    ));
    list
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-9, "{what}: {a} != {b}");
}

#[test]
fn every_staged_dev_run_gets_the_figures_of_an_independent_computation() {
    let Some(data) = data() else { return };
    let claims = data.join("scifact/claims_dev.jsonl");
    let gold = gold_of(&claims);
    let mut slowest = (0.0f64, PathBuf::new());
    for (run, kind, order) in runs(&data) {
        let pairs = pairs_of(&run, kind);
        let want = expected(&gold, &pairs);
        let started = Instant::now();
        let out = eval(&[
            "--claims",
            claims.to_str().unwrap(),
            "--run",
            run.to_str().unwrap(),
            "--label-order",
            order,
            "--by-claim",
            "--json",
        ]);
        let seconds = started.elapsed().as_secs_f64();
        if seconds > slowest.0 {
            slowest = (seconds, run.clone());
        }
        assert!(
            out.status.success(),
            "{}: {}",
            run.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        let name = run.display().to_string();
        for (key, value) in [
            ("precision", want.precision),
            ("recall", want.recall),
            ("f1", want.f1),
            ("average_precision", want.average_precision),
        ] {
            close(got[key].as_f64().unwrap(), value, &format!("{name} {key}"));
        }
        assert_eq!(got["counts"]["predicted_pairs"], pairs.len(), "{name}");
        assert_eq!(got["counts"]["gold_evidence"], 209, "{name}");
        let by_claim: BTreeMap<String, (u64, u64, u64)> = got["by_claim"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let n = |k: &str| m[k].as_u64().unwrap();
                (
                    id(&m["claim"]),
                    (n("gold_evidence"), n("predicted"), n("correct")),
                )
            })
            .collect();
        assert_eq!(by_claim, want.by_claim, "{name}");
        assert!(got.get("precision_sd").is_none());
    }
    eprintln!(
        "slowest eval: {:.3} s on {} (debug build, including process start)",
        slowest.0,
        slowest.1.display()
    );
}

#[test]
fn the_bootstrap_adds_deviations_that_follow_the_seed_and_a_table_is_printed() {
    let Some(data) = data() else { return };
    let claims = data.join("scifact/claims_dev.jsonl");
    let run = data.join("scifact-runs/multivers_jedick/dev/citint_scifact_dev.jsonl");
    let with = |seed: &str| {
        let out = eval(&[
            "--claims",
            claims.to_str().unwrap(),
            "--run",
            run.to_str().unwrap(),
            "--label-order",
            "REFUTE,NEI,SUPPORT",
            "--bootstrap",
            "200",
            "--seed",
            seed,
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let a = with("7");
    assert_eq!(a, with("7"));
    let b = with("8");
    for key in ["precision", "recall", "f1", "average_precision"] {
        let sd = a[format!("{key}_sd")].as_f64().unwrap();
        assert!(sd > 0.0 && sd < 0.2, "{key}_sd {sd}");
        assert_eq!(
            a[key], b[key],
            "the point estimate does not depend on the seed"
        );
    }
    assert_ne!(a["f1_sd"], b["f1_sd"]);
    assert_eq!(
        a["bootstrap"],
        serde_json::json!({"samples": 200, "seed": 7})
    );

    let out = eval(&[
        "--claims",
        claims.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
        "--label-order",
        "REFUTE,NEI,SUPPORT",
    ]);
    let table = String::from_utf8(out.stdout).unwrap();
    let f1 = a["f1"].as_f64().unwrap();
    assert!(table.contains(&format!("f1\t{f1:.4}")), "{table}");
    assert!(
        table.contains("gold: 300 claims, 209 evidence pairs"),
        "{table}"
    );
}

#[test]
fn malformed_inputs_are_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let claims = dir.path().join("claims.jsonl");
    std::fs::write(
        &claims,
        "{\"id\": 1, \"claim\": \"A.\", \"evidence\": {\"5\": [{\"sentences\": [0], \"label\": \"SUPPORT\"}]}}\n\
         {\"id\": 2, \"claim\": \"B.\", \"evidence\": {}}\n",
    )
    .unwrap();
    let run = dir.path().join("run.jsonl");
    std::fs::write(
        &run,
        "{\"claim_id\": 1, \"doc_id\": 5, \"predicted_label\": \"SUPPORT\", \"p_support\": 0.9, \"p_contradict\": 0.1}\n\
         {\"claim_id\": 2, \"doc_id\": 5, \"predicted_label\": \"NEI\", \"p_support\": 0.1, \"p_contradict\": 0.1}\n\
         {\"claim_id\": 2, \"doc_id\": 6, \"predicted_label\": \"SUPPORT\", \"p_support\": 1.5, \"p_contradict\": 0.1}\n",
    )
    .unwrap();
    let args = |claims: &Path, run: &Path| {
        eval(&[
            "--claims",
            claims.to_str().unwrap(),
            "--run",
            run.to_str().unwrap(),
            "--json",
        ])
    };
    let stderr = |out: Output| {
        assert!(!out.status.success());
        String::from_utf8(out.stderr).unwrap()
    };
    let err = stderr(args(&claims, &run));
    assert!(
        err.contains(&format!("{}:3: field \"p_support\"", run.display())),
        "{err}"
    );
    // Fixed, the run is evaluated: 1 of 1 predicted evidence pair is right, recall 1.
    std::fs::write(
        &run,
        "{\"claim_id\": 1, \"doc_id\": 5, \"predicted_label\": \"SUPPORT\", \"p_support\": 0.9, \"p_contradict\": 0.1}\n",
    )
    .unwrap();
    let out = args(&claims, &run);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (got["precision"].as_f64(), got["recall"].as_f64()),
        (Some(1.0), Some(1.0))
    );

    std::fs::write(
        &claims,
        "{\"id\": 1, \"claim\": \"A.\", \"evidence\": {}}\n{\"id\": 2, \"evidence\": {}}\n",
    )
    .unwrap();
    let err = stderr(args(&claims, &run));
    assert!(err.contains(&format!("{}:2:", claims.display())), "{err}");
    // A run line that is not JSON, with the format given.
    std::fs::write(&run, "{\"claim_id\": 1, \"doc_id\": 5}\nnot json\n").unwrap();
    std::fs::write(
        &claims,
        "{\"id\": 1, \"claim\": \"A.\", \"evidence\": {}}\n",
    )
    .unwrap();
    let out = eval(&[
        "--claims",
        claims.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
        "--format",
        "canonical",
    ]);
    let err = stderr(out);
    assert!(err.contains(&format!("{}:2:", run.display())), "{err}");
    let err = stderr(eval(&[
        "--claims",
        claims.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
        "--format",
        "csv",
    ]));
    assert!(
        err.contains("--format: unknown run format \"csv\""),
        "{err}"
    );
}

/// A hand-made collection: claims 1-3 (SciFact format, claim 2 cites doc 21), a release-style
/// qrels with a -1 row, and a run whose figures are worked out by hand below.
fn incomplete_case(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let claims = dir.join("claims.jsonl");
    std::fs::write(
        &claims,
        "{\"id\": 1, \"claim\": \"A.\", \"evidence\": {\"11\": [{\"sentences\": [0], \"label\": \"SUPPORT\"}], \"12\": [{\"sentences\": [0], \"label\": \"CONTRADICT\"}], \"13\": [{\"sentences\": [1], \"label\": \"SUPPORT\"}]}, \"cited_doc_ids\": [11, 12, 13]}\n\
         {\"id\": 2, \"claim\": \"B.\", \"evidence\": {}, \"cited_doc_ids\": [21]}\n\
         {\"id\": 3, \"claim\": \"C.\", \"evidence\": {\"31\": [{\"sentences\": [0], \"label\": \"SUPPORT\"}]}, \"cited_doc_ids\": [31]}\n",
    )
    .unwrap();
    let qrels = dir.join("qrels.txt");
    std::fs::write(
        &qrels,
        "1 0 11 1\n1 0 12 1\n1 0 13 1\n1 0 14 0\n1 0 15 0\n1 0 16 -1\n2 0 21 0\n3 0 31 1\n3 0 32 0\n",
    )
    .unwrap();
    let run = dir.join("run.jsonl");
    let lines: Vec<String> = [
        (1, 16, "SUPPORT", 0.9),
        (1, 14, "SUPPORT", 0.8),
        (1, 11, "SUPPORT", 0.7),
        (1, 17, "CONTRADICT", 0.6),
        (1, 12, "SUPPORT", 0.5),
        (1, 15, "NEI", 0.4),
        (1, 13, "SUPPORT", 0.3),
        (2, 21, "SUPPORT", 0.5),
        (3, 32, "SUPPORT", 0.9),
        (3, 31, "SUPPORT", 0.8),
    ]
    .iter()
    .map(|(c, d, l, s)| {
        format!("{{\"claim_id\": {c}, \"doc_id\": {d}, \"predicted_label\": \"{l}\", \"score\": {s}}}\n")
    })
    .collect();
    std::fs::write(&run, lines.concat()).unwrap();
    (claims, qrels, run)
}

fn eval_json(args: &[&str]) -> Value {
    let out = eval(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn judged_at_k_bpref_and_condensed_figures_follow_the_qrels() {
    let dir = tempfile::tempdir().unwrap();
    let (claims, qrels, run) = incomplete_case(dir.path());
    let (claims, qrels, run) = (
        claims.to_str().unwrap(),
        qrels.to_str().unwrap(),
        run.to_str().unwrap(),
    );
    let got = eval_json(&[
        "--claims",
        claims,
        "--qrels",
        qrels,
        "--run",
        run,
        "--json",
        "--by-claim",
    ]);
    let inc = &got["incomplete"];
    let f = |v: &Value| v.as_f64().unwrap();
    assert_eq!(inc["judged_from"]["kind"], "qrels");
    // Judged: 11-15, 21, 31, 32 (16 is -1, 17 is absent).
    assert_eq!(inc["judged_pairs"], 8);
    assert_eq!(inc["depth"], 7);
    assert_eq!(inc["unjudged_pairs"], 2);
    assert_eq!(inc["unjudged_predicted_evidence"], 2);
    // Judged@5: claim 1 3/5 (16 and 17 unjudged), claim 2 1/5, claim 3 2/5; @7: 5/7, 1/7, 2/7.
    let at: Vec<(u64, f64)> = inc["judged_at"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["k"].as_u64().unwrap(), f(&j["value"])))
        .collect();
    let want = [
        (5, (0.6 + 0.2 + 0.4) / 3.0),
        (10, 8.0 / 30.0),
        (50, 8.0 / 150.0),
        (7, 8.0 / 21.0),
    ];
    for ((k, v), (wk, wv)) in at.iter().zip(want) {
        assert_eq!(*k, wk);
        assert!((v - wv).abs() < 1e-12, "judged@{k} {v} vs {wv}");
    }
    // bpref: claim 1 (R 3, N 2 judged NEI + 12 predicted with the wrong label): 14 is above 11
    // (1 - 1/3), three non-relevant pairs are above 13 (0): 2/9; claim 3: 32 above 31: 0.
    // Mean over the two claims with evidence.
    assert!((f(&inc["bpref"]) - 1.0 / 9.0).abs() < 1e-12);
    // Condensed per-claim AP: claim 1 ranks 14 11 12 15 13 -> (1/2 + 2/5) / 3; claim 3: 1/2.
    assert!((f(&inc["condensed_map"]) - (0.3 + 0.5) / 2.0).abs() < 1e-12);
    // Condensed headline figures: 7 judged pairs predicted as evidence, 3 right, 4 gold.
    let c = &inc["condensed"];
    assert!((f(&c["precision"]) - 3.0 / 7.0).abs() < 1e-12);
    assert!((f(&c["recall"]) - 0.75).abs() < 1e-12);
    assert!((f(&c["f1"]) - 6.0 / 11.0).abs() < 1e-12);
    // Thresholds over all claims: 0.8 (14, 31: 1 of 3), 0.7 (2 of 4), 0.3 (3 of 8).
    assert!((f(&c["average_precision"]) - 29.0 / 96.0).abs() < 1e-12);
    // Today's precision counts the two unjudged pairs as NEI.
    assert!((f(&got["precision"]) - 3.0 / 9.0).abs() < 1e-12);
    let by_claim = got["incomplete_by_claim"].as_array().unwrap();
    assert_eq!(by_claim.len(), 3);
    assert!((f(&by_claim[0]["bpref"]) - 2.0 / 9.0).abs() < 1e-12);
    assert!((f(&by_claim[0]["condensed"]["average_precision"]) - 0.3).abs() < 1e-12);
    assert_eq!(by_claim[1]["judged"], 1);
    assert_eq!(f(&by_claim[2]["condensed"]["average_precision"]), 0.5);

    // Without --qrels, the claims file's evidence and cited docs are the judged pairs: 14, 15
    // and 32 become unjudged.
    let from_claims = eval_json(&["--claims", claims, "--run", run, "--json"]);
    let inc = &from_claims["incomplete"];
    assert_eq!(inc["judged_from"]["kind"], "claims");
    assert_eq!(inc["judged_pairs"], 5);
    assert_eq!(inc["unjudged_pairs"], 5);
    assert_eq!(inc["unjudged_predicted_evidence"], 4);

    // The table carries the same figures.
    let out = eval(&[
        "--claims",
        claims,
        "--qrels",
        qrels,
        "--run",
        run,
        "--by-claim",
    ]);
    let table = String::from_utf8(out.stdout).unwrap();
    for line in [
        "judged@7\t0.3810 (the run's depth)",
        "bpref\t0.1111\t(mean over 2 claims with evidence)",
        "condensed_f1\t0.5455",
        "unjudged_predicted_evidence\t2",
    ] {
        assert!(table.contains(line), "{line:?} in\n{table}");
    }
    assert!(table.contains("\tbpref\tcondensed_precision"), "{table}");
}

#[test]
fn qrels_that_contradict_the_claims_file_are_refused_with_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let (claims, qrels, run) = incomplete_case(dir.path());
    // Line 4 calls doc 14 relevant; the claims file has no evidence there.
    std::fs::write(&qrels, "1 0 11 1\n1 0 12 1\n1 0 13 1\n1 0 14 1\n").unwrap();
    let out = eval(&[
        "--claims",
        claims.to_str().unwrap(),
        "--qrels",
        qrels.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!("{}:4: field \"judgment\"", qrels.display())),
        "{err}"
    );
    // A -1 row for gold evidence, line 2.
    std::fs::write(&qrels, "1 0 11 1\n1 0 12 -1\n").unwrap();
    let out = eval(&[
        "--claims",
        claims.to_str().unwrap(),
        "--qrels",
        qrels.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
    ]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(&format!("{}:2:", qrels.display())), "{err}");
}

#[test]
fn several_runs_are_compared_pair_by_pair_with_holm_corrected_p_values() {
    let Some(data) = data() else { return };
    let claims = data.join("scifact/claims_dev.jsonl");
    let dir = data.join("scifact-runs/arsjoint");
    let runs: Vec<String> = [
        "2021-03-27_21c6c29",
        "2021-04-11_6683be0",
        "2021-04-20_1e22954",
    ]
    .iter()
    .map(|c| {
        dir.join(c)
            .join("label_predictions.jsonl")
            .display()
            .to_string()
    })
    .collect();
    let mut args = vec![
        "--claims",
        claims.to_str().unwrap(),
        "--json",
        "--seed",
        "3",
    ];
    for run in &runs {
        args.extend(["--run", run.as_str()]);
    }
    let got = eval_json(&args);
    assert_eq!(got, eval_json(&args), "the same seed gives the same tests");
    let systems = got["systems"].as_array().unwrap();
    assert_eq!(systems.len(), 3);
    // The authors' own abstract label-only F1 (result_evaluation.json).
    for (system, f1) in systems.iter().zip([0.419, 0.347, 0.581]) {
        assert!(
            (system["f1"].as_f64().unwrap() - f1).abs() < 5e-4,
            "{system}"
        );
    }
    let pairs = got["comparisons"].as_array().unwrap();
    assert_eq!(pairs.len(), 3);
    assert_eq!(got["tests"]["permutations"], 10_000);
    let f = |v: &Value| v.as_f64().unwrap();
    let mut p_values = Vec::new();
    for (pair, (i, j)) in pairs.iter().zip([(0, 1), (0, 2), (1, 2)]) {
        let diff = f(&systems[i]["f1"]) - f(&systems[j]["f1"]);
        assert!((f(&pair["f1_difference"]) - diff).abs() < 1e-12);
        let boot = &pair["bootstrap"]["f1"];
        assert!(
            f(&boot["low"]) <= diff && diff <= f(&boot["high"]),
            "{pair}"
        );
        p_values.push(f(&pair["randomization"]["f1_p"]));
    }
    // The third run is far better than the other two (F1 +0.16, +0.23 on 300 claims).
    assert!(p_values[1] < 0.01 && p_values[2] < 0.01, "{p_values:?}");
    assert!(p_values[0] > 0.01, "{p_values:?}");
    // Holm, written out: sort ascending, multiply by 3, 2, 1, keep the running maximum.
    let mut order: Vec<usize> = (0..3).collect();
    order.sort_by(|&a, &b| p_values[a].partial_cmp(&p_values[b]).unwrap());
    let mut running: f64 = 0.0;
    for (rank, &index) in order.iter().enumerate() {
        running = running.max(((3 - rank) as f64 * p_values[index]).min(1.0));
        assert!((f(&pairs[index]["f1_p_holm"]) - running).abs() < 1e-12);
    }
}
