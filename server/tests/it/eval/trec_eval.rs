//! bpref, Judged@k and condensed AP of `claimpool eval` against trec_eval's own code, through
//! pytrec_eval (PyPI `pytrec-eval-terrier`, installed with pip when missing; the test is skipped
//! with a printed reason only when that install fails), on hand-made cases and on every staged
//! SciFact dev run with half of the gold evidence withheld as unjudged (seeded).
//!
//! Label-only relevance in trec_eval's terms, per run: a judged pair is relevant (1) when it is
//! gold evidence and the run ranks it with the gold label (or with no label); a gold pair the run
//! ranks with another label is judged non-relevant (0), and the qrels get an extra relevant
//! document the run never retrieves in its place, so that R stays the claim's gold evidence
//! count. Judged@k is trec_eval's `P_k` with every judged pair relevant; condensed AP is `map`
//! of the run without its unjudged pairs.

use super::{eval, json_lines, pairs_of, runs, Pair, L};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

/// Whether pytrec_eval can be imported, installing it with pip when it cannot.
fn pytrec_eval() -> bool {
    let importable = || {
        Command::new("python3")
            .args(["-c", "import pytrec_eval"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if importable() {
        return true;
    }
    let install = Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", "pytrec-eval-terrier"])
        .output();
    match install {
        Ok(out) if out.status.success() && importable() => true,
        Ok(out) => {
            eprintln!(
                "skipped: `pip install pytrec-eval-terrier` failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            false
        }
        Err(e) => {
            eprintln!("skipped: python3 cannot be run: {e}");
            false
        }
    }
}

const SCRIPT: &str = r#"
import json, sys
import pytrec_eval
cases = json.load(open(sys.argv[1]))
out = []
for case in cases:
    ks = ",".join(str(k) for k in case["ks"])
    rel = pytrec_eval.RelevanceEvaluator(case["qrels_rel"], {"bpref", "num_rel"})
    full = rel.evaluate(case["full"])
    cond = pytrec_eval.RelevanceEvaluator(case["qrels_rel"], {"map"}).evaluate(case["condensed"])
    judged = pytrec_eval.RelevanceEvaluator(case["qrels_judged"], {"P." + ks}).evaluate(case["full"])
    out.append({"full": full, "condensed": cond, "judged": judged})
print(json.dumps(out))
"#;

/// A collection as the test writes it: claim -> doc -> gold evidence label, and the judged
/// non-evidence pairs.
struct Collection {
    claims: Vec<String>,
    evidence: BTreeMap<String, HashMap<String, L>>,
    judged_nei: BTreeSet<(String, String)>,
}

impl Collection {
    fn judged(&self, claim: &str, doc: &str) -> bool {
        self.evidence
            .get(claim)
            .is_some_and(|e| e.contains_key(doc))
            || self
                .judged_nei
                .contains(&(claim.to_owned(), doc.to_owned()))
    }

    /// The claims file (SciFact format, no cited docs) and the qrels, with `withheld` pairs as -1
    /// rows.
    fn write(&self, dir: &Path, withheld: &[(String, String)]) -> (String, String) {
        let mut claims = String::new();
        for claim in &self.claims {
            let mut evidence = Map::new();
            for (doc, label) in self.evidence.get(claim).into_iter().flatten() {
                let label = if *label == L::S {
                    "SUPPORT"
                } else {
                    "CONTRADICT"
                };
                evidence.insert(doc.clone(), json!([{"sentences": [0], "label": label}]));
            }
            claims.push_str(&json!({"id": claim, "claim": "c", "evidence": evidence}).to_string());
            claims.push('\n');
        }
        let mut qrels = String::new();
        for (claim, docs) in &self.evidence {
            for doc in docs.keys() {
                qrels.push_str(&format!("{claim} 0 {doc} 1\n"));
            }
        }
        for (claim, doc) in &self.judged_nei {
            qrels.push_str(&format!("{claim} 0 {doc} 0\n"));
        }
        for (claim, doc) in withheld {
            qrels.push_str(&format!("{claim} 0 {doc} -1\n"));
        }
        let (c, q) = (dir.join("claims.jsonl"), dir.join("qrels.txt"));
        std::fs::write(&c, claims).unwrap();
        std::fs::write(&q, qrels).unwrap();
        (c.display().to_string(), q.display().to_string())
    }

    /// pytrec_eval's inputs for one run (pairs of gold claims only).
    fn case(&self, pairs: &[Pair], ks: &[usize]) -> Value {
        let mut full: BTreeMap<&str, Map<String, Value>> = BTreeMap::new();
        let mut condensed: BTreeMap<&str, Map<String, Value>> = BTreeMap::new();
        let mut qrels_rel: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
        let mut qrels_judged: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
        for (claim, docs) in &self.evidence {
            for doc in docs.keys() {
                qrels_rel
                    .entry(claim.clone())
                    .or_default()
                    .insert(doc.clone(), json!(1));
                qrels_judged
                    .entry(claim.clone())
                    .or_default()
                    .insert(doc.clone(), json!(1));
            }
        }
        for (claim, doc) in &self.judged_nei {
            qrels_rel
                .entry(claim.clone())
                .or_default()
                .insert(doc.clone(), json!(0));
            qrels_judged
                .entry(claim.clone())
                .or_default()
                .insert(doc.clone(), json!(1));
        }
        for p in pairs
            .iter()
            .filter(|p| self.evidence.contains_key(&p.claim))
        {
            full.entry(&p.claim)
                .or_default()
                .insert(p.doc.clone(), json!(p.confidence));
            if self.judged(&p.claim, &p.doc) {
                condensed
                    .entry(&p.claim)
                    .or_default()
                    .insert(p.doc.clone(), json!(p.confidence));
            }
            let gold = self.evidence[&p.claim].get(&p.doc).copied();
            let relevant = match (gold, p.curve) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(g), Some(c)) => g == c,
            };
            if gold.is_some() && !relevant {
                let q = qrels_rel.get_mut(&p.claim).unwrap();
                q.insert(p.doc.clone(), json!(0));
                q.insert(format!("{}#missed", p.doc), json!(1));
            }
        }
        json!({
            "ks": ks,
            "full": full,
            "condensed": condensed,
            "qrels_rel": qrels_rel,
            "qrels_judged": qrels_judged,
        })
    }
}

fn run_pytrec(dir: &Path, cases: &[Value]) -> Vec<Value> {
    let input = dir.join("pytrec_input.json");
    std::fs::write(&input, serde_json::to_string(cases).unwrap()).unwrap();
    let out = Command::new("python3")
        .args(["-c", SCRIPT, input.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

/// Checks claimpool's per-claim and overall figures against pytrec_eval's; returns how many
/// per-claim values were compared.
fn check(collection: &Collection, report: &Value, trec: &Value, what: &str) -> usize {
    let f = |v: &Value| v.as_f64().unwrap();
    let inc = &report["incomplete"];
    let ks: Vec<u64> = inc["judged_at"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["k"].as_u64().unwrap())
        .collect();
    let by_claim = report["incomplete_by_claim"].as_array().unwrap();
    assert_eq!(by_claim.len(), collection.claims.len(), "{what}");
    let (mut bpref_sum, mut map_sum, mut with_evidence) = (0.0, 0.0, 0usize);
    let mut judged_sums = vec![0.0; ks.len()];
    let mut compared = 0;
    for row in by_claim {
        let claim = row["claim"].as_str().unwrap();
        let r = collection.evidence[claim].len();
        assert_eq!(
            row["gold_evidence"].as_u64().unwrap() as usize,
            r,
            "{what} {claim}"
        );
        // A claim pytrec_eval leaves out (no pairs, or nothing judged) scores 0 everywhere.
        let zero = json!(0.0);
        let full = trec["full"].get(claim);
        if let Some(full) = full {
            assert_eq!(f(&full["num_rel"]) as usize, r, "{what} {claim}: num_rel");
        }
        let bpref = full.map_or(0.0, |q| f(&q["bpref"]));
        let map = trec["condensed"].get(claim).map_or(0.0, |q| f(&q["map"]));
        assert!(
            (f(&row["bpref"]) - bpref).abs() < 1e-9,
            "{what} {claim}: bpref {} vs trec_eval {bpref}",
            row["bpref"]
        );
        assert!(
            (f(&row["condensed"]["average_precision"]) - map).abs() < 1e-9,
            "{what} {claim}: condensed AP {} vs trec_eval {map}",
            row["condensed"]["average_precision"]
        );
        for (i, (j, k)) in row["judged_at"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&ks)
            .enumerate()
        {
            let want = trec["judged"]
                .get(claim)
                .map_or(&zero, |q| &q[format!("P_{k}")]);
            assert!(
                (f(&j["value"]) - f(want)).abs() < 1e-9,
                "{what} {claim}: Judged@{k} {} vs trec_eval P_{k} {want}",
                j["value"]
            );
            judged_sums[i] += f(want);
        }
        if r > 0 {
            bpref_sum += bpref;
            map_sum += map;
            with_evidence += 1;
        }
        compared += 1;
    }
    let n = collection.claims.len() as f64;
    for (j, sum) in inc["judged_at"].as_array().unwrap().iter().zip(judged_sums) {
        assert!(
            (f(&j["value"]) - sum / n).abs() < 1e-9,
            "{what}: mean Judged@k"
        );
    }
    assert!(
        (f(&inc["bpref"]) - bpref_sum / with_evidence as f64).abs() < 1e-9,
        "{what}"
    );
    assert!(
        (f(&inc["condensed_map"]) - map_sum / with_evidence as f64).abs() < 1e-9,
        "{what}"
    );
    compared
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

fn pair(claim: &str, doc: &str, label: Option<L>, confidence: f64) -> Pair {
    Pair {
        claim: claim.into(),
        doc: doc.into(),
        stated: label,
        curve: label,
        confidence,
    }
}

fn canonical(pairs: &[Pair]) -> String {
    pairs
        .iter()
        .map(|p| {
            let label = match p.stated {
                Some(L::S) => json!("SUPPORT"),
                Some(L::C) => json!("CONTRADICT"),
                Some(L::N) => json!("NEI"),
                None => Value::Null,
            };
            format!(
                "{}\n",
                json!({"claim_id": p.claim, "doc_id": p.doc, "predicted_label": label, "score": p.confidence})
            )
        })
        .collect()
}

#[test]
fn hand_made_cases_agree_with_trec_eval() {
    if !pytrec_eval() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = |docs: &[(&str, L)]| -> HashMap<String, L> {
        docs.iter().map(|(d, l)| (d.to_string(), *l)).collect()
    };
    let collection = Collection {
        claims: vec!["1".into(), "2".into(), "3".into()],
        evidence: [
            (
                "1".to_owned(),
                s(&[("11", L::S), ("12", L::C), ("13", L::S)]),
            ),
            ("2".to_owned(), s(&[])),
            ("3".to_owned(), s(&[("31", L::S), ("33", L::C)])),
        ]
        .into_iter()
        .collect(),
        judged_nei: [
            ("1", "14"),
            ("1", "15"),
            ("2", "21"),
            ("3", "32"),
            ("3", "34"),
        ]
        .iter()
        .map(|(c, d)| (c.to_string(), d.to_string()))
        .collect(),
    };
    let (claims, qrels) = collection.write(dir.path(), &[("1".into(), "16".into())]);
    // Unjudged pairs (16, 17, 35), a gold pair with the wrong label (12), a label-less pair
    // (33), NEI predictions, and ties broken by doc id (31/32/34 at 0.8).
    let cases: Vec<Vec<Pair>> = vec![
        vec![
            pair("1", "16", Some(L::S), 0.9),
            pair("1", "14", Some(L::S), 0.8),
            pair("1", "11", Some(L::S), 0.7),
            pair("1", "17", Some(L::C), 0.6),
            pair("1", "12", Some(L::S), 0.5),
            pair("1", "15", Some(L::N), 0.4),
            pair("1", "13", Some(L::S), 0.3),
            pair("2", "21", Some(L::S), 0.5),
            pair("3", "32", Some(L::S), 0.8),
            pair("3", "31", Some(L::S), 0.8),
            pair("3", "34", Some(L::N), 0.8),
            pair("3", "35", Some(L::S), 0.7),
            pair("3", "33", None, 0.1),
        ],
        vec![
            pair("1", "13", Some(L::S), 1.0),
            pair("1", "11", Some(L::S), 1.0),
            pair("1", "12", Some(L::C), 1.0),
            pair("3", "34", Some(L::S), 2.0),
            pair("3", "36", Some(L::S), 1.5),
            pair("3", "33", Some(L::C), 1.0),
        ],
    ];
    let mut trec_cases = Vec::new();
    let mut reports = Vec::new();
    for (i, pairs) in cases.iter().enumerate() {
        let run = dir.path().join(format!("run{i}.jsonl"));
        std::fs::write(&run, canonical(pairs)).unwrap();
        let report = eval_json(&[
            "--claims",
            &claims,
            "--qrels",
            &qrels,
            "--run",
            run.to_str().unwrap(),
            "--json",
            "--by-claim",
        ]);
        let ks: Vec<u64> = report["incomplete"]["judged_at"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["k"].as_u64().unwrap())
            .collect();
        trec_cases
            .push(collection.case(pairs, &ks.iter().map(|&k| k as usize).collect::<Vec<_>>()));
        reports.push(report);
    }
    let trec = run_pytrec(dir.path(), &trec_cases);
    for (i, (report, trec)) in reports.iter().zip(&trec).enumerate() {
        assert_eq!(check(&collection, report, trec, &format!("case {i}")), 3);
    }
    // The cases are not degenerate: trec_eval's bpref of claim 1 in case 0 is neither 0 nor 1.
    let b = trec[0]["full"]["1"]["bpref"].as_f64().unwrap();
    assert!(b > 0.0 && b < 1.0, "{b}");
}

#[test]
fn staged_dev_runs_with_half_the_evidence_withheld_agree_with_trec_eval() {
    let Some(data) = super::data() else { return };
    if !pytrec_eval() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // SciFact dev: the evidence, the cited documents and the top 5 of the TF-IDF retrieval as
    // judged pairs (a small pool); then half of the evidence, drawn with seed 17, withheld.
    let mut evidence: BTreeMap<String, HashMap<String, L>> = BTreeMap::new();
    let mut judged_nei = BTreeSet::new();
    let mut claims = Vec::new();
    for c in json_lines(&data.join("scifact/claims_dev.jsonl")) {
        let claim = super::id(&c["id"]);
        let docs: HashMap<String, L> = c["evidence"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(d, sets)| (d.clone(), super::label(sets[0]["label"].as_str().unwrap())))
            .collect();
        for doc in c["cited_doc_ids"].as_array().unwrap() {
            let doc = super::id(doc);
            if !docs.contains_key(&doc) {
                judged_nei.insert((claim.clone(), doc));
            }
        }
        evidence.insert(claim.clone(), docs);
        claims.push(claim);
    }
    for c in json_lines(&data.join("scifact-runs/arsjoint/claims_dev_retrieved_tfidf.jsonl")) {
        let claim = super::id(&c["id"]);
        for doc in c["doc_ids"].as_array().unwrap().iter().take(5) {
            let doc = super::id(doc);
            if !evidence[&claim].contains_key(&doc) {
                judged_nei.insert((claim.clone(), doc));
            }
        }
    }
    let mut all: Vec<(String, String)> = evidence
        .iter()
        .flat_map(|(c, docs)| docs.keys().map(move |d| (c.clone(), d.clone())))
        .collect();
    all.sort();
    all.shuffle(&mut ChaCha8Rng::seed_from_u64(17));
    let withheld: Vec<(String, String)> = all[..all.len() / 2].to_vec();
    for (c, d) in &withheld {
        evidence.get_mut(c).unwrap().remove(d);
    }
    let collection = Collection {
        claims,
        evidence,
        judged_nei,
    };
    let (claims_file, qrels) = collection.write(dir.path(), &withheld);

    let runs = runs(&data);
    let mut trec_cases = Vec::new();
    let mut reports = Vec::new();
    for (path, kind, order) in &runs {
        let report = eval_json(&[
            "--claims",
            &claims_file,
            "--qrels",
            &qrels,
            "--run",
            path.to_str().unwrap(),
            "--label-order",
            order,
            "--json",
            "--by-claim",
        ]);
        let ks: Vec<usize> = report["incomplete"]["judged_at"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["k"].as_u64().unwrap() as usize)
            .collect();
        trec_cases.push(collection.case(&pairs_of(path, *kind), &ks));
        reports.push(report);
    }
    let trec = run_pytrec(dir.path(), &trec_cases);
    let mut compared = 0;
    let mut unjudged = 0;
    for ((report, trec), (path, _, _)) in reports.iter().zip(&trec).zip(&runs) {
        compared += check(&collection, report, trec, &path.display().to_string());
        unjudged += report["incomplete"]["unjudged_predicted_evidence"]
            .as_u64()
            .unwrap();
    }
    eprintln!(
        "{} runs, {compared} per-claim values of bpref, condensed AP and Judged@k equal to \
         trec_eval's; {} of {} evidence pairs withheld; {unjudged} predicted evidence pairs unjudged",
        runs.len(),
        withheld.len(),
        all.len()
    );
    assert_eq!(compared, 300 * runs.len());
    assert!(
        unjudged > 50,
        "withholding makes predicted evidence unjudged: {unjudged}"
    );
}
