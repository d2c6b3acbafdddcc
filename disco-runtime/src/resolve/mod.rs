//! Between a request and a handler: which tool was meant ([`name`]), and what its arguments
//! were meant to be ([`args`]). Both are pure functions of the catalog and the request.

pub mod args;
pub(crate) mod meaning;
pub mod name;
pub(crate) mod polarity;
pub(crate) mod vocab;

/// The lexicon the rules of meaning read, for the evaluation and the generated corpora.
pub mod lexicon {
    pub use crate::text::lexicon::{english_words, footprint};

    /// Whether a word is known: English, a word of APIs, or a role noun.
    pub fn is_known_word(word: &str) -> bool {
        crate::resolve::vocab::is_known_word(word)
    }

    /// Whether two words are forms of one lemma (WordNet's morphology).
    pub fn same_lemma(a: &str, b: &str) -> bool {
        crate::text::lexicon::same_lemma(a, b)
    }

    /// Whether two words are one word in two numbers, as name resolution reads them (by
    /// WordNet's morphology where it knows the word, by the regular plural elsewhere).
    pub fn same_singular(a: &str, b: &str) -> bool {
        crate::text::words::singular(a) == crate::text::words::singular(b)
    }

    /// Whether two words are opposed by the tables, WordNet's antonyms or the role rule.
    pub fn opposed(a: &str, b: &str) -> bool {
        crate::resolve::polarity::opposed(a, b)
    }

    /// The curated pairs of opposed words: the opposites table and the families of API words.
    pub fn curated_pairs() -> impl Iterator<Item = (&'static str, &'static str)> {
        crate::resolve::polarity::curated_pairs()
    }

    /// Every pair of opposed words the tables and WordNet give, curated pairs first.
    pub fn opposed_pairs() -> impl Iterator<Item = (&'static str, &'static str)> {
        crate::resolve::polarity::curated_pairs().chain(crate::text::lexicon::antonyms())
    }

    /// The words opposed to `word` that a misspelling may not be as close to: its opposites,
    /// its role partner, the word negated or un-negated by a prefix.
    pub fn opposed_rivals(word: &str) -> Vec<String> {
        crate::resolve::meaning::opposed_rivals(word)
    }

    /// Whether two words are of one curated synonym class (`get`/`fetch`).
    pub fn synonyms(a: &str, b: &str) -> bool {
        let (x, y) = (
            crate::resolve::vocab::canon(a),
            crate::resolve::vocab::canon(b),
        );
        !x.is_empty() && x == y
    }

    /// The words of APIs that count as words.
    pub fn api_words() -> impl Iterator<Item = &'static str> {
        crate::resolve::vocab::api_words().iter().copied()
    }
}
