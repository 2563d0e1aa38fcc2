//! Training: examples, cross-fitted sentence models, then the label model.

use super::cap::evidence_cap;
use super::error::TrainedError;
use super::examples::{gather, AbstractExample, Source};
use super::idf::DocFreq;
use super::linear::{Example, FitSettings, LinearError, LinearModel};
use super::model::{SentenceModels, TrainedModel, LABELS};
use super::pair::{doc_features, AnalysedDoc, ClaimContext, FeatureSpace, HASH_BITS};
use super::parallel::map_in_parallel;
use super::pooled::{self, pooled_features};
use super::text::TextAnalysers;
use crate::Retriever;
use domain::formats::{Claim, Document};
use domain::ids::DocId;
use domain::label::Label;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// How to train a model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// NEI abstracts sampled per claim from its top
    /// [`NEGATIVE_DEPTH`](super::examples::NEGATIVE_DEPTH) BM25 abstracts, besides the gold
    /// evidence and the cited non-evidence abstracts (SciFact-Open's ratio R).
    pub negatives: u32,
    /// Seeds the negative sampling, the folds and the example order.
    pub seed: u64,
    /// Passes over the examples of each model (at least 1).
    pub epochs: u32,
    /// The sentence models hash their sparse features into `2^hash_bits` buckets (8 to 24).
    pub hash_bits: u8,
    /// The label model learns from sentence predictions made by sentence models that did not
    /// see the claim: the claims are split into this many folds (at least 2).
    pub folds: u32,
    /// AdaGrad's base step (positive).
    pub learning_rate: f64,
    /// L2 penalty per example (non-negative).
    pub l2: f64,
}

impl Default for TrainConfig {
    /// R = 10 (the best F1 on SciFact dev of R = 0, 10 and 20), 10 epochs, 2^18 buckets, 5 folds.
    fn default() -> Self {
        TrainConfig {
            negatives: 10,
            seed: 2022,
            epochs: 10,
            hash_bits: 18,
            folds: 5,
            learning_rate: 0.1,
            l2: 1e-4,
        }
    }
}

impl TrainConfig {
    fn check(&self) -> Result<FeatureSpace, TrainedError> {
        let bad = |field: &'static str, problem: String| TrainedError::Config { field, problem };
        if self.epochs == 0 {
            return Err(bad("epochs", "must be at least 1".to_owned()));
        }
        if self.folds < 2 {
            return Err(bad(
                "folds",
                format!("is {}, must be at least 2", self.folds),
            ));
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return Err(bad(
                "learning_rate",
                format!("is {}, must be positive", self.learning_rate),
            ));
        }
        if !(self.l2.is_finite() && self.l2 >= 0.0) {
            return Err(bad("l2", format!("is {}, must be non-negative", self.l2)));
        }
        FeatureSpace::new(self.hash_bits).ok_or_else(|| {
            bad(
                "hash_bits",
                format!(
                    "is {}, must be {} to {}",
                    self.hash_bits,
                    HASH_BITS.start(),
                    HASH_BITS.end()
                ),
            )
        })
    }

    fn fit_settings(&self, salt: u64) -> FitSettings {
        FitSettings {
            epochs: self.epochs,
            learning_rate: self.learning_rate,
            l2: self.l2,
            seed: self.seed ^ salt,
        }
    }
}

/// What a model was trained on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainingSummary {
    /// Training claims (with or without evidence).
    pub claims: usize,
    /// Documents of the corpus (the idf statistics count them all).
    pub corpus_documents: u64,
    /// Terms whose document frequency the model keeps.
    pub vocabulary: usize,
    /// Claim/abstract examples of each kind.
    pub support_pairs: usize,
    pub contradict_pairs: usize,
    pub cited_nei_pairs: usize,
    pub sampled_nei_pairs: usize,
    /// Sentences the rationale model learned from (those of the evidence and cited abstracts),
    /// and how many of them are gold rationales.
    pub sentence_examples: usize,
    pub rationale_sentences: usize,
    /// Evidence or cited abstracts missing from the corpus, left out.
    pub missing_documents: usize,
    /// At most this many abstracts of one claim are predicted evidence: see
    /// [`cap`](super::cap).
    pub max_evidence_per_claim: u32,
}

