//! Evaluation glue on hand-made golds and runs, cross-checked with the plain computation.

use super::fixtures::*;
use super::reference::{self, close, RefGold, RefPair};
use crate::formats::{Located, ParseError, RunFormat, RunReadOptions, RunReader, RunRecord};
use crate::label::Label;
use crate::metrics::{BootstrapSamples, ClaimResampler, Prediction};
use crate::release::*;
use serde_json::Value;

const GOLD: &str = concat!(
    r#"{"id": 1, "claim": "One.", "evidence": {"10": [{"sentences": [0], "label": "SUPPORT"}], "11": [{"sentences": [1], "label": "CONTRADICT"}]}}"#,
    "\n",
    r#"{"id": 2, "claim": "Two.", "evidence": {"20": {"provenance": "pooling", "label": "SUPPORT", "sentences": [], "model_ranks": null}}}"#,
    "\n",
    r#"{"id": 3, "claim": "Three."}"#,
    "\n",
);

/// The same gold, by hand.
fn ref_gold() -> RefGold {
    let mut g = RefGold {
        claims: vec!["1".into(), "2".into(), "3".into()],
        ..RefGold::default()
    };
    for (claim, doc, label) in [
        ("1", "10", Label::Support),
        ("1", "11", Label::Contradict),
        ("2", "20", Label::Support),
    ] {
        g.evidence.insert((claim.into(), doc.into()), label);
    }
    g
}

fn gold() -> crate::metrics::Gold {
    let reader = crate::formats::ClaimsReader::from_input(input_of(GOLD.as_bytes()), "g");
    gold_from_claims(reader).unwrap()
}

/// Canonical run lines: right, wrong label, NEI gold, NEI prediction of evidence, a claim
/// outside the gold (twice), a labelled-only pair, a label-less pair with probabilities.
const RUN: &str = concat!(
    r#"{"claim_id": 1, "doc_id": 10, "predicted_label": "SUPPORT", "p_support": 0.9, "p_contradict": 0.05}"#,
    "\n",
    r#"{"claim_id": 1, "doc_id": 11, "predicted_label": "SUPPORT", "p_support": 0.5, "p_contradict": 0.25}"#,
    "\n",
    r#"{"claim_id": 1, "doc_id": 12, "predicted_label": "CONTRADICT", "p_support": 0.2, "p_contradict": 0.5}"#,
    "\n",
    r#"{"claim_id": 2, "doc_id": 20, "predicted_label": "NEI", "p_support": 0.4, "p_contradict": 0.1}"#,
    "\n",
    r#"{"claim_id": 9, "doc_id": 90, "predicted_label": "SUPPORT"}"#,
    "\n",
    r#"{"claim_id": 9, "doc_id": 91, "predicted_label": "SUPPORT"}"#,
    "\n",
    r#"{"claim_id": 3, "doc_id": 30, "predicted_label": "SUPPORT"}"#,
    "\n",
    r#"{"claim_id": 2, "doc_id": 21, "p_support": 0.3, "p_contradict": 0.6}"#,
    "\n",
);

fn records(text: &str, format: RunFormat) -> Vec<Result<Located<RunRecord>, ParseError>> {
    RunReader::from_input(
        input_of(text.as_bytes()),
        "run",
        format,
        &RunReadOptions::default(),
    )
    .unwrap()
    .collect()
}

/// The run's pairs by hand (confidence as `RunRecord::confidence` defines it).
fn ref_run() -> Vec<RefPair> {
    let pair = |claim: &str, doc: &str, label, probs: Option<(f64, f64)>, confidence| RefPair {
        claim: claim.into(),
        doc: doc.into(),
        label,
        probs,
        confidence,
    };
    use Label::*;
    vec![
        pair("1", "10", Some(Support), Some((0.9, 0.05)), 0.9),
        pair("1", "11", Some(Support), Some((0.5, 0.25)), 0.5),
        pair("1", "12", Some(Contradict), Some((0.2, 0.5)), 0.5),
        pair("2", "20", Some(Nei), Some((0.4, 0.1)), 0.4),
        pair("9", "90", Some(Support), None, 1.0),
        pair("9", "91", Some(Support), None, 1.0),
        pair("3", "30", Some(Support), None, 1.0),
        pair("2", "21", None, Some((0.3, 0.6)), 0.6),
    ]
}

fn check_against_reference(report: &EvalReport, gold: &RefGold, run: &[RefPair]) {
    let want = reference::all_four(gold, run);
    let got = [
        report.precision,
        report.recall,
        report.f1,
        report.average_precision,
    ];
    for ((g, w), name) in got.iter().zip(want).zip(["P", "R", "F1", "AP"]) {
        close(*g, w, name);
    }
}

