//! Semantic ranking for `tool_search` (feature `semantic`): a static embedding model, one
//! vector per token of its tokenizer, averaged over the tokens of a text and scaled to unit
//! length. A query and a tool are then as close as the cosine of their vectors, which finds
//! a tool described as "astrology services" for "my horoscope for today", where no word is
//! shared.
//!
//! The model is not part of disco: [`SemanticModel::load`] reads it from a directory holding
//! one `*.safetensors` file (a single 2-D tensor, vocabulary x dimensions, in f32, f16 or
//! bf16) and one Hugging Face tokenizer file (`*.json` with "tokenizer" in its name). The
//! model the evaluation uses, WordLlama's `l2_supercat_256` (MIT), ships inside the `wordllama`
//! wheel on PyPI; tests/corpus/search/README.md says how to unpack it.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

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

/// A static embedding model: a tokenizer and one vector per token.
pub struct SemanticModel {
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

impl fmt::Debug for SemanticModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SemanticModel")
            .field("vocab", &self.vocab)
            .field("dim", &self.dim)
            .finish()
    }
}

impl SemanticModel {
    /// Loads the model in `dir`: its one `*.safetensors` file and its one tokenizer file
    /// (`*.json` with "tokenizer" in its name).
    pub fn load(dir: impl AsRef<Path>) -> Result<SemanticModel, SemanticError> {
        let dir = dir.as_ref();
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
        SemanticModel::from_files(&weights, &tokenizer)
    }

    /// Loads a model from its weights (safetensors) and tokenizer (Hugging Face JSON) files.
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

    /// A model from the bytes of its weights (safetensors) and of its tokenizer (Hugging Face
    /// JSON).
    pub fn from_bytes(weights: &[u8], tokenizer: &[u8]) -> Result<SemanticModel, SemanticError> {
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
        Ok(SemanticModel {
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

    /// [`SemanticModel::embed`] of a text already cut to [`MAX_TEXT_CHARS`].
    fn embed_whole(&self, text: &str) -> Option<Vec<f32>> {
        let encoding = self.tokenizer.encode_fast(text, false).ok()?;
        self.mean(encoding.get_ids())
    }

    /// [`SemanticModel::embed`], tokenizing each distinct space-separated piece once per
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

    /// [`SemanticModel::embed`] of every text, in order, spread over the machine's cores.
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

/// The texts' pieces tokenized so far (by [`SemanticModel::embed_all`], per thread).
#[derive(Default)]
struct Pieces<'t> {
    /// Each piece's ids, a range of `store`: of pieces that start a text, and of the others.
    leading: HashMap<&'t str, std::ops::Range<usize>>,
    following: HashMap<&'t str, std::ops::Range<usize>>,
    store: Vec<u32>,
    /// The current text's ids.
    ids: Vec<u32>,
}

/// `text` cut to [`MAX_TEXT_CHARS`].
fn cut(text: &str) -> &str {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}

/// Whether a text's token ids are those of its space-separated pieces (see
/// [`SemanticModel::piece_ids`]) tokenized one by one, for every text; if so, the contents of
/// the tokenizer's added tokens (texts holding one are tokenized whole).
///
/// It holds for the tokenizers of Llama and its kin (WordLlama's among them), where the whole
/// text is a single byte-pair-encoded word: the normalizer only puts "▁" in front and turns
/// each space into "▁", nothing splits the text before the merges, and no token of the
/// vocabulary holds a "▁" after another character. Texts are split only at a space after a
/// character that is neither a space nor a "▁" (texts holding a "▁" are tokenized whole), so
/// every split is a non-"▁" character followed by "▁". No merge can join the two sides of such
/// a pair, and each side's merges happen as they would alone (the
/// merge order within a side is the same). Unknown characters fall back to bytes or to the
/// unknown token (which must exist, or they would be dropped), neither of which joins a "▁",
/// itself a token. Merges are not skipped (`ignore_merges`). Any other shape of tokenizer
/// tokenizes whole texts.
fn pieces_tokenize_alone(
    tokenizer: &tokenizers::Tokenizer,
    tokens: &HashMap<String, u32>,
) -> Option<Vec<String>> {
    let normalizer = serde_json::json!({"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "\u{2581}"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"}
    ]});
    let tokenizers::models::ModelWrapper::BPE(bpe) = tokenizer.get_model() else {
        return None;
    };
    if serde_json::to_value(tokenizer.get_normalizer()?).ok()? != normalizer
        || tokenizer.get_pre_tokenizer().is_some()
        || bpe.dropout.is_some()
        || bpe.continuing_subword_prefix.is_some()
        || bpe.end_of_word_suffix.is_some()
        // Looking a whole sequence up before merging would find a piece's token that the
        // whole text, never in the vocabulary, cannot have.
        || bpe.ignore_merges
    {
        return None;
    }
    // Without an unknown token, a character neither known nor spelled in bytes is dropped,
    // which could leave a piece's "▁" to pair with the next piece's.
    let unknown = bpe.unk_token.as_deref()?;
    if !tokens.contains_key("\u{2581}") || !tokens.contains_key(unknown) {
        return None;
    }
    let joins = |token: &str| {
        let mut chars = token.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\u{2581}' && chars.peek() == Some(&'\u{2581}') {
                return true;
            }
        }
        false
    };
    if tokens.keys().any(|t| joins(t)) {
        return None;
    }
    let mut added = Vec::new();
    for token in tokenizer.get_added_tokens_decoder().into_values() {
        if token.content.is_empty() || token.content.contains([' ', '\u{2581}']) {
            return None;
        }
        added.push(token.content);
    }
    added.sort();
    Some(added)
}

