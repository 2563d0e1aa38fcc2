//! Hand-made edge cases, and random cases checked against the naive re-implementations of
//! `reference`.

use super::reference::{self, build_run, RawGold, RawPair};
use super::*;
use crate::ids::{ClaimId, DocId};
use crate::label::{Label, Probability};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

const TOL: f64 = 1e-9;
use Label::{Contradict as C, Nei as N, Support as S};

fn cid(s: &str) -> ClaimId {
    ClaimId::parse(s).unwrap()
}

fn did(s: &str) -> DocId {
    DocId::parse(s).unwrap()
}

fn gold(claims: &[&str], evidence: &[(&str, &str, Label)]) -> RawGold {
    RawGold {
        claims: claims.iter().map(|c| c.to_string()).collect(),
        evidence: evidence
            .iter()
            .map(|(c, d, l)| (c.to_string(), d.to_string(), *l))
            .collect(),
    }
}

/// A pair with a stated label (`None`: label-less) and optional (p_support, p_contradict).
fn pair(
    claim: &str,
    doc: &str,
    label: Option<Label>,
    probs: Option<(f64, f64)>,
    conf: f64,
) -> RawPair {
    RawPair {
        claim: claim.into(),
        doc: doc.into(),
        label,
        probs,
        confidence: conf,
    }
}

fn labelled(claim: &str, doc: &str, label: Label, conf: f64) -> RawPair {
    pair(claim, doc, Some(label), None, conf)
}

fn judge(g: &RawGold, run: &[RawPair]) -> JudgedRun {
    JudgedRun::new(&g.build(), &build_run(run)).unwrap()
}

fn four(m: &Metrics) -> [f64; 4] {
    [m.precision, m.recall, m.f1, m.average_precision]
}

fn assert_close(got: [f64; 4], want: [f64; 4], what: &str) {
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= TOL,
            "{what}: figure {i}: got {g}, want {w} ({got:?} vs {want:?})"
        );
    }
}

/// Checks the module against the reference and against hand-computed values.
fn check(g: &RawGold, run: &[RawPair], hand: [f64; 4]) {
    let got = four(&judge(g, run).metrics());
    assert_close(got, hand, "module vs hand");
    assert_close(reference::all_four(g, run), hand, "reference vs hand");
}

fn three_claims() -> RawGold {
    gold(
        &["1", "2", "3"],
        &[("1", "a", S), ("1", "b", C), ("2", "c", S)],
    )
}

#[test]
fn tied_confidences_form_one_threshold() {
    // 0.9: (1,a) hit and (1,x) miss enter together: P 1/2, R 1/3.
    // 0.8: (2,c) predicted C, gold S: miss; R unchanged. 0.5: (1,b) hit: P 2/4, R 2/3.
    // AP = 1/3 * 1/2 + 1/3 * 1/2 = 1/3. P = 2/4, R = 2/3, F1 = 4/7.
    let run = [
        labelled("1", "x", S, 0.9),
        labelled("1", "a", S, 0.9),
        labelled("2", "c", C, 0.8),
        labelled("1", "b", C, 0.5),
    ];
    check(
        &three_claims(),
        &run,
        [0.5, 2.0 / 3.0, 4.0 / 7.0, 1.0 / 3.0],
    );
    // Any order of the tied pairs gives the same figures.
    let mut reversed = run.clone();
    reversed.reverse();
    check(
        &three_claims(),
        &reversed,
        [0.5, 2.0 / 3.0, 4.0 / 7.0, 1.0 / 3.0],
    );
    // Breaking the tie in favour of the hit raises AP to 1/3 * 1 + 1/3 * 1/2 = 1/2.
    let mut untied = run.clone();
    untied[1].confidence = 0.91;
    check(&three_claims(), &untied, [0.5, 2.0 / 3.0, 4.0 / 7.0, 0.5]);
}