#[test]
fn predictions_follow_what_the_record_gives() {
    let scored = record("1", "2", Some(Label::Nei), Some((0.25, 0.5)));
    assert!(matches!(
        prediction_of(&scored),
        Prediction::Scored { label: Label::Nei, p_support, p_contradict }
            if p_support.get() == 0.25 && p_contradict.get() == 0.5
    ));
    let mut one_prob = record("1", "2", Some(Label::Support), None);
    one_prob.p_support = p(0.5);
    assert_eq!(
        prediction_of(&one_prob),
        Prediction::Labelled {
            label: Label::Support
        }
    );
    assert_eq!(
        prediction_of(&record("1", "2", None, Some((0.25, 0.5)))),
        Prediction::Unlabelled
    );
    assert_eq!(
        prediction_of(&record("1", "2", None, None)),
        Prediction::Unlabelled
    );
}

#[test]
fn evaluates_hand_made_run_skipping_claims_outside_the_gold() {
    let run = run_from_records(records(RUN, RunFormat::Canonical), "run", None).unwrap();
    let report = evaluate(&gold(), &run, None, false).unwrap();
    check_against_reference(&report, &ref_gold(), &ref_run());
    // By hand: predicted evidence 1/10 S, 1/11 S, 1/12 C, 3/30 S, 2/21 (no label) = 5; correct
    // 1/10 only (1/11 is CONTRADICT, 1/12, 3/30 and 2/21 are NEI); gold 3.
    close(report.precision, 1.0 / 5.0, "P by hand");
    close(report.recall, 1.0 / 3.0, "R by hand");
    assert_eq!(
        report.counts,
        EvalCounts {
            claims: 3,
            gold_evidence: 3,
            predicted_pairs: 6,
            predicted_evidence: 5,
            skipped_pairs: 2,
            skipped_claims: 1,
        }
    );
    let json = serde_json::to_value(&report).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["precision", "recall", "f1", "average_precision", "counts"]
    );
    assert_eq!(json["counts"]["skipped_pairs"], 2);
}

#[test]
fn bootstrap_and_by_claim_match_the_plain_computation() {
    let run = run_from_records(records(RUN, RunFormat::Canonical), "run", None).unwrap();
    let gold = gold();
    let samples = 40;
    let request = BootstrapRequest {
        samples: BootstrapSamples::new(samples).unwrap(),
        seed: 7,
    };
    let report = evaluate(&gold, &run, Some(request), true).unwrap();
    check_against_reference(&report, &ref_gold(), &ref_run());
    let json = serde_json::to_value(&report).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "precision",
            "recall",
            "f1",
            "average_precision",
            "precision_sd",
            "recall_sd",
            "f1_sd",
            "average_precision_sd",
            "bootstrap",
            "by_claim",
            "counts"
        ]
    );
    assert_eq!(
        json["bootstrap"],
        serde_json::json!({"samples": 40, "seed": 7})
    );
    // Resample the claims the same way and compute each replicate by hand.
    let claims: Vec<String> = gold.claims().iter().map(|c| c.to_string()).collect();
    let mut resampler = ClaimResampler::new(claims.len(), 7);
    let mut replicates: [Vec<f64>; 4] = Default::default();
    for _ in 0..samples {
        let (g, r) =
            reference::materialize(&ref_gold(), &ref_run(), &claims, resampler.next_weights());
        for (values, x) in replicates.iter_mut().zip(reference::all_four(&g, &r)) {
            values.push(x);
        }
    }
    let sds = [
        report.precision_sd,
        report.recall_sd,
        report.f1_sd,
        report.average_precision_sd,
    ];
    for (sd, values) in sds.iter().zip(&replicates) {
        close(sd.unwrap(), reference::sample_sd(values), "bootstrap sd");
        assert!(sd.unwrap() > 0.0);
    }
    // Per claim, by hand: claim 1 predicts 3 evidence pairs, 1 right, of 2 gold.
    let by_claim = report.by_claim.unwrap();
    let first = &by_claim[0];
    assert_eq!(
        (
            first.claim.as_str(),
            first.predicted,
            first.correct,
            first.gold_evidence
        ),
        ("1", 3, 1, 2)
    );
    close(
        first.f1,
        2.0 * (1.0 / 3.0) * 0.5 / (1.0 / 3.0 + 0.5),
        "claim 1 F1",
    );
    assert_eq!(by_claim.len(), 3);
}

#[test]
fn label_less_trec_runs_are_judged_label_agnostically() {
    let trec = "1 Q0 11 1 3.5 bm25\n1 Q0 12 2 2.0 bm25\n2 Q0 20 1 2.0 bm25\n7 Q0 1 1 9 bm25\n";
    let run = run_from_records(records(trec, RunFormat::Trec), "run", None).unwrap();
    let report = evaluate(&gold(), &run, None, false).unwrap();
    let pair = |claim: &str, doc: &str, confidence| RefPair {
        claim: claim.into(),
        doc: doc.into(),
        label: None,
        probs: None,
        confidence,
    };
    let refs = [
        pair("1", "11", 3.5),
        pair("1", "12", 2.0),
        pair("2", "20", 2.0),
        pair("7", "1", 9.0),
    ];
    check_against_reference(&report, &ref_gold(), &refs);
    close(report.precision, 2.0 / 3.0, "P by hand");
    assert_eq!(report.counts.skipped_pairs, 1);
}

