//! Tests of the trained scorer: features against hand computations, sampling, training and
//! scoring on a generated corpus, the model file, and (when the data is present) SciFact.

use super::cap::{cap_evidence, evidence_cap};
use super::examples::{gather, sample_negatives, Source, RANK_DEPTH};
use super::features::{hash, Features};
use super::idf::DocFreq;
use super::model::rationale_sentences;
use super::pair::{self, doc_features, AnalysedDoc, ClaimContext, DocFeatures, FeatureSpace};
use super::pooled::{self as a, pooled_features, SentencePrediction};
use super::scifact::{bm25_run, index_documents, judge, load_scifact, trained_run, EVAL_DEPTH};
use super::text::TextAnalysers;
use super::{train, TrainConfig, TrainedError, TrainedModel};
use crate::{Bm25Scorer, Retriever, RunRow};
use domain::formats::{Claim, Document, Evidence};
use domain::ids::{ClaimId, DocId};
use domain::label::{Label, Probability};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, HashMap, HashSet};
use tempfile::TempDir;

fn doc_id(id: &str) -> DocId {
    DocId::parse(id).unwrap()
}

fn document(id: &str, title: &str, sentences: &[&str]) -> Document {
    Document {
        doc_id: doc_id(id),
        title: title.to_owned(),
        sentences: sentences.iter().map(|s| (*s).to_owned()).collect(),
        extra: serde_json::Map::new(),
    }
}

fn dense(features: &Features, index: usize) -> f32 {
    features
        .entries()
        .iter()
        .filter(|(i, _)| *i as usize == index)
        .map(|(_, v)| v)
        .sum()
}

#[test]
fn hashes_are_fnv1a_with_splitmix_as_computed_independently() {
    // Expected values computed with a separate Python implementation.
    assert_eq!(hash(b'x', &["mutat", "cancer"]), 0x584d_8fda_e586_ced9);
    assert_eq!(hash(b's', &["cell"]), 0x61ac_189f_f1ec_eaa5);
    assert_eq!(hash(b's', &[]), 0xbdf1_8d39_90fb_6460);
    assert_ne!(hash(b'x', &["ab", "c"]), hash(b'x', &["a", "bc"]));
}