#[test]
fn negative_zero_ties_with_zero() {
    let run = [labelled("1", "x", S, 0.0), labelled("1", "a", S, -0.0)];
    // One threshold: P 1/2, R 1/3.
    check(&three_claims(), &run, [0.5, 1.0 / 3.0, 0.4, 1.0 / 6.0]);
    assert_eq!(
        Confidence::new(-0.0).unwrap(),
        Confidence::new(0.0).unwrap()
    );
    assert!(Confidence::new(-0.0).unwrap().get().is_sign_positive());
}

#[test]
fn run_that_predicts_nothing_scores_zero() {
    let judged = judge(&three_claims(), &[]);
    check(&three_claims(), &[], [0.0; 4]);
    let by_claim = judged.by_claim();
    assert_eq!(by_claim.len(), 3);
    assert!(by_claim
        .iter()
        .all(|c| c.predicted == 0 && c.precision == 0.0 && c.recall == 0.0));
    let boot = judged.bootstrap(BootstrapSamples::new(50).unwrap(), 1);
    assert_close(
        [
            boot.precision_sd,
            boot.recall_sd,
            boot.f1_sd,
            boot.average_precision_sd,
        ],
        [0.0; 4],
        "sd of an empty run",
    );
}

#[test]
fn claim_without_evidence_counts_its_false_positives() {
    // Claim 3 has no evidence; predicting (3, z) is a false positive.
    let run = [labelled("1", "a", S, 0.9), labelled("3", "z", C, 0.95)];
    // P 1/2, R 1/3, F1 2*(1/6)/(5/6) = 0.4. Curve: 0.95 (0 hits), 0.9 (P 1/2, R 1/3): AP 1/6.
    check(&three_claims(), &run, [0.5, 1.0 / 3.0, 0.4, 1.0 / 6.0]);
    let by_claim = judge(&three_claims(), &run).by_claim();
    let third = &by_claim[2];
    assert_eq!(third.claim, cid("3"));
    assert_eq!(
        (third.gold_evidence, third.predicted, third.correct),
        (0, 1, 0)
    );
    assert_eq!((third.precision, third.recall, third.f1), (0.0, 0.0, 0.0));
    let second = &by_claim[1];
    assert_eq!(
        (second.gold_evidence, second.predicted, second.correct),
        (1, 0, 0)
    );
}

#[test]
fn gold_never_retrieved_is_missed_recall() {
    // Only (1, a) of the three gold pairs is retrieved, first: P 1 at R 1/3.
    let run = [labelled("1", "a", S, 0.7)];
    check(&three_claims(), &run, [1.0, 1.0 / 3.0, 0.5, 1.0 / 3.0]);
}

#[test]
fn all_nei_run() {
    // Stated NEI without probabilities: no predicted evidence, and NEI never matches gold.
    let run = [labelled("1", "a", N, 0.9), labelled("2", "c", N, 0.8)];
    check(&three_claims(), &run, [0.0; 4]);
    // Stated NEI with probabilities: still no predicted evidence, but every pair is a point of
    // the curve judged by its best label. (1,a): S wins, hit; (2,c): C wins, miss; (1,b): C, hit.
    // Curve: 0.6 (P 1, R 1/3), 0.4 (P 1/2, R 1/3), 0.2 (P 2/3, R 2/3): AP 1/3 + 2/9 = 5/9.
    let run = [
        pair("1", "a", Some(N), Some((0.3, 0.1)), 0.6),
        pair("2", "c", Some(N), Some((0.1, 0.3)), 0.4),
        pair("1", "b", Some(N), Some((0.05, 0.15)), 0.2),
    ];
    check(&three_claims(), &run, [0.0, 0.0, 0.0, 5.0 / 9.0]);
}