/// Salts of the seeds of the fits, so each fit shuffles differently.
const RATIONALE_SALT: u64 = 0x5241_5449;
const STANCE_SALT: u64 = 0x5354_414e;
const LABEL_SALT: u64 = 0x4c41_4245;

/// Trains a model on `claims` (with gold evidence, as SciFact train has) over `corpus`, using
/// `retriever` (an index of the same corpus) to find each claim's BM25 negatives.
///
/// 1. Examples: each claim's evidence abstracts (SUPPORT/CONTRADICT), its cited abstracts that
///    are not evidence (NEI), and `config.negatives` NEI abstracts sampled from its top BM25
///    abstracts that are neither.
/// 2. Sentence models, on the sentences of the evidence and cited abstracts: a rationale model
///    (gold rationale sentences against the rest) and a stance model (SUPPORT against
///    CONTRADICT rationale sentences).
/// 3. The label model (NEI / SUPPORT / CONTRADICT) on every example's pooled sentence
///    predictions, each made by sentence models fitted without the example's claim (cross-
///    fitting over `config.folds` folds), so the label model sees predictions as unseen claims
///    get them. The sentence models kept are fitted on all claims.
pub fn train(
    claims: &[Claim],
    corpus: &HashMap<DocId, Document>,
    retriever: &Retriever,
    config: TrainConfig,
) -> Result<TrainedModel, TrainedError> {
    let space = config.check()?;
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let mut analysers = TextAnalysers::default();
    let df = DocFreq::count(corpus.values().map(|doc| {
        let mut terms = analysers.analyse(&doc.title).terms;
        for sentence in &doc.sentences {
            terms.extend(analysers.analyse(sentence).terms);
        }
        terms
    }));
    let examples = gather(
        claims,
        corpus,
        retriever,
        config.negatives as usize,
        &mut rng,
    )?;
    let contexts: Vec<ClaimContext> = claims
        .iter()
        .map(|claim| ClaimContext::new(analysers.analyse(&claim.text), &df))
        .collect();
    let folds = assign_folds(claims.len(), config.folds as usize, &mut rng);
    let by_doc = group_by_doc(&examples.abstracts);

    // Sentence examples, from the evidence and cited abstracts, tagged with their claim's fold.
    let mut rationale_examples: Vec<(usize, Example)> = Vec::new();
    let mut stance_examples: Vec<(usize, Example)> = Vec::new();
    for (doc_id, indices) in &by_doc {
        let labelled: Vec<&AbstractExample> = indices
            .iter()
            .map(|&i| &examples.abstracts[i])
            .filter(|e| e.source != Source::Sampled)
            .collect();
        let Some(doc) = labelled.first().and_then(|_| corpus.get(*doc_id)) else {
            continue;
        };
        let analysed = AnalysedDoc::new(&mut analysers, doc);
        for example in labelled {
            let fold = folds[example.claim];
            let features = doc_features(space, &contexts[example.claim], &analysed);
            for (index, x) in (0u32..).zip(features.sentences) {
                let is_rationale = example.rationale.contains(&index);
                if is_rationale {
                    let class = usize::from(example.label == Label::Support);
                    stance_examples.push((fold, (x.clone(), class)));
                }
                rationale_examples.push((fold, (x, usize::from(is_rationale))));
            }
        }
    }
    let rationale_sentences = rationale_examples
        .iter()
        .filter(|(_, (_, class))| *class == 1)
        .count();
    if rationale_sentences == 0 || stance_examples.is_empty() {
        return Err(TrainedError::NotEnoughData(
            "the claims have no gold rationale sentence in the corpus".to_owned(),
        ));
    }
    // One pair of sentence models per held-out fold, and (last) one on every claim.
    let held_out: Vec<Option<usize>> = (0..config.folds as usize).map(Some).chain([None]).collect();
    let mut fitted = map_in_parallel(&held_out, |held_out| {
        Ok(SentenceModels {
            rationale: LinearModel::fit(
                &training_part(&rationale_examples, *held_out),
                space.dims(),
                2,
                config.fit_settings(RATIONALE_SALT),
            )?,
            stance: LinearModel::fit(
                &training_part(&stance_examples, *held_out),
                space.dims(),
                2,
                config.fit_settings(STANCE_SALT),
            )?,
        })
    })
    .into_iter()
    .collect::<Result<Vec<SentenceModels>, LinearError>>()
    .map_err(|err| TrainedError::NotEnoughData(err.to_string()))?;
    let sentences = fitted
        .pop()
        .ok_or_else(|| TrainedError::NotEnoughData("no sentence model was fitted".to_owned()))?;
    let fold_models = fitted;

    // Label examples: every abstract, with its claim's held-out sentence predictions.
    let groups: Vec<(&DocId, Vec<usize>)> = by_doc.into_iter().collect();
    let per_doc = map_in_parallel(&groups, |(doc_id, indices)| {
        let Some(doc) = corpus.get(*doc_id) else {
            return Vec::new();
        };
        let analysed = AnalysedDoc::new(&mut TextAnalysers::default(), doc);
        indices
            .iter()
            .map(|&i| {
                let example = &examples.abstracts[i];
                let claim = &contexts[example.claim];
                let features = doc_features(space, claim, &analysed);
                let predictions = fold_models[folds[example.claim]].predict(&features);
                let x = pooled_features(&predictions, &features, example.rank, claim.cues());
                let class = LABELS.iter().position(|l| *l == example.label).unwrap_or(0);
                (x, class)
            })
            .collect::<Vec<Example>>()
    });
    let label_examples: Vec<Example> = per_doc.into_iter().flatten().collect();
    let label = LinearModel::fit(
        &label_examples.iter().collect::<Vec<_>>(),
        pooled::DIMS,
        LABELS.len(),
        config.fit_settings(LABEL_SALT),
    )
    .map_err(|err| TrainedError::NotEnoughData(err.to_string()))?;

    let count = |pred: &dyn Fn(&AbstractExample) -> bool| {
        examples.abstracts.iter().filter(|e| pred(e)).count()
    };
    let mut evidence_per_claim = vec![0usize; claims.len()];
    for example in examples
        .abstracts
        .iter()
        .filter(|e| e.source == Source::Evidence)
    {
        evidence_per_claim[example.claim] += 1;
    }
    let max_evidence_per_claim = evidence_cap(evidence_per_claim).ok_or_else(|| {
        TrainedError::NotEnoughData("no claim has an evidence abstract in the corpus".to_owned())
    })?;
    let summary = TrainingSummary {
        claims: claims.len(),
        corpus_documents: df.documents(),
        vocabulary: df.terms(),
        support_pairs: count(&|e| e.label == Label::Support),
        contradict_pairs: count(&|e| e.label == Label::Contradict),
        cited_nei_pairs: count(&|e| e.source == Source::Cited),
        sampled_nei_pairs: count(&|e| e.source == Source::Sampled),
        sentence_examples: rationale_examples.len(),
        rationale_sentences,
        missing_documents: examples.missing_documents,
        max_evidence_per_claim,
    };
    Ok(TrainedModel {
        config,
        summary,
        space,
        df,
        sentences,
        label,
    })
}

/// The examples of fold-tagged `set` outside the fold `held_out` (all of them for `None`).
fn training_part(set: &[(usize, Example)], held_out: Option<usize>) -> Vec<&Example> {
    set.iter()
        .filter(|(fold, _)| Some(*fold) != held_out)
        .map(|(_, example)| example)
        .collect()
}

/// The fold of each of `n` claims: a seeded shuffle dealt round-robin into `folds` folds.
fn assign_folds(n: usize, folds: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(rng);
    let mut fold = vec![0; n];
    for (position, claim) in order.into_iter().enumerate() {
        fold[claim] = position % folds;
    }
    fold
}

/// Example indices by document (doc id order), so each abstract is analysed once per pass.
fn group_by_doc(examples: &[AbstractExample]) -> BTreeMap<&DocId, Vec<usize>> {
    let mut by_doc: BTreeMap<&DocId, Vec<usize>> = BTreeMap::new();
    for (i, example) in examples.iter().enumerate() {
        by_doc.entry(&example.doc).or_default().push(i);
    }
    by_doc
}
