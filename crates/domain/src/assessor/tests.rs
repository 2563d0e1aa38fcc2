use super::*;
use crate::metrics::{Confidence, Prediction};
use crate::pool::{Pair, Role};
use crate::report::{FinalLabel, Provenance, SecondPassMode, SystemPrediction, SystemSnapshot};

/// τ-b the textbook way, as a second implementation: Σ sgn(xᵢ−xⱼ)·sgn(yᵢ−yⱼ) over
/// √(Σ sgn(xᵢ−xⱼ)² · Σ sgn(yᵢ−yⱼ)²), over ordered pairs i ≠ j.
fn naive_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    let sgn = |v: f64| {
        if v > 0.0 {
            1.0
        } else if v < 0.0 {
            -1.0
        } else {
            0.0
        }
    };
    let (mut num, mut sx, mut sy) = (0.0_f64, 0.0_f64, 0.0_f64);
    for i in 0..x.len() {
        for j in 0..x.len() {
            if i != j {
                let (a, b) = (sgn(x[i] - x[j]), sgn(y[i] - y[j]));
                num += a * b;
                sx += a * a;
                sy += b * b;
            }
        }
    }
    (sx > 0.0 && sy > 0.0).then(|| num / (sx * sy).sqrt())
}

#[test]
fn tau_b_by_hand() {
    assert_eq!(kendall_tau_b(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), Some(1.0));
    assert_eq!(
        kendall_tau_b(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]),
        Some(-1.0)
    );
    // One tie in x (pairs 2-3), one in y (pairs 2-4), four concordant: 4 / √(5·5).
    let tau = kendall_tau_b(&[1.0, 2.0, 2.0, 3.0], &[1.0, 3.0, 2.0, 3.0]).unwrap();
    assert!((tau - 0.8).abs() < 1e-12, "{tau}");
    assert_eq!(kendall_tau_b(&[1.0, 1.0], &[1.0, 2.0]), None);
    assert_eq!(kendall_tau_b(&[1.0], &[1.0]), None);
    assert_eq!(kendall_tau_b(&[1.0, 2.0], &[1.0]), None);
}

#[test]
fn tau_b_equals_the_naive_formula() {
    // A small deterministic generator; values from a few levels so that ties are common.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = |levels: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % levels) as f64 / levels as f64
    };
    for case in 0..500 {
        let n = 2 + case % 9;
        let levels = 2 + (case as u64 % 5);
        let x: Vec<f64> = (0..n).map(|_| next(levels)).collect();
        let y: Vec<f64> = (0..n).map(|_| next(levels)).collect();
        match (kendall_tau_b(&x, &y), naive_tau_b(&x, &y)) {
            (Some(a), Some(b)) => assert!((a - b).abs() < 1e-12, "{x:?} {y:?}: {a} vs {b}"),
            (a, b) => assert_eq!(a, b, "{x:?} {y:?}"),
        }
    }
}

#[test]
fn model_labels_from_predictions() {
    let p = |label, s, c, n| StoredPrediction {
        label,
        p_support: s,
        p_contradict: c,
        p_nei: n,
    };
    // A stated label wins over the probabilities.
    assert_eq!(
        model_label(&p(Some(Label::Nei), Some(0.9), Some(0.05), None)),
        Some(Label::Nei)
    );
    assert_eq!(
        model_label(&p(None, Some(0.6), Some(0.1), None)),
        Some(Label::Support)
    );
    assert_eq!(
        model_label(&p(None, Some(0.2), Some(0.45), None)),
        Some(Label::Contradict)
    );
    // p_nei = 1 - 0.4 - 0.1 = 0.5 beats 0.4.
    assert_eq!(
        model_label(&p(None, Some(0.4), Some(0.1), None)),
        Some(Label::Nei)
    );
    // A given p_nei is used as given.
    assert_eq!(
        model_label(&p(None, Some(0.4), Some(0.1), Some(0.2))),
        Some(Label::Support)
    );
    // Ties go to NEI.
    assert_eq!(
        model_label(&p(None, Some(0.4), Some(0.4), Some(0.2))),
        Some(Label::Nei)
    );
    assert_eq!(
        model_label(&p(None, Some(0.5), Some(0.0), None)),
        Some(Label::Nei)
    );
    // No label and not both probabilities: no verdict.
    assert_eq!(model_label(&p(None, Some(0.9), None, None)), None);
    assert_eq!(model_label(&p(None, None, None, None)), None);
}

#[test]
fn names() {
    assert_eq!(check_name(" gpt-4o_v1.2 "), Ok("gpt-4o_v1.2"));
    assert!(check_name("").is_err());
    assert!(check_name("two words").is_err());
    assert!(check_name(&"x".repeat(65)).is_err());
}

fn claim(id: &str) -> ClaimId {
    ClaimId::parse(id).unwrap()
}

fn doc(id: &str) -> DocId {
    DocId::parse(id).unwrap()
}

