//! BERT-family sentence encoders (all-MiniLM-L6-v2, bge-small, e5-small, gte-small and the
//! like) run on the CPU by candle, from a directory in the sentence-transformers layout:
//!
//! - `config.json`: a BERT (`model_type` "bert", or a `Bert*` architecture);
//! - `tokenizer.json`: its Hugging Face tokenizer;
//! - `model.safetensors`: its weights (f32, f16 or bf16; computed in f32);
//! - `1_Pooling/config.json` (or the pooling module `modules.json` names): mean or CLS pooling;
//! - optional: `modules.json` (Transformer, Pooling and Normalize modules only) and
//!   `sentence_bert_config.json` (its `max_seq_length`).
//!
//! Vectors are always of unit length: the ranking compares them by cosine, which a
//! `Normalize` module does not change.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use serde_json::Value;

use super::{cut, fail, Encoder, SemanticError};

/// How token vectors become one text vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pooling {
    /// The mean of the text's tokens (padding left out).
    Mean,
    /// The first token's (`[CLS]`).
    Cls,
}

/// At most this many padded tokens go through the model at once when embedding many texts.
const BATCH_TOKENS: usize = 4096;
/// At most this many texts per batch.
const BATCH_TEXTS: usize = 64;

/// A BERT encoder with its tokenizer and pooling.
pub(super) struct BertEncoder {
    model: BertModel,
    tokenizer: tokenizers::Tokenizer,
    pooling: Pooling,
    dim: usize,
    pad_id: u32,
    max_tokens: usize,
    weight_bytes: usize,
}

impl std::fmt::Debug for BertEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertEncoder")
            .field("dim", &self.dim)
            .field("pooling", &self.pooling)
            .field("max_tokens", &self.max_tokens)
            .finish()
    }
}

/// The files of a BERT directory, read.
pub(super) struct BertFiles {
    pub(super) config: Vec<u8>,
    pub(super) tokenizer: Vec<u8>,
    pub(super) weights: Vec<u8>,
    pub(super) pooling: Vec<u8>,
    pub(super) modules: Option<Vec<u8>>,
    pub(super) sentence: Option<Vec<u8>>,
}

impl BertFiles {
    /// Reads the files of `dir` (which holds a `config.json`).
    pub(super) fn read(dir: &Path) -> Result<BertFiles, SemanticError> {
        let need = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| {
                fail(format!(
                    "{}: a transformer model needs {name}: cannot read {}: {e}",
                    dir.display(),
                    path.display()
                ))
            })
        };
        let may = |name: &str| std::fs::read(dir.join(name)).ok();
        let modules = may("modules.json");
        let pooling_dir = match &modules {
            Some(m) => pooling_path(m).map_err(|e| fail(format!("{}: {e}", dir.display())))?,
            None => "1_Pooling".to_owned(),
        };
        Ok(BertFiles {
            config: need("config.json")?,
            tokenizer: need("tokenizer.json")?,
            weights: need("model.safetensors")?,
            pooling: need(&format!("{pooling_dir}/config.json"))?,
            modules,
            sentence: may("sentence_bert_config.json"),
        })
    }

    /// Every byte the model is made of, in a fixed order (its identity).
    pub(super) fn parts(&self) -> [&[u8]; 6] {
        [
            &self.config,
            &self.tokenizer,
            &self.weights,
            &self.pooling,
            self.modules.as_deref().unwrap_or_default(),
            self.sentence.as_deref().unwrap_or_default(),
        ]
    }
}

/// The pooling module's directory in `modules.json`; every module must be one this encoder
/// runs.
fn pooling_path(modules: &[u8]) -> Result<String, String> {
    let modules: Value =
        serde_json::from_slice(modules).map_err(|e| format!("modules.json is not JSON: {e}"))?;
    let Some(list) = modules.as_array() else {
        return Err("modules.json is not a list of modules".into());
    };
    let mut pooling = None;
    for m in list {
        let kind = m.get("type").and_then(Value::as_str).unwrap_or_default();
        let short = kind.rsplit('.').next().unwrap_or_default();
        match short {
            "Transformer" | "Normalize" => {}
            "Pooling" => {
                let path = m.get("path").and_then(Value::as_str).unwrap_or("1_Pooling");
                if path.split(['/', '\\']).any(|p| p == ".." || p.is_empty()) {
                    return Err(format!(
                        "modules.json: the pooling path {path:?} is refused"
                    ));
                }
                pooling = Some(path.to_owned());
            }
            _ => {
                return Err(format!(
                    "modules.json: the module {kind:?} is not supported (Transformer, Pooling \
                     and Normalize are)"
                ))
            }
        }
    }
    pooling.ok_or_else(|| "modules.json names no Pooling module".into())
}

