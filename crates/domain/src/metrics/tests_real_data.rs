//! Checks on the real SciFact dev claims and third-party runs (skipped when the data is absent).
//! The files are parsed minimally here; the real parsers live elsewhere.

use super::reference::{self, build_run, RawGold, RawPair};
use super::*;
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data_dir() -> Option<PathBuf> {
    testdata::shared_data()
}

fn lines(path: &Path) -> Vec<serde_json::Value> {
    testdata::json_lines(path)
}

fn id(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The dev gold (all 300 claims) and the cited (claim, doc) pairs.
fn dev_gold(dir: &Path) -> (RawGold, Vec<(String, String)>) {
    let mut gold = RawGold::default();
    let mut cited = Vec::new();
    for claim in lines(&dir.join("scifact/claims_dev.jsonl")) {
        let c = id(&claim["id"]);
        gold.claims.push(c.clone());
        for (doc, sets) in claim["evidence"].as_object().unwrap() {
            let label = Label::parse(sets[0]["label"].as_str().unwrap()).unwrap();
            gold.evidence.push((c.clone(), doc.clone(), label));
        }
        for doc in claim["cited_doc_ids"].as_array().unwrap() {
            cited.push((c.clone(), id(doc)));
        }
    }
    (gold, cited)
}

/// A run file in SciFact prediction format, with `label_probs` [p_REFUTE, p_NEI, p_SUPPORT]
/// when present. Confidence: max(p_support, p_contradict), or 1 for every pair without probs.
fn prediction_file(path: &Path) -> Vec<RawPair> {
    let mut pairs = Vec::new();
    for line in lines(path) {
        let claim = id(&line["id"]);
        for (doc, p) in line["evidence"].as_object().unwrap() {
            let label = Label::parse(p["label"].as_str().unwrap()).unwrap();
            let probs = p.get("label_probs").map(|probs| {
                let probs: Vec<f64> = probs
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect();
                (probs[2], probs[0])
            });
            pairs.push(RawPair {
                claim: claim.clone(),
                doc: doc.clone(),
                label: Some(label),
                probs,
                confidence: probs.map_or(1.0, |(s, c)| s.max(c)),
            });
        }
    }
    pairs
}

/// Label accuracy on the 339 cited dev pairs, from SOURCES.md (computed independently).
const MULTIVERS_ACCURACY: [(&str, f64); 7] = [
    ("scifact", 1.000),
    ("healthver", 0.982),
    ("citint", 0.891),
    ("finetuned_fever_sci_scifact_rw0", 0.817),
    ("covidfact", 0.791),
    ("fever_sci", 0.678),
    ("fever", 0.451),
];

fn multivers_path(dir: &Path, checkpoint: &str) -> PathBuf {
    let name = if checkpoint.starts_with("finetuned") {
        format!("{checkpoint}_dev.jsonl")
    } else {
        format!("{checkpoint}_scifact_dev.jsonl")
    };
    dir.join("scifact-runs/multivers_jedick/dev").join(name)
}

#[test]
fn multivers_label_accuracy_on_cited_pairs() {
    let Some(dir) = data_dir() else { return };
    let (raw_gold, cited) = dev_gold(&dir);
    let gold = raw_gold.build();
    let cited: Vec<(ClaimId, DocId)> = cited
        .iter()
        .map(|(c, d)| {
            (
                ClaimId::parse(c.as_str()).unwrap(),
                DocId::parse(d.as_str()).unwrap(),
            )
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(cited.len(), 339);
    assert_eq!(gold.claims().len(), 300);
    assert_eq!(gold.evidence_count(), 209);
    for (checkpoint, accuracy) in MULTIVERS_ACCURACY {
        let run = build_run(&prediction_file(&multivers_path(&dir, checkpoint)));
        let matrix = label_confusion(&gold, &run, cited.iter().map(|(c, d)| (c, d))).unwrap();
        assert_eq!(matrix.total(), 339);
        let got = matrix.agreeing() as f64 / 339.0;
        assert!(
            (got - accuracy).abs() < 0.0005,
            "{checkpoint}: accuracy {got}, SOURCES.md says {accuracy}"
        );
    }
}

#[test]
fn multivers_runs_agree_with_reference() {
    let Some(dir) = data_dir() else { return };
    let (raw_gold, _) = dev_gold(&dir);
    let gold = raw_gold.build();
    for (checkpoint, _) in MULTIVERS_ACCURACY {
        let raw = prediction_file(&multivers_path(&dir, checkpoint));
        let judged = JudgedRun::new(&gold, &build_run(&raw)).unwrap();
        let m = judged.metrics();
        let want = reference::all_four(&raw_gold, &raw);
        let got = [m.precision, m.recall, m.f1, m.average_precision];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-9, "{checkpoint}: {got:?} vs {want:?}");
        }
        if checkpoint == "scifact" {
            // The checkpoint saw dev: every cited evidence pair labelled right, nothing else.
            assert_eq!([m.precision, m.recall, m.f1], [1.0, 1.0, 1.0], "{m:?}");
            assert!(m.average_precision > 0.99, "{m:?}");
        }
    }
}

#[test]
fn multivers_bootstrap_equals_materialized_bootstrap() {
    let Some(dir) = data_dir() else { return };
    let (raw_gold, _) = dev_gold(&dir);
    let gold = raw_gold.build();
    let raw = prediction_file(&multivers_path(&dir, "fever_sci"));
    let judged = JudgedRun::new(&gold, &build_run(&raw)).unwrap();
    let samples = 25;
    let boot = judged.bootstrap(BootstrapSamples::new(samples).unwrap(), 2022);
    let mut resampler = ClaimResampler::new(gold.claims().len(), 2022);
    let mut replicates: [Vec<f64>; 4] = Default::default();
    for _ in 0..samples {
        let (g, r) =
            reference::materialize(&raw_gold, &raw, gold.claims(), resampler.next_weights());
        for (values, x) in replicates.iter_mut().zip(reference::all_four(&g, &r)) {
            values.push(x);
        }
    }
    let got = [
        boot.precision_sd,
        boot.recall_sd,
        boot.f1_sd,
        boot.average_precision_sd,
    ];
    for (g, values) in got.iter().zip(&replicates) {
        let w = reference::sample_sd(values);
        assert!((g - w).abs() < 1e-9, "{got:?}");
        assert!(*g > 0.0);
    }
}

#[test]
fn arsjoint_matches_its_authors_evaluation() {
    let Some(dir) = data_dir() else { return };
    let (raw_gold, _) = dev_gold(&dir);
    let gold = raw_gold.build();
    for commit in [
        "2021-03-27_21c6c29",
        "2021-04-11_6683be0",
        "2021-04-20_1e22954",
    ] {
        let run_dir = dir.join("scifact-runs/arsjoint").join(commit);
        let raw = prediction_file(&run_dir.join("merged_predictions.jsonl"));
        let m = JudgedRun::new(&gold, &build_run(&raw)).unwrap().metrics();
        let text = std::fs::read_to_string(run_dir.join("result_evaluation.json")).unwrap();
        let theirs: Value = serde_json::from_str(&text).unwrap();
        let theirs = &theirs["abstract_label_only"];
        for (got, key) in [
            (m.precision, "precision"),
            (m.recall, "recall"),
            (m.f1, "f1"),
        ] {
            let want = theirs[key].as_f64().unwrap();
            assert!(
                (got - want).abs() < 1e-12,
                "{commit} {key}: {got} vs {want}"
            );
        }
    }
}