fn system(name: &str, predictions: &[(&str, &str, Label)]) -> SystemSnapshot {
    SystemSnapshot {
        name: name.into(),
        role: Role::Pooled,
        predictions: predictions
            .iter()
            .map(|&(c, d, label)| SystemPrediction {
                pair: Pair::new(claim(c), doc(d)),
                prediction: Prediction::Labelled { label },
                confidence: Confidence::new(1.0).unwrap(),
                retrieval_rank: None,
            })
            .collect(),
    }
}

/// Three systems, three judged pairs; every figure computed by hand.
#[test]
fn report_by_hand() {
    use Label::{Contradict as C, Nei as N, Support as S};
    let final_label = |c, d, label| FinalLabel {
        pair: Pair::new(claim(c), doc(d)),
        label,
        provenance: Provenance::Pooling,
    };
    let snapshot = Snapshot {
        claims: vec![claim("1"), claim("2")],
        citation_evidence: vec![],
        systems: vec![
            system("a", &[("1", "11", S), ("2", "13", C)]),
            system("b", &[("1", "11", S), ("1", "12", S)]),
            system("c", &[("1", "12", C)]),
        ],
        pool: None,
        final_labels: vec![
            final_label("1", "11", S),
            final_label("1", "12", N),
            final_label("2", "13", C),
        ],
        specificity: vec![],
        annotations: vec![],
        second_pass_mode: SecondPassMode::Confirm,
    };
    let model = AssessorLabels {
        name: "m".into(),
        source: AssessorSource::System { system: "b".into() },
        labels: vec![
            (claim("1"), doc("11"), S),
            (claim("1"), doc("12"), S),
            (claim("2"), doc("13"), N),
        ],
    };
    let reports = report(&snapshot, &[model]).unwrap();
    let r = &reports[0];
    assert_eq!(r.labels, 3);
    // Agreement: (S,S), (N,S), (C,N): p_o = 1/3; p_e = (1·2 + 1·0 + 1·1)/9 = 1/3; κ = 0.
    assert_eq!(r.agreement.n, 3);
    assert!((r.agreement.observed_agreement.unwrap() - 1.0 / 3.0).abs() < 1e-12);
    assert!(r.agreement.kappa.unwrap().abs() < 1e-12);
    // Human gold {1/11 S, 2/13 C}: a 2/2 → F1 1; b 1 of 2 → 0.5; c 0.
    // Model gold {1/11 S, 1/12 S}: a 1 of 2 → 0.5; b 2/2 → 1; c (C for S) 0.
    let figures: Vec<(&str, f64, f64, u32, u32)> = r
        .systems
        .iter()
        .map(|s| {
            (
                s.system.as_str(),
                s.human_f1,
                s.model_f1,
                s.human_rank,
                s.model_rank,
            )
        })
        .collect();
    assert_eq!(
        figures,
        vec![
            ("a", 1.0, 0.5, 1, 2),
            ("b", 0.5, 1.0, 2, 1),
            ("c", 0.0, 0.0, 3, 3)
        ]
    );
    // a-b discordant, a-c and b-c concordant: (2 − 1) / 3.
    assert!((r.kendall_tau_b.unwrap() - 1.0 / 3.0).abs() < 1e-12);
    let changed: Vec<(&str, bool)> = r
        .top_three
        .iter()
        .map(|t| (t.system.as_str(), t.changed))
        .collect();
    assert_eq!(changed, vec![("a", true), ("b", true), ("c", false)]);
}

#[test]
fn a_source_is_flattened_into_the_assessor_in_json_and_read_back() {
    let summary = |source| AssessorSummary {
        name: "m".into(),
        source,
        labels: 2,
        evidence: 1,
        not_in_run: 0,
        created_by: None,
        created_at: 5,
    };
    let system = summary(AssessorSource::System {
        system: "lab".into(),
    });
    let command = summary(AssessorSource::Command {
        command: "python3 llm.py --k 'two words'".into(),
        ran_at: 4,
    });
    assert_eq!(
        serde_json::to_value(&system).unwrap(),
        serde_json::json!({"name": "m", "source": "system", "system": "lab", "labels": 2,
            "evidence": 1, "not_in_run": 0, "created_by": null, "created_at": 5})
    );
    assert_eq!(
        serde_json::to_value(&command).unwrap(),
        serde_json::json!({"name": "m", "source": "command",
            "command": "python3 llm.py --k 'two words'", "ran_at": 4, "labels": 2,
            "evidence": 1, "not_in_run": 0, "created_by": null, "created_at": 5})
    );
    for s in [system, command] {
        let back: AssessorSummary =
            serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
    assert_eq!(
        AssessorSource::Command {
            command: "run x".into(),
            ran_at: 0
        }
        .to_string(),
        "command `run x`"
    );
    assert_eq!(
        AssessorSource::System {
            system: "lab".into()
        }
        .to_string(),
        "system lab"
    );
}