/// The dense pair features of a hand-made claim and abstract, each recomputed by hand.
#[test]
fn pair_features_match_hand_computation() {
    let df = DocFreq::count([
        vec!["statin", "reduc", "mortal"],
        vec!["statin", "cell"],
        vec!["mortal", "cell"],
        vec!["cell"],
    ]);
    let mut analysers = TextAnalysers::default();
    let claim = ClaimContext::new(
        analysers.analyse("Statins not reducing mortality by 20%."),
        &df,
    );
    let doc = AnalysedDoc::new(
        &mut analysers,
        &document(
            "1",
            "Statins and cells",
            &[
                "Cells were counted.",
                "Statins reduce mortality by 30% in cells.",
                "Mortality fell.",
            ],
        ),
    );
    let space = FeatureSpace::new(10).unwrap();
    let features = doc_features(space, &claim, &doc);
    assert_eq!(features.sentences.len(), 3);
    // Claim terms: statin, reduc, mortal, 20.
    let idf = |t: &str| df.idf(t);
    let total = idf("statin") + idf("reduc") + idf("mortal") + idf("20");
    let s1 = &features.sentences[1];
    let share1 = (idf("statin") + idf("reduc") + idf("mortal")) / total;
    let close = |got: f32, want: f64| (f64::from(got) - want).abs() < 1e-6;
    assert!(close(dense(s1, pair::IDF_SHARE), share1));
    assert!(close(dense(s1, pair::TERM_SHARE), 3.0 / 4.0));
    // Sentence terms: statin, reduc, mortal, 30, cell.
    assert!(close(dense(s1, pair::PRECISION), 3.0 / 5.0));
    // Claim bigrams: statin-reduc, reduc-mortal, mortal-20; the sentence has the first two.
    assert!(close(dense(s1, pair::BIGRAM_SHARE), 2.0 / 3.0));
    assert!(close(dense(s1, pair::RELATIVE_SHARE), 1.0));
    assert_eq!(dense(s1, pair::IS_BEST), 1.0);
    let share2 = idf("mortal") / total;
    assert!(close(dense(s1, pair::NEIGHBOUR_SHARE), share2));
    assert!(close(dense(s1, pair::POSITION), 0.5));
    assert!(close(dense(s1, pair::LENGTH), 6f64.ln() / 4.0));
    assert_eq!(dense(s1, pair::NUMBER_MATCH), 0.0);
    assert_eq!(dense(s1, pair::NUMBER_MISMATCH), 1.0);
    assert_eq!(
        (
            dense(s1, pair::CLAIM_NEGATED),
            dense(s1, pair::SENTENCE_NEGATED),
            dense(s1, pair::NEGATION_DIFFERS)
        ),
        (1.0, 0.0, 1.0)
    );
    // Claim: "not reduce" is down, negated; sentence: "reduce" is down.
    assert_eq!(dense(s1, pair::DIRECTION_PRODUCT), 1.0);
    assert_eq!(dense(s1, pair::POLARITY_PRODUCT), -1.0);
    assert!(close(dense(s1, pair::TITLE_SHARE), idf("statin") / total));
    assert!(close(dense(s1, pair::ABSTRACT_SHARE), share1));
    let s0 = &features.sentences[0];
    assert_eq!(dense(s0, pair::IDF_SHARE), 0.0);
    assert_eq!(dense(s0, pair::IS_FIRST), 1.0);
    assert!(close(dense(s0, pair::NEIGHBOUR_SHARE), share1));
    let s2 = &features.sentences[2];
    assert!(close(dense(s2, pair::RELATIVE_SHARE), share2 / share1));
    assert_eq!(dense(s2, pair::IS_LAST), 1.0);
    // Hashed groups have unit length: sentence 2 has terms "mortal" and "fell".
    let hashed: Vec<f32> = s2
        .entries()
        .iter()
        .filter(|(i, _)| *i as usize >= pair::DENSE)
        .map(|(_, v)| *v)
        .collect();
    let norm_of_groups: f32 = hashed.iter().map(|v| v * v).sum();
    // Four groups (sentence terms, claim words, matched terms, cross pairs), each of norm 1.
    assert!((norm_of_groups - 4.0).abs() < 1e-5, "{hashed:?}");
    assert_eq!(hashed.len(), 2 + 6 + 1 + 4 * 2);
    assert!(s2
        .entries()
        .iter()
        .all(|(i, _)| (*i as usize) < space.dims()));
}

#[test]
fn pooled_features_of_sentence_predictions() {
    let doc = DocFeatures {
        sentences: Vec::new(),
        title_share: 0.25,
        abstract_share: 0.75,
    };
    let p = |rationale: f64, support: f64| SentencePrediction { rationale, support };
    let predictions = [p(0.2, 0.5), p(0.9, 0.8), p(0.6, 0.1), p(0.4, 1.0)];
    let cues = TextAnalysers::default().analyse("It does not help").cues;
    let x = pooled_features(&predictions, &doc, 4, cues);
    let close = |got: f32, want: f64| (f64::from(got) - want).abs() < 1e-6;
    assert!(close(dense(&x, a::BIAS), 1.0));
    assert!(close(dense(&x, a::MAX_RATIONALE), 0.9));
    assert!(close(dense(&x, a::TOP2_RATIONALE), 0.75));
    assert!(close(dense(&x, a::MAX_RATIONALE_LOGIT), 9f64.ln() / 10.0));
    assert!(close(dense(&x, a::RATIONALE_COUNT), 2.0 / 3.0));
    assert!(close(dense(&x, a::ABSTRACT_SHARE), 0.75));
    assert!(close(dense(&x, a::TITLE_SHARE), 0.25));
    assert!(close(dense(&x, a::INVERSE_RANK), 0.25));
    assert!(close(dense(&x, a::LOG_RANK), 4f64.ln() / 100f64.ln()));
    assert!(close(dense(&x, a::STANCE_TOP), 0.6));
    let weighted = (0.9 * 0.6 + 0.6 * -0.8 + 0.4 * 1.0) / (0.9 + 0.6 + 0.4);
    assert!(close(dense(&x, a::STANCE_WEIGHTED), weighted));
    assert!(close(dense(&x, a::STANCE_BY_RATIONALE), 0.54));
    assert!(close(dense(&x, a::CLAIM_NEGATED), 1.0));
    // No sentence: only the abstract-level and rank features; ranks past 100 saturate.
    let x = pooled_features(&[], &doc, 500, cues);
    assert_eq!(dense(&x, a::MAX_RATIONALE), 0.0);
    assert!(close(dense(&x, a::LOG_RANK), 1.0));
    assert_eq!(x.entries().len(), 6);
}

