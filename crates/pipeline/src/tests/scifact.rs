//! On SciFact (skipped when the data is absent): recall on dev, BM25 checked by brute force,
//! and the shipped calibration refitted on train.

use super::support::BruteBm25;
use crate::analyzer::{analyse, english_analyzer};
use crate::bm25_scorer::FIT_DEPTH;
use crate::{build_index, Bm25Scorer, Calibration, IndexDoc, LabelPrior, Retriever, ScoreFeatures};
use domain::ids::{ClaimId, DocId};
use domain::label::Label;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::{Path, PathBuf};

pub(super) fn data_dir() -> Option<PathBuf> {
    testdata::shared_data().map(|dir| dir.join("scifact"))
}

fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    testdata::json_lines(path)
}

pub(super) fn corpus(dir: &Path) -> Vec<IndexDoc> {
    json_lines(&dir.join("corpus.jsonl"))
        .iter()
        .map(|v| IndexDoc {
            doc_id: DocId::parse(v["doc_id"].to_string()).unwrap(),
            title: v["title"].as_str().unwrap().to_owned(),
            sentences: v["abstract"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_owned())
                .collect(),
        })
        .collect()
}

pub(super) struct GoldClaim {
    pub(super) id: ClaimId,
    pub(super) text: String,
    /// Gold evidence abstracts and their label (all sets of a pair share one label).
    pub(super) evidence: BTreeMap<DocId, Label>,
}

pub(super) fn claims(dir: &Path, split: &str) -> Vec<GoldClaim> {
    json_lines(&dir.join(format!("claims_{split}.jsonl")))
        .iter()
        .map(|v| GoldClaim {
            id: ClaimId::parse(v["id"].to_string()).unwrap(),
            text: v["claim"].as_str().unwrap().to_owned(),
            evidence: v["evidence"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(doc, sets)| {
                    let label = Label::parse(sets[0]["label"].as_str().unwrap()).unwrap();
                    (DocId::parse(doc.as_str()).unwrap(), label)
                })
                .collect(),
        })
        .collect()
}

/// Share of gold claim/abstract pairs (claims with evidence only) in each claim's top `k`.
fn recall(retriever: &Retriever, claims: &[GoldClaim], k: usize) -> (usize, usize) {
    let mut found = 0;
    let mut total = 0;
    for claim in claims.iter().filter(|c| !c.evidence.is_empty()) {
        let hits = retriever.retrieve(&claim.text, k).unwrap();
        total += claim.evidence.len();
        found += claim
            .evidence
            .keys()
            .filter(|doc| hits.iter().any(|hit| &hit.doc_id == *doc))
            .count();
    }
    (found, total)
}

/// Average precision of pairs pooled across claims and sorted by `key`, against all gold pairs.
fn pooled_average_precision(mut pairs: Vec<(f64, bool)>, gold_pairs: usize) -> f64 {
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut hits = 0.0;
    let mut sum = 0.0;
    for (i, (_, relevant)) in pairs.iter().enumerate() {
        if *relevant {
            hits += 1.0;
            sum += hits / (i as f64 + 1.0);
        }
    }
    sum / gold_pairs as f64
}