#[test]
fn label_less_run_is_judged_label_agnostically() {
    // Any gold evidence is a hit: (1,b) gold C and (2,c) gold S both count; (1,x) does not.
    // P 2/3, R 2/3, F1 2/3. Curve: 0.9 (P 1, R 1/3), 0.8 (P 1/2, R 1/3), 0.7 (P 2/3, R 2/3).
    let run = [
        pair("1", "b", None, None, 0.9),
        pair("1", "x", None, None, 0.8),
        pair("2", "c", None, None, 0.7),
    ];
    check(
        &three_claims(),
        &run,
        [2.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0, 1.0 / 3.0 + 2.0 / 9.0],
    );
}

#[test]
fn equal_probabilities_prefer_support() {
    let p = |x| Probability::new(x).unwrap();
    let even = Prediction::Scored {
        label: C,
        p_support: p(0.4),
        p_contradict: p(0.4),
    };
    assert_eq!(even.best_label(), Some(S));
    assert_eq!(even.label(), Some(C));
    // (1,a) gold S: hit by the SUPPORT preference; (1,b) gold C: miss. The stated C label of
    // (1,a) is wrong for P/R/F1, and (1,b)'s stated C is right.
    let run = [
        pair("1", "a", Some(C), Some((0.4, 0.4)), 0.8),
        pair("1", "b", Some(C), Some((0.3, 0.3)), 0.5),
    ];
    // P 1/2, R 1/3, F1 0.4; AP: 0.8 (P 1, R 1/3), 0.5 (P 1/2, R 1/3) = 1/3.
    check(&three_claims(), &run, [0.5, 1.0 / 3.0, 0.4, 1.0 / 3.0]);
}

#[test]
fn gold_without_evidence_scores_zero() {
    let g = gold(&["1", "2"], &[]);
    let run = [labelled("1", "a", S, 0.9)];
    check(&g, &run, [0.0; 4]);
}

#[test]
fn nei_gold_labels_are_checked_and_dropped() {
    let claims = [cid("1")];
    let g = Gold::new(
        claims.clone(),
        [(cid("1"), did("a"), N), (cid("1"), did("b"), S)],
    )
    .unwrap();
    assert_eq!(g.evidence_count(), 1);
    assert_eq!(g.label(&cid("1"), &did("a")), Some(N));
    assert_eq!(g.label(&cid("1"), &did("b")), Some(S));
    assert_eq!(g.label(&cid("9"), &did("b")), None);
    let conflict = Gold::new(claims, [(cid("1"), did("a"), N), (cid("1"), did("a"), S)]);
    assert!(matches!(
        conflict,
        Err(MetricsError::ConflictingGoldLabels {
            first: N,
            second: S,
            ..
        })
    ));
}

#[test]
fn refuses_bad_inputs() {
    assert!(matches!(
        Gold::new([cid("1"), cid("1")], []),
        Err(MetricsError::DuplicateGoldClaim { .. })
    ));
    assert!(matches!(
        Gold::new([cid("1")], [(cid("2"), did("a"), S)]),
        Err(MetricsError::GoldLabelForUnknownClaim { .. })
    ));
    let p = |claim: &str, doc: &str| RunPair {
        claim: cid(claim),
        doc: did(doc),
        prediction: Prediction::Unlabelled,
        confidence: Confidence::new(1.0).unwrap(),
    };
    assert_eq!(
        Run::new([p("1", "a"), p("1", "b"), p("1", "a")]).unwrap_err(),
        MetricsError::DuplicateRunPair {
            index: 2,
            first_index: 0,
            claim: cid("1"),
            doc: did("a")
        }
    );
    let g = three_claims().build();
    assert_eq!(
        JudgedRun::new(&g, &Run::new([p("1", "a"), p("7", "b")]).unwrap()).unwrap_err(),
        MetricsError::RunClaimNotInGold {
            index: 1,
            claim: cid("7"),
            doc: did("b")
        }
    );
    assert!(Confidence::new(f64::NAN).is_err());
    assert!(Confidence::new(f64::INFINITY).is_err());
    assert!(serde_json::from_str::<Confidence>("1e999").is_err());
    assert!(BootstrapSamples::new(1).is_err());
    assert!(BootstrapSamples::new(2).is_ok());
    let judged = JudgedRun::new(&g, &Run::default()).unwrap();
    assert_eq!(
        judged.metrics_weighted(&[1, 1]).unwrap_err(),
        MetricsError::WeightCount {
            expected: 3,
            got: 2
        }
    );
}