#[test]
fn rationale_selection_keeps_confident_sentences_in_order() {
    let p = |rationale: f64| SentencePrediction {
        rationale,
        support: 0.5,
    };
    let preds = [p(0.7), p(0.1), p(0.95), p(0.5), p(0.6), p(0.3)];
    assert_eq!(rationale_sentences(&preds, Label::Support), vec![0, 2, 4]);
    assert_eq!(rationale_sentences(&preds, Label::Nei), Vec::<u32>::new());
    let weak = [p(0.1), p(0.3), p(0.2)];
    assert_eq!(rationale_sentences(&weak, Label::Contradict), vec![1]);
    assert_eq!(rationale_sentences(&[], Label::Support), Vec::<u32>::new());
}

#[test]
fn evidence_cap_covers_95_percent_of_the_claims_with_evidence() {
    let cap = |counts: &[usize]| evidence_cap(counts.iter().copied());
    assert_eq!(cap(&[]), None);
    assert_eq!(cap(&[0, 0]), None);
    // 19 of 20 claims with one evidence abstract: 95 % covered by 1. Zeros do not count.
    let mut counts = vec![1; 19];
    counts.extend([3, 0, 0, 0]);
    assert_eq!(cap(&counts), Some(1));
    // 18 of 20: 90 %, so 2 is needed.
    let mut counts = vec![1; 18];
    counts.extend([2, 4]);
    assert_eq!(cap(&counts), Some(2));
    // SciFact train: 468 claims with 1, 20 with 2, 12 with 3 and 5 with 4 evidence abstracts;
    // 1 covers 92.7 %, 2 covers 96.6 %.
    let mut scifact = vec![1; 468];
    scifact.extend([2; 20]);
    scifact.extend([3; 12]);
    scifact.extend([4; 5]);
    assert_eq!(cap(&scifact), Some(2));
    assert_eq!(cap(&[5]), Some(5));
}

#[test]
fn capping_keeps_the_most_confident_evidence_of_a_claim() {
    let row = |doc: &str, label: Label, s: f64, c: f64, rank: u32| RunRow {
        claim_id: ClaimId::parse("1").unwrap(),
        doc_id: doc_id(doc),
        predicted_label: label,
        p_support: Probability::new(s).unwrap(),
        p_contradict: Probability::new(c).unwrap(),
        p_nei: Probability::new(1.0 - s - c).unwrap(),
        rank,
        sentences: if label.is_evidence() { vec![0] } else { vec![] },
    };
    let rows = vec![
        row("a", Label::Support, 0.6, 0.1, 1),
        row("b", Label::Nei, 0.3, 0.3, 2),
        row("c", Label::Contradict, 0.1, 0.8, 3),
        row("d", Label::Support, 0.7, 0.0, 4),
        row("e", Label::Support, 0.7, 0.0, 5),
        row("f", Label::Support, 0.5, 0.0, 6),
    ];
    let labels = |cap: u32| -> Vec<Label> {
        let mut capped = rows.clone();
        cap_evidence(&mut capped, cap);
        for (before, after) in rows.iter().zip(&capped) {
            // Only the label (and with NEI the rationale) changes.
            assert_eq!(
                (
                    before.p_support,
                    before.p_contradict,
                    before.p_nei,
                    before.rank
                ),
                (after.p_support, after.p_contradict, after.p_nei, after.rank)
            );
            assert_eq!(
                after.sentences.is_empty(),
                !after.predicted_label.is_evidence()
            );
        }
        capped.iter().map(|r| r.predicted_label).collect()
    };
    use Label::{Contradict as C, Nei as N, Support as S};
    // Confidence order of the evidence rows: c 0.8, d 0.7 (rank 4) before e 0.7 (rank 5), a 0.6, f 0.5.
    assert_eq!(labels(1), [N, N, C, N, N, N]);
    assert_eq!(labels(2), [N, N, C, S, N, N]);
    assert_eq!(labels(3), [N, N, C, S, S, N]);
    assert_eq!(labels(4), [S, N, C, S, S, N]);
    assert_eq!(labels(5), [S, N, C, S, S, S]);
    assert_eq!(labels(0), [N; 6]);
}

