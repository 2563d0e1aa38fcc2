//! The agreement section (issue 16) of the hand-made project, worked by hand.
//!
//! Latest labels (first, second; annotators): (1, d11) S, S (ann1, ann2); (2, d20) C, C
//! (ann1, ann2); (2, d21) S, N (ann2, ann1), adjudicated N by lead; (3, d31) C, N (ann1, ann2:
//! ann1's later record, C, stands); (3, d30) S, C (ann2, ann1). Pooled ranks: A d10 1, d11 2,
//! d20 3, d30 4; B d20 1, d21 2, d11 3; so entry depths d20 1, d11 2, d21 2, d30 4 and d31 none
//! (only E predicts it). Depth 2, step 1.

use super::hand_made::project;
use super::options;
use crate::model::agreement::{Alpha, Kappa};
use crate::report::{Rationale, Report, Stage};

fn close(a: Option<f64>, b: Option<f64>, what: &str) {
    match (a, b) {
        (Some(a), Some(b)) => assert!((a - b).abs() < 1e-12, "{what}: {a} vs {b}"),
        _ => assert_eq!(a, b, "{what}"),
    }
}

fn kappa_is(k: &Kappa, n: u64, kappa: Option<f64>, what: &str) {
    assert_eq!(k.n, n, "{what}: n");
    close(k.kappa, kappa, what);
}

fn alpha_is(a: &Alpha, units: u64, values: u64, alpha: Option<f64>, what: &str) {
    assert_eq!(
        (a.units, a.values),
        (units, values),
        "{what}: units, values"
    );
    close(a.alpha, alpha, what);
}