/// A random small collection: many ties, claims without evidence, every prediction kind.
fn random_case(rng: &mut ChaCha8Rng) -> (RawGold, Vec<RawPair>) {
    let claims = rng.gen_range(1..10);
    let docs: Vec<String> = (0..8).map(|d| format!("d{d}")).collect();
    let mut g = RawGold::default();
    let mut run = Vec::new();
    let kind = rng.gen_range(0..4); // 0 label-less, 1 labelled, 2 scored, 3 mixed
    for c in 0..claims {
        let claim = (c * 3 + 1).to_string();
        g.claims.push(claim.clone());
        for doc in &docs {
            if rng.gen_bool(0.2) {
                g.evidence.push((
                    claim.clone(),
                    doc.clone(),
                    if rng.gen_bool(0.5) { S } else { C },
                ));
            }
            if rng.gen_bool(0.4) {
                let label = [S, C, N][rng.gen_range(0..3)];
                let k = if kind == 3 { rng.gen_range(0..3) } else { kind };
                let probs = if rng.gen_bool(0.2) {
                    let x = f64::from(rng.gen_range(0..5u8)) / 10.0;
                    (x, x)
                } else {
                    (rng.gen::<f64>() / 2.0, rng.gen::<f64>() / 2.0)
                };
                run.push(RawPair {
                    claim: claim.clone(),
                    doc: doc.clone(),
                    label: (k != 0).then_some(label),
                    probs: (k == 2).then_some(probs),
                    confidence: f64::from(rng.gen_range(0..6u8)) / 5.0 - 0.4,
                });
            }
        }
    }
    (g, run)
}

#[test]
fn random_runs_agree_with_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for case in 0..400 {
        let (g, run) = random_case(&mut rng);
        let got = four(&judge(&g, &run).metrics());
        assert_close(got, reference::all_four(&g, &run), &format!("case {case}"));
    }
}

#[test]
fn by_claim_agrees_with_reference_on_each_claim() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for _ in 0..100 {
        let (g, run) = random_case(&mut rng);
        let judged = judge(&g, &run);
        let rows = judged.by_claim();
        assert_eq!(rows.len(), g.claims.len());
        for row in &rows {
            let claim = row.claim.as_str();
            let one = RawGold {
                claims: vec![claim.into()],
                evidence: g
                    .evidence
                    .iter()
                    .filter(|e| e.0 == claim)
                    .cloned()
                    .collect(),
            };
            let pairs: Vec<RawPair> = run.iter().filter(|p| p.claim == claim).cloned().collect();
            let (p, r, f) = reference::precision_recall_f1(&one, &pairs);
            assert_close(
                [row.precision, row.recall, row.f1, 0.0],
                [p, r, f, 0.0],
                claim,
            );
            assert_eq!(row.gold_evidence, one.evidence.len() as u64);
        }
        let total: u64 = rows.iter().map(|r| r.gold_evidence).sum();
        assert_eq!(total, g.evidence.len() as u64);
    }
}

#[test]
fn weighted_metrics_equal_the_materialized_resample() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    for case in 0..150 {
        let (g, run) = random_case(&mut rng);
        let built = g.build();
        let judged = JudgedRun::new(&built, &build_run(&run)).unwrap();
        let mut resampler = ClaimResampler::new(built.claims().len(), case);
        for _ in 0..5 {
            let weights = resampler.next_weights().to_vec();
            let (mg, mrun) = reference::materialize(&g, &run, built.claims(), &weights);
            let weighted = four(&judged.metrics_weighted(&weights).unwrap());
            assert_close(
                weighted,
                reference::all_four(&mg, &mrun),
                "weighted vs reference",
            );
            assert_close(
                weighted,
                four(&judge(&mg, &mrun).metrics()),
                "weighted vs plain",
            );
        }
    }
}

