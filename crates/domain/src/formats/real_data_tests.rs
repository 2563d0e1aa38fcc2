//! Every reader against the real SciFact release and the real system outputs in `shared/data`
//! (figures from their SOURCES.md files). Skipped, with a note, where that folder is absent.
//! `CLAIMPOOL_DATA_DIR` overrides the folder (default: `<crate>/../../shared/data`).

use super::claims::{Claim, ClaimsReader};
use super::corpus::{CorpusFormat, CorpusReader, Document};
use super::run::{
    LabelOrder, RunFormat, RunReadOptions, RunReader, RunRecord, Scoring, ScoringTally,
};
use super::sentences::measure_agreement;
use crate::ids::{ClaimId, DocId};
use crate::label::Label;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

fn data_dir() -> Option<PathBuf> {
    testdata::shared_data()
}

fn corpus(dir: &Path) -> Vec<Document> {
    let path = dir.join("scifact/corpus.jsonl");
    assert_eq!(
        CorpusFormat::detect_file(&path).unwrap(),
        CorpusFormat::SciFact
    );
    CorpusReader::open(&path, CorpusFormat::SciFact)
        .unwrap()
        .map(|r| r.unwrap().record)
        .collect()
}

fn claims(path: &Path) -> Vec<Claim> {
    ClaimsReader::open(path)
        .unwrap()
        .map(|r| r.unwrap().record)
        .collect()
}

fn run(path: &Path, format: RunFormat) -> Vec<RunRecord> {
    RunReader::open(path, format, &RunReadOptions::default())
        .unwrap()
        .map(|r| r.unwrap_or_else(|e| panic!("{e}")).record)
        .collect()
}

/// Sentence counts per document, for checking indices.
fn sentence_counts(docs: &[Document]) -> HashMap<DocId, usize> {
    docs.iter()
        .map(|d| (d.doc_id.clone(), d.sentences.len()))
        .collect()
}

/// Non-NEI (SUPPORT, CONTRADICT) counts.
fn evidence_counts(records: &[RunRecord]) -> (usize, usize) {
    let count = |l| records.iter().filter(|r| r.label == Some(l)).count();
    (count(Label::Support), count(Label::Contradict))
}

fn scoring(records: &[RunRecord]) -> Scoring {
    let mut tally = ScoringTally::default();
    records.iter().for_each(|r| tally.observe(r));
    tally.scoring()
}

#[test]
fn corpus_reads_every_abstract_as_the_raw_json_has_it() {
    let Some(dir) = data_dir() else { return };
    let docs = corpus(&dir);
    assert_eq!(docs.len(), 5183);
    let ids: BTreeSet<&DocId> = docs.iter().map(|d| &d.doc_id).collect();
    assert_eq!(ids.len(), 5183);
    let structured = docs
        .iter()
        .filter(|d| d.extra.get("structured") == Some(&serde_json::Value::Bool(true)))
        .count();
    assert_eq!(structured, 977);
    let lengths: Vec<usize> = docs.iter().map(|d| d.sentences.len()).collect();
    assert_eq!(lengths.iter().min(), Some(&3));
    assert_eq!(lengths.iter().max(), Some(&367));
    assert_eq!(lengths.iter().sum::<usize>(), 45952);
    // Independent reading with serde_json::Value.
    let text = std::fs::read_to_string(dir.join("scifact/corpus.jsonl")).unwrap();
    for (line, doc) in text.lines().zip(&docs) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            v["doc_id"].as_u64().unwrap().to_string(),
            doc.doc_id.as_str()
        );
        assert_eq!(v["title"].as_str().unwrap(), doc.title);
        let sentences: Vec<&str> = v["abstract"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        assert_eq!(sentences, doc.sentences);
    }
}

#[test]
fn sentence_splitter_reproduces_most_scifact_abstracts() {
    let Some(dir) = data_dir() else { return };
    let docs = corpus(&dir);
    let a = measure_agreement(docs.iter().map(|d| d.sentences.as_slice()));
    eprintln!(
        "SciFact split agreement: {} of {} abstracts exact ({:.4}); sentences: precision {:.4}, \
         recall {:.4}, F1 {:.4} ({} original, {} split, {} matching)",
        a.exact_abstracts,
        a.abstracts,
        a.exact_share(),
        a.precision(),
        a.recall(),
        a.f1(),
        a.original_sentences,
        a.split_sentences,
        a.matching_sentences
    );
    assert_eq!(a.abstracts, 5183);
    assert_eq!(a.original_sentences, 45952);
    assert!(a.exact_share() >= 0.88, "{a:?}");
    assert!(a.f1() >= 0.96, "{a:?}");
}