#[test]
fn negative_sampling_excludes_known_documents_and_ignores_order() {
    let retrieved: Vec<DocId> = (1..=10).map(|i| doc_id(&i.to_string())).collect();
    let (gold, cited) = (doc_id("3"), doc_id("7"));
    let exclude: HashSet<&DocId> = [&gold, &cited].into_iter().collect();
    let draw = |docs: &[DocId], seed: u64, count: usize| {
        sample_negatives(docs, &exclude, count, &mut ChaCha8Rng::seed_from_u64(seed))
    };
    let sample = draw(&retrieved, 1, 5);
    assert_eq!(sample.len(), 5);
    assert_eq!(sample.iter().collect::<HashSet<_>>().len(), 5);
    assert!(sample
        .iter()
        .all(|d| retrieved.contains(d) && !exclude.contains(d)));
    assert_eq!(draw(&retrieved, 1, 5), sample);
    let reversed: Vec<DocId> = retrieved.iter().rev().cloned().collect();
    assert_eq!(draw(&reversed, 1, 5), sample);
    let other_seeds: Vec<Vec<DocId>> = (2..6).map(|seed| draw(&retrieved, seed, 5)).collect();
    assert!(other_seeds.iter().any(|s| *s != sample));
    // Asking for more than there are gives all of them.
    let all = draw(&retrieved, 1, 50);
    assert_eq!(all.len(), 8);
    assert!(draw(&retrieved, 1, 0).is_empty());
}

/// A generated corpus: per topic, an evidence (or cited NEI) abstract and distractors that
/// share the topic's words, so BM25 retrieves them as negatives.
struct Toy {
    claims: Vec<Claim>,
    corpus: HashMap<DocId, Document>,
    documents: Vec<Document>,
}

const TOY_TOPICS: usize = 48;

fn toy() -> Toy {
    let mut claims = Vec::new();
    let mut documents = Vec::new();
    for t in 0..TOY_TOPICS {
        let (g, p, c) = (
            format!("gene{t}"),
            format!("protein{t}"),
            format!("tissue{t}"),
        );
        let claim = format!("{g} increases {p} expression in {c}.");
        let evidence_id = format!("{}", 1000 + t);
        let kind = t % 3;
        let finding = match kind {
            0 => format!("We show that {g} increases {p} expression in {c}."),
            1 => format!("We show that {g} decreases {p} expression in {c}."),
            _ => format!("We measured {c} weight in mice."),
        };
        documents.push(document(
            &evidence_id,
            &format!("Study of {c}"),
            &[
                &format!("The {c} is a model organ."),
                "Methods were standard.",
                &finding,
                "Further work is needed.",
            ],
        ));
        for d in 0..3 {
            documents.push(document(
                &format!("{}", 5000 + 10 * t + d),
                &format!("Review {d} of {g}"),
                &[
                    &format!("{g} was sequenced in cohort {d}."),
                    &format!("Samples of {c} and {p} were stored."),
                ],
            ));
        }
        let evidence = match kind {
            0 | 1 => vec![Evidence {
                doc_id: doc_id(&evidence_id),
                label: if kind == 0 {
                    Label::Support
                } else {
                    Label::Contradict
                },
                sentence_sets: vec![vec![2]],
                provenance: None,
                model_ranks: None,
            }],
            _ => Vec::new(),
        };
        claims.push(Claim {
            id: ClaimId::parse(t.to_string()).unwrap(),
            text: claim,
            cited_doc_ids: Some(vec![doc_id(&evidence_id)]),
            evidence,
        });
    }
    let corpus = documents
        .iter()
        .map(|d| (d.doc_id.clone(), d.clone()))
        .collect();
    Toy {
        claims,
        corpus,
        documents,
    }
}

fn toy_index(toy: &Toy) -> (TempDir, Retriever) {
    let dir = tempfile::tempdir().unwrap();
    let retriever = index_documents(dir.path(), &toy.documents).unwrap();
    (dir, retriever)
}

fn toy_config(negatives: u32) -> TrainConfig {
    TrainConfig {
        negatives,
        folds: 3,
        hash_bits: 12,
        epochs: 20,
        ..TrainConfig::default()
    }
}

