//! Tokenizing a text piece by piece: when a tokenizer provably gives a text the tokens of its
//! space-separated pieces one after the other, each distinct piece is tokenized once.

use super::*;

/// The texts' pieces tokenized so far (by [`SemanticModel::embed_all`], per thread).
#[derive(Default)]
pub(super) struct Pieces<'t> {
    /// Each piece's ids, a range of `store`: of pieces that start a text, and of the others.
    pub(super) leading: HashMap<&'t str, std::ops::Range<usize>>,
    pub(super) following: HashMap<&'t str, std::ops::Range<usize>>,
    pub(super) store: Vec<u32>,
    /// The current text's ids.
    pub(super) ids: Vec<u32>,
}

/// `text` cut to [`MAX_TEXT_CHARS`].
pub(super) fn cut(text: &str) -> &str {
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
pub(super) fn pieces_tokenize_alone(
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
