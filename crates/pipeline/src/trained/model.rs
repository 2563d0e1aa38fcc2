//! A trained scorer: its three linear models, the corpus statistics they need, and the file it
//! is saved in.

use super::cap::cap_evidence;
use super::error::TrainedError;
use super::idf::DocFreq;
use super::linear::{LinearModel, SavedLinear};
use super::pair::{doc_features, AnalysedDoc, ClaimContext, DocFeatures, FeatureSpace};
use super::pooled::{self, pooled_features, SentencePrediction};
use super::text::TextAnalysers;
use super::train::{TrainConfig, TrainingSummary};
use crate::{Hit, PipelineError, RunRow};
use domain::formats::Document;
use domain::ids::{ClaimId, DocId};
use domain::label::{Label, Probability};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// The label model's classes, in its order: NEI is the reference class.
pub(crate) const LABELS: [Label; 3] = [Label::Nei, Label::Support, Label::Contradict];

/// A sentence is given as rationale when its rationale probability is at least this...
pub const RATIONALE_THRESHOLD: f64 = 0.5;
/// ...keeping at most this many, the most probable (and always the most probable one when the
/// abstract is predicted to be evidence).
pub const MAX_RATIONALE_SENTENCES: usize = 3;

/// What the saved file calls itself.
const FORMAT: &str = "claimpool-trained-scorer";
/// Version of the saved file's layout.
/// 2: the training summary holds `max_evidence_per_claim`.
pub const MODEL_VERSION: u32 = 2;

/// The sentence-level models: is a sentence a rationale, and does it support or contradict.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SentenceModels {
    /// Class 1: the sentence is a rationale.
    pub(crate) rationale: LinearModel,
    /// Class 1: SUPPORT, class 0: CONTRADICT (fitted on rationale sentences only).
    pub(crate) stance: LinearModel,
}

impl SentenceModels {
    pub(crate) fn predict(&self, doc: &DocFeatures) -> Vec<SentencePrediction> {
        doc.sentences
            .iter()
            .map(|x| SentencePrediction {
                rationale: self.rationale.positive(x),
                support: self.stance.positive(x),
            })
            .collect()
    }
}

/// A claim analysed once, to score against many abstracts with [`TrainedModel::score_prepared`].
#[derive(Clone, Debug)]
pub struct PreparedClaim(ClaimContext);

/// A claim/abstract scorer trained on a claims file: see the [module documentation](super).
#[derive(Clone, Debug, PartialEq)]
pub struct TrainedModel {
    pub(crate) config: TrainConfig,
    pub(crate) summary: TrainingSummary,
    pub(crate) space: FeatureSpace,
    pub(crate) df: DocFreq,
    pub(crate) sentences: SentenceModels,
    /// Classes in [`LABELS`] order.
    pub(crate) label: LinearModel,
}

/// The saved file: JSON of this.
#[derive(Serialize, Deserialize)]
struct SavedModel {
    format: String,
    version: u32,
    config: TrainConfig,
    training: TrainingSummary,
    hash_bits: u8,
    idf: DocFreq,
    rationale: SavedLinear,
    stance: SavedLinear,
    label: SavedLinear,
}

impl TrainedModel {
    /// The configuration it was trained with.
    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    /// What it was trained on.
    pub fn summary(&self) -> &TrainingSummary {
        &self.summary
    }

    /// Analyses a claim once, for scoring it against many abstracts.
    pub fn prepare_claim(&self, claim_text: &str) -> PreparedClaim {
        let analysed = TextAnalysers::default().analyse(claim_text);
        PreparedClaim(ClaimContext::new(analysed, &self.df))
    }

    /// Scores one claim/abstract pair; `rank` is the abstract's 1-based retrieval rank for the
    /// claim (a feature of the label model, and passed through to the row).
    pub fn score(
        &self,
        claim_id: &ClaimId,
        claim_text: &str,
        doc: &Document,
        rank: u32,
    ) -> Result<RunRow, PipelineError> {
        self.score_prepared(claim_id, &self.prepare_claim(claim_text), doc, rank)
    }

