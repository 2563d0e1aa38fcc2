//! Real system outputs on SciFact dev (read from the shared data, skipped when absent): the
//! three ARSJoint runs pooled (constant confidence, so the retrieval rank orders them) and
//! three MultiVerS checkpoints evaluation-only; the dev evidence split into citation evidence
//! (even claim ids) and evidence to be discovered (odd ids). Every number against the naive
//! computation.

use super::check::check_all;
use super::{options, pair};
use crate::ids::ClaimId;
use crate::label::{Label, Probability};
use crate::metrics::{Confidence, Prediction};
use crate::pool::{Role, Strategy};
use crate::report::{
    FinalLabel, LabelledPair, PoolSetting, Provenance, Report, SecondPassMode, Snapshot,
    SystemPrediction, SystemSnapshot,
};
use serde_json::Value;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

fn read_jsonl(path: PathBuf) -> Vec<Value> {
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn id(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn arsjoint(dir: &Path, run: &str) -> SystemSnapshot {
    let mut predictions = Vec::new();
    for line in read_jsonl(
        dir.join("scifact-runs/arsjoint")
            .join(run)
            .join("label_predictions.jsonl"),
    ) {
        let claim = id(&line["claim_id"]);
        // The dict order is the retrieval order.
        for (rank, (doc, p)) in (1_u32..).zip(line["labels"].as_object().unwrap()) {
            predictions.push(SystemPrediction {
                pair: pair(&claim, doc),
                prediction: Prediction::Labelled {
                    label: Label::parse(p["label"].as_str().unwrap()).unwrap(),
                },
                confidence: Confidence::new(p["confidence"].as_f64().unwrap()).unwrap(),
                retrieval_rank: Some(rank),
            });
        }
    }
    SystemSnapshot {
        name: format!("arsjoint-{run}"),
        role: Role::Pooled,
        predictions,
    }
}

fn multivers(dir: &Path, checkpoint: &str) -> SystemSnapshot {
    let path = dir.join(format!(
        "scifact-runs/multivers_jedick/dev/{checkpoint}_scifact_dev.jsonl"
    ));
    let mut predictions = Vec::new();
    for line in read_jsonl(path) {
        let claim = id(&line["id"]);
        for (doc, p) in line["evidence"].as_object().unwrap() {
            let probs: Vec<f64> = p["label_probs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            // [p_REFUTE, p_NEI, p_SUPPORT]
            let (p_contradict, p_support) = (probs[0], probs[2]);
            predictions.push(SystemPrediction {
                pair: pair(&claim, doc),
                prediction: Prediction::Scored {
                    label: Label::parse(p["label"].as_str().unwrap()).unwrap(),
                    p_support: Probability::new(p_support).unwrap(),
                    p_contradict: Probability::new(p_contradict).unwrap(),
                },
                confidence: Confidence::new(p_support.max(p_contradict)).unwrap(),
                retrieval_rank: None,
            });
        }
    }
    SystemSnapshot {
        name: format!("multivers-{checkpoint}"),
        role: Role::EvaluationOnly,
        predictions,
    }
}

#[test]
fn real_runs_match_the_naive_computation() {
    let dir = data_dir();
    if !dir.join("scifact/claims_dev.jsonl").exists() {
        eprintln!("skipped: {} not found", dir.display());
        return;
    }
    let mut claims = Vec::new();
    let mut citation_evidence = Vec::new();
    let mut final_labels = Vec::new();
    for line in read_jsonl(dir.join("scifact/claims_dev.jsonl")) {
        let claim = id(&line["id"]);
        let odd = line["id"].as_u64().unwrap() % 2 == 1;
        let evidence = line["evidence"].as_object().unwrap();
        for (doc, sets) in evidence {
            let label = Label::parse(sets[0]["label"].as_str().unwrap()).unwrap();
            let p = pair(&claim, doc);
            if odd {
                final_labels.push(FinalLabel {
                    pair: p,
                    label,
                    provenance: Provenance::Pooling,
                });
            } else {
                citation_evidence.push(LabelledPair {
                    pair: p.clone(),
                    label,
                });
                final_labels.push(FinalLabel {
                    pair: p,
                    label,
                    provenance: Provenance::Citation,
                });
            }
        }
        let mut cited: Vec<String> = line["cited_doc_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(id)
            .collect();
        // Some claims cite a document twice.
        cited.sort();
        cited.dedup();
        for doc in cited {
            if !evidence.contains_key(&doc) {
                final_labels.push(FinalLabel {
                    pair: pair(&claim, &doc),
                    label: Label::Nei,
                    provenance: Provenance::Pooling,
                });
            }
        }
        claims.push(ClaimId::parse(claim).unwrap());
    }
    let mut systems: Vec<SystemSnapshot> = [
        "2021-03-27_21c6c29",
        "2021-04-11_6683be0",
        "2021-04-20_1e22954",
    ]
    .iter()
    .map(|run| arsjoint(&dir, run))
    .collect();
    systems.extend(
        ["scifact", "fever_sci", "citint"]
            .iter()
            .map(|c| multivers(&dir, c)),
    );
    let snap = Snapshot {
        claims,
        citation_evidence,
        systems,
        pool: Some(PoolSetting {
            strategy: Strategy::Confidence,
            depth: NonZeroU32::new(600).unwrap(),
        }),
        final_labels,
        specificity: vec![],
        annotations: vec![],
        second_pass_mode: SecondPassMode::Confirm,
    };
    let options = options(150, 50, 3);
    let report = Report::compute(&snap, &options).unwrap();
    assert_eq!(report.depth_curve.0.len(), 4);
    // The pool finds part of the held-out (odd) evidence, more the deeper it goes.
    let evidence: Vec<u64> = report.depth_curve.0.iter().map(|p| p.evidence).collect();
    assert!(
        evidence[0] > 0 && evidence.windows(2).all(|w| w[0] <= w[1]),
        "{evidence:?}"
    );
    check_all(&snap, &options, &report);
}