#[test]
fn scifact_recall_bm25_and_calibration() {
    let Some(dir) = data_dir() else { return };
    let docs = corpus(&dir);
    let index_dir = tempfile::tempdir().unwrap();
    let summary = build_index(
        index_dir.path(),
        docs.iter().cloned().map(Ok::<_, Infallible>),
        &|_| {},
    )
    .unwrap();
    assert_eq!(summary.documents, 5183);
    let retriever = Retriever::open(index_dir.path()).unwrap();
    let dev = claims(&dir, "dev");
    let train = claims(&dir, "train");
    assert_eq!((dev.len(), train.len()), (300, 809));

    // Recall on dev: 209 gold pairs of 188 claims.
    let (found20, total) = recall(&retriever, &dev, 20);
    let (found50, _) = recall(&retriever, &dev, 50);
    let (r20, r50) = (found20 as f64 / total as f64, found50 as f64 / total as f64);
    eprintln!(
        "SciFact dev BM25 recall@20 = {found20}/{total} = {r20:.4}, \
         recall@50 = {found50}/{total} = {r50:.4}"
    );
    assert_eq!(total, 209);
    assert!(r50 >= 0.93, "recall@50 {r50}");
    assert!(r20 >= 0.90, "recall@20 {r20}");

    // Scores and ceilings equal a brute-force BM25 over the analysed corpus.
    let mut analyzer = english_analyzer();
    let brute = BruteBm25::new(
        docs.iter()
            .map(|doc| {
                let mut tokens = analyse(&mut analyzer, &doc.title);
                for sentence in &doc.sentences {
                    tokens.extend(analyse(&mut analyzer, sentence));
                }
                (doc.doc_id.clone(), tokens)
            })
            .collect(),
    );
    for claim in dev.iter().step_by(15) {
        let terms = retriever.claim_terms(&claim.text);
        let ranking = retriever.search(&terms, 50).unwrap();
        let expected = brute.rank(terms.terms());
        assert_eq!(ranking.hits.len(), expected.len().min(50));
        let expected_score: BTreeMap<&DocId, f64> = expected.iter().map(|(d, s)| (d, *s)).collect();
        for (hit, (_, score_at_rank)) in ranking.hits.iter().zip(&expected) {
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-4 * b.max(1.0);
            assert!(
                close(f64::from(hit.score), *score_at_rank),
                "claim {}: {hit:?}",
                claim.id
            );
            assert!(
                close(f64::from(hit.score), expected_score[&hit.doc_id]),
                "claim {}",
                claim.id
            );
        }
        let ceiling = brute.ceiling(terms.terms());
        assert!((f64::from(ranking.ceiling) - ceiling).abs() <= 1e-4 * ceiling);
    }

    // The shipped calibration is the fit on train's top FIT_DEPTH hits.
    let examples: Vec<(ScoreFeatures, bool)> = train
        .iter()
        .flat_map(|claim| {
            let ranking = retriever
                .search(&retriever.claim_terms(&claim.text), FIT_DEPTH)
                .unwrap();
            let features = ScoreFeatures::of_ranking(&ranking);
            ranking
                .hits
                .iter()
                .zip(features)
                .map(|(hit, f)| (f, claim.evidence.contains_key(&hit.doc_id)))
                .collect::<Vec<_>>()
        })
        .collect();
    let refit = Calibration::fit(&examples).unwrap();
    eprintln!(
        "SciFact train calibration: {:?} on {} hits",
        refit.weights(),
        examples.len()
    );
    for (got, shipped) in refit
        .weights()
        .iter()
        .zip(Calibration::SCIFACT_TRAIN.weights())
    {
        assert!((got - shipped).abs() < 1e-5, "{:?}", refit.weights());
    }
    // And the label prior is train's share of SUPPORT pairs.
    let count = |label| {
        train
            .iter()
            .flat_map(|c| c.evidence.values())
            .filter(|l| **l == label)
            .count() as u64
    };
    assert_eq!(
        (count(Label::Support), count(Label::Contradict)),
        LabelPrior::SCIFACT_TRAIN_COUNTS
    );

    // On dev, the probabilities add up to about the number of gold pairs found, and pooling by
    // them beats pooling by raw score.
    let scorer = Bm25Scorer::SCIFACT_TRAIN;
    let mut by_p = Vec::new();
    let mut by_score = Vec::new();
    let mut expected_evidence = 0.0;
    let mut found = 0usize;
    for claim in &dev {
        let ranking = retriever
            .search(&retriever.claim_terms(&claim.text), FIT_DEPTH)
            .unwrap();
        let rows = scorer.score(&claim.id, &ranking).unwrap();
        for (row, hit) in rows.iter().zip(&ranking.hits) {
            let gold = claim.evidence.contains_key(&row.doc_id);
            let p = row.p_support.get() + row.p_contradict.get();
            expected_evidence += p;
            found += usize::from(gold);
            by_p.push((p, gold));
            by_score.push((f64::from(hit.score), gold));
        }
    }
    let ap_p = pooled_average_precision(by_p, total);
    let ap_score = pooled_average_precision(by_score, total);
    eprintln!(
        "SciFact dev top {FIT_DEPTH}: expected evidence {expected_evidence:.1}, found {found}; \
         pooled AP by p {ap_p:.4}, by raw score {ap_score:.4}"
    );
    assert!((expected_evidence / found as f64 - 1.0).abs() < 0.15);
    assert!(ap_p > ap_score + 0.1);
}