#[test]
fn the_hand_made_project_agreement_by_annotator_band_system_and_stage() {
    let mut snapshot = project();
    // Rationales: (1, d11) first {0, 2}, second {2} of 4 sentences; (2, d20) {1} and {1} of 3.
    for record in &mut snapshot.annotations {
        let sentences = match (record.pair.doc.as_str(), record.stage) {
            ("d11", Stage::First) => vec![0, 2],
            ("d11", Stage::Second) => vec![2],
            ("d20", Stage::First | Stage::Second) => vec![1],
            _ => continue,
        };
        let abstract_sentences = if record.pair.doc.as_str() == "d11" {
            4
        } else {
            3
        };
        record.rationale = Rationale {
            sentences,
            abstract_sentences,
        };
    }
    let report = Report::compute(&snapshot, &options(1, 2, 0)).unwrap();
    let r = &report.agreement.reliability;

    // ann1 S C N C C against ann2 S C S N S: p_o 2/5, p_e (1·3 + 3·1 + 1·1)/25 = 7/25,
    // κ = (0.4 − 0.28) / 0.72 = 1/6.
    assert_eq!(r.annotator_pairs.len(), 1);
    let pair = &r.annotator_pairs[0];
    assert_eq!((pair.a.as_str(), pair.b.as_str()), ("ann1", "ann2"));
    kappa_is(&pair.kappa, 5, Some(1.0 / 6.0), "ann1/ann2");
    close(pair.kappa.expected_agreement, Some(0.28), "p_e");

    // α: 5 units of 2 values, n = 10; S 4, C 4, N 2: Σ n_c² = 36; three disagreeing units give
    // 2 each: α = 1 − 9 · 6 / (100 − 36) = 5/32.
    alpha_is(&r.alpha, 5, 10, Some(5.0 / 32.0), "alpha");
    close(r.alpha.observed_disagreement, Some(0.6), "D_o");
    close(r.alpha.expected_disagreement, Some(64.0 / 90.0), "D_e");

    // Bands 1..=1 (d20), 2..=2 (d11, d21), outside from 3 (d30, d31).
    let bands: Vec<(u32, Option<u32>)> = r.by_depth.iter().map(|b| (b.from, b.to)).collect();
    assert_eq!(bands, [(1, Some(1)), (2, Some(2)), (3, None)]);
    let [one, two, outside] = [&r.by_depth[0], &r.by_depth[1], &r.by_depth[2]];
    // d20 C, C: p_e 1, κ undefined; a single value, α undefined.
    kappa_is(&one.agreement.first_vs_second, 1, None, "band 1 kappa");
    alpha_is(&one.agreement.alpha, 1, 2, None, "band 1 alpha");
    // (S, S), (S, N): p_o 1/2, p_e 1 · 1/2: κ 0; S 3, N 1: α = 1 − 3 · 2 / (16 − 10) = 0.
    kappa_is(&two.agreement.first_vs_second, 2, Some(0.0), "band 2 kappa");
    alpha_is(&two.agreement.alpha, 2, 4, Some(0.0), "band 2 alpha");
    // (S, C), (C, N): p_o 0, p_e 1/4: κ = −1/3; C 2, S 1, N 1: α = 1 − 3 · 4 / 10 = −0.2.
    kappa_is(
        &outside.agreement.first_vs_second,
        2,
        Some(-1.0 / 3.0),
        "outside kappa",
    );
    alpha_is(&outside.agreement.alpha, 2, 4, Some(-0.2), "outside alpha");

    // A's top 2: d10 (not annotated), d11 (S, S): nothing defined but n. B's top 2: d20 (C, C),
    // d21 (S, N): p_o 1/2, p_e 1/4, κ = 1/3; C 2, S 1, N 1: α = 1 − 3 · 2 / 10 = 0.4.
    let systems: Vec<&str> = r.by_system.iter().map(|s| s.system.as_str()).collect();
    assert_eq!(systems, ["A", "B"]);
    kappa_is(
        &r.by_system[0].agreement.first_vs_second,
        1,
        None,
        "A kappa",
    );
    alpha_is(&r.by_system[0].agreement.alpha, 1, 2, None, "A alpha");
    kappa_is(
        &r.by_system[1].agreement.first_vs_second,
        2,
        Some(1.0 / 3.0),
        "B kappa",
    );
    alpha_is(&r.by_system[1].agreement.alpha, 2, 4, Some(0.4), "B alpha");

    // Stages. First vs second: the pass κ (1/6) and α (5/32 again: the same values).
    let stages: Vec<(&str, &str)> = r
        .by_stage
        .iter()
        .map(|s| (s.a.as_str(), s.b.as_str()))
        .collect();
    assert_eq!(
        stages,
        [
            ("first", "second"),
            ("first", "adjudication"),
            ("second", "adjudication")
        ]
    );
    let [fs, fa, sa] = [&r.by_stage[0], &r.by_stage[1], &r.by_stage[2]];
    kappa_is(&fs.kappa, 5, Some(1.0 / 6.0), "first/second");
    alpha_is(&fs.alpha, 5, 10, Some(5.0 / 32.0), "first/second alpha");
    // d21: first S, adjudication N: p_o 0, p_e 0, κ 0; α = 1 − 1 · 2 / 2 = 0.
    kappa_is(&fa.kappa, 1, Some(0.0), "first/adjudication");
    alpha_is(&fa.alpha, 1, 2, Some(0.0), "first/adjudication alpha");
    // d21: second N, adjudication N.
    kappa_is(&sa.kappa, 1, None, "second/adjudication");
    alpha_is(&sa.alpha, 1, 2, None, "second/adjudication alpha");

    // Rationales where first and second agree on evidence: d11 (S) and d20 (C). F1: {0, 2} vs
    // {2}: 2/3; {1} vs {1}: 1; mean 5/6. Sentence decisions: d11 (1,0) (0,0) (1,1) (0,0), d20
    // (0,0) (1,1) (0,0): n = 14, n_1 = 5, n_0 = 9, one disagreeing unit:
    // α = 1 − 13 · 2 / (196 − 106) = 32/45.
    assert_eq!((fs.rationale.pairs, fs.rationale.f1_pairs), (2, 2));
    close(fs.rationale.mean_f1, Some(5.0 / 6.0), "mean F1");
    alpha_is(
        &fs.rationale.sentence_alpha,
        7,
        14,
        Some(32.0 / 45.0),
        "sentence alpha",
    );
    // No adjudication agrees with a pass on evidence.
    assert_eq!(fa.rationale.pairs, 0);
    assert_eq!(fa.rationale.mean_f1, None);

    // The CSV tables and the JSON keys.
    let csv = report.to_csv("agreement_by_depth").unwrap();
    assert_eq!(
        csv,
        "from,to,pass_pairs,kappa,alpha_units,alpha_values,alpha\n\
         1,1,1,,1,2,\n2,2,2,0,2,4,0\n3,,2,-0.3333333333333333,2,4,-0.19999999999999996\n"
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["agreement"]["annotator_pairs"][0]["a"], "ann1");
    assert_eq!(json["agreement"]["alpha"]["values"], 10);
    assert_eq!(
        json["agreement"]["by_depth"][2]["to"],
        serde_json::Value::Null
    );
    assert_eq!(json["agreement"]["by_stage"][0]["rationale"]["f1_pairs"], 2);
}