#[test]
fn claims_match_the_release_counts() {
    let Some(dir) = data_dir() else { return };
    let docs = corpus(&dir);
    let counts = sentence_counts(&docs);
    let summary = |claims: &[Claim]| {
        let with_evidence = claims.iter().filter(|c| !c.evidence.is_empty()).count();
        let pairs = claims.iter().map(|c| c.evidence.len()).sum::<usize>();
        let mut sets = BTreeMap::new();
        for e in claims.iter().flat_map(|c| &c.evidence) {
            *sets.entry(e.label).or_insert(0) += e.sentence_sets.len();
        }
        (claims.len(), with_evidence, pairs, sets)
    };
    let train = claims(&dir.join("scifact/claims_train.jsonl"));
    let dev = claims(&dir.join("scifact/claims_dev.jsonl"));
    let test = claims(&dir.join("scifact/claims_test.jsonl"));
    let sets = |s, c| BTreeMap::from([(Label::Support, s), (Label::Contradict, c)]);
    assert_eq!(summary(&train), (809, 505, 564, sets(616, 341)));
    assert_eq!(summary(&dev), (300, 188, 209, sets(216, 122)));
    assert_eq!(summary(&test).0, 300);
    assert!(test
        .iter()
        .all(|c| c.evidence.is_empty() && c.cited_doc_ids.is_none()));
    let cited: usize = dev
        .iter()
        .map(|c| c.cited_doc_ids.as_ref().unwrap().len())
        .sum();
    assert_eq!(cited, 340);
    for claim in train.iter().chain(&dev) {
        let cited = claim.cited_doc_ids.as_ref().unwrap();
        for e in &claim.evidence {
            assert!(
                cited.contains(&e.doc_id),
                "claim {} doc {}",
                claim.id,
                e.doc_id
            );
            let n = counts[&e.doc_id];
            assert!(e.sentence_sets.iter().flatten().all(|&i| (i as usize) < n));
            assert!(e.label.is_evidence() && e.provenance.is_none());
        }
    }
    // The "retrieved" variants carry the same claims (their doc_ids are ignored here).
    for name in [
        "claims_dev_retrieved.jsonl",
        "claims_dev_retrieved_tfidf.jsonl",
    ] {
        assert_eq!(
            claims(&dir.join("scifact-runs/arsjoint").join(name)),
            dev,
            "{name}"
        );
    }
}

/// Evidence-doc recall at k of a retrieval run against dev.
fn recall_at(run: &[RunRecord], dev: &[Claim], k: u32) -> f64 {
    let ranks: HashMap<(&ClaimId, &DocId), u32> = run
        .iter()
        .map(|r| ((&r.claim_id, &r.doc_id), r.rank.unwrap()))
        .collect();
    let gold: Vec<(&ClaimId, &DocId)> = dev
        .iter()
        .flat_map(|c| c.evidence.iter().map(move |e| (&c.id, &e.doc_id)))
        .collect();
    let found = gold
        .iter()
        .filter(|g| ranks.get(*g).is_some_and(|&r| r <= k))
        .count();
    found as f64 / gold.len() as f64
}

#[test]
fn retrieved_claims_runs_have_the_documented_ranks_and_recall() {
    let Some(dir) = data_dir() else { return };
    let dev = claims(&dir.join("scifact/claims_dev.jsonl"));
    let arsjoint = dir.join("scifact-runs/arsjoint");
    for (name, depth, recalls) in [
        (
            "claims_dev_retrieved_tfidf.jsonl",
            150,
            [0.699, 0.914, 0.967],
        ),
        ("claims_dev_retrieved.jsonl", 100, [0.670, 0.947, 0.981]),
    ] {
        let path = arsjoint.join(name);
        assert_eq!(
            RunFormat::detect_file(&path).unwrap(),
            RunFormat::RetrievedClaims
        );
        let records = run(&path, RunFormat::RetrievedClaims);
        assert_eq!(records.len(), 300 * depth as usize, "{name}");
        assert!(records
            .iter()
            .all(|r| r.label.is_none() && r.score.is_none()));
        let ranks: BTreeSet<u32> = records.iter().map(|r| r.rank.unwrap()).collect();
        assert_eq!(ranks, (1..=depth).collect());
        for (k, want) in [3, 30, 100].into_iter().zip(recalls) {
            let got = recall_at(&records, &dev, k);
            assert!(
                (got - want).abs() < 0.0005,
                "{name} recall@{k} {got} != {want}"
            );
        }
        assert_eq!(scoring(&records), Scoring::Order);
    }
}