#[test]
fn gathers_evidence_cited_and_sampled_examples() {
    let toy = toy();
    let (_dir, retriever) = toy_index(&toy);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let examples = gather(&toy.claims, &toy.corpus, &retriever, 2, &mut rng).unwrap();
    let count = |source| {
        examples
            .abstracts
            .iter()
            .filter(|e| e.source == source)
            .count()
    };
    let evidence = toy.claims.iter().map(|c| c.evidence.len()).sum::<usize>();
    assert_eq!(count(Source::Evidence), evidence);
    assert_eq!(count(Source::Cited), TOY_TOPICS - evidence);
    assert_eq!(count(Source::Sampled), 2 * TOY_TOPICS);
    assert_eq!(examples.missing_documents, 0);
    for example in &examples.abstracts {
        let claim = &toy.claims[example.claim];
        let hits = retriever.retrieve(&claim.text, RANK_DEPTH).unwrap();
        let rank = hits
            .iter()
            .find(|h| h.doc_id == example.doc)
            .map_or(RANK_DEPTH as u32 + 1, |h| h.rank);
        assert_eq!(example.rank, rank);
        match example.source {
            Source::Evidence => {
                assert!(example.label.is_evidence());
                assert_eq!(example.rationale.iter().copied().collect::<Vec<_>>(), [2]);
            }
            Source::Cited | Source::Sampled => {
                assert_eq!(example.label, Label::Nei);
                assert!(example.rationale.is_empty());
            }
        }
        if example.source == Source::Sampled {
            assert!(claim.evidence.iter().all(|e| e.doc_id != example.doc));
            assert!(!claim
                .cited_doc_ids
                .iter()
                .flatten()
                .any(|d| *d == example.doc));
        }
    }

    // A rationale past the abstract's end is an error naming the pair; a document missing
    // from the corpus is counted and skipped.
    let mut bad = toy.claims.clone();
    bad[0].evidence[0].sentence_sets = vec![vec![9]];
    let err = gather(&bad, &toy.corpus, &retriever, 0, &mut rng).unwrap_err();
    assert!(
        matches!(
            err,
            TrainedError::RationaleOutOfRange {
                sentence: 9,
                sentences: 4,
                ..
            }
        ),
        "{err}"
    );
    let mut missing = toy.claims.clone();
    missing[1].cited_doc_ids = Some(vec![doc_id("999999")]);
    missing[0].evidence[0].doc_id = doc_id("888888");
    let examples = gather(&missing, &toy.corpus, &retriever, 0, &mut rng).unwrap();
    assert_eq!(examples.missing_documents, 2);
}

fn score_all(
    model: &TrainedModel,
    claims: &[Claim],
    toy: &Toy,
    retriever: &Retriever,
) -> Vec<RunRow> {
    trained_run(model, claims, &toy.corpus, retriever, 10).unwrap()
}

