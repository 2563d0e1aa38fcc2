//! Releases and evaluations on the real SciFact dev claims and third-party runs (skipped when
//! the data is absent). Expected values come from the raw JSON, parsed here with serde_json
//! alone, or from the run authors' own evaluation files.

use super::reference::{self, close, RefGold, RefPair};
use super::release::verify_manifest;
use crate::annotation::Provenance;
use crate::formats::{ClaimsReader, CorpusFormat, CorpusReader, RunFormat, RunReadOptions};
use crate::label::Label;
use crate::release::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

fn data_dir() -> Option<PathBuf> {
    testdata::shared_data()
}

fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    testdata::json_lines(path)
}

fn id(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One claim of a SciFact claims file, straight from the JSON.
struct RawClaim {
    id: String,
    text: String,
    /// doc -> (label, rationale sets).
    evidence: BTreeMap<String, (Label, Vec<Vec<u32>>)>,
    cited: BTreeSet<String>,
}

fn raw_claims(path: &Path) -> Vec<RawClaim> {
    json_lines(path)
        .iter()
        .map(|line| RawClaim {
            id: id(&line["id"]),
            text: line["claim"].as_str().unwrap().to_owned(),
            evidence: line["evidence"]
                .as_object()
                .map(|e| {
                    e.iter()
                        .map(|(doc, sets)| {
                            let sets = sets.as_array().unwrap();
                            let label = Label::parse(sets[0]["label"].as_str().unwrap()).unwrap();
                            let sentences = sets
                                .iter()
                                .map(|s| {
                                    s["sentences"]
                                        .as_array()
                                        .unwrap()
                                        .iter()
                                        .map(|x| x.as_u64().unwrap() as u32)
                                        .collect()
                                })
                                .collect();
                            (doc.clone(), (label, sentences))
                        })
                        .collect()
                })
                .unwrap_or_default(),
            cited: line["cited_doc_ids"]
                .as_array()
                .map(|a| a.iter().map(id).collect())
                .unwrap_or_default(),
        })
        .collect()
}

/// A release of the dev claims: their evidence as citation evidence, and every cited
/// non-evidence document as a judged NEI pair.
fn dev_release_input(dir: &Path, raw: &[RawClaim]) -> ReleaseInput {
    let mut final_labels = Vec::new();
    let mut docs = BTreeSet::new();
    for claim in raw {
        for (doc, (label, sets)) in &claim.evidence {
            final_labels.push(FinalLabel {
                claim: super::fixtures::c(&claim.id),
                doc: super::fixtures::d(doc),
                label: *label,
                provenance: Provenance::Citation,
                sentences: sets.clone(),
                model_ranks: None,
            });
            docs.insert(doc.clone());
        }
        for doc in claim
            .cited
            .iter()
            .filter(|d| !claim.evidence.contains_key(*d))
        {
            final_labels.push(FinalLabel {
                claim: super::fixtures::c(&claim.id),
                doc: super::fixtures::d(doc),
                label: Label::Nei,
                provenance: Provenance::Citation,
                sentences: Vec::new(),
                model_ranks: None,
            });
            docs.insert(doc.clone());
        }
    }
    let documents = CorpusReader::open(&dir.join("scifact/corpus.jsonl"), CorpusFormat::SciFact)
        .unwrap()
        .map(|d| d.unwrap().record)
        .filter(|d| docs.contains(d.doc_id.as_str()))
        .collect();
    ReleaseInput {
        project: "SciFact dev".to_owned(),
        number: NonZeroU32::new(1).unwrap(),
        date: ReleaseDate::parse("2020-05-01").unwrap(),
        partial: false,
        pool: None,
        systems: Vec::new(),
        claims: raw
            .iter()
            .map(|c| ClaimText {
                id: super::fixtures::c(&c.id),
                text: c.text.clone(),
            })
            .collect(),
        final_labels,
        unjudged_pooled: Vec::new(),
        specificity: Vec::new(),
        documents,
        runs: Vec::new(),
        model_labels: Vec::new(),
        recall: Default::default(),
    }
}

#[test]
fn dev_claims_round_trip_through_a_release() {
    let Some(dir) = data_dir() else { return };
    let raw = raw_claims(&dir.join("scifact/claims_dev.jsonl"));
    let input = dev_release_input(&dir, &raw);
    let files = ReleaseFiles::build(&input, &ReleaseOptions::default()).unwrap();
    let read: Vec<_> = ClaimsReader::from_input(
        super::fixtures::input_of(files.get("claims.jsonl").unwrap()),
        "claims.jsonl",
    )
    .map(|c| c.unwrap().record)
    .collect();
    assert_eq!(read.len(), 300);
    // Claims in numeric id order, each with its text.
    let mut want_ids: Vec<u64> = raw.iter().map(|c| c.id.parse().unwrap()).collect();
    want_ids.sort_unstable();
    let got_ids: Vec<u64> = read
        .iter()
        .map(|c| c.id.as_str().parse().unwrap())
        .collect();
    assert_eq!(got_ids, want_ids);
    let by_id: BTreeMap<&str, &RawClaim> = raw.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut evidence_pairs = 0;
    for claim in &read {
        let want = by_id[claim.id.as_str()];
        assert_eq!(claim.text, want.text);
        let got: BTreeMap<String, (Label, Vec<u32>)> = claim
            .evidence
            .iter()
            .map(|e| {
                assert_eq!(e.sentence_sets.len(), 1, "one flat set per doc");
                assert_eq!(e.model_ranks, None);
                (e.doc_id.to_string(), (e.label, e.sentence_sets[0].clone()))
            })
            .collect();
        let flat: BTreeMap<String, (Label, Vec<u32>)> = want
            .evidence
            .iter()
            .map(|(doc, (label, sets))| {
                let union: BTreeSet<u32> = sets.iter().flatten().copied().collect();
                (doc.clone(), (*label, union.into_iter().collect()))
            })
            .collect();
        assert_eq!(got, flat, "claim {}", claim.id);
        // Docs in numeric order.
        let docs: Vec<u64> = claim
            .evidence
            .iter()
            .map(|e| e.doc_id.as_str().parse().unwrap())
            .collect();
        assert!(docs.windows(2).all(|w| w[0] < w[1]));
        evidence_pairs += got.len();
    }
    assert_eq!(evidence_pairs, 209);
}

#[test]
fn dev_release_counts_hashes_and_bytes_are_stable() {
    let Some(dir) = data_dir() else { return };
    let raw = raw_claims(&dir.join("scifact/claims_dev.jsonl"));
    let input = dev_release_input(&dir, &raw);
    let options = ReleaseOptions {
        qrels_unjudged: true,
        model_qrels: false,
    };
    let files = ReleaseFiles::build(&input, &options).unwrap();
    let again = ReleaseFiles::build(&super::fixtures::reversed(&input), &options).unwrap();
    assert_eq!(files, again);
    let archive = files.to_tar_gz().unwrap();
    assert_eq!(archive, again.to_tar_gz().unwrap());

    // Independent counts from the raw JSON.
    let evidence: usize = raw.iter().map(|c| c.evidence.len()).sum();
    let support: usize = raw
        .iter()
        .flat_map(|c| c.evidence.values())
        .filter(|(l, _)| *l == Label::Support)
        .count();
    let nei: usize = raw
        .iter()
        .map(|c| {
            c.cited
                .iter()
                .filter(|d| !c.evidence.contains_key(*d))
                .count()
        })
        .sum();
    let with_evidence = raw.iter().filter(|c| !c.evidence.is_empty()).count();
    let docs: BTreeSet<&String> = raw
        .iter()
        .flat_map(|c| c.evidence.keys().chain(c.cited.iter()))
        .collect();
    let qrels = super::fixtures::text(&files, "qrels.txt");
    let grade = |g: &str| {
        qrels
            .lines()
            .filter(|l| l.ends_with(&format!(" {g}")))
            .count()
    };
    assert_eq!((grade("1"), grade("0"), grade("-1")), (evidence, nei, 0));
    let labels = super::fixtures::text(&files, "qrels-labels.txt");
    let label = |l: &str| {
        labels
            .lines()
            .filter(|x| x.ends_with(&format!(" {l}")))
            .count()
    };
    assert_eq!(
        (label("SUPPORT"), label("CONTRADICT"), label("NEI")),
        (support, evidence - support, nei)
    );
    let m = verify_manifest(&files);
    let counts = &m["counts"];
    assert_eq!(counts["claims"], 300);
    assert_eq!(counts["claims_with_evidence"], with_evidence as u64);
    assert_eq!(counts["evidence_pairs"], evidence as u64);
    assert_eq!(
        counts["evidence_by_provenance"]["citation"],
        evidence as u64
    );
    assert_eq!(counts["judged_pairs"], (evidence + nei) as u64);
    assert_eq!(counts["documents"], docs.len() as u64);
    let corpus = super::fixtures::text(&files, "corpus_candidates.jsonl");
    assert_eq!(corpus.lines().count(), docs.len());
}

/// The dev gold, by hand.
fn ref_gold(raw: &[RawClaim]) -> RefGold {
    let mut gold = RefGold {
        claims: raw.iter().map(|c| c.id.clone()).collect(),
        ..RefGold::default()
    };
    for c in raw {
        for (doc, (label, _)) in &c.evidence {
            gold.evidence.insert((c.id.clone(), doc.clone()), *label);
        }
    }
    gold
}

/// A leaderboard-format file by hand; `label_probs` is [p_CONTRADICT, p_NEI, p_SUPPORT].
fn ref_leaderboard(path: &Path) -> Vec<RefPair> {
    let mut pairs = Vec::new();
    for line in json_lines(path) {
        for (doc, p) in line["evidence"].as_object().unwrap() {
            let label = Label::parse(p["label"].as_str().unwrap()).unwrap();
            let probs = p.get("label_probs").map(|x| {
                let x: Vec<f64> = x
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect();
                (x[2], x[0])
            });
            let confidence = match probs {
                Some((s, c)) => s.max(c),
                None if label.is_evidence() => 1.0,
                None => 0.0,
            };
            pairs.push(RefPair {
                claim: id(&line["id"]),
                doc: doc.clone(),
                label: Some(label),
                probs,
                confidence,
            });
        }
    }
    pairs
}

fn check_four(report: &EvalReport, want: [f64; 4], what: &str) {
    let got = [
        report.precision,
        report.recall,
        report.f1,
        report.average_precision,
    ];
    for ((g, w), name) in got.iter().zip(want).zip(["P", "R", "F1", "AP"]) {
        close(*g, w, &format!("{what} {name}"));
    }
}

#[test]
fn arsjoint_reproduces_its_authors_label_only_scores() {
    let Some(dir) = data_dir() else { return };
    let claims_dev = dir.join("scifact/claims_dev.jsonl");
    let gold = read_gold(&claims_dev).unwrap();
    // The same gold from a release of the dev claims.
    let raw = raw_claims(&claims_dev);
    let tmp = tempfile::tempdir().unwrap();
    ReleaseFiles::build(&dev_release_input(&dir, &raw), &ReleaseOptions::default())
        .unwrap()
        .write_to_dir(tmp.path(), false)
        .unwrap();
    let released = read_gold(&tmp.path().join("claims.jsonl")).unwrap();
    for commit in [
        "2021-03-27_21c6c29",
        "2021-04-11_6683be0",
        "2021-04-20_1e22954",
    ] {
        let run_dir = dir.join("scifact-runs/arsjoint").join(commit);
        let path = run_dir.join("merged_predictions.jsonl");
        let run = read_run(
            &path,
            RunFormat::Leaderboard,
            &RunReadOptions::default(),
            None,
        )
        .unwrap();
        let report = evaluate(&gold, &run, None, false).unwrap();
        let theirs: Value = serde_json::from_str(
            &std::fs::read_to_string(run_dir.join("result_evaluation.json")).unwrap(),
        )
        .unwrap();
        let theirs = &theirs["abstract_label_only"];
        close(
            report.precision,
            theirs["precision"].as_f64().unwrap(),
            commit,
        );
        close(report.recall, theirs["recall"].as_f64().unwrap(), commit);
        close(report.f1, theirs["f1"].as_f64().unwrap(), commit);
        check_four(
            &report,
            reference::all_four(&ref_gold(&raw), &ref_leaderboard(&path)),
            commit,
        );
        assert_eq!(report.counts.skipped_pairs, 0);
        let from_release = evaluate(&released, &run, None, false).unwrap();
        assert_eq!(from_release, report, "{commit}: release gold differs");
    }
}

#[test]
fn multivers_and_hybrid_runs_match_the_plain_computation() {
    let Some(dir) = data_dir() else { return };
    let claims_dev = dir.join("scifact/claims_dev.jsonl");
    let gold = read_gold(&claims_dev).unwrap();
    let ref_gold = ref_gold(&raw_claims(&claims_dev));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("scifact-runs/multivers_jedick/dev"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    for name in [
        "predictions_dev_a780913.jsonl",
        "predictions_dev_6d32d0d.jsonl",
    ] {
        files.push(dir.join("scifact-runs/hybrid_rag_kaikoepchen").join(name));
    }
    files.sort();
    assert_eq!(files.len(), 9);
    for path in &files {
        let what = path.file_name().unwrap().to_string_lossy().into_owned();
        let run = read_run(
            path,
            RunFormat::Leaderboard,
            &RunReadOptions::default(),
            None,
        )
        .unwrap();
        let report = evaluate(&gold, &run, None, false).unwrap();
        check_four(
            &report,
            reference::all_four(&ref_gold, &ref_leaderboard(path)),
            &what,
        );
        if what == "scifact_scifact_dev.jsonl" {
            // The checkpoint saw dev: every evidence pair found with the right label.
            assert_eq!([report.precision, report.recall], [1.0, 1.0], "{what}");
        }
    }
    // Test-split runs against the test claims, which carry no evidence: all zeros, no skips.
    let test_gold = read_gold(&dir.join("scifact/claims_test.jsonl")).unwrap();
    let path = dir.join("scifact-runs/multivers_jedick/test/fever_sci_scifact_test.jsonl");
    let run = read_run(
        &path,
        RunFormat::Leaderboard,
        &RunReadOptions::default(),
        None,
    )
    .unwrap();
    let report = evaluate(&test_gold, &run, None, false).unwrap();
    assert_eq!(
        (report.counts.claims, report.counts.gold_evidence),
        (300, 0)
    );
    assert_eq!(
        (report.counts.skipped_pairs, report.counts.predicted_pairs),
        (0, 300)
    );
    check_four(&report, [0.0; 4], "test split");
}

#[test]
fn run_pairs_of_claims_outside_the_gold_are_counted_not_refused() {
    let Some(dir) = data_dir() else { return };
    let claims_dev = dir.join("scifact/claims_dev.jsonl");
    let text = std::fs::read_to_string(&claims_dev).unwrap();
    let half: String = text.lines().take(150).map(|l| format!("{l}\n")).collect();
    let tmp = tempfile::tempdir().unwrap();
    let half_path = tmp.path().join("half.jsonl");
    std::fs::write(&half_path, half).unwrap();
    let gold = read_gold(&half_path).unwrap();
    let raw = raw_claims(&half_path);
    let kept: BTreeSet<&str> = raw.iter().map(|c| c.id.as_str()).collect();
    let path = dir.join("scifact-runs/multivers_jedick/dev/fever_sci_scifact_dev.jsonl");
    let pairs = ref_leaderboard(&path);
    let outside: Vec<&RefPair> = pairs
        .iter()
        .filter(|p| !kept.contains(p.claim.as_str()))
        .collect();
    let outside_claims: BTreeSet<&str> = outside.iter().map(|p| p.claim.as_str()).collect();
    let run = read_run(
        &path,
        RunFormat::Leaderboard,
        &RunReadOptions::default(),
        None,
    )
    .unwrap();
    let report = evaluate(&gold, &run, None, true).unwrap();
    assert!(!outside.is_empty());
    assert_eq!(report.counts.skipped_pairs, outside.len() as u64);
    assert_eq!(report.counts.skipped_claims, outside_claims.len() as u64);
    assert_eq!(
        report.counts.predicted_pairs,
        (pairs.len() - outside.len()) as u64
    );
    assert_eq!(report.by_claim.as_ref().unwrap().len(), 150);
    check_four(
        &report,
        reference::all_four(&ref_gold(&raw), &pairs),
        "half gold",
    );
}

#[test]
fn retrieval_only_runs_are_judged_label_agnostically() {
    let Some(dir) = data_dir() else { return };
    let claims_dev = dir.join("scifact/claims_dev.jsonl");
    let gold = read_gold(&claims_dev).unwrap();
    let path = dir.join("scifact-runs/arsjoint/claims_dev_retrieved.jsonl");
    let run = read_run(
        &path,
        RunFormat::RetrievedClaims,
        &RunReadOptions::default(),
        None,
    )
    .unwrap();
    let report = evaluate(&gold, &run, None, false).unwrap();
    let mut pairs = Vec::new();
    for line in json_lines(&path) {
        for doc in line["doc_ids"].as_array().unwrap() {
            pairs.push(RefPair {
                claim: id(&line["id"]),
                doc: id(doc),
                label: None,
                probs: None,
                confidence: 0.0,
            });
        }
    }
    assert_eq!(report.counts.predicted_pairs, pairs.len() as u64);
    check_four(
        &report,
        reference::all_four(&ref_gold(&raw_claims(&claims_dev)), &pairs),
        "retrieved",
    );
    // SOURCES.md: evidence-doc recall at 100 is 0.981.
    assert!((report.recall - 0.981).abs() < 0.0005, "{}", report.recall);
}
