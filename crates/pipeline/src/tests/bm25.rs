//! The BM25 scorer: rows, probabilities, labels, calibration fitting.

use super::support::{doc, index_of};
use crate::bm25_scorer::CalibrationError;
use crate::{Bm25Scorer, Calibration, Hit, LabelPrior, Ranking, ScoreFeatures};
use domain::ids::{ClaimId, DocId};
use domain::label::Label;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn ranking(scores: &[f32], ceiling: f32) -> Ranking {
    Ranking {
        hits: scores
            .iter()
            .zip(1u32..)
            .map(|(score, rank)| Hit {
                doc_id: DocId::parse(format!("d{rank}")).unwrap(),
                score: *score,
                rank,
            })
            .collect(),
        ceiling,
    }
}

fn logistic(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

#[test]
fn rows_carry_calibrated_split_probabilities() {
    let scorer = Bm25Scorer::SCIFACT_TRAIN;
    let claim = ClaimId::parse("7").unwrap();
    let rows = scorer
        .score(&claim, &ranking(&[30.0, 20.0, 20.0, 3.0], 40.0))
        .unwrap();
    assert_eq!(rows.len(), 4);
    let [b0, b_share, b_rel] = Calibration::SCIFACT_TRAIN.weights();
    let support_share = 370.0 / 564.0;
    for (row, score) in rows.iter().zip([30.0, 20.0, 20.0, 3.0]) {
        // Independent computation from the definition.
        let p = logistic(b0 + b_share * score / 40.0 + b_rel * score / 30.0);
        assert!((row.p_support.get() - p * support_share).abs() < 1e-12);
        assert!((row.p_contradict.get() - p * (1.0 - support_share)).abs() < 1e-12);
        assert!((row.p_nei.get() - (1.0 - p)).abs() < 1e-12);
        let sum = row.p_support.get() + row.p_contradict.get() + row.p_nei.get();
        assert!((sum - 1.0).abs() < 1e-12);
        let expected_label = if p * support_share >= 1.0 - p {
            Label::Support
        } else {
            Label::Nei
        };
        assert_eq!(row.predicted_label, expected_label);
        assert_eq!(row.claim_id, claim);
        assert!(row.sentences.is_empty());
    }
    assert_eq!(
        rows.iter().map(|r| r.rank).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    // Monotone within the claim: equal scores, equal probabilities; lower score, lower p.
    assert_eq!(rows[1].p_support, rows[2].p_support);
    assert!(rows[0].p_support > rows[1].p_support && rows[2].p_support > rows[3].p_support);
    // A hit matching the whole ceiling at the top is predicted SUPPORT.
    let top = scorer.score(&claim, &ranking(&[40.0], 40.0)).unwrap();
    assert_eq!(top[0].predicted_label, Label::Support);
    assert!(scorer.score(&claim, &ranking(&[], 0.0)).unwrap().is_empty());
}

#[test]
fn the_same_score_means_more_for_a_short_claim() {
    // Comparable across claims: a hit matching most of a short claim outranks a hit with the
    // same raw score that matches a small share of a long claim.
    let scorer = Bm25Scorer::SCIFACT_TRAIN;
    let claim = ClaimId::parse("1").unwrap();
    let short = scorer.score(&claim, &ranking(&[20.0], 25.0)).unwrap();
    let long = scorer.score(&claim, &ranking(&[20.0], 80.0)).unwrap();
    assert!(short[0].p_support > long[0].p_support);
}

#[test]
fn rows_serialise_as_canonical_jsonl_fields() {
    let (_dir, retriever) = index_of(vec![doc("12", "tau", &["tau protein"])]);
    let ranking = retriever.search(&retriever.claim_terms("tau"), 5).unwrap();
    let scorer = Bm25Scorer::SCIFACT_TRAIN;
    let rows = scorer
        .score(&ClaimId::parse("3").unwrap(), &ranking)
        .unwrap();
    let json = serde_json::to_value(&rows[0]).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "claim_id",
            "doc_id",
            "predicted_label",
            "p_support",
            "p_contradict",
            "p_nei",
            "rank",
            "sentences"
        ]
    );
    assert_eq!(json["claim_id"], "3");
    assert_eq!(json["doc_id"], "12");
    assert_eq!(json["rank"], 1);
    assert_eq!(json["sentences"], serde_json::json!([]));
    assert_eq!(json["p_nei"].as_f64().unwrap(), rows[0].p_nei.get());
    let label = json["predicted_label"].as_str().unwrap();
    assert_eq!(Label::parse(label).unwrap(), rows[0].predicted_label);
    let back: crate::RunRow = serde_json::from_value(json).unwrap();
    assert_eq!(back, rows[0]);
}