#[test]
fn arsjoint_label_predictions_are_the_first_30_retrieved_in_order() {
    let Some(dir) = data_dir() else { return };
    let arsjoint = dir.join("scifact-runs/arsjoint");
    let retrieved = run(
        &arsjoint.join("claims_dev_retrieved_tfidf.jsonl"),
        RunFormat::RetrievedClaims,
    );
    let top30: BTreeSet<(&ClaimId, &DocId, u32)> = retrieved
        .iter()
        .filter(|r| r.rank.unwrap() <= 30)
        .map(|r| (&r.claim_id, &r.doc_id, r.rank.unwrap()))
        .collect();
    for (commit, support, contradict) in [
        ("2021-03-27_21c6c29", 125, 67),
        ("2021-04-11_6683be0", 54, 31),
        ("2021-04-20_1e22954", 108, 41),
    ] {
        let path = arsjoint.join(commit).join("label_predictions.jsonl");
        assert_eq!(RunFormat::detect_file(&path).unwrap(), RunFormat::VeriSci);
        let records = run(&path, RunFormat::VeriSci);
        assert_eq!(records.len(), 9000, "{commit}");
        let got: BTreeSet<(&ClaimId, &DocId, u32)> = records
            .iter()
            .map(|r| (&r.claim_id, &r.doc_id, r.rank.unwrap()))
            .collect();
        assert_eq!(got, top30, "{commit}");
        assert_eq!(evidence_counts(&records), (support, contradict), "{commit}");
        // Confidence is the constant 1: the run has no scores, only labels and order.
        assert_eq!(scoring(&records), Scoring::Order, "{commit}");
        for r in &records {
            let want = if r.label.unwrap().is_evidence() {
                1.0
            } else {
                0.0
            };
            assert_eq!(r.confidence(), want);
        }
    }
    // Merged predictions hold the non-NEI pairs only.
    for (commit, pairs) in [
        ("2021-03-27_21c6c29", 192),
        ("2021-04-11_6683be0", 85),
        ("2021-04-20_1e22954", 149),
    ] {
        let path = arsjoint.join(commit).join("merged_predictions.jsonl");
        assert_eq!(
            RunFormat::detect_file(&path).unwrap(),
            RunFormat::Leaderboard
        );
        let records = run(&path, RunFormat::Leaderboard);
        assert_eq!(records.len(), pairs, "{commit}");
        assert!(records
            .iter()
            .all(|r| r.label.unwrap().is_evidence() && r.sentences.is_some()));
        assert_eq!(scoring(&records), Scoring::Order);
        // Their labels agree with the label predictions of the same commit.
        let labels: HashMap<(ClaimId, DocId), Label> = run(
            &arsjoint.join(commit).join("label_predictions.jsonl"),
            RunFormat::VeriSci,
        )
        .into_iter()
        .map(|r| ((r.claim_id, r.doc_id), r.label.unwrap()))
        .collect();
        let evidence_pairs = labels.values().filter(|l| l.is_evidence()).count();
        assert_eq!(evidence_pairs, pairs, "{commit}");
        for r in &records {
            assert_eq!(
                labels.get(&(r.claim_id.clone(), r.doc_id.clone())),
                r.label.as_ref()
            );
        }
        // Rationale selections hold only sentence indices: their format cannot be told.
        let selection = arsjoint.join(commit).join("rationale_selection.jsonl");
        assert!(RunFormat::detect_file(&selection).is_err());
    }
}