#[test]
fn bootstrap_sd_equals_the_materialized_bootstrap() {
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    for case in 0..20u64 {
        let (g, run) = random_case(&mut rng);
        let built = g.build();
        let judged = JudgedRun::new(&built, &build_run(&run)).unwrap();
        let samples = 60;
        let seed = 1000 + case;
        let boot = judged.bootstrap(BootstrapSamples::new(samples).unwrap(), seed);
        let mut resampler = ClaimResampler::new(built.claims().len(), seed);
        let mut replicates: [Vec<f64>; 4] = Default::default();
        for _ in 0..samples {
            let (mg, mrun) =
                reference::materialize(&g, &run, built.claims(), resampler.next_weights());
            for (values, x) in replicates.iter_mut().zip(reference::all_four(&mg, &mrun)) {
                values.push(x);
            }
        }
        let want = replicates.each_ref().map(|v| reference::sample_sd(v));
        assert_close(
            [
                boot.precision_sd,
                boot.recall_sd,
                boot.f1_sd,
                boot.average_precision_sd,
            ],
            want,
            &format!("sd, case {case}"),
        );
        assert_close(
            [boot.precision, boot.recall, boot.f1, boot.average_precision],
            reference::all_four(&g, &run),
            "point estimates",
        );
        assert_eq!((boot.samples, boot.seed), (samples, seed));
    }
}

#[test]
fn paired_bootstrap_equals_each_run_alone() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let (g, run_a) = random_case(&mut rng);
    let built = g.build();
    let run_b: Vec<RawPair> = run_a
        .iter()
        .filter(|_| rng.gen_bool(0.5))
        .cloned()
        .collect();
    let a = JudgedRun::new(&built, &build_run(&run_a)).unwrap();
    let b = JudgedRun::new(&built, &build_run(&run_b)).unwrap();
    let samples = BootstrapSamples::new(100).unwrap();
    let both = bootstrap(&[&a, &b], samples, 5).unwrap();
    assert_eq!(both, vec![a.bootstrap(samples, 5), b.bootstrap(samples, 5)]);
    assert!(bootstrap(&[], samples, 5).unwrap().is_empty());
    let other = gold(&["1"], &[]).build();
    let c = JudgedRun::new(&other, &Run::default()).unwrap();
    assert_eq!(
        bootstrap(&[&a, &c], samples, 5).unwrap_err(),
        MetricsError::DifferentGold { index: 1 }
    );
}

#[test]
fn resampler_is_seeded_and_draws_every_claim_slot() {
    let mut first = ClaimResampler::new(300, 9);
    let mut second = ClaimResampler::new(300, 9);
    let mut other = ClaimResampler::new(300, 10);
    let a = first.next_weights().to_vec();
    assert_eq!(a, second.next_weights());
    assert_ne!(a, other.next_weights());
    assert_eq!(a.iter().sum::<u32>(), 300);
    assert_ne!(a, first.next_weights(), "successive resamples differ");
    assert!(ClaimResampler::new(0, 9).next_weights().is_empty());
}

#[test]
fn bootstrap_of_an_empty_gold_is_zero() {
    let empty = Gold::new([], []).unwrap();
    let judged = JudgedRun::new(&empty, &Run::default()).unwrap();
    let boot = judged.bootstrap(BootstrapSamples::new(3).unwrap(), 0);
    assert_eq!(boot.f1, 0.0);
    assert_eq!(boot.average_precision_sd, 0.0);
}