/// The pooling a sentence-transformers pooling config asks for.
pub(super) fn read_pooling(json: &[u8], hidden: usize) -> Result<Pooling, String> {
    let config: Value =
        serde_json::from_slice(json).map_err(|e| format!("the pooling config is not JSON: {e}"))?;
    let Some(config) = config.as_object() else {
        return Err("the pooling config is not a JSON object".into());
    };
    let on = |key: &str| config.get(key).and_then(Value::as_bool) == Some(true);
    let others = [
        "pooling_mode_max_tokens",
        "pooling_mode_mean_sqrt_len_tokens",
        "pooling_mode_weightedmean_tokens",
        "pooling_mode_lasttoken",
    ];
    if let Some(other) = others.iter().find(|k| on(k)) {
        return Err(format!(
            "the pooling config asks for {other}; mean and CLS pooling are supported"
        ));
    }
    if let Some(d) = config
        .get("word_embedding_dimension")
        .and_then(Value::as_u64)
    {
        if d as usize != hidden {
            return Err(format!(
                "the pooling config is for {d} dimensions; the model has {hidden}"
            ));
        }
    }
    match (on("pooling_mode_mean_tokens"), on("pooling_mode_cls_token")) {
        (true, false) => Ok(Pooling::Mean),
        (false, true) => Ok(Pooling::Cls),
        (true, true) => Err("the pooling config asks for mean and CLS pooling at once".into()),
        (false, false) => Err("the pooling config asks for no pooling mode".into()),
    }
}

/// The BERT config of `config.json`, refused with a reason when it is not a BERT.
fn read_config(json: &[u8]) -> Result<Config, String> {
    let value: Value =
        serde_json::from_slice(json).map_err(|e| format!("config.json is not JSON: {e}"))?;
    let model_type = value.get("model_type").and_then(Value::as_str);
    let bert_architecture = value
        .get("architectures")
        .and_then(Value::as_array)
        .is_some_and(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .any(|a| a.starts_with("Bert"))
        });
    match model_type {
        Some("bert") => {}
        None if bert_architecture => {}
        Some(other) => {
            return Err(format!(
                "config.json: model_type {other:?} is not supported (BERT-family models, \
                 model_type \"bert\", are)"
            ))
        }
        None => {
            return Err(
                "config.json names no model_type and no Bert architecture: not a BERT".into(),
            )
        }
    }
    if let Some(kind) = value.get("position_embedding_type").and_then(Value::as_str) {
        if kind != "absolute" {
            return Err(format!(
                "config.json: position_embedding_type {kind:?} is not supported (absolute is)"
            ));
        }
    }
    let config: Config = serde_json::from_value(value)
        .map_err(|e| format!("config.json is not a BERT config: {e}"))?;
    if config.hidden_size == 0
        || config.num_attention_heads == 0
        || !config
            .hidden_size
            .is_multiple_of(config.num_attention_heads)
    {
        return Err(format!(
            "config.json: hidden_size {} is not a multiple of num_attention_heads {}",
            config.hidden_size, config.num_attention_heads
        ));
    }
    Ok(config)
}

impl BertEncoder {
    /// The encoder of a directory's files.
    pub(super) fn from_files(files: &BertFiles) -> Result<BertEncoder, SemanticError> {
        let config = read_config(&files.config).map_err(fail)?;
        let pooling = read_pooling(&files.pooling, config.hidden_size).map_err(fail)?;
        if let Some(m) = &files.modules {
            pooling_path(m).map_err(fail)?;
        }
        let mut max_tokens = config.max_position_embeddings;
        if let Some(s) = &files.sentence {
            let s: Value = serde_json::from_slice(s)
                .map_err(|e| fail(format!("sentence_bert_config.json is not JSON: {e}")))?;
            if let Some(n) = s.get("max_seq_length").and_then(Value::as_u64) {
                max_tokens = max_tokens.min(n as usize);
            }
        }
        if max_tokens < 2 {
            return Err(fail(format!("the model takes {max_tokens} tokens at most")));
        }
        let mut tokenizer = tokenizers::Tokenizer::from_bytes(&files.tokenizer)
            .map_err(|e| fail(format!("cannot load tokenizer.json: {e}")))?;
        // Batches are padded here, with an attention mask; a text longer than the model takes
        // is cut, as sentence-transformers cuts it.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: max_tokens,
                ..Default::default()
            }))
            .map_err(|e| fail(format!("cannot load tokenizer.json: {e}")))?;
        let vocab = tokenizer.get_vocab(true);
        let largest = vocab.values().copied().max().unwrap_or(0) as usize;
        if largest >= config.vocab_size {
            return Err(fail(format!(
                "the tokenizer has token id {largest} but the model has {} tokens",
                config.vocab_size
            )));
        }
        // Padding is masked out, so any id the embedding table has will do; one past it
        // would fail every padded batch.
        let pad_id = tokenizer
            .token_to_id("[PAD]")
            .unwrap_or(config.pad_token_id as u32);
        let pad_id = if (pad_id as usize) < config.vocab_size {
            pad_id
        } else {
            0
        };
        let device = Device::Cpu;
        let vb = VarBuilder::from_slice_safetensors(&files.weights, DType::F32, &device)
            .map_err(|e| fail(format!("model.safetensors cannot be read: {e}")))?;
        let model = BertModel::load(vb, &config).map_err(|e| {
            fail(format!(
                "model.safetensors does not hold the BERT config.json describes: {e}"
            ))
        })?;
        let encoder = BertEncoder {
            model,
            tokenizer,
            pooling,
            dim: config.hidden_size,
            pad_id,
            max_tokens,
            weight_bytes: bert_parameters(&config) * std::mem::size_of::<f32>(),
        };
        // One pass now: a model whose weights load but do not run is refused here, not at the
        // first query.
        encoder
            .forward(&[encoder.encode("a").map_err(fail)?])
            .map_err(|e| fail(format!("the model does not run: {e}")))?;
        Ok(encoder)
    }

    fn encode(&self, text: &str) -> Result<tokenizers::Encoding, String> {
        self.tokenizer
            .encode_fast(cut(text), true)
            .map_err(|e| format!("cannot tokenize: {e}"))
    }

    /// The unit vectors of `encodings`, padded into one batch.
    fn forward(&self, encodings: &[tokenizers::Encoding]) -> candle_core::Result<Vec<Vec<f32>>> {
        let batch = encodings.len();
        let len = encodings.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(batch * len);
        let mut types = Vec::with_capacity(batch * len);
        let mut mask = Vec::with_capacity(batch * len);
        for e in encodings {
            let pad = len - e.len();
            ids.extend_from_slice(e.get_ids());
            ids.extend(std::iter::repeat_n(self.pad_id, pad));
            types.extend_from_slice(e.get_type_ids());
            types.extend(std::iter::repeat_n(0u32, pad));
            mask.extend(std::iter::repeat_n(1u32, e.len()));
            mask.extend(std::iter::repeat_n(0u32, pad));
        }
        let device = &self.model.device;
        let ids = Tensor::from_vec(ids, (batch, len), device)?;
        let types = Tensor::from_vec(types, (batch, len), device)?;
        let mask = Tensor::from_vec(mask, (batch, len), device)?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        let pooled = match self.pooling {
            Pooling::Cls => hidden.narrow(1, 0, 1)?.squeeze(1)?,
            Pooling::Mean => {
                let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                let sum = hidden.broadcast_mul(&m)?.sum(1)?;
                sum.broadcast_div(&m.sum(1)?)?
            }
        };
        let rows = pooled.to_vec2::<f32>()?;
        Ok(rows.into_iter().map(unit).collect())
    }

    /// Whether `e` holds any token of the text (not only the special ones).
    fn has_text(e: &tokenizers::Encoding) -> bool {
        e.get_special_tokens_mask().contains(&0)
    }
}