#[test]
fn features_are_bounded_ratios() {
    let f = ScoreFeatures::of(5.0, 20.0, 10.0);
    assert_eq!((f.share, f.relative), (0.25, 0.5));
    let none = ScoreFeatures::of(5.0, 0.0, 0.0);
    assert_eq!((none.share, none.relative), (0.0, 0.0));
    let feats = ScoreFeatures::of_ranking(&ranking(&[8.0, 4.0], 16.0));
    assert_eq!(
        feats[1],
        ScoreFeatures {
            share: 0.25,
            relative: 0.5
        }
    );
}

#[test]
fn fit_recovers_the_generating_weights() {
    let truth = [-4.0, 3.0, 2.0];
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let examples: Vec<(ScoreFeatures, bool)> = (0..200_000)
        .map(|_| {
            let f = ScoreFeatures {
                share: rng.gen(),
                relative: rng.gen(),
            };
            let p = logistic(truth[0] + truth[1] * f.share + truth[2] * f.relative);
            (f, rng.gen::<f64>() < p)
        })
        .collect();
    let fitted = Calibration::fit(&examples).unwrap();
    for (got, want) in fitted.weights().iter().zip(truth) {
        assert!(
            (got - want).abs() < 0.1,
            "{:?} vs {truth:?}",
            fitted.weights()
        );
    }
    // At the maximum the log-likelihood gradient vanishes: nudging any weight lowers it.
    let log_likelihood = |w: [f64; 3]| -> f64 {
        examples
            .iter()
            .map(|(f, y)| {
                let p = logistic(w[0] + w[1] * f.share + w[2] * f.relative);
                if *y {
                    p.ln()
                } else {
                    (1.0 - p).ln()
                }
            })
            .sum()
    };
    let best = log_likelihood(fitted.weights());
    for i in 0..3 {
        for delta in [-1e-3, 1e-3] {
            let mut w = fitted.weights();
            w[i] += delta;
            assert!(log_likelihood(w) < best);
        }
    }
}

#[test]
fn fit_refuses_one_class_and_falling_probabilities() {
    let f = |share: f64| ScoreFeatures {
        share,
        relative: share / 2.0 + 0.1,
    };
    let all_negative: Vec<_> = (0..10).map(|i| (f(f64::from(i) / 10.0), false)).collect();
    assert_eq!(
        Calibration::fit(&all_negative),
        Err(CalibrationError::OneClass {
            positives: 0,
            total: 10
        })
    );
    // Evidence that gets rarer as the score rises cannot make a monotone calibration.
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let falling: Vec<_> = (0..5_000)
        .map(|_| {
            let x: f64 = rng.gen();
            (
                ScoreFeatures {
                    share: x,
                    relative: rng.gen(),
                },
                rng.gen::<f64>() < 1.0 - x,
            )
        })
        .collect();
    assert!(matches!(
        Calibration::fit(&falling),
        Err(CalibrationError::NotMonotone(_))
    ));
    assert!(Calibration::new(0.0, -1.0, 1.0).is_err());
    assert!(Calibration::new(f64::NAN, 1.0, 1.0).is_err());
}

#[test]
fn label_prior_is_the_support_share() {
    let prior = LabelPrior::from_counts(370, 194).unwrap();
    assert!((prior.support() - 370.0 / 564.0).abs() < 1e-15);
    assert_eq!(LabelPrior::SCIFACT_TRAIN, prior);
    assert_eq!(Bm25Scorer::default(), Bm25Scorer::SCIFACT_TRAIN);
    assert_eq!(LabelPrior::from_counts(0, 0), None);
    assert_eq!(LabelPrior::from_counts(0, 5).unwrap().support(), 0.0);
}