    /// [`TrainedModel::score`] for a prepared claim.
    pub fn score_prepared(
        &self,
        claim_id: &ClaimId,
        claim: &PreparedClaim,
        doc: &Document,
        rank: u32,
    ) -> Result<RunRow, PipelineError> {
        let analysed = AnalysedDoc::new(&mut TextAnalysers::default(), doc);
        let features = doc_features(self.space, &claim.0, &analysed);
        let predictions = self.sentences.predict(&features);
        let x = pooled_features(&predictions, &features, rank, claim.0.cues());
        let p = self.label.probabilities(&x);
        let probability = |label: Label| {
            let value = LABELS
                .iter()
                .position(|l| *l == label)
                .and_then(|i| p.get(i))
                .copied()
                .unwrap_or(0.0);
            Probability::new(value).map_err(|source| PipelineError::Probability {
                claim_id: claim_id.clone(),
                doc_id: doc.doc_id.clone(),
                source,
            })
        };
        let p_support = probability(Label::Support)?;
        let p_contradict = probability(Label::Contradict)?;
        let p_nei = probability(Label::Nei)?;
        let predicted_label = most_probable(p_support, p_contradict, p_nei);
        Ok(RunRow {
            claim_id: claim_id.clone(),
            doc_id: doc.doc_id.clone(),
            predicted_label,
            p_support,
            p_contradict,
            p_nei,
            rank,
            sentences: rationale_sentences(&predictions, predicted_label),
        })
    }

    /// One row per hit of a claim's ranking, in rank order; hits whose abstract is not in
    /// `corpus` are left out. At most [`TrainingSummary::max_evidence_per_claim`] of them, the
    /// most confident, keep a SUPPORT / CONTRADICT label (see [`cap`](super::cap)).
    pub fn score_hits(
        &self,
        claim_id: &ClaimId,
        claim_text: &str,
        hits: &[Hit],
        corpus: &HashMap<DocId, Document>,
    ) -> Result<Vec<RunRow>, PipelineError> {
        let claim = self.prepare_claim(claim_text);
        let mut rows = hits
            .iter()
            .filter_map(|hit| corpus.get(&hit.doc_id).map(|doc| (hit, doc)))
            .map(|(hit, doc)| self.score_prepared(claim_id, &claim, doc, hit.rank))
            .collect::<Result<Vec<RunRow>, PipelineError>>()?;
        cap_evidence(&mut rows, self.summary.max_evidence_per_claim);
        Ok(rows)
    }