/// `v` at unit length; empty when it has none.
fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !norm.is_finite() || norm == 0.0 {
        return Vec::new();
    }
    for x in &mut v {
        *x /= norm;
    }
    v
}

/// The number of weights of a BERT of `c` (the memory the model holds, in f32).
fn bert_parameters(c: &Config) -> usize {
    let h = c.hidden_size;
    let embeddings = (c.vocab_size + c.max_position_embeddings + c.type_vocab_size) * h + 2 * h;
    let layer = 4 * (h * h + h) + 2 * (h * c.intermediate_size) + c.intermediate_size + h + 4 * h;
    embeddings + c.num_hidden_layers * layer
}

impl Encoder for BertEncoder {
    fn kind(&self) -> &'static str {
        "bert"
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let e = self.encode(text).ok()?;
        if !Self::has_text(&e) {
            return None;
        }
        match self.forward(std::slice::from_ref(&e)) {
            Ok(mut v) => v.pop().filter(|v| !v.is_empty()),
            Err(err) => {
                tracing::warn!(error = %err, "the transformer model failed on a text");
                None
            }
        }
    }

    /// Texts of about the same length are batched together, so that little is padding.
    fn embed_all(&self, texts: &[String]) -> Vec<Option<Vec<f32>>> {
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        let encodings: Vec<Option<tokenizers::Encoding>> = texts
            .iter()
            .map(|t| self.encode(t).ok().filter(Self::has_text))
            .collect();
        let mut order: Vec<usize> = (0..texts.len())
            .filter(|&i| encodings[i].is_some())
            .collect();
        order.sort_by_key(|&i| encodings[i].as_ref().map_or(0, |e| e.len()));
        let mut at = 0;
        while at < order.len() {
            // Sorted by length: the batch's last text is its longest.
            let mut end = at + 1;
            while end < order.len() && end - at < BATCH_TEXTS {
                let longest = encodings[order[end]].as_ref().map_or(0, |e| e.len());
                if longest * (end + 1 - at) > BATCH_TOKENS {
                    break;
                }
                end += 1;
            }
            let batch: Vec<tokenizers::Encoding> = order[at..end]
                .iter()
                .filter_map(|&i| encodings[i].clone())
                .collect();
            match self.forward(&batch) {
                Ok(vectors) => {
                    for (&i, v) in order[at..end].iter().zip(vectors) {
                        out[i] = Some(v).filter(|v| !v.is_empty());
                    }
                }
                Err(err) => {
                    tracing::warn!(error = %err, texts = batch.len(), "the transformer model failed on a batch")
                }
            }
            at = end;
        }
        out
    }

    fn approx_heap_bytes(&self) -> usize {
        self.weight_bytes
    }
}
