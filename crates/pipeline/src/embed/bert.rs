//! A BERT encoder (embeddings, then self-attention layers with GELU feed-forward blocks, post
//! layer norm) on candle, for the weight names of Hugging Face's `BertModel` as
//! sentence-transformers saves them (`embeddings.*`, `encoder.layer.N.*`). Inference only: no
//! dropout, no pooler.
//!
//! Written here rather than taken from candle-transformers, whose one crate holds a hundred
//! models and more than doubled the cold compile time of the candle dependencies.

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{embedding, layer_norm, linear, Embedding, LayerNorm, Linear, VarBuilder};
use serde::Deserialize;

/// The fields of a Hugging Face `config.json` the encoder needs.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// The encoder with its weights.
pub struct Bert {
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_size: usize,
    max_positions: usize,
}

impl Bert {
    /// Builds the encoder from weights named as `BertModel` names them.
    pub fn load(vb: VarBuilder<'_>, config: &BertConfig) -> candle_core::Result<Bert> {
        if config.hidden_act != "gelu" {
            candle_core::bail!(
                "hidden_act {:?} is not supported (only \"gelu\")",
                config.hidden_act
            );
        }
        if config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            candle_core::bail!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size,
                config.num_attention_heads
            );
        }
        let h = config.hidden_size;
        let eps = config.layer_norm_eps;
        let e = vb.pp("embeddings");
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let attention = l.pp("attention");
            layers.push(Layer {
                query: linear(h, h, attention.pp("self.query"))?,
                key: linear(h, h, attention.pp("self.key"))?,
                value: linear(h, h, attention.pp("self.value"))?,
                attention_out: linear(h, h, attention.pp("output.dense"))?,
                attention_norm: layer_norm(h, eps, attention.pp("output.LayerNorm"))?,
                intermediate: linear(h, config.intermediate_size, l.pp("intermediate.dense"))?,
                output: linear(config.intermediate_size, h, l.pp("output.dense"))?,
                output_norm: layer_norm(h, eps, l.pp("output.LayerNorm"))?,
            });
        }
        Ok(Bert {
            word: embedding(config.vocab_size, h, e.pp("word_embeddings"))?,
            position: embedding(
                config.max_position_embeddings,
                h,
                e.pp("position_embeddings"),
            )?,
            token_type: embedding(config.type_vocab_size, h, e.pp("token_type_embeddings"))?,
            embedding_norm: layer_norm(h, eps, e.pp("LayerNorm"))?,
            layers,
            heads: config.num_attention_heads,
            head_size: h / config.num_attention_heads,
            max_positions: config.max_position_embeddings,
        })
    }

    /// The longest sequence the position embeddings cover.
    pub fn max_positions(&self) -> usize {
        self.max_positions
    }

    /// Hidden states (batch, tokens, hidden) of `ids` (batch, tokens; u32), every sequence of
    /// token type 0. Sequences of one batch have the same length: there is no padding, so no
    /// attention mask (the embedder batches texts of equal token count; masking a padded batch
    /// cost more in candle's broadcasting than the matrix products it saved).
    pub fn forward(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, tokens) = ids.dims2()?;
        let device = ids.device();
        let positions = Tensor::arange(0u32, tokens as u32, device)?;
        let types = Tensor::zeros((batch, tokens), DType::U32, device)?;
        let x = self
            .word
            .forward(ids)?
            .broadcast_add(&self.position.forward(&positions)?)?
            .add(&self.token_type.forward(&types)?)?;
        let mut x = self.embedding_norm.forward(&x)?;
        for layer in &self.layers {
            x = self.layer(layer, &x)?;
        }
        Ok(x)
    }

    fn layer(&self, layer: &Layer, x: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, tokens, hidden) = x.dims3()?;
        let split = |t: Tensor| {
            t.reshape((batch, tokens, self.heads, self.head_size))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(layer.query.forward(x)?)?;
        let k = split(layer.key.forward(x)?)?;
        let v = split(layer.value.forward(x)?)?;
        let scores = (q.matmul(&k.t()?)? / (self.head_size as f64).sqrt())?;
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((batch, tokens, hidden))?;
        let x = layer
            .attention_norm
            .forward(&(layer.attention_out.forward(&context)? + x)?)?;
        let inner = layer.intermediate.forward(&x)?.gelu_erf()?;
        layer
            .output_norm
            .forward(&(layer.output.forward(&inner)? + &x)?)
    }
}

/// Loads weights from a safetensors file into f32 tensors on the CPU.
pub fn var_builder(weights: &[u8]) -> candle_core::Result<VarBuilder<'static>> {
    let device = Device::Cpu;
    let tensors = candle_core::safetensors::load_buffer(weights, &device)?;
    Ok(VarBuilder::from_tensors(tensors, DType::F32, &device))
}