#[test]
fn multivers_runs_have_consistent_label_probs() {
    let Some(dir) = data_dir() else { return };
    let dev = claims(&dir.join("scifact/claims_dev.jsonl"));
    let cited: BTreeSet<(ClaimId, DocId)> = dev
        .iter()
        .flat_map(|c| {
            c.cited_doc_ids
                .clone()
                .unwrap()
                .into_iter()
                .map(move |d| (c.id.clone(), d))
        })
        .collect();
    assert_eq!(cited.len(), 339);
    let base = dir.join("scifact-runs/multivers_jedick");
    // (file, pairs, SUPPORT, REFUTE, NEI, has label_probs, has sentences)
    let files = [
        (
            "dev/scifact_scifact_dev.jsonl",
            339,
            138,
            71,
            130,
            true,
            true,
        ),
        (
            "dev/fever_sci_scifact_dev.jsonl",
            339,
            129,
            20,
            190,
            true,
            true,
        ),
        (
            "dev/citint_scifact_dev.jsonl",
            339,
            141,
            102,
            96,
            true,
            false,
        ),
        (
            "dev/finetuned_fever_sci_scifact_rw0_dev.jsonl",
            339,
            142,
            61,
            136,
            true,
            true,
        ),
        (
            "dev/covidfact_scifact_dev.jsonl",
            252,
            115,
            137,
            0,
            false,
            true,
        ),
        (
            "dev/healthver_scifact_dev.jsonl",
            215,
            140,
            75,
            0,
            false,
            true,
        ),
        ("dev/fever_scifact_dev.jsonl", 27, 20, 7, 0, false, true),
        (
            "test/scifact_scifact_test.jsonl",
            300,
            84,
            88,
            128,
            true,
            true,
        ),
        (
            "test/fever_sci_scifact_test.jsonl",
            300,
            110,
            31,
            159,
            true,
            true,
        ),
        (
            "test/citint_scifact_test.jsonl",
            300,
            101,
            133,
            66,
            true,
            false,
        ),
        (
            "test/covidfact_scifact_test.jsonl",
            243,
            65,
            178,
            0,
            false,
            true,
        ),
        (
            "test/healthver_scifact_test.jsonl",
            204,
            110,
            94,
            0,
            false,
            true,
        ),
        ("test/fever_scifact_test.jsonl", 33, 21, 12, 0, false, true),
    ];
    let order = LabelOrder::default().labels();
    for (name, pairs, s, r, n, probs, sentences) in files {
        let path = base.join(name);
        assert_eq!(
            RunFormat::detect_file(&path).unwrap(),
            RunFormat::Leaderboard
        );
        let records = run(&path, RunFormat::Leaderboard);
        assert_eq!(records.len(), pairs, "{name}");
        let nei = records
            .iter()
            .filter(|x| x.label == Some(Label::Nei))
            .count();
        assert_eq!((evidence_counts(&records), nei), ((s, r), n), "{name}");
        assert!(
            records.iter().all(|x| x.sentences.is_some() == sentences),
            "{name}"
        );
        if name.starts_with("dev/") {
            assert!(records
                .iter()
                .all(|x| cited.contains(&(x.claim_id.clone(), x.doc_id.clone()))));
        }
        if !probs {
            assert!(records
                .iter()
                .all(|x| x.p_support.is_none() && x.p_nei.is_none()));
            assert_eq!(scoring(&records), Scoring::Order, "{name}");
            continue;
        }
        assert_eq!(scoring(&records), Scoring::Scores, "{name}");
        let text = std::fs::read_to_string(&path).unwrap();
        let mut raw = Vec::new();
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            for pair in v["evidence"].as_object().unwrap().values() {
                let p: Vec<f64> = pair["label_probs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect();
                raw.push(p);
            }
        }
        for (x, raw) in records.iter().zip(&raw) {
            let by_label = |l: Label| match l {
                Label::Support => x.p_support.unwrap().get(),
                Label::Contradict => x.p_contradict.unwrap().get(),
                Label::Nei => x.p_nei.unwrap().get(),
            };
            let p: Vec<f64> = order.iter().map(|&l| by_label(l)).collect();
            assert_eq!(&p, raw, "{name}");
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-4, "{name}: {p:?}");
            let argmax = Label::ALL
                .into_iter()
                .max_by(|a, b| by_label(*a).total_cmp(&by_label(*b)))
                .unwrap();
            assert_eq!(
                Some(argmax),
                x.label,
                "{name} claim {} doc {}",
                x.claim_id,
                x.doc_id
            );
            assert_eq!(
                x.confidence(),
                by_label(Label::Support).max(by_label(Label::Contradict))
            );
        }
    }
}