/// Trained on two thirds of the topics, the model labels the other third's abstracts.
#[test]
fn trains_on_a_generated_corpus_and_labels_unseen_claims() {
    let toy = toy();
    let (_dir, retriever) = toy_index(&toy);
    let (seen, unseen) = toy.claims.split_at(2 * TOY_TOPICS / 3);
    let model = train(seen, &toy.corpus, &retriever, toy_config(2)).unwrap();
    let summary = model.summary();
    assert_eq!(summary.claims, seen.len());
    assert_eq!(
        (
            summary.support_pairs,
            summary.contradict_pairs,
            summary.cited_nei_pairs
        ),
        (11, 11, 10)
    );
    assert_eq!(summary.sampled_nei_pairs, 2 * seen.len());
    // Sentences of the evidence and cited abstracts: 4 each; one rationale per evidence.
    assert_eq!(summary.sentence_examples, 4 * 32);
    assert_eq!(summary.rationale_sentences, 22);
    assert_eq!(summary.corpus_documents, toy.documents.len() as u64);
    // The cap: the largest evidence count of the seen claims with evidence, when (as here) at
    // most 5 % of them have more than the rest.
    let mut counts: Vec<usize> = seen
        .iter()
        .map(|c| c.evidence.len())
        .filter(|&n| n > 0)
        .collect();
    counts.sort_unstable();
    let covered = counts[(counts.len() * 95).div_ceil(100) - 1];
    assert_eq!(summary.max_evidence_per_claim as usize, covered);

    let rows = score_all(&model, unseen, &toy, &retriever);
    let retrieved: usize = unseen
        .iter()
        .map(|c| retriever.retrieve(&c.text, 10).unwrap().len())
        .sum();
    assert_eq!(rows.len(), retrieved);
    let mut right = 0;
    for row in &rows {
        let sum = row.p_support.get() + row.p_contradict.get() + row.p_nei.get();
        assert!((sum - 1.0).abs() < 1e-9, "{row:?}");
        let best = [row.p_support, row.p_contradict, row.p_nei]
            .into_iter()
            .map(|p| p.get())
            .fold(0.0, f64::max);
        let p_of_label = match row.predicted_label {
            Label::Support => row.p_support,
            Label::Contradict => row.p_contradict,
            Label::Nei => row.p_nei,
        };
        let confidence = |r: &RunRow| r.p_support.get().max(r.p_contradict.get());
        if p_of_label.get() != best {
            // Capped: NEI although SUPPORT or CONTRADICT is more probable, because as many
            // rows of the claim at least as confident keep their evidence label.
            assert_eq!(row.predicted_label, Label::Nei, "{row:?}");
            let ahead = rows
                .iter()
                .filter(|r| r.claim_id == row.claim_id && r.predicted_label.is_evidence())
                .filter(|r| confidence(r) >= confidence(row))
                .count();
            assert_eq!(ahead, summary.max_evidence_per_claim as usize, "{row:?}");
        }
        assert_eq!(row.sentences.is_empty(), !row.predicted_label.is_evidence());
        let claim = unseen.iter().find(|c| c.id == row.claim_id).unwrap();
        let gold = claim
            .evidence
            .iter()
            .find(|e| e.doc_id == row.doc_id)
            .map_or(Label::Nei, |e| e.label);
        if row.predicted_label == gold {
            right += 1;
        }
        if gold.is_evidence() && row.predicted_label == gold {
            assert_eq!(row.sentences, [2]);
        }
    }
    assert!(right * 10 >= rows.len() * 9, "{right} of {}", rows.len());

    // Same rows after a save and load; the rank is passed through.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.json");
    model.save(&path).unwrap();
    let loaded = TrainedModel::load(&path).unwrap();
    assert_eq!(loaded, model);
    assert_eq!(score_all(&loaded, unseen, &toy, &retriever), rows);
    // A `.gz` name writes it compressed; it loads back the same.
    let gz = dir.path().join("model.json.gz");
    model.save(&gz).unwrap();
    assert_eq!(std::fs::read(&gz).unwrap()[..2], [0x1f, 0x8b]);
    assert!(std::fs::metadata(&gz).unwrap().len() < std::fs::metadata(&path).unwrap().len());
    assert_eq!(TrainedModel::load(&gz).unwrap(), model);
    let doc = &toy.corpus[&doc_id("1040")];
    let row = model.score(&unseen[0].id, &unseen[0].text, doc, 7).unwrap();
    assert_eq!(row.rank, 7);

    // Training is deterministic for a seed.
    assert_eq!(
        train(seen, &toy.corpus, &retriever, toy_config(2)).unwrap(),
        model
    );
}

/// More sampled negatives make the model predict evidence less often.
#[test]
fn more_negatives_predict_evidence_less_often() {
    let toy = toy();
    let (_dir, retriever) = toy_index(&toy);
    let predicted = |negatives: u32| -> f64 {
        let model = train(&toy.claims, &toy.corpus, &retriever, toy_config(negatives)).unwrap();
        score_all(&model, &toy.claims, &toy, &retriever)
            .iter()
            .map(|r| r.p_support.get() + r.p_contradict.get())
            .sum()
    };
    let (none, some, more) = (predicted(0), predicted(1), predicted(3));
    assert!(none > some && some > more, "{none} {some} {more}");
}