#[test]
fn an_empty_run_and_an_empty_gold_give_zeros() {
    let run = run_from_records(Vec::new(), "run", None).unwrap();
    let report = evaluate(&gold(), &run, None, true).unwrap();
    assert_eq!(
        [
            report.precision,
            report.recall,
            report.f1,
            report.average_precision
        ],
        [0.0; 4]
    );
    assert_eq!(report.by_claim.unwrap().len(), 3);
    let empty = gold_from_claims(Vec::new()).unwrap();
    let run = run_from_records(records(RUN, RunFormat::Canonical), "run", None).unwrap();
    let report = evaluate(&empty, &run, None, false).unwrap();
    assert_eq!(report.counts.skipped_pairs, 8);
    assert_eq!(report.f1, 0.0);
}

#[test]
fn files_with_several_systems_need_a_choice() {
    let trec = "1 Q0 10 1 3.5 bm25\n1 Q0 10 1 0.5 dense\n2 Q0 20 1 2.0 dense\n";
    let err = run_from_records(records(trec, RunFormat::Trec), "runs.trec", None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "runs.trec: holds the runs of several systems (bm25, dense); choose one"
    );
    let dense =
        run_from_records(records(trec, RunFormat::Trec), "runs.trec", Some("dense")).unwrap();
    assert_eq!(dense.len(), 2);
    assert_eq!(dense.pairs()[0].confidence.get(), 0.5);
    let err = run_from_records(records(trec, RunFormat::Trec), "runs.trec", Some("x")).unwrap_err();
    assert!(
        err.to_string()
            .contains("no pairs of system \"x\" (systems in the file: bm25, dense)"),
        "{err}"
    );
    let err = run_from_records(records(RUN, RunFormat::Canonical), "r", Some("x")).unwrap_err();
    assert!(err.to_string().contains("none named"), "{err}");
}

#[test]
fn malformed_files_are_errors_with_line_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let claims = tmp.path().join("claims.jsonl");
    std::fs::write(
        &claims,
        "{\"id\": 1, \"claim\": \"A.\"}\n{\"id\": 2, \"claim\": \"B.\", \"evidence\": {\"5\": [{\"sentences\": [0], \"label\": \"MAYBE\"}]}}\n",
    )
    .unwrap();
    let err = read_gold(&claims).unwrap_err();
    let EvalError::Parse(e) = &err else {
        panic!("{err}")
    };
    assert_eq!(e.line, 2);
    assert!(err.to_string().contains("claims.jsonl:2:"), "{err}");
    let run = tmp.path().join("run.jsonl");
    std::fs::write(
        &run,
        "{\"id\": 1, \"evidence\": {}}\n{\"id\": 2, \"evidence\": {}}\n{\"id\": 3, \"evidence\": {\"4\": {\"label\": \"SUPPORT\", \"label_probs\": [0.5, 0.6]}}}\n",
    )
    .unwrap();
    let err = read_run(
        &run,
        RunFormat::Leaderboard,
        &RunReadOptions::default(),
        None,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("run.jsonl:3: field \"evidence.4.label_probs\""),
        "{err}"
    );
    let missing = tmp.path().join("none.jsonl");
    assert!(matches!(read_gold(&missing), Err(EvalError::Format(_))));
    // Duplicate claims in a gold file are refused by the gold.
    std::fs::write(
        &claims,
        "{\"id\": 1, \"claim\": \"A.\"}\n{\"id\": 1, \"claim\": \"B.\"}\n",
    )
    .unwrap();
    let err = read_gold(&claims).unwrap_err();
    assert!(err.to_string().contains("claim 1 is listed twice"), "{err}");
}

#[test]
fn a_release_is_its_own_gold() {
    // The small release's claims.jsonl as gold: evidence 1/7 C, 1/100 S, 2/20 S, 10/ABC C.
    let files = ReleaseFiles::build(&small_input(), &ReleaseOptions::default()).unwrap();
    let reader = crate::formats::ClaimsReader::from_input(
        input_of(files.get("claims.jsonl").unwrap()),
        "claims.jsonl",
    );
    let gold = gold_from_claims(reader).unwrap();
    assert_eq!(gold.claims().len(), 4);
    assert_eq!(gold.evidence_count(), 4);
    let reader = RunReader::from_input(
        input_of(files.get("runs/a.jsonl").unwrap()),
        "a",
        RunFormat::Canonical,
        &RunReadOptions::default(),
    )
    .unwrap();
    let run = run_from_records(reader, "a", Some("a")).unwrap();
    let report = evaluate(&gold, &run, None, false).unwrap();
    let json: Value = serde_json::to_value(&report).unwrap();
    // Run a: 2/20 S (right), 1/100 S (right), 1/7 NEI (not predicted): P 1, R 2/4.
    assert_eq!(json["precision"], 1.0);
    assert_eq!(json["recall"], 0.5);
}