#[test]
fn confusion_matrix_of_a_system() {
    let g = three_claims();
    let raw = [
        labelled("1", "a", S, 0.9),
        labelled("1", "b", S, 0.9),
        labelled("1", "x", C, 0.9),
        labelled("3", "y", N, 0.9),
    ];
    let (built, run) = (g.build(), build_run(&raw));
    let pairs = [
        ("1", "a"),
        ("1", "b"),
        ("1", "x"),
        ("3", "y"),
        ("2", "c"),
        ("2", "z"),
    ]
    .map(|(c, d)| (cid(c), did(d)));
    let m = label_confusion(&built, &run, pairs.iter().map(|(c, d)| (c, d))).unwrap();
    // Rows gold, columns predicted; (2,c) and (2,z) are not in the run: predicted NEI.
    assert_eq!(m.counts, [[1, 0, 1], [1, 0, 0], [0, 1, 2]]);
    assert_eq!((m.total(), m.agreeing()), (6, 3));
    assert_eq!(m.count(C, S), 1);
    assert_eq!(m.row_totals(), [2, 1, 3]);
    assert_eq!(m.column_totals(), [2, 1, 3]);
    let unknown = [(cid("8"), did("a"))];
    assert!(matches!(
        label_confusion(&built, &run, unknown.iter().map(|(c, d)| (c, d))),
        Err(MetricsError::PairClaimNotInGold { .. })
    ));
    let labelless = build_run(&[pair("1", "a", None, None, 1.0)]);
    let one = [(cid("1"), did("a"))];
    assert!(matches!(
        label_confusion(&built, &labelless, one.iter().map(|(c, d)| (c, d))),
        Err(MetricsError::UnlabelledPrediction { .. })
    ));
}

fn repeated(cells: &[(Label, Label, usize)]) -> Vec<(Label, Label)> {
    cells
        .iter()
        .flat_map(|&(a, b, n)| std::iter::repeat_n((a, b), n))
        .collect()
}

#[test]
fn kappa_textbook_examples() {
    // Wikipedia, "Cohen's kappa", 50 proposals: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no:
    // p_o = 0.7, p_e = 0.5, kappa = 0.4.
    let a =
        Agreement::from_labels(repeated(&[(S, S, 20), (S, C, 5), (C, S, 10), (C, C, 15)])).unwrap();
    assert_close(
        [
            a.observed_agreement,
            a.expected_agreement,
            a.kappa.unwrap(),
            a.percent_agreement(),
        ],
        [0.7, 0.5, 0.4, 70.0],
        "2x2",
    );
    // By hand, 3x3 over 100 pairs: rows 30, 25, 45; columns 29, 26, 45; diagonal 85.
    // p_e = (30*29 + 25*26 + 45*45) / 100^2 = 0.3545; kappa = (0.85 - 0.3545) / (1 - 0.3545).
    let b = Agreement::from_labels(repeated(&[
        (S, S, 25),
        (S, C, 2),
        (S, N, 3),
        (C, S, 3),
        (C, C, 20),
        (C, N, 2),
        (N, S, 1),
        (N, C, 4),
        (N, N, 40),
    ]))
    .unwrap();
    assert_eq!(b.pairs, 100);
    assert_eq!(b.confusion.counts, [[25, 2, 3], [3, 20, 2], [1, 4, 40]]);
    assert_close(
        [
            b.observed_agreement,
            b.expected_agreement,
            b.kappa.unwrap(),
            0.0,
        ],
        [0.85, 0.3545, 0.4955 / 0.6455, 0.0],
        "3x3",
    );
    // Complete disagreement on a balanced 2x2: p_o 0, p_e 1/2, kappa -1.
    let d = Agreement::from_labels(repeated(&[(S, N, 5), (N, S, 5)])).unwrap();
    assert_close(
        [d.kappa.unwrap(), d.observed_agreement, 0.0, 0.0],
        [-1.0, 0.0, 0.0, 0.0],
        "disagreement",
    );
}