#[test]
fn rejects_bad_configurations() {
    let toy = toy();
    let (_dir, retriever) = toy_index(&toy);
    let base = toy_config(1);
    let cases = [
        (TrainConfig { epochs: 0, ..base }, "epochs"),
        (TrainConfig { folds: 1, ..base }, "folds"),
        (
            TrainConfig {
                hash_bits: 30,
                ..base
            },
            "hash_bits",
        ),
        (
            TrainConfig {
                learning_rate: 0.0,
                ..base
            },
            "learning_rate",
        ),
        (
            TrainConfig {
                l2: f64::NAN,
                ..base
            },
            "l2",
        ),
    ];
    for (config, field) in cases {
        let err = train(&toy.claims, &toy.corpus, &retriever, config).unwrap_err();
        assert!(
            matches!(err, TrainedError::Config { field: f, .. } if f == field),
            "{err}"
        );
    }
    // Claims without any evidence cannot train a rationale model.
    let nei_only: Vec<Claim> = toy
        .claims
        .iter()
        .filter(|c| c.evidence.is_empty())
        .cloned()
        .collect();
    let err = train(&nei_only, &toy.corpus, &retriever, base).unwrap_err();
    assert!(matches!(err, TrainedError::NotEnoughData(_)), "{err}");
}

#[test]
fn loading_checks_the_file() {
    let toy = toy();
    let (_dir, retriever) = toy_index(&toy);
    let model = train(&toy.claims, &toy.corpus, &retriever, toy_config(1)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.json");
    model.save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["format"], "claimpool-trained-scorer");
    assert_eq!(json["version"], 2);
    assert!(json["training"]["max_evidence_per_claim"].as_u64().unwrap() >= 1);
    assert_eq!(json["config"]["negatives"], 1);
    assert_eq!(json["training"]["claims"], TOY_TOPICS);

    let load_edited = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut value = json.clone();
        edit(&mut value);
        let edited = dir.path().join("edited.json");
        std::fs::write(&edited, value.to_string()).unwrap();
        TrainedModel::load(&edited).unwrap_err().to_string()
    };
    // A version-1 file (before the evidence cap) is refused by name.
    let err = load_edited(&|v| v["version"] = 1.into());
    assert!(
        err.contains("version 1") && err.contains("edited.json"),
        "{err}"
    );
    let err = load_edited(&|v| v["format"] = "other".into());
    assert!(err.contains("format"), "{err}");
    let err = load_edited(&|v| v["hash_bits"] = 13.into());
    assert!(err.contains("rationale model has"), "{err}");
    let err = load_edited(&|v| v["label"]["nonzero"][0][0] = 1_000_000.into());
    assert!(
        err.contains("label model") && err.contains("out of range"),
        "{err}"
    );
    let err = load_edited(&|v| v["stance"]["classes"] = 3.into());
    assert!(err.contains("stance model has"), "{err}");

    let truncated = dir.path().join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let err = TrainedModel::load(&truncated).unwrap_err();
    assert!(matches!(err, TrainedError::Json { .. }), "{err}");
    let err = TrainedModel::load(&dir.path().join("absent.json")).unwrap_err();
    assert!(matches!(err, TrainedError::Read { .. }), "{err}");
    let err = model
        .save(&dir.path().join("no-such-dir").join("m.json"))
        .unwrap_err();
    assert!(matches!(err, TrainedError::Write { .. }), "{err}");
}

/// Precision, recall, F1 and AP of a run, computed here without `domain::metrics`: a pair is
/// predicted evidence when its label is SUPPORT or CONTRADICT, correct when that is its gold
/// label; the curve ranks pairs by max(p_support, p_contradict), a pair being a hit when the
/// larger of the two is its gold label, and ties enter together.
fn reference_metrics(rows: &[RunRow], claims: &[Claim]) -> [f64; 4] {
    let gold: HashMap<(&ClaimId, &DocId), Label> = claims
        .iter()
        .flat_map(|c| {
            c.evidence
                .iter()
                .map(move |e| ((&c.id, &e.doc_id), e.label))
        })
        .collect();
    let gold_of = |row: &RunRow| gold.get(&(&row.claim_id, &row.doc_id)).copied();
    let predicted = rows
        .iter()
        .filter(|r| r.predicted_label.is_evidence())
        .count();
    let correct = rows
        .iter()
        .filter(|r| r.predicted_label.is_evidence() && gold_of(r) == Some(r.predicted_label))
        .count();
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let (precision, recall) = (ratio(correct, predicted), ratio(correct, gold.len()));
    let f1 = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    let mut by_confidence: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
    for row in rows {
        let (s, c) = (row.p_support.get(), row.p_contradict.get());
        let best = if s >= c {
            Label::Support
        } else {
            Label::Contradict
        };
        // Confidences are non-negative, so their bit patterns sort as the numbers do.
        let entry = by_confidence.entry(s.max(c).to_bits()).or_default();
        entry.0 += 1;
        entry.1 += usize::from(gold_of(row) == Some(best));
    }
    let (mut seen, mut hits, mut ap, mut last_recall) = (0, 0, 0.0, 0.0);
    for (count, hit) in by_confidence.values().rev() {
        seen += count;
        hits += hit;
        let r = ratio(hits, gold.len());
        ap += (r - last_recall) * ratio(hits, seen);
        last_recall = r;
    }
    [precision, recall, f1, ap]
}