#[test]
fn hybrid_rag_and_sentence_score_runs() {
    let Some(dir) = data_dir() else { return };
    let counts = sentence_counts(&corpus(&dir));
    let base = dir.join("scifact-runs");
    for (name, pairs, support, contradict) in [
        ("predictions_dev_a780913.jsonl", 208, 181, 27),
        ("predictions_dev_6d32d0d.jsonl", 379, 243, 136),
    ] {
        let path = base.join("hybrid_rag_kaikoepchen").join(name);
        assert_eq!(
            RunFormat::detect_file(&path).unwrap(),
            RunFormat::Leaderboard
        );
        let records = run(&path, RunFormat::Leaderboard);
        assert_eq!(records.len(), pairs);
        assert_eq!(evidence_counts(&records), (support, contradict));
        for r in &records {
            let n = counts[&r.doc_id];
            assert!(r
                .sentences
                .as_ref()
                .unwrap()
                .iter()
                .all(|&i| (i as usize) < n));
        }
    }
    let path = base.join(
        "rationale_scores_neverneverendup/k30_scores_baseline_predicted_rationale_selection.jsonl",
    );
    assert_eq!(
        RunFormat::detect_file(&path).unwrap(),
        RunFormat::SentenceScores
    );
    let records = run(&path, RunFormat::SentenceScores);
    assert_eq!(records.len(), 9000);
    assert_eq!(scoring(&records), Scoring::Scores);
    let ars: BTreeSet<(ClaimId, DocId, u32)> = run(
        &base.join("arsjoint/2021-03-27_21c6c29/label_predictions.jsonl"),
        RunFormat::VeriSci,
    )
    .into_iter()
    .map(|r| (r.claim_id, r.doc_id, r.rank.unwrap()))
    .collect();
    let got: BTreeSet<(ClaimId, DocId, u32)> = records
        .iter()
        .map(|r| (r.claim_id.clone(), r.doc_id.clone(), r.rank.unwrap()))
        .collect();
    assert_eq!(got, ars, "same candidates, in the same order");
    // Independent computation of max score and sentences above 0.5 from the raw JSON.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut i = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for (doc, scores) in v["evidence"].as_object().unwrap() {
            let scores: Vec<f64> = scores
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            let r = &records[i];
            i += 1;
            assert_eq!(r.doc_id.as_str(), doc);
            assert_eq!(scores.len(), counts[&r.doc_id]);
            assert_eq!(r.score, scores.iter().copied().reduce(f64::max));
            let above: Vec<u32> = (0u32..)
                .zip(&scores)
                .filter(|(_, s)| **s > 0.5)
                .map(|(i, _)| i)
                .collect();
            assert_eq!(r.sentences.as_ref(), Some(&above));
        }
    }
    assert_eq!(i, 9000);
}

#[test]
fn every_real_file_reads_the_same_gzip_compressed() {
    let Some(dir) = data_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut stack = vec![dir.clone()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                continue;
            }
            let gz = tmp.path().join(format!("{checked}.jsonl.gz"));
            let mut enc = GzEncoder::new(std::fs::File::create(&gz).unwrap(), Compression::fast());
            std::io::copy(&mut std::fs::File::open(&path).unwrap(), &mut enc).unwrap();
            enc.finish().unwrap();
            checked += 1;
            let name = path.file_name().unwrap().to_string_lossy();
            if name == "corpus.jsonl" {
                assert_eq!(
                    CorpusFormat::detect_file(&gz).unwrap(),
                    CorpusFormat::SciFact
                );
                let a: Vec<_> = CorpusReader::open(&path, CorpusFormat::SciFact)
                    .unwrap()
                    .map(|r| r.unwrap())
                    .collect();
                let b: Vec<_> = CorpusReader::open(&gz, CorpusFormat::SciFact)
                    .unwrap()
                    .map(|r| r.unwrap())
                    .collect();
                assert_eq!(a, b);
            } else if name.starts_with("claims_") {
                let a: Vec<_> = ClaimsReader::open(&path)
                    .unwrap()
                    .map(|r| r.unwrap())
                    .collect();
                let b: Vec<_> = ClaimsReader::open(&gz)
                    .unwrap()
                    .map(|r| r.unwrap())
                    .collect();
                assert_eq!(a, b);
            }
            if let Ok(format) = RunFormat::detect_file(&path) {
                assert_eq!(RunFormat::detect_file(&gz).unwrap(), format);
                let a: Vec<_> = RunReader::open(&path, format, &RunReadOptions::default())
                    .unwrap()
                    .map(|r| r.unwrap())
                    .collect();
                let b: Vec<_> = RunReader::open(&gz, format, &RunReadOptions::default())
                    .unwrap()
                    .map(|r| r.unwrap())
                    .collect();
                assert!(!a.is_empty());
                assert_eq!(a, b, "{}", path.display());
            }
        }
    }
    assert_eq!(checked, 4 + 11 + 13 + 2 + 1);
}