    /// Writes the model to `path` as JSON.
    pub fn save(&self, path: &Path) -> Result<(), TrainedError> {
        let saved = SavedModel {
            format: FORMAT.to_owned(),
            version: MODEL_VERSION,
            config: self.config,
            training: self.summary.clone(),
            hash_bits: self.space.hash_bits(),
            idf: self.df.clone(),
            rationale: self.sentences.rationale.to_saved(),
            stance: self.sentences.stance.to_saved(),
            label: self.label.to_saved(),
        };
        let json = serde_json::to_vec(&saved).map_err(|source| TrainedError::Json {
            path: path.to_path_buf(),
            source,
        })?;
        let bytes = if is_gzip_path(path) {
            use std::io::Write;
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            encoder
                .write_all(&json)
                .and_then(|()| encoder.finish())
                .map_err(|source| TrainedError::Write {
                    path: path.to_path_buf(),
                    source,
                })?
        } else {
            json
        };
        std::fs::write(path, bytes).map_err(|source| TrainedError::Write {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Reads a model written by [`TrainedModel::save`], checking its format, version and that
    /// every weight fits the feature layout.
    /// A file whose name ends in `.gz` is written gzip-compressed; [`TrainedModel::load`] reads
    /// either.
    pub fn load(path: &Path) -> Result<TrainedModel, TrainedError> {
        let bytes = std::fs::read(path).map_err(|source| TrainedError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        TrainedModel::from_bytes(&bytes, path)
    }

    /// Reads a saved model (plain or gzip-compressed JSON) from memory; `path` names it in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<TrainedModel, TrainedError> {
        let unzipped;
        let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(bytes), &mut out)
                .map_err(|source| TrainedError::Read {
                    path: path.to_path_buf(),
                    source,
                })?;
            unzipped = out;
            &unzipped[..]
        } else {
            bytes
        };
        let invalid = |problem: String| TrainedError::Invalid {
            path: path.to_path_buf(),
            problem,
        };
        // The header first, so a file of another version says so rather than failing on a
        // field it renamed.
        #[derive(Deserialize)]
        struct Header {
            format: String,
            version: u32,
        }
        let header: Header =
            serde_json::from_slice(bytes).map_err(|source| TrainedError::Json {
                path: path.to_path_buf(),
                source,
            })?;
        if header.format != FORMAT {
            return Err(invalid(format!(
                "format is {:?}, expected {FORMAT:?}",
                header.format
            )));
        }
        if header.version != MODEL_VERSION {
            return Err(invalid(format!(
                "version {} is not the supported version {MODEL_VERSION}",
                header.version
            )));
        }
        let saved: SavedModel =
            serde_json::from_slice(bytes).map_err(|source| TrainedError::Json {
                path: path.to_path_buf(),
                source,
            })?;
        let space = FeatureSpace::new(saved.hash_bits)
            .ok_or_else(|| invalid(format!("hash_bits {} is out of range", saved.hash_bits)))?;
        let linear = |name: &str, saved: &SavedLinear, dims: usize, classes: usize| {
            let model = LinearModel::from_saved(saved)
                .map_err(|err| invalid(format!("{name} model: {err}")))?;
            if (model.dims(), model.classes()) != (dims, classes) {
                return Err(invalid(format!(
                    "{name} model has {} features and {} classes, expected {dims} and {classes}",
                    model.dims(),
                    model.classes()
                )));
            }
            Ok(model)
        };
        Ok(TrainedModel {
            sentences: SentenceModels {
                rationale: linear("rationale", &saved.rationale, space.dims(), 2)?,
                stance: linear("stance", &saved.stance, space.dims(), 2)?,
            },
            label: linear("label", &saved.label, pooled::DIMS, LABELS.len())?,
            config: saved.config,
            summary: saved.training,
            space,
            df: saved.idf,
        })
    }
}

fn is_gzip_path(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "gz")
}

/// The label with the highest probability; ties go to SUPPORT, then CONTRADICT (as the BM25
/// scorer breaks them).
fn most_probable(support: Probability, contradict: Probability, nei: Probability) -> Label {
    let (label, p) = if support >= contradict {
        (Label::Support, support)
    } else {
        (Label::Contradict, contradict)
    };
    if p >= nei {
        label
    } else {
        Label::Nei
    }
}

/// The rationale given for an abstract predicted `label`: none for NEI; otherwise the sentences
/// with rationale probability ≥ [`RATIONALE_THRESHOLD`], the most probable first, at most
/// [`MAX_RATIONALE_SENTENCES`] and at least one, returned in sentence order.
pub(crate) fn rationale_sentences(predictions: &[SentencePrediction], label: Label) -> Vec<u32> {
    if !label.is_evidence() {
        return Vec::new();
    }
    let mut ranked: Vec<(u32, f64)> = (0u32..)
        .zip(predictions)
        .map(|(i, p)| (i, p.rationale))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut chosen: Vec<u32> = ranked
        .iter()
        .enumerate()
        .take_while(|(k, (_, p))| *k == 0 || *p >= RATIONALE_THRESHOLD)
        .take(MAX_RATIONALE_SENTENCES)
        .map(|(_, (i, _))| *i)
        .collect();
    chosen.sort_unstable();
    chosen
}