fn assert_metrics_agree(rows: &[RunRow], claims: &[Claim]) -> [f64; 4] {
    let m = judge(rows, claims).unwrap();
    let ours = [m.precision, m.recall, m.f1, m.average_precision];
    let reference = reference_metrics(rows, claims);
    for (a, b) in ours.iter().zip(reference) {
        assert!((a - b).abs() < 1e-12, "{ours:?} vs {reference:?}");
    }
    ours
}

#[test]
fn judged_metrics_match_a_direct_computation_on_the_toy_corpus() {
    let toy = toy();
    let (_dir, retriever) = toy_index(&toy);
    let model = train(&toy.claims, &toy.corpus, &retriever, toy_config(1)).unwrap();
    let rows = score_all(&model, &toy.claims, &toy, &retriever);
    let [_, recall, ..] = assert_metrics_agree(&rows, &toy.claims);
    assert!(recall > 0.5, "{recall}");
    let bm25 = bm25_run(&Bm25Scorer::SCIFACT_TRAIN, &toy.claims, &retriever, 10).unwrap();
    assert_metrics_agree(&bm25, &toy.claims);
}

/// On SciFact (skipped when the data is absent): trained on train with R = 0 and R = 20
/// sampled negatives per claim, scored on dev's top 50 BM25 abstracts per claim. More
/// negatives trade recall for precision, as in SciFact-Open, and both models beat the BM25
/// scorer's F1 on the same pairs.
#[test]
fn scifact_negative_sampling_trades_recall_for_precision_and_beats_bm25() {
    let Some(dir) = testdata::shared_data() else {
        return;
    };
    let data = load_scifact(&dir.join("scifact")).unwrap();
    assert_eq!((data.train.len(), data.dev.len()), (809, 300));
    let index = tempfile::tempdir().unwrap();
    let retriever = index_documents(index.path(), &data.documents).unwrap();
    let bm25_rows = bm25_run(
        &Bm25Scorer::SCIFACT_TRAIN,
        &data.dev,
        &retriever,
        EVAL_DEPTH,
    )
    .unwrap();
    let bm25 = assert_metrics_agree(&bm25_rows, &data.dev);
    let mut figures = Vec::new();
    for negatives in [0, 20] {
        let config = TrainConfig {
            negatives,
            ..TrainConfig::default()
        };
        let model = train(&data.train, &data.corpus, &retriever, config).unwrap();
        let summary = model.summary();
        assert_eq!(
            (
                summary.support_pairs,
                summary.contradict_pairs,
                summary.cited_nei_pairs
            ),
            (370, 194, 355)
        );
        // 505 train claims with evidence: 468 with one abstract, 20 with two (96.6 %).
        assert_eq!(summary.max_evidence_per_claim, 2);
        let rows = trained_run(&model, &data.dev, &data.corpus, &retriever, EVAL_DEPTH).unwrap();
        assert_eq!(rows.len(), bm25_rows.len());
        let m = assert_metrics_agree(&rows, &data.dev);
        eprintln!(
            "SciFact dev, R = {negatives}: P {:.3} R {:.3} F1 {:.3} AP {:.3}",
            m[0], m[1], m[2], m[3]
        );
        figures.push(m);
    }
    eprintln!(
        "SciFact dev, BM25 scorer: P {:.3} R {:.3} F1 {:.3} AP {:.3}",
        bm25[0], bm25[1], bm25[2], bm25[3]
    );
    let ([p0, r0, f0, _], [p20, r20, f20, _]) = (figures[0], figures[1]);
    assert!(p20 > p0, "precision R=20 {p20} <= R=0 {p0}");
    assert!(r20 < r0, "recall R=20 {r20} >= R=0 {r0}");
    for (negatives, f1) in [(0, f0), (20, f20)] {
        assert!(f1 > bm25[2], "F1 R={negatives} {f1} <= BM25 {}", bm25[2]);
    }
}