#[test]
fn kappa_degenerate_and_empty() {
    // Both passes say NEI to everything: p_e = 1, kappa is 0/0.
    let a = Agreement::from_labels(repeated(&[(N, N, 7)])).unwrap();
    assert_eq!(
        (a.observed_agreement, a.expected_agreement, a.kappa),
        (1.0, 1.0, None)
    );
    // One label each but different ones: p_e = 0, kappa 0.
    let b = Agreement::from_labels(repeated(&[(S, N, 4)])).unwrap();
    assert_eq!(b.kappa, Some(0.0));
    assert!(Agreement::from_labels([]).is_none());
    let json = serde_json::to_value(a).unwrap();
    assert!(json["kappa"].is_null());
}

#[test]
fn jaccard_of_pair_sets() {
    let set = |xs: &[(&str, &str)]| -> HashSet<(ClaimId, DocId)> {
        xs.iter().map(|(c, d)| (cid(c), did(d))).collect()
    };
    let a = set(&[("1", "a"), ("1", "b"), ("2", "c")]);
    let b = set(&[("1", "b"), ("2", "c"), ("3", "d")]);
    assert_eq!(jaccard(&a, &b), 0.5);
    assert_eq!(jaccard(&b, &a), 0.5);
    assert_eq!(jaccard(&a, &a), 1.0);
    assert_eq!(jaccard(&a, &set(&[])), 0.0);
    assert_eq!(jaccard(&set(&[]), &set(&[])), 1.0);
}

#[test]
fn results_serialize_with_their_field_names() {
    let judged = judge(&three_claims(), &[labelled("1", "a", S, 0.7)]);
    let m = serde_json::to_value(judged.metrics()).unwrap();
    let keys: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["precision", "recall", "f1", "average_precision"]);
    let boot = judged.bootstrap(BootstrapSamples::new(10).unwrap(), 3);
    let text = serde_json::to_string(&boot).unwrap();
    assert_eq!(serde_json::from_str::<MetricsWithSd>(&text).unwrap(), boot);
    for key in [
        "precision_sd",
        "recall_sd",
        "f1_sd",
        "average_precision_sd",
        "samples",
        "seed",
    ] {
        assert!(text.contains(&format!("\"{key}\"")), "{key} in {text}");
    }
    let rows = serde_json::to_value(judged.by_claim()).unwrap();
    assert_eq!(rows[0]["claim"], "1");
    assert_eq!(rows[0]["recall"], 0.5);
}

#[test]
fn generated_benchmark_data_agrees_with_reference() {
    let collection = bench::generate(3, 40, 3, 600).unwrap();
    let g = RawGold {
        claims: collection
            .gold
            .claims()
            .iter()
            .map(|c| c.to_string())
            .collect(),
        evidence: collection
            .gold
            .evidence()
            .map(|(c, d, l)| (c.to_string(), d.to_string(), l))
            .collect(),
    };
    assert_eq!(g.claims.len(), 40);
    assert!(g.evidence.len() > 20);
    for run in &collection.runs {
        assert!(run.len() >= 600 - 40);
        let raw: Vec<RawPair> = run
            .pairs()
            .iter()
            .map(|p| {
                let probs = match p.prediction {
                    Prediction::Scored {
                        p_support,
                        p_contradict,
                        ..
                    } => Some((p_support.get(), p_contradict.get())),
                    _ => None,
                };
                pair(
                    p.claim.as_str(),
                    p.doc.as_str(),
                    p.prediction.label(),
                    probs,
                    p.confidence.get(),
                )
            })
            .collect();
        let judged = JudgedRun::new(&collection.gold, run).unwrap();
        assert_close(
            four(&judged.metrics()),
            reference::all_four(&g, &raw),
            "generated run",
        );
    }
    let (_, results) =
        bench::time_dashboard(&collection, BootstrapSamples::new(20).unwrap(), 1).unwrap();
    assert_eq!(results.len(), 3);
}