/// The one 2-D tensor of a safetensors file, as f32, with its shape.
fn read_table(bytes: &[u8]) -> Result<(Vec<f32>, usize, usize), String> {
    use safetensors::{Dtype, SafeTensors};
    let file =
        SafeTensors::deserialize(bytes).map_err(|e| format!("not a safetensors file: {e}"))?;
    let names = file.names();
    let name = match names.as_slice() {
        [one] => one.to_string(),
        _ => {
            return Err(format!(
                "want exactly one tensor (the token vectors), found {}",
                names.len()
            ))
        }
    };
    let tensor = file.tensor(&name).map_err(|e| e.to_string())?;
    let [vocab, dim] = tensor.shape() else {
        return Err(format!(
            "tensor `{name}` has shape {:?}; want vocabulary x dimensions",
            tensor.shape()
        ));
    };
    let (vocab, dim) = (*vocab, *dim);
    if vocab == 0 || dim == 0 {
        return Err(format!("tensor `{name}` is empty"));
    }
    let data = tensor.data();
    let table: Vec<f32> = match tensor.dtype() {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        other => {
            return Err(format!(
                "tensor `{name}` holds {other:?}; want f32, f16 or bf16"
            ))
        }
    };
    if table.len() != vocab * dim {
        return Err(format!(
            "tensor `{name}` holds {} values, not {vocab} x {dim}",
            table.len()
        ));
    }
    if table.iter().any(|v| !v.is_finite()) {
        return Err(format!("tensor `{name}` holds values that are not finite"));
    }
    Ok((table, vocab, dim))
}

