//! The tool search index: ranked, field-weighted keyword search over a tool catalog.
//!
//! Written here rather than taken from a crate: full-text engines (tantivy) bring a large
//! dependency tree and segment/commit machinery built for big corpora, not for a few thousand
//! short in-memory documents searched within 100 µs (not measured here); the BM25 crates seen
//! (`bm25` 2.x) score one hashed text field, with no field weights, no typo tolerance, no
//! synonyms and no way to filter before ranking. Only stemming is taken from a
//! crate (`rust-stemmers`, Snowball English, the stemmer tantivy uses).
//!
//! Ranking is BM25F: every tool has seven fields (name words, title, keywords, aliases,
//! description, parameter names, parameter descriptions), each with its own weight and length
//! normalisation. A query word matches a tool through its stem, through a synonym from a built-in
//! map of tool vocabulary (at a discount), or through a one-edit spelling variant when the word
//! itself is unknown to the catalog (at a discount). Each query word counts once per tool: the
//! best of its variants, so a synonym never adds to an exact match of the same word.
//!
//! Visibility: `allowed` is applied before anything is counted. The number of tools, document
//! frequencies and average field lengths are all computed over the tools the caller can see, so a
//! hidden tool changes neither the order nor the scores a caller observes: the results are exactly
//! those of an index built from the visible tools alone.
//!
//! Scores are normalised so that one threshold works for a catalog of 3 tools and of 10,000: the
//! BM25F sum is divided by the inverse document frequency of a word found in exactly one visible
//! tool. A score of 1.0 thus means about "one distinctive query word matched as well as a word can
//! match". When the best tool scores below the threshold ([`DEFAULT_THRESHOLD`]) the index
//! abstains and returns nothing; the caller should answer with a hint on how to search instead.
//! Above it, weaker matches come along (up to `max_results`): the right tool is often second.
//!
//! One step per file: `vocab.rs` holds the word lists (data only), `analyze.rs` cuts text into
//! indexed words, `ranking.rs` holds the weights, `build.rs` builds the index, `query.rs` reads
//! a query, `score.rs` ranks by keywords, and `fusion.rs` (feature `semantic`) fuses that
//! ranking with a semantic model's. This file holds what a caller sees and the index itself.

mod analyze;
pub(crate) use analyze::is_stopword;
mod build;
mod learned;
pub use learned::{MAX_LEARNED_SCORE, MAX_LEARNED_WEIGHT};
#[cfg(feature = "semantic")]
mod fusion;
mod query;
mod ranking;
mod score;
mod vocab;

#[cfg(test)]
mod tests;

pub use ranking::{Ranking, DEFAULT_THRESHOLD};

use std::collections::HashMap;

use rust_stemmers::Stemmer;

/// What a tool is in the model's space (tests).
#[cfg(all(test, feature = "semantic"))]
pub(crate) use fusion::semantic_text;
/// Queries embedded ahead of a search (feature `semantic`; nothing without it).
#[cfg(feature = "semantic")]
pub(crate) use fusion::QueryVectors as EmbeddedQueries;
#[cfg(feature = "semantic")]
use fusion::Semantic;
#[cfg(feature = "semantic")]
pub(crate) use fusion::SemanticBuild;
#[cfg(all(test, feature = "semantic"))]
pub(crate) use fusion::EMBED_BLOCK;
/// Queries embedded ahead of a search: none without the feature `semantic`.
#[cfg(not(feature = "semantic"))]
pub(crate) enum EmbeddedQueries {}

/// What the index knows of one tool. The doc's index = its position in the input slice.
#[derive(Clone, Debug, Default)]
pub struct SearchDoc {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub keywords: Vec<String>,
    pub aliases: Vec<String>,
    /// (name, description) of each input parameter.
    pub params: Vec<(String, String)>,
}

/// One ranked result: the tool's position in the slice given to [`SearchIndex::build`] and its
/// normalised score (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub index: usize,
    pub score: f32,
}

/// Queries longer than this (in characters) are cut: a search query is a few words, and the cap
/// bounds the work one request can cause.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// At most this many distinct query words are scored; the rest are ignored.
pub const MAX_QUERY_TERMS: usize = 48;

const NF: usize = 7;
const F_NAME: usize = 0;
const F_TITLE: usize = 1;
const F_KEYWORDS: usize = 2;
const F_ALIASES: usize = 3;
const F_DESC: usize = 4;
const F_PARAM_NAME: usize = 5;
const F_PARAM_DESC: usize = 6;

/// Ranked keyword search over one catalog. Built once; rebuild when the catalog changes.
pub struct SearchIndex {
    names: Vec<String>,
    /// Document positions in name order: the order of an empty query and of ties.
    by_name: Vec<u32>,
    /// Stemmed term -> term id.
    terms: HashMap<String, u32>,
    /// Per term: the tools it occurs in (ascending), with its count in each field.
    postings: Vec<Vec<Posting>>,
    /// Stem of a word in the synonym map -> the terms of this catalog in its group(s).
    synonyms: HashMap<String, Vec<u32>>,
    /// Every indexed surface word (unstemmed, lowercase) and its term, for typo tolerance.
    surface_words: Vec<(Box<str>, u32)>,
    /// Surface word -> position in `surface_words`.
    surface_index: HashMap<Box<str>, u32>,
    /// (hash of a word with one character deleted, or of the word itself; surface word) sorted
    /// by hash: two words within one edit share an entry (symmetric-delete spelling correction).
    deletes: Vec<(u64, u32)>,
    field_len: Vec<[u16; NF]>,
    /// Distinct words of each name (a run-together word counted as its parts).
    name_len: Vec<u8>,
    total_len: [u64; NF],
    ranking: Ranking,
    stemmer: Stemmer,
    /// Keywords learned from traffic (`learned.rs`): ranking only, never published.
    learned: std::sync::RwLock<Option<std::sync::Arc<learned::LearnedWords>>>,
    #[cfg(feature = "semantic")]
    semantic: Option<Semantic>,
}

#[derive(Clone, Copy, Debug)]
struct Posting {
    doc: u32,
    tf: [u8; NF],
}

impl SearchIndex {
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Approximate heap bytes held by the index (for capacity planning; excludes allocator
    /// overhead and the hash maps' control bytes).
    pub fn approx_heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let names: usize = self
            .names
            .iter()
            .map(|n| n.capacity() + size_of::<String>())
            .sum();
        let postings: usize = self
            .postings
            .iter()
            .map(|p| p.capacity() * size_of::<Posting>() + size_of::<Vec<Posting>>())
            .sum();
        let terms: usize = self
            .terms
            .keys()
            .map(|k| k.capacity() + size_of::<String>() + 4)
            .sum();
        let syn: usize = self
            .synonyms
            .iter()
            .map(|(k, s)| {
                k.capacity() + size_of::<String>() + s.capacity() * 4 + size_of::<Vec<u32>>()
            })
            .sum();
        let surface: usize = self
            .surface_words
            .iter()
            .map(|(w, _)| 2 * (w.len() + size_of::<Box<str>>()) + 8)
            .sum();
        names
            + self.by_name.len() * 4
            + postings
            + terms
            + syn
            + surface
            + self.deletes.capacity() * size_of::<(u64, u32)>()
            + self.field_len.len() * size_of::<[u16; NF]>()
    }
}