/// A safetensors file holding one tensor `t` (tests).
#[cfg(test)]
pub(crate) fn tensor_file(dtype: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let header = format!(
        r#"{{"t":{{"dtype":"{dtype}","shape":{shape:?},"data_offsets":[0,{}]}}}}"#,
        data.len()
    );
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// A model over whole lowercase words (tests): `words[i]` has the vector `vectors[i]`.
#[cfg(test)]
pub(crate) fn word_model(words: &[&str], vectors: &[&[f32]]) -> SemanticModel {
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
    SemanticModel::from_bytes(&weights, tokenizer.to_string().as_bytes()).expect("a test model")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_models_average_and_normalise() {
        let m = word_model(
            &["<unk>", "sun", "moon"],
            &[&[0.0, 0.0], &[3.0, 0.0], &[0.0, 1.0]],
        );
        assert_eq!(m.embed("SUN"), Some(vec![1.0, 0.0]));
        // The mean of (3, 0) and (0, 1), at unit length: (3, 1) / sqrt(10).
        let both = m.embed("sun moon").unwrap();
        let r = 10f32.sqrt();
        assert!((both[0] - 3.0 / r).abs() < 1e-6 && (both[1] - 1.0 / r).abs() < 1e-6);
        assert_eq!(m.embed("   "), None);
        // Unknown words map to the unknown token, whose vector is zero: no direction.
        assert_eq!(m.embed("stars"), None);
        let texts: Vec<String> = (0..300)
            .map(|i| ["sun", "moon", "sun moon", "stars"][i % 4].to_string())
            .collect();
        let all = m.embed_all(&texts);
        assert_eq!(all.len(), texts.len());
        for (t, v) in texts.iter().zip(&all) {
            assert_eq!(v, &m.embed(t), "{t}");
        }
    }

    /// A byte-pair tokenizer shaped like Llama's (tests), over "a", "b" and "c", with `extra`
    /// tokens and merges added.
    fn llama_shaped(extra_vocab: &[&str], extra_merges: &[&str]) -> SemanticModel {
        llama_shaped_with(extra_vocab, extra_merges, |_| {})
    }

    /// [`llama_shaped`], with `tweak` applied to the tokenizer's JSON.
    fn llama_shaped_with(
        extra_vocab: &[&str],
        extra_merges: &[&str],
        tweak: impl Fn(&mut serde_json::Value),
    ) -> SemanticModel {
        let mut tokens = vec![
            "<unk>",
            "<s>",
            "\u{2581}",
            "a",
            "b",
            "c",
            "\u{2581}a",
            "ab",
            "\u{2581}ab",
        ];
        tokens.push("\u{2581}\u{2581}");
        tokens.extend_from_slice(extra_vocab);
        let vocab: serde_json::Map<String, serde_json::Value> = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.to_string(), serde_json::json!(i)))
            .collect();
        // "▁▁" merges first, as in Llama's: a "▁" in the text next to a space would pair with it.
        let mut merges = vec!["\u{2581} \u{2581}", "\u{2581} a", "a b", "\u{2581}a b"];
        merges.extend_from_slice(extra_merges);
        let mut tokenizer = serde_json::json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": [{"id": 1, "content": "<s>", "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": false, "special": true}],
            "normalizer": {"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": "\u{2581}"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"}
            ]},
            "pre_tokenizer": null,
            "post_processor": null,
            "decoder": null,
            "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>",
                "continuing_subword_prefix": null, "end_of_word_suffix": null,
                "fuse_unk": true, "byte_fallback": false, "ignore_merges": false,
                "vocab": vocab, "merges": merges}
        });
        tweak(&mut tokenizer);
        let data: Vec<u8> = (0..tokens.len())
            .flat_map(|i| [1.0 + i as f32, (i * i) as f32 / 7.0])
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let weights = tensor_file("F32", &[tokens.len(), 2], &data);
        SemanticModel::from_bytes(&weights, tokenizer.to_string().as_bytes()).expect("a test model")
    }

    /// Every text of `texts`: its ids put together from its pieces are its ids tokenized
    /// whole (or it is tokenized whole), and `embed_all` gives `embed`'s vectors, bit for bit.
    fn pieces_agree_with_whole_texts(m: &SemanticModel, texts: &[String]) -> usize {
        let mut pieces = Pieces::default();
        let mut by_pieces = 0;
        for t in texts {
            let whole = m.tokenizer.encode_fast(cut(t), false).unwrap();
            if let Some(ids) = m.piece_ids(cut(t), &mut pieces) {
                assert_eq!(ids, whole.get_ids(), "{t:?}");
                by_pieces += 1;
            }
        }
        for (t, v) in texts.iter().zip(m.embed_all(texts)) {
            assert_eq!(v, m.embed(t), "{t:?}");
        }
        by_pieces
    }

    #[test]
    fn llama_shaped_tokenizers_tokenize_each_piece_once_with_the_same_ids() {
        let m = llama_shaped(&[], &[]);
        assert_eq!(m.pieces, Some(vec!["<s>".to_owned()]));
        let texts: Vec<String> = [
            "ab ab",
            "a  b",
            "  ab",
            "ab a b ab",
            "cab ab",
            "xx ab yy",
            "a\tb\nab",
            "ab",
            "a",
            "   ",
            "",
            "ab<s> ab",
            "ab ",
            "b  ab   a",
            "\u{2581}ab \u{2581} a",
            "a\u{2581} a",
            "c c",
            "a c",
            "x a",
            "a x a",
        ]
        .iter()
        .map(|t| t.to_string())
        .chain((0..200).map(|i| {
            let words = ["ab", "a", "b", "cab", "x", "ba", "  a", "\u{2581}b"];
            (0..1 + i % 7)
                .map(|j| words[(i * 3 + j * 5) % words.len()])
                .collect::<Vec<_>>()
                .join(if i % 3 == 0 { "  " } else { " " })
        }))
        .collect();
        let by_pieces = pieces_agree_with_whole_texts(&m, &texts);
        // Texts ending in a space or holding "<s>" or a "\u{2581}" are tokenized whole; the rest
        // by pieces.
        assert!(by_pieces > 100, "{by_pieces}");

        // A token joining a character to a following "\u{2581}" could span two pieces: then
        // every text is tokenized whole.
        assert_eq!(llama_shaped(&["b\u{2581}"], &["b \u{2581}"]).pieces, None);
        let joined = llama_shaped(&["b\u{2581}", "b\u{2581}a"], &["b \u{2581}", "b\u{2581} a"]);
        assert_eq!(joined.pieces, None);
        assert_eq!(pieces_agree_with_whole_texts(&joined, &texts), 0);
        // A token found whole before any merge ("▁c", which no merge makes) or a character
        // dropped for want of an unknown token would break the pieces apart: whole texts.
        let whole = llama_shaped_with(&["\u{2581}c"], &[], |t| {
            t["model"]["ignore_merges"] = serde_json::json!(true)
        });
        assert_eq!(whole.pieces, None);
        assert_eq!(pieces_agree_with_whole_texts(&whole, &texts), 0);
        let dropping = llama_shaped_with(&[], &[], |t| {
            t["model"]["unk_token"] = serde_json::Value::Null
        });
        assert_eq!(dropping.pieces, None);
        assert_eq!(pieces_agree_with_whole_texts(&dropping, &texts), 0);
        // The word-level test models split before tokenizing: whole texts too.
        assert_eq!(word_model(&["<unk>"], &[&[1.0]]).pieces, None);
    }

    #[test]
    fn tokenizers_larger_than_the_table_are_refused() {
        let data: Vec<u8> = [1.0f32, 0.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let weights = tensor_file("F32", &[1, 2], &data);
        let tokenizer = r#"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],
            "normalizer":null,"pre_tokenizer":{"type":"Whitespace"},"post_processor":null,
            "decoder":null,"model":{"type":"WordLevel","vocab":{"a":0,"b":1},"unk_token":"a"}}"#;
        let err = SemanticModel::from_bytes(&weights, tokenizer.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("token id 1"), "{err}");
        // Sparse ids: two tokens, but one of them past the table.
        let sparse = tokenizer.replace(r#""b":1"#, r#""b":5"#);
        let data: Vec<u8> = [1.0f32, 0.0, 0.0, 1.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let two = tensor_file("F32", &[2, 2], &data);
        let err = SemanticModel::from_bytes(&two, sparse.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("token id 5"), "{err}");
        // Padding in the tokenizer file is switched off: a text is its own tokens only.
        let padded = tokenizer.replace(
            r#""padding":null"#,
            r#""padding":{"strategy":{"Fixed":4},"direction":"Right","pad_to_multiple_of":null,"pad_id":1,"pad_type_id":0,"pad_token":"b"}"#,
        );
        let m = SemanticModel::from_bytes(&two, padded.as_bytes()).expect("padding is dropped");
        assert_eq!(m.embed("a"), Some(vec![1.0, 0.0]));
        let err = SemanticModel::from_bytes(&weights, b"{").unwrap_err();
        assert!(
            err.to_string().contains("cannot load the tokenizer"),
            "{err}"
        );
    }

    #[test]
    fn tables_are_read_in_each_float_type_and_refused_with_reasons() {
        let f32s: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let (table, vocab, dim) = read_table(&tensor_file("F32", &[3, 2], &f32s)).unwrap();
        assert_eq!((vocab, dim), (3, 2));
        assert_eq!(table, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let f16s: Vec<u8> = [1.0f32, -0.5]
            .iter()
            .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
            .collect();
        let (table, _, _) = read_table(&tensor_file("F16", &[1, 2], &f16s)).unwrap();
        assert_eq!(table, vec![1.0, -0.5]);
        let bf16s: Vec<u8> = [2.0f32, 0.25]
            .iter()
            .flat_map(|v| half::bf16::from_f32(*v).to_le_bytes())
            .collect();
        let (table, _, _) = read_table(&tensor_file("BF16", &[2, 1], &bf16s)).unwrap();
        assert_eq!(table, vec![2.0, 0.25]);

        let flat = read_table(&tensor_file("F32", &[6], &f32s)).unwrap_err();
        assert!(flat.contains("vocabulary x dimensions"), "{flat}");
        let ints = read_table(&tensor_file("I32", &[3, 2], &f32s[..24])).unwrap_err();
        assert!(ints.contains("want f32"), "{ints}");
        let nan: Vec<u8> = [f32::NAN, 1.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let bad = read_table(&tensor_file("F32", &[1, 2], &nan)).unwrap_err();
        assert!(bad.contains("not finite"), "{bad}");
        assert!(read_table(b"not a tensor file").is_err());
    }

    /// With the model the evaluation uses (`DISCO_SEMANTIC_MODEL`: its directory; `.ci/test`
    /// unpacks it), vectors agree with WordLlama's own implementation (`wl.embed(text,
    /// norm=True)`, wordllama 0.4.0.post1) to 1e-5.
    #[test]
    fn the_evaluation_model_embeds_as_its_reference_does() {
        let Some(dir) = std::env::var_os("DISCO_SEMANTIC_MODEL") else {
            eprintln!("DISCO_SEMANTIC_MODEL is not set: the reference comparison is skipped");
            return;
        };
        let model = SemanticModel::load(&dir).expect("the evaluation model loads");
        assert_eq!(model.dim(), 256);
        let cases: [(&str, [f32; 4]); 3] = [
            (
                "horoscope for today",
                [0.060648, -0.164028, 0.042621, 0.032687],
            ),
            (
                "Povides strology services for you.",
                [0.0438, 0.042803, 0.154818, -0.057175],
            ),
            (
                "What are the current crypto metrics?",
                [0.048912, 0.078978, -0.037489, -0.020831],
            ),
        ];
        let mut vectors = Vec::new();
        for (text, head) in cases {
            let v = model.embed(text).expect("words have tokens");
            for (got, want) in v.iter().zip(head) {
                assert!(
                    (got - want).abs() < 1e-5,
                    "{text}: {:?} vs {head:?}",
                    &v[..4]
                );
            }
            vectors.push(v);
        }
        let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        assert!((cos(&vectors[0], &vectors[1]) - 0.159_718_5).abs() < 1e-5);
        assert_eq!(model.embed(""), None);

        // Its tokenizer is Llama's: texts are tokenized by pieces, to the same ids.
        assert!(model.pieces.is_some());
        let words = [
            "Search",
            "the",
            "web.",
            "get_weather",
            "Café",
            "naïve",
            "日本語",
            "🙂",
            "<s>",
            "</s>",
            "  ",
            "\t",
            "\n",
            "e-mail",
            "ISBN:",
            "x",
            "(optional)",
            "HTTP/2",
            "",
        ];
        let texts: Vec<String> = (0..3000)
            .map(|i| {
                (0..1 + i % 13)
                    .map(|j| words[(i * 7 + j * 11 + j * j) % words.len()])
                    .collect::<Vec<_>>()
                    .join(if i % 5 == 0 { "  " } else { " " })
            })
            .collect();
        let by_pieces = pieces_agree_with_whole_texts(&model, &texts);
        assert!(by_pieces > 1000, "{by_pieces}");
    }

    #[test]
    fn directories_must_hold_one_model() {
        let dir = std::env::temp_dir().join(format!("disco-semantic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = SemanticModel::load(&dir).unwrap_err().to_string();
        assert!(err.contains("no `*.safetensors` file"), "{err}");
        std::fs::write(dir.join("a.safetensors"), b"x").unwrap();
        let err = SemanticModel::load(&dir).unwrap_err().to_string();
        assert!(err.contains("no tokenizer file"), "{err}");
        std::fs::write(dir.join("b.safetensors"), b"x").unwrap();
        std::fs::write(dir.join("tokenizer.json"), b"{}").unwrap();
        let err = SemanticModel::load(&dir).unwrap_err().to_string();
        assert!(err.contains("2 `*.safetensors` files"), "{err}");
        std::fs::remove_file(dir.join("b.safetensors")).unwrap();
        let err = SemanticModel::load(&dir).unwrap_err().to_string();
        assert!(err.contains("tokenizer"), "{err}");
        let missing = SemanticModel::load(dir.join("nope"))
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("cannot read the model directory"),
            "{missing}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
