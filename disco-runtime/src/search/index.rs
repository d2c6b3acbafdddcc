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

use std::collections::{HashMap, HashSet};

use rust_stemmers::{Algorithm, Stemmer};

use crate::text::edits::{for_each_delete, within_one_edit};

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
/// Default abstention threshold on the normalised score of the best hit. Chosen on one half of
/// the evaluation queries as the highest value that costs at most 1.5 points of Hit@5 on both
/// MetaTool and BFCL there, so that the 2-point limit holds on the other half and on all rows
/// too (see tests/corpus/search/README.md).
pub const DEFAULT_THRESHOLD: f32 = 0.22;

/// The fusion of the keyword and semantic scores (see [`Ranking`]), chosen on the `even` half
/// of the evaluation queries (tests/corpus/search/README.md).
const SEMANTIC_WEIGHT: f32 = 1.0;
const SEMANTIC_THRESHOLD: f32 = 0.25;

/// With a semantic model, a tool that only the model finds is listed when its cosine with the
/// query is at least this (unrelated texts score about 0 to 0.1 with the evaluation's model):
/// results are not filled up with tools that have nothing to do with the query.
#[cfg(feature = "semantic")]
const SEMANTIC_FLOOR: f32 = 0.1;

/// With a semantic model, the fusion scales the keyword scores by the best one, but never by
/// less than this (in normalised units: one distinctive word matched): when only weak keyword
/// matches exist, the best of them is not counted as a full match.
#[cfg(feature = "semantic")]
const KEYWORD_SCALE_FLOOR: f32 = 1.0;

/// With a semantic model, the fusion scales the cosines from the nearest tool (1) down over
/// the spread of the nearest ones, but never over less than this: two candidates whose cosines
/// differ by 0.01 are nearly tied, not a full unit apart.
#[cfg(feature = "semantic")]
const SEMANTIC_SCALE_FLOOR: f32 = 0.2;

/// With a semantic model, catalogs of fewer tools than this are embedded before the keyword
/// index is built rather than beside it, on a thread of their own.
#[cfg(feature = "semantic")]
const SEMANTIC_THREAD_MIN_TOOLS: usize = 64;

/// With a semantic model (feature `semantic`): how many of the tools nearest the query in the
/// model's space take part in the fused ranking.
#[cfg(feature = "semantic")]
const SEMANTIC_CANDIDATES: usize = 50;

/// Words longer than this are not indexed (encoded blobs, hashes) and not searched.
const MAX_WORD_CHARS: usize = 40;

const NF: usize = 7;
const F_NAME: usize = 0;
const F_TITLE: usize = 1;
const F_KEYWORDS: usize = 2;
const F_ALIASES: usize = 3;
const F_DESC: usize = 4;
const F_PARAM_NAME: usize = 5;
const F_PARAM_DESC: usize = 6;

/// The name is the strongest evidence (authors name tools after what they do); keywords and
/// aliases are declared for search and nearly as strong; the description carries most words but
/// each says less; parameters say what a tool takes, which is weak evidence of what it is for.
const FIELD_WEIGHT: [f32; NF] = [3.0, 2.0, 2.0, 2.5, 1.0, 0.6, 0.4];
/// Length normalisation per field: short fields (names) hardly at all, prose fully.
const FIELD_B: [f32; NF] = [0.3, 0.3, 0.3, 0.3, 0.75, 0.5, 0.75];
const K1: f32 = 1.2;
/// Weight of the name-coverage bonus, in units of one distinctive word.
const NAME_COVERAGE_WEIGHT: f32 = 1.0;
/// Queries matching up to this many words get the whole name-coverage bonus; longer ones get
/// it scaled down by this over their count.
const NAME_COVERAGE_WORDS: f32 = 4.0;

/// A synonym (from the built-in map) matches at this fraction of an exact match, so that the
/// author's own word still wins.
const SYNONYM_WEIGHT: f32 = 0.6;
/// A one-edit spelling variant of a word the catalog does not know.
const TYPO_WEIGHT: f32 = 0.7;
/// Words that say a tool is wanted but not which one ("find", "tool", "information").
const GENERIC_WEIGHT: f32 = 0.4;
/// Typo tolerance starts at this many characters: shorter words have too many neighbours
/// ("cat", "car", "cap").
const TYPO_MIN_CHARS: usize = 5;

/// Function words, sorted (binary search). Dropped from documents and queries alike.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "d",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "either",
    "else",
    "etc",
    "ever",
    "every",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "im",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "let",
    "lets",
    "ll",
    "m",
    "may",
    "me",
    "might",
    "mine",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "re",
    "s",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "us",
    "ve",
    "very",
    "was",
    "we",
    "were",
    "what",
    "whats",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "would",
    "yes",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Query words that ask for a tool without saying which (politeness, "tool", "information").
/// They still count, at [`GENERIC_WEIGHT`], so that they can break ties but not carry a result.
/// Sorted (binary search).
const GENERIC: &[&str] = &[
    "able",
    "also",
    "app",
    "application",
    "assist",
    "best",
    "data",
    "details",
    "find",
    "get",
    "give",
    "good",
    "help",
    "info",
    "information",
    "kind",
    "know",
    "like",
    "need",
    "please",
    "possible",
    "provide",
    "really",
    "show",
    "something",
    "tell",
    "thing",
    "things",
    "tool",
    "tools",
    "use",
    "using",
    "want",
    "way",
    "wondering",
];

/// Two-word expressions read as one word, in documents and queries alike, so that "look up"
/// can be a synonym of "search" and "log in" does not lose its meaning to the stopword "in".
const PHRASES: &[(&str, &str, &str)] = &[
    ("look", "up", "lookup"),
    ("log", "in", "login"),
    ("sign", "in", "login"),
    ("log", "on", "login"),
    ("log", "out", "logout"),
    ("sign", "out", "logout"),
    ("sign", "up", "signup"),
    ("set", "up", "setup"),
    ("to", "do", "todo"),
    ("e", "mail", "email"),
    ("figure", "out", "calculate"),
    ("work", "out", "calculate"),
    ("check", "out", "checkout"),
    ("back", "up", "backup"),
];

/// Built-in synonyms: general tool vocabulary (verbs of the usual tool operations and the nouns
/// of common tool domains). Each group is a set of interchangeable words; membership is by stem.
/// Written from general knowledge of tool catalogs, not from the evaluation queries.
const SYNONYMS: &[&[&str]] = &[
    // operations
    &[
        "find", "search", "lookup", "query", "seek", "locate", "discover",
    ],
    &[
        "create", "add", "new", "make", "generate", "insert", "register",
    ],
    &[
        "delete", "remove", "erase", "destroy", "drop", "purge", "discard",
    ],
    &[
        "get", "fetch", "read", "retrieve", "show", "display", "view", "obtain", "load",
    ],
    &[
        "update", "edit", "modify", "change", "alter", "revise", "adjust", "patch",
    ],
    &[
        "send", "post", "publish", "submit", "share", "dispatch", "transmit", "deliver",
    ],
    &["list", "enumerate", "browse"],
    &["run", "execute", "invoke", "launch", "trigger"],
    &["stop", "cancel", "terminate", "abort", "halt"],
    &["save", "store", "persist", "write", "record"],
    &["copy", "duplicate", "clone"],
    &["move", "relocate", "transfer"],
    &["download", "pull"],
    &["upload", "push"],
    &["calculate", "compute", "determine", "evaluate", "estimate"],
    &["convert", "transform"],
    &["summarize", "summarise", "summary", "condense", "digest"],
    &["analyze", "analyse", "analysis", "examine", "inspect"],
    &["check", "verify", "validate", "test"],
    &["recommend", "suggest", "recommendation", "suggestion"],
    &[
        "schedule",
        "book",
        "reserve",
        "booking",
        "reservation",
        "appointment",
    ],
    &["buy", "purchase", "order", "shop", "shopping"],
    &["track", "monitor", "follow"],
    &["compare", "comparison", "versus"],
    &["explain", "describe", "clarify"],
    &["translate", "translation", "interpret"],
    &["learn", "study", "practice", "practise", "tutor", "teach"],
    // domain nouns
    &["file", "document", "doc"],
    &["directory", "folder"],
    &["image", "picture", "photo", "photograph", "pic"],
    &["video", "movie", "film", "clip"],
    &["music", "song", "audio", "track", "tune"],
    &["message", "msg", "chat", "text"],
    &["email", "mail", "inbox"],
    &["user", "account", "profile", "member"],
    &["price", "cost", "fee", "rate", "pricing"],
    &[
        "cheap",
        "affordable",
        "inexpensive",
        "discount",
        "deal",
        "coupon",
        "bargain",
    ],
    &["job", "career", "employment", "vacancy", "hiring"],
    &["weather", "forecast", "climate"],
    &["news", "headline", "article"],
    &["stock", "share", "equity", "ticker"],
    &["money", "currency", "finance", "financial"],
    &["trip", "travel", "journey", "vacation", "holiday", "tour"],
    &["flight", "airline", "fly", "airfare"],
    &["hotel", "lodging", "accommodation", "stay"],
    &["restaurant", "dining", "eatery", "dine"],
    &["food", "meal", "dish", "cuisine"],
    &["recipe", "cook", "cooking"],
    &["car", "vehicle", "auto", "automobile"],
    &["house", "home", "property", "apartment", "realty"],
    &["map", "direction", "route", "navigation", "navigate"],
    &["place", "location", "venue", "spot"],
    &["event", "meeting", "calendar"],
    &["task", "todo", "chore"],
    &["note", "memo"],
    &["game", "play", "puzzle"],
    &["health", "medical", "wellness", "fitness"],
    &["doctor", "physician", "clinic"],
    &["exercise", "workout", "training"],
    &["book", "novel", "ebook"],
    &["paper", "research", "academic", "scholar", "publication"],
    &["code", "program", "programming", "script", "software"],
    &["website", "site", "webpage", "page", "url", "link"],
    &["word", "vocabulary", "term"],
    &["gift", "present"],
    &["kid", "child", "children"],
    &["pet", "dog", "cat"],
    &["plant", "garden", "gardening"],
    &["law", "legal", "lawyer", "attorney"],
    &["tax", "taxes"],
    &["crypto", "cryptocurrency", "bitcoin", "blockchain"],
    &["ai", "artificial", "intelligence"],
    &["speech", "voice", "spoken"],
    &["number", "count", "quantity", "amount"],
];

/// The ranking's weights. The defaults were chosen on half of the evaluation queries (see
/// tests/corpus/search/README.md); they are public so the evaluation can show their effect.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    /// Per field (name, title, keywords, aliases, description, parameter names, parameter
    /// descriptions): how much one occurrence counts.
    pub field_weight: [f32; NF],
    /// Per field: how much the field's length discounts a match (BM25 `b`).
    pub field_b: [f32; NF],
    /// Term-frequency saturation (BM25 `k1`).
    pub k1: f32,
    /// A synonym from the built-in map matches at this fraction of an exact match.
    pub synonym: f32,
    /// A one-edit spelling variant of a word the catalog does not know.
    pub typo: f32,
    /// Words that ask for a tool without saying which ("find", "tool", "information").
    pub generic: f32,
    /// Bonus for the share of a name's words the query matched, in distinctive words.
    pub name_coverage: f32,
    /// Matched query words up to which the name-coverage bonus is whole: a long query shares
    /// two words with some name by chance in a large catalog, so there the bonus is scaled by
    /// this over the number of matched words.
    pub name_coverage_words: f32,
    /// Abstention threshold on the normalised score; 0 returns every matching tool.
    pub threshold: f32,
    /// With a semantic model (feature `semantic`), the ranking fuses the keyword scores and
    /// the model's cosines, each scaled to [0, 1] over its own list (keyword score over the
    /// best one, or over one distinctive word's worth when the best is weaker; cosine down from
    /// the first of the model's nearest tools over their spread, or over 0.2 when they are
    /// closer together): a tool scores
    /// `(keywords + semantic_weight * model) / (1 + semantic_weight)`.
    pub semantic_weight: f32,
    /// With a semantic model, a query abstains only when the keyword ranking abstains and no
    /// tool's cosine with the query reaches this.
    pub semantic_threshold: f32,
}

impl Default for Ranking {
    fn default() -> Self {
        Ranking {
            field_weight: FIELD_WEIGHT,
            field_b: FIELD_B,
            k1: K1,
            synonym: SYNONYM_WEIGHT,
            typo: TYPO_WEIGHT,
            generic: GENERIC_WEIGHT,
            name_coverage: NAME_COVERAGE_WEIGHT,
            name_coverage_words: NAME_COVERAGE_WORDS,
            threshold: DEFAULT_THRESHOLD,
            semantic_weight: SEMANTIC_WEIGHT,
            semantic_threshold: SEMANTIC_THRESHOLD,
        }
    }
}

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
    #[cfg(feature = "semantic")]
    semantic: Option<Semantic>,
}

/// The tools' vectors in a semantic model's space.
#[cfg(feature = "semantic")]
struct Semantic {
    model: std::sync::Arc<super::semantic::SemanticModel>,
    /// One unit vector per tool, row by row; all zero for a tool whose text has no token.
    vectors: Vec<f32>,
    /// A hash of the text each vector was made from: a later index reuses a vector only for
    /// the same name and text.
    texts: Vec<u64>,
}

#[cfg(feature = "semantic")]
impl Semantic {
    /// The vectors of `docs`, embedded by `model` or, for a tool of the same name and text,
    /// taken from `base` when it has the same model.
    fn of(
        model: std::sync::Arc<super::semantic::SemanticModel>,
        docs: &[SearchDoc],
        base: Option<&SearchIndex>,
    ) -> Semantic {
        let dim = model.dim();
        let base = base.and_then(|b| {
            let s = b.semantic.as_ref()?;
            std::sync::Arc::ptr_eq(&s.model, &model).then_some((b, s))
        });
        let mut vectors = vec![0f32; docs.len() * dim];
        let mut hashes: Vec<u64> = Vec::with_capacity(docs.len());
        // The tools to embed: their rows, and their texts in the same order.
        let mut rows: Vec<usize> = Vec::new();
        let mut texts: Vec<String> = Vec::new();
        for (i, doc) in docs.iter().enumerate() {
            let text = semantic_text(doc);
            let hash = text_hash(&text);
            hashes.push(hash);
            let known = base.and_then(|(b, s)| {
                let at = b
                    .by_name
                    .binary_search_by(|&d| b.names[d as usize].as_str().cmp(&doc.name))
                    .ok()?;
                let d = b.by_name[at] as usize;
                (s.texts[d] == hash).then(|| &s.vectors[d * dim..(d + 1) * dim])
            });
            match known {
                Some(v) => vectors[i * dim..(i + 1) * dim].copy_from_slice(v),
                None => {
                    rows.push(i);
                    texts.push(text);
                }
            }
        }
        for (&i, v) in rows.iter().zip(model.embed_all(&texts)) {
            if let Some(v) = v {
                vectors[i * dim..(i + 1) * dim].copy_from_slice(&v);
            }
        }
        Semantic {
            model,
            vectors,
            texts: hashes,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Posting {
    doc: u32,
    tf: [u8; NF],
}

/// One query word with everything it may match.
struct QueryWord {
    weight: f32,
    variants: Vec<(u32, f32)>,
    /// Per variant: whether this word is the one that claims the term for name coverage (a
    /// name word covered by two query words, as itself and as a synonym, counts once).
    claims: Vec<bool>,
}

impl SearchIndex {
    /// Indexes `docs`. Never fails: a tool without words is still listed by an empty query.
    pub fn build(docs: &[SearchDoc]) -> SearchIndex {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut b = Builder {
            stemmer: &stemmer,
            stems: HashMap::new(),
            terms: HashMap::new(),
            postings: Vec::new(),
        };

        // Pass 1: words of every field, and the vocabulary of the prose fields, used to split
        // run-together names ("airqualityforecast") into words the descriptions use.
        let mut doc_words: Vec<[Vec<String>; NF]> = Vec::with_capacity(docs.len());
        let mut vocab: HashSet<String> = HashSet::new();
        let mut buf = Vec::new();
        for d in docs {
            let mut f: [Vec<String>; NF] = Default::default();
            words_into(&d.name, &mut f[F_NAME]);
            if let Some(t) = &d.title {
                // A title that only repeats the name would count the name twice.
                if !same_words(t, &d.name) {
                    words_into(t, &mut f[F_TITLE]);
                }
            }
            for k in &d.keywords {
                words_into(k, &mut f[F_KEYWORDS]);
            }
            for a in &d.aliases {
                words_into(a, &mut f[F_ALIASES]);
            }
            words_into(&d.description, &mut f[F_DESC]);
            for (pn, pd) in &d.params {
                words_into(pn, &mut f[F_PARAM_NAME]);
                words_into(pd, &mut f[F_PARAM_DESC]);
            }
            let prose = [F_TITLE, F_KEYWORDS, F_DESC, F_PARAM_NAME, F_PARAM_DESC];
            for w in prose.iter().flat_map(|&i| &f[i]) {
                if w.chars().count() >= 3 && !vocab.contains(w.as_str()) {
                    vocab.insert(w.clone());
                }
            }
            doc_words.push(f);
        }

        // Pass 2: split run-together name words, then postings.
        let mut field_len = Vec::with_capacity(docs.len());
        let mut total_len = [0u64; NF];
        let mut pairs: Vec<(u32, usize)> = Vec::new();
        let mut name_len = Vec::with_capacity(docs.len());
        for (doc, mut f) in doc_words.into_iter().enumerate() {
            let mut name_words: Vec<String> = Vec::new();
            for field in [F_NAME, F_ALIASES] {
                let mut extra = Vec::new();
                for w in &f[field] {
                    split_compound(w, &vocab, &mut buf);
                    if field == F_NAME && buf.is_empty() {
                        name_words.push(w.clone());
                    }
                    extra.append(&mut buf);
                }
                if field == F_NAME {
                    name_words.extend(extra.iter().cloned());
                    name_words.sort_unstable();
                    name_words.dedup();
                    name_len.push(u8::try_from(name_words.len()).unwrap_or(u8::MAX));
                    name_words.clear();
                }
                f[field].extend(extra);
            }
            pairs.clear();
            let mut lens = [0u16; NF];
            for (field, words) in f.iter().enumerate() {
                lens[field] = u16::try_from(words.len()).unwrap_or(u16::MAX);
                total_len[field] += u64::from(lens[field]);
                for w in words {
                    pairs.push((b.term_of(w), field));
                }
            }
            pairs.sort_unstable();
            let doc32 = u32::try_from(doc).unwrap_or(u32::MAX);
            for chunk in pairs.chunk_by(|a, b| a.0 == b.0) {
                let mut tf = [0u8; NF];
                for &(_, field) in chunk {
                    tf[field] = tf[field].saturating_add(1);
                }
                b.postings[chunk[0].0 as usize].push(Posting { doc: doc32, tf });
            }
            field_len.push(lens);
        }

        let Builder {
            stems,
            terms,
            postings,
            ..
        } = b;

        // Synonyms by stem, resolved to the terms this catalog has.
        let mut synonyms: HashMap<String, Vec<u32>> = HashMap::new();
        for group in SYNONYMS {
            let stems: Vec<String> = group.iter().map(|w| stem_word(&stemmer, w)).collect();
            let ids: Vec<u32> = stems.iter().filter_map(|s| terms.get(s).copied()).collect();
            for s in stems {
                synonyms.entry(s).or_default().extend(&ids);
            }
        }
        for ids in synonyms.values_mut() {
            ids.sort_unstable();
            ids.dedup();
            ids.shrink_to_fit();
        }

        // Spelling neighbourhoods of the surface words long enough to be corrected to.
        let mut surface_words: Vec<(Box<str>, u32)> = stems
            .into_iter()
            .map(|(w, t)| (w.into_boxed_str(), t))
            .collect();
        surface_words.sort_unstable();
        let mut deletes = Vec::new();
        for (i, (w, _)) in surface_words.iter().enumerate() {
            if w.len() + 1 >= TYPO_MIN_CHARS && w.bytes().all(|c| c.is_ascii_lowercase()) {
                for_each_delete(w, |h| deletes.push((h, i as u32)));
            }
        }
        deletes.sort_unstable();
        deletes.dedup();
        let surface_index = surface_words
            .iter()
            .enumerate()
            .map(|(i, (w, _))| (w.clone(), i as u32))
            .collect();

        let names: Vec<String> = docs.iter().map(|d| d.name.clone()).collect();
        let mut by_name: Vec<u32> = (0..docs.len() as u32).collect();
        by_name.sort_by(|&a, &b| names[a as usize].cmp(&names[b as usize]).then(a.cmp(&b)));

        let mut postings = postings;
        for p in &mut postings {
            p.shrink_to_fit();
        }
        SearchIndex {
            names,
            by_name,
            terms,
            postings,
            synonyms,
            surface_words,
            surface_index,
            deletes,
            field_len,
            name_len,
            total_len,
            ranking: Ranking::default(),
            stemmer,
            #[cfg(feature = "semantic")]
            semantic: None,
        }
    }

    /// Adds semantic ranking: every tool of `docs` (the same slice, in the same order, that
    /// the index was built from) is placed in `model`'s space by its name's words, title and
    /// description, and queries are ranked by fusing the keyword ranking with the model's (see
    /// [`Ranking`]). [`SearchIndex::build_with_semantic`] does both steps at once, faster.
    #[cfg(feature = "semantic")]
    pub fn with_semantic(
        self,
        model: std::sync::Arc<super::semantic::SemanticModel>,
        docs: &[SearchDoc],
    ) -> SearchIndex {
        self.with_semantic_reusing(model, docs, None)
    }

    /// [`SearchIndex::with_semantic`], taking the vector of a tool of the same name and text
    /// from `base` (an index of the same model) instead of embedding it again: a caller's own
    /// catalog shares every other tool with the base catalog, and a rebuilt catalog most of
    /// its tools with the one before.
    #[cfg(feature = "semantic")]
    pub(crate) fn with_semantic_reusing(
        mut self,
        model: std::sync::Arc<super::semantic::SemanticModel>,
        docs: &[SearchDoc],
        base: Option<&SearchIndex>,
    ) -> SearchIndex {
        // Whatever `docs` holds, one vector per tool of the index: a tool past its end has a
        // zero vector (keywords alone find it; its hash 0 marks no text), a doc past the
        // index's tools is left out.
        let n = self.names.len();
        if docs.len() != n {
            tracing::warn!(
                docs = docs.len(),
                tools = n,
                "semantic vectors for docs that are not the index's own"
            );
        }
        let mut semantic = Semantic::of(model, &docs[..docs.len().min(n)], base);
        semantic.vectors.resize(n * semantic.model.dim(), 0.0);
        semantic.texts.resize(n, 0);
        self.semantic = Some(semantic);
        self
    }

    /// `SearchIndex::build(docs).with_semantic(model, docs)`, the keyword index built while
    /// the tools are embedded (on the other cores) rather than before.
    #[cfg(feature = "semantic")]
    pub fn build_with_semantic(
        docs: &[SearchDoc],
        model: std::sync::Arc<super::semantic::SemanticModel>,
    ) -> SearchIndex {
        SearchIndex::build_with_semantic_reusing(docs, model, None)
    }

    /// [`SearchIndex::build_with_semantic`], reusing `base`'s vectors as
    /// [`SearchIndex::with_semantic_reusing`] does.
    #[cfg(feature = "semantic")]
    pub(crate) fn build_with_semantic_reusing(
        docs: &[SearchDoc],
        model: std::sync::Arc<super::semantic::SemanticModel>,
        base: Option<&SearchIndex>,
    ) -> SearchIndex {
        // A few tools are quicker done one after the other than with a thread.
        if docs.len() < SEMANTIC_THREAD_MIN_TOOLS {
            let mut index = SearchIndex::build(docs);
            index.semantic = Some(Semantic::of(model, docs, base));
            return index;
        }
        let (mut index, semantic) = std::thread::scope(|scope| {
            let embedding = std::thread::Builder::new().spawn_scoped(scope, {
                let model = model.clone();
                move || Semantic::of(model, docs, base)
            });
            let index = SearchIndex::build(docs);
            let semantic = match embedding {
                // A panic while embedding is a panic here, as it would be without the thread.
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
                // No thread to be had: embed here.
                Err(_) => Semantic::of(model, docs, base),
            };
            (index, semantic)
        });
        index.semantic = Some(semantic);
        index
    }

    /// The semantic vector of the tool named `name` (tests).
    #[cfg(all(test, feature = "semantic"))]
    pub(crate) fn semantic_vector_mut(&mut self, name: &str) -> Option<&mut [f32]> {
        let d = self.names.iter().position(|n| n == name)?;
        let s = self.semantic.as_mut()?;
        let dim = s.model.dim();
        s.vectors.get_mut(d * dim..(d + 1) * dim)
    }

    /// Sets the abstention threshold on the normalised score; 0 returns every matching tool.
    pub fn with_threshold(mut self, threshold: f32) -> SearchIndex {
        self.ranking.threshold = clean(threshold, DEFAULT_THRESHOLD);
        self
    }

    /// Replaces the ranking weights (negative or non-finite values fall back to the defaults).
    pub fn with_ranking(mut self, ranking: Ranking) -> SearchIndex {
        let d = Ranking::default();
        let mut r = ranking;
        for f in 0..NF {
            r.field_weight[f] = clean(r.field_weight[f], d.field_weight[f]);
            r.field_b[f] = clean(r.field_b[f], d.field_b[f]).min(1.0);
        }
        r.k1 = clean(r.k1, d.k1);
        r.synonym = clean(r.synonym, d.synonym);
        r.typo = clean(r.typo, d.typo);
        r.generic = clean(r.generic, d.generic);
        r.name_coverage = clean(r.name_coverage, d.name_coverage);
        r.name_coverage_words = clean(r.name_coverage_words, d.name_coverage_words);
        r.threshold = clean(r.threshold, d.threshold);
        r.semantic_weight = clean(r.semantic_weight, d.semantic_weight);
        r.semantic_threshold = clean(r.semantic_threshold, d.semantic_threshold);
        self.ranking = r;
        self
    }

    pub fn ranking(&self) -> &Ranking {
        &self.ranking
    }

    pub fn threshold(&self) -> f32 {
        self.ranking.threshold
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Ranked hits, best first, ties broken by name (then position).
    ///
    /// `allowed(i)` is asked once per tool before anything is scored, and every statistic is
    /// computed over the allowed tools only (see the module docs). An empty or whitespace query
    /// lists the allowed tools in name order with score 0. A query whose best match scores
    /// below the threshold returns nothing (abstains): the caller should answer with a hint.
    /// Otherwise every matching tool may be returned, up to `max_results`.
    pub fn search(
        &self,
        query: &str,
        max_results: usize,
        allowed: &dyn Fn(usize) -> bool,
    ) -> Vec<Hit> {
        if max_results == 0 || self.names.is_empty() {
            return Vec::new();
        }
        let visible: Vec<bool> = (0..self.names.len()).map(allowed).collect();
        let query = truncate_chars(query, MAX_QUERY_CHARS);
        if query.trim().is_empty() {
            return self
                .by_name
                .iter()
                .filter(|&&d| visible[d as usize])
                .take(max_results)
                .map(|&d| Hit {
                    index: d as usize,
                    score: 0.0,
                })
                .collect();
        }

        let n_visible = visible.iter().filter(|v| **v).count();
        if n_visible == 0 {
            return Vec::new();
        }
        let r = &self.ranking;
        let avg_len = self.avg_len(&visible, n_visible);
        // Per field: W_f / (1 - b_f + b_f * len / avg) = W_f / (c0 + c1 * len).
        let mut norm_c0 = [0f32; NF];
        let mut norm_c1 = [0f32; NF];
        for f in 0..NF {
            norm_c0[f] = 1.0 - r.field_b[f];
            norm_c1[f] = if avg_len[f] > 0.0 {
                r.field_b[f] / avg_len[f]
            } else {
                0.0
            };
        }

        let words = self.query_words(query);
        let n = n_visible as f32;
        // The idf of a word found in exactly one visible tool: the most a word can weigh here.
        let idf_one = (1.0 + (n - 0.5) / 1.5).ln();
        let mut scores = vec![0f32; self.names.len()];
        let mut best = vec![0f32; self.names.len()];
        let mut name_best = vec![0f32; self.names.len()];
        let mut name_cover = vec![0f32; self.names.len()];
        let mut name_strong = vec![0f32; self.names.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut matched: Vec<u32> = Vec::new();
        let mut reaching = 0usize;
        let mut df_cache: HashMap<u32, f32> = HashMap::new();
        for w in &words {
            for (&(term, vweight), &claims) in w.variants.iter().zip(&w.claims) {
                let postings = &self.postings[term as usize];
                let idf = *df_cache.entry(term).or_insert_with(|| {
                    let df = postings.iter().filter(|p| visible[p.doc as usize]).count() as f32;
                    if df == 0.0 {
                        0.0
                    } else {
                        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
                    }
                });
                if idf == 0.0 {
                    continue;
                }
                for p in postings {
                    let d = p.doc as usize;
                    if !visible[d] {
                        continue;
                    }
                    let lens = &self.field_len[d];
                    let mut tf = 0f32;
                    for f in 0..NF {
                        if p.tf[f] != 0 {
                            tf += r.field_weight[f] * f32::from(p.tf[f])
                                / (norm_c0[f] + norm_c1[f] * f32::from(lens[f]));
                        }
                    }
                    let s = vweight * idf * tf / (r.k1 + tf);
                    if best[d] == 0.0 {
                        touched.push(p.doc);
                    }
                    if s > best[d] {
                        best[d] = s;
                    }
                    if claims && p.tf[F_NAME] != 0 && vweight > name_best[d] {
                        name_best[d] = vweight;
                    }
                }
            }
            for &d in &touched {
                let d = d as usize;
                if scores[d] == 0.0 {
                    matched.push(d as u32);
                }
                scores[d] += w.weight * best[d];
                name_cover[d] += name_best[d];
                if w.weight >= 1.0 {
                    name_strong[d] += name_best[d];
                }
                best[d] = 0.0;
                name_best[d] = 0.0;
            }
            // Only words that reached a tool the caller may see count towards the query's
            // length: what hidden tools contain must not change a visible score.
            if !touched.is_empty() {
                reaching += 1;
            }
            touched.clear();
        }

        // A tool whose name the query spells out nearly word for word is very likely the one
        // meant, even when its words are common in the catalog ("list servers" among many
        // server tools): add a bonus for the share of the name's words the query matched. One
        // word is not enough: a one-word name ("search", "news") would win every query using it,
        // nor are generic words alone ("help", "find"). The more words a query has, the likelier
        // two of them meet some name by chance, so a long query's bonus is scaled down.
        let damping = (r.name_coverage_words / reaching.max(1) as f32).min(1.0);
        for &d in &matched {
            let d = d as usize;
            let len = f32::from(self.name_len[d].max(1));
            if name_cover[d] >= 2.0 && name_strong[d] >= 1.0 {
                scores[d] += r.name_coverage * idf_one * (name_cover[d] / len).min(1.0) * damping;
            }
        }
        // Abstain on the best score alone: when the best tool is a clear enough match, weaker
        // ones are still worth showing (the gold tool is often second or third); when it is
        // not, showing any would only mislead. Cutting each hit at the threshold instead costs
        // far more recall for the same abstention (measured: tests/corpus/search/README.md).
        let best = matched
            .iter()
            .map(|&d| scores[d as usize])
            .fold(0f32, f32::max);
        let abstains = best <= 0.0 || best < r.threshold * idf_one;
        #[cfg(feature = "semantic")]
        if let Some(semantic) = &self.semantic {
            return self.fused(
                semantic,
                query,
                &visible,
                &matched,
                &scores,
                abstains,
                max_results,
                idf_one,
            );
        }
        if abstains {
            return Vec::new();
        }
        let mut hits: Vec<Hit> = matched
            .into_iter()
            .filter(|&d| scores[d as usize] > 0.0)
            .map(|d| Hit {
                index: d as usize,
                score: scores[d as usize] / idf_one,
            })
            .collect();
        self.keep_best(&mut hits, max_results);
        hits.sort_unstable_by(|a, b| self.best_first(a, b));
        hits
    }

    /// The order of results: higher score first, then by name, then by position (ties are
    /// deterministic).
    fn best_first(&self, a: &Hit, b: &Hit) -> std::cmp::Ordering {
        b.score
            .total_cmp(&a.score)
            .then_with(|| self.names[a.index].cmp(&self.names[b.index]))
            .then(a.index.cmp(&b.index))
    }

    /// Keeps the `k` first of `hits` in [`SearchIndex::best_first`] order, in no order.
    fn keep_best(&self, hits: &mut Vec<Hit>, k: usize) {
        if k == 0 {
            hits.clear();
        } else if hits.len() > k {
            hits.select_nth_unstable_by(k - 1, |a, b| self.best_first(a, b));
            hits.truncate(k);
        }
    }

    /// The keyword ranking (`matched` with `scores`) fused with the semantic model's.
    #[cfg(feature = "semantic")]
    #[allow(clippy::too_many_arguments)]
    fn fused(
        &self,
        semantic: &Semantic,
        query: &str,
        visible: &[bool],
        matched: &[u32],
        scores: &[f32],
        keywords_abstain: bool,
        max_results: usize,
        idf_one: f32,
    ) -> Vec<Hit> {
        let r = &self.ranking;
        // The tools nearest the query, each with its cosine as its score.
        let mut nearest: Vec<Hit> = Vec::new();
        if let Some(q) = semantic.model.embed(query) {
            let dim = q.len();
            nearest = semantic
                .vectors
                .chunks_exact(dim)
                .enumerate()
                .filter(|(d, _)| visible[*d])
                .map(|(index, v)| Hit {
                    index,
                    score: dot(v, &q),
                })
                .collect();
            self.keep_best(&mut nearest, SEMANTIC_CANDIDATES);
        }
        // Scores are fused, not ranks: neither list needs an order, only its extremes.
        let cosines = nearest.iter().map(|n| n.score);
        let near_hi = cosines.clone().fold(f32::NEG_INFINITY, f32::max);
        let near_lo = cosines.fold(f32::INFINITY, f32::min);
        if keywords_abstain && near_hi < r.semantic_threshold {
            return Vec::new();
        }
        let keyword: Vec<(usize, f32)> = matched
            .iter()
            .map(|&d| (d as usize, scores[d as usize]))
            .filter(|&(_, s)| s > 0.0)
            .collect();
        // Each ranking's scores scaled to [0, 1] over its own list (keywords: by the best
        // score; the model: down from the nearest tool to the farthest of its nearest), then
        // summed. Neither scale shrinks below its floor: among a few candidates, a near tie
        // of weak scores would otherwise count as a whole unit of difference.
        let keyword_best = keyword
            .iter()
            .map(|k| k.1)
            .fold(0f32, f32::max)
            .max(KEYWORD_SCALE_FLOOR * idf_one);
        let span = (near_hi - near_lo).max(SEMANTIC_SCALE_FLOOR);
        let mut fused = vec![0f32; self.names.len()];
        let mut seen = vec![false; self.names.len()];
        let mut found: Vec<usize> = Vec::with_capacity(keyword.len() + nearest.len());
        for &(d, score) in &keyword {
            seen[d] = true;
            found.push(d);
            fused[d] += score / keyword_best;
        }
        for &Hit {
            index: d,
            score: cos,
        } in &nearest
        {
            if !seen[d] {
                // Found by meaning alone: listed only when near enough to count.
                if cos < SEMANTIC_FLOOR {
                    continue;
                }
                seen[d] = true;
                found.push(d);
            }
            fused[d] += r.semantic_weight * (1.0 - (near_hi - cos) / span);
        }
        // First in both rankings, with a keyword score of at least its floor, scores 1.
        let top = 1.0 + r.semantic_weight;
        let mut hits: Vec<Hit> = found
            .into_iter()
            .map(|index| Hit {
                index,
                score: fused[index] / top,
            })
            .filter(|h| h.score > 0.0)
            .collect();
        self.keep_best(&mut hits, max_results);
        hits.sort_unstable_by(|a, b| self.best_first(a, b));
        hits
    }

    fn avg_len(&self, visible: &[bool], n_visible: usize) -> [f32; NF] {
        let totals = if n_visible == self.names.len() {
            self.total_len
        } else {
            let mut t = [0u64; NF];
            for (lens, _) in self.field_len.iter().zip(visible).filter(|(_, v)| **v) {
                for f in 0..NF {
                    t[f] += u64::from(lens[f]);
                }
            }
            t
        };
        let mut avg = [0f32; NF];
        for f in 0..NF {
            avg[f] = totals[f] as f32 / n_visible as f32;
        }
        avg
    }

    /// The query's distinct words, each with the terms it may match and their weights.
    fn query_words(&self, query: &str) -> Vec<QueryWord> {
        let mut raw = Vec::new();
        words_into(query, &mut raw);
        let mut seen: HashSet<String> = HashSet::new();
        let mut out = Vec::new();
        for w in raw {
            if out.len() >= MAX_QUERY_TERMS {
                break;
            }
            let stem = stem_word(&self.stemmer, &w);
            if !seen.insert(stem.clone()) {
                continue;
            }
            let weight = if GENERIC.binary_search(&w.as_str()).is_ok() {
                self.ranking.generic
            } else {
                1.0
            };
            let mut variants: Vec<(u32, f32)> = Vec::new();
            let exact = self.terms.get(&stem).copied().or_else(|| {
                self.surface_index
                    .get(w.as_str())
                    .map(|&i| self.surface_words[i as usize].1)
            });
            if let Some(t) = exact {
                variants.push((t, 1.0));
            }
            // Synonyms apply to words the catalog lacks too: that is when they matter most.
            if let Some(ids) = self.synonyms.get(&stem) {
                variants.extend(ids.iter().map(|&s| (s, self.ranking.synonym)));
            }
            if variants.is_empty() {
                variants.extend(
                    self.spelling_neighbours(&w)
                        .into_iter()
                        .map(|t| (t, self.ranking.typo)),
                );
            }
            // Exact first, so that dedup keeps the strongest weight of a term.
            variants.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
            variants.dedup_by_key(|v| v.0);
            if !variants.is_empty() {
                out.push(QueryWord {
                    weight,
                    variants,
                    claims: Vec::new(),
                });
            }
        }
        // Each term is claimed by the word that matches it most strongly; on a tie, by the
        // word that weighs more (a distinctive word over a generic one), then the first, so
        // that the order of the query's words does not matter.
        let mut claimant: HashMap<u32, (usize, f32, f32)> = HashMap::new();
        for (i, w) in out.iter().enumerate() {
            for &(t, x) in &w.variants {
                let e = claimant.entry(t).or_insert((i, x, w.weight));
                if (x, w.weight) > (e.1, e.2) {
                    *e = (i, x, w.weight);
                }
            }
        }
        for (i, w) in out.iter_mut().enumerate() {
            w.claims = w
                .variants
                .iter()
                .map(|(t, _)| claimant.get(t).is_some_and(|c| c.0 == i))
                .collect();
        }
        out
    }

    /// Terms whose surface word is one edit (insertion, deletion, substitution or adjacent
    /// transposition) from `w`.
    fn spelling_neighbours(&self, w: &str) -> Vec<u32> {
        let mut out = Vec::new();
        if w.len() < TYPO_MIN_CHARS || !w.bytes().all(|c| c.is_ascii_lowercase()) {
            return out;
        }
        for_each_delete(w, |h| {
            let start = self.deletes.partition_point(|e| e.0 < h);
            for &(eh, i) in &self.deletes[start..] {
                if eh != h {
                    break;
                }
                let (cand, term) = &self.surface_words[i as usize];
                if within_one_edit(w.as_bytes(), cand.as_bytes()) && !out.contains(term) {
                    out.push(*term);
                }
            }
        });
        out
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

struct Builder<'a> {
    stemmer: &'a Stemmer,
    /// Surface word -> term id (each distinct word is stemmed once).
    stems: HashMap<String, u32>,
    terms: HashMap<String, u32>,
    postings: Vec<Vec<Posting>>,
}

impl Builder<'_> {
    fn term_of(&mut self, w: &str) -> u32 {
        if let Some(&t) = self.stems.get(w) {
            return t;
        }
        let stem = stem_word(self.stemmer, w);
        let next = self.postings.len() as u32;
        let t = *self.terms.entry(stem).or_insert(next);
        if t == next {
            self.postings.push(Vec::new());
        }
        self.stems.insert(w.to_owned(), t);
        t
    }
}

fn clean(v: f32, default: f32) -> f32 {
    if v.is_finite() && v >= 0.0 {
        v
    } else {
        default
    }
}

fn truncate_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Splits text into lowercase words: at every character that is not a letter or digit, and
/// inside identifiers at case changes (`getUserName`, `HTTPServer` -> http, server), so that
/// snake_case, camelCase, kebab-case and dotted names all yield their words. Digits stay with
/// their letters (`base64`, `mp3`). Stopwords are dropped and two-word expressions joined.
fn words_into(text: &str, out: &mut Vec<String>) {
    let start = out.len();
    let chars: Vec<char> = text.chars().collect();
    let mut cur = String::new();
    let mut cur_chars = 0usize;
    let flush = |cur: &mut String, cur_chars: &mut usize, out: &mut Vec<String>| {
        if !cur.is_empty() && *cur_chars <= MAX_WORD_CHARS {
            out.push(std::mem::take(cur));
        }
        cur.clear();
        *cur_chars = 0;
    };
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            // An apostrophe inside a word ("what's", "don't") joins rather than splits.
            if (c == '\'' || c == '\u{2019}') && !cur.is_empty() {
                continue;
            }
            flush(&mut cur, &mut cur_chars, out);
            continue;
        }
        if i > 0 && !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = c.is_uppercase()
                && (prev.is_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_uppercase() && next_lower));
            if boundary {
                flush(&mut cur, &mut cur_chars, out);
            }
        }
        for l in c.to_lowercase() {
            cur.push(l);
        }
        cur_chars += 1;
    }
    flush(&mut cur, &mut cur_chars, out);

    // Join two-word expressions, then drop stopwords.
    let mut i = start;
    let mut w = start;
    while i < out.len() {
        // (Every phrase ends in a short word: test that first, it is the common miss.)
        let joined = out
            .get(i + 1)
            .filter(|next| next.len() <= 4)
            .and_then(|next| {
                PHRASES
                    .iter()
                    .find(|(a, b, _)| *a == out[i] && *b == next.as_str())
                    .map(|(_, _, j)| *j)
            });
        let (word, step) = match joined {
            Some(j) => (j.to_owned(), 2),
            None => (std::mem::take(&mut out[i]), 1),
        };
        i += step;
        if !is_stopword(&word) {
            out[w] = word;
            w += 1;
        }
    }
    out.truncate(w);
}

fn is_stopword(w: &str) -> bool {
    w.len() <= 10 && STOPWORDS.binary_search(&w).is_ok()
}

fn same_words(a: &str, b: &str) -> bool {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    words_into(a, &mut x);
    words_into(b, &mut y);
    x == y
}

/// Snowball English stem of an ASCII word; other words (numbers, non-Latin scripts) as they are.
fn stem_word(stemmer: &Stemmer, w: &str) -> String {
    if w.len() >= 3 && w.bytes().all(|c| c.is_ascii_lowercase()) {
        stemmer.stem(w).into_owned()
    } else {
        w.to_owned()
    }
}

/// Splits a run-together word ("airqualityforecast", "texttospeech") into the catalog's own
/// words of 3+ letters, when they cover most of it. Only long ASCII words that the prose of the
/// catalog never uses on their own are tried, so a real word is not split.
fn split_compound(w: &str, vocab: &HashSet<String>, out: &mut Vec<String>) {
    const MIN_PIECE: usize = 3;
    const MAX_PIECE: usize = 16;
    let n = w.len();
    if !(7..=MAX_WORD_CHARS).contains(&n) || !w.bytes().all(|c| c.is_ascii_lowercase()) {
        return;
    }
    if vocab.contains(w) {
        return;
    }
    // covered[i]: most letters of w[..i] covered by known words; ties prefer fewer pieces.
    let mut covered = vec![(0usize, 0usize); n + 1];
    let mut from = vec![(usize::MAX, false); n + 1];
    for i in 1..=n {
        covered[i] = covered[i - 1];
        from[i] = (i - 1, false);
        for len in MIN_PIECE..=MAX_PIECE.min(i) {
            let j = i - len;
            if !vocab.contains(&w[j..i]) {
                continue;
            }
            let cand = (covered[j].0 + len, covered[j].1 + 1);
            if cand.0 > covered[i].0 || (cand.0 == covered[i].0 && cand.1 < covered[i].1) {
                covered[i] = cand;
                from[i] = (j, true);
            }
        }
    }
    if covered[n].1 < 2 || covered[n].0 * 10 < n * 7 {
        return;
    }
    let mut i = n;
    let start = out.len();
    while i > 0 {
        let (j, piece) = from[i];
        if piece && !is_stopword(&w[j..i]) {
            out.push(w[j..i].to_owned());
        }
        i = j;
    }
    out[start..].reverse();
}

/// The dot product of two vectors of the same length, in eight independent sums that the
/// compiler turns into vector instructions.
#[cfg(feature = "semantic")]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let whole = n / 8 * 8;
    let mut sums = [0f32; 8];
    for (x, y) in a[..whole].chunks_exact(8).zip(b[..whole].chunks_exact(8)) {
        for i in 0..8 {
            sums[i] += x[i] * y[i];
        }
    }
    let rest: f32 = a[whole..n]
        .iter()
        .zip(&b[whole..n])
        .map(|(x, y)| x * y)
        .sum();
    sums.iter().sum::<f32>() + rest
}

/// A 64-bit hash of a tool's text (std's `DefaultHasher`, whose keys are fixed: the same in
/// every index of a process, which is all a reused vector needs).
#[cfg(feature = "semantic")]
fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// What a tool is in a semantic model's space: its name's words, its title and its description
/// ("searchPapers" -> "search Papers").
#[cfg(feature = "semantic")]
fn semantic_text(doc: &SearchDoc) -> String {
    let mut name = String::with_capacity(doc.name.len() + 4);
    let mut prev: Option<char> = None;
    for c in doc.name.chars() {
        if matches!(c, '_' | '-' | '.' | '/' | ':') {
            if !name.ends_with(' ') {
                name.push(' ');
            }
        } else {
            if c.is_uppercase() && prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()) {
                name.push(' ');
            }
            name.push(c);
        }
        prev = Some(c);
    }
    format!(
        "{}. {}. {}",
        name.trim(),
        doc.title.as_deref().unwrap_or_default(),
        doc.description
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, description: &str) -> SearchDoc {
        SearchDoc {
            name: name.to_owned(),
            description: description.to_owned(),
            ..SearchDoc::default()
        }
    }

    fn catalog() -> Vec<SearchDoc> {
        vec![
            doc("create_issue", "Open a new issue in a repository."),
            doc(
                "delete_issue",
                "Remove an issue from a repository permanently.",
            ),
            doc(
                "list_issues",
                "List the issues of a repository, newest first.",
            ),
            doc(
                "getWeatherForecast",
                "Weather forecast for a city for the next days.",
            ),
            doc(
                "send-email",
                "Send an email message to one or more recipients.",
            ),
            doc("files.read", "Read the contents of a text file from disk."),
            SearchDoc {
                name: "search_papers".into(),
                title: Some("Search papers".into()),
                description: "Search my knowledge base for papers and notes by meaning.".into(),
                keywords: vec!["knowledge base".into(), "notes".into()],
                aliases: vec!["search_knowledgebase".into()],
                params: vec![("query".into(), "what to look for".into())],
            },
            doc(
                "airqualityforecast",
                "Two-day air quality outlook for any zip code.",
            ),
        ]
    }

    fn names(idx: &SearchIndex, docs: &[SearchDoc], q: &str) -> Vec<String> {
        idx.search(q, 5, &|_| true)
            .into_iter()
            .map(|h| docs[h.index].name.clone())
            .collect()
    }

    fn top(idx: &SearchIndex, docs: &[SearchDoc], q: &str) -> Option<String> {
        names(idx, docs, q).into_iter().next()
    }

    #[test]
    fn index_is_shareable_across_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<SearchIndex>();
    }

    #[test]
    fn word_lists_are_sorted_and_lowercase() {
        for list in [STOPWORDS, GENERIC] {
            assert!(list.windows(2).all(|w| w[0] < w[1]));
            assert!(list
                .iter()
                .all(|w| w.chars().all(|c| c.is_ascii_lowercase())));
        }
    }

    #[test]
    fn splits_identifiers_into_words() {
        let mut out = Vec::new();
        words_into(
            "getUserName snake_case kebab-case a.b.c HTTPServer base64 mp3Player",
            &mut out,
        );
        assert_eq!(
            out,
            [
                "get", "user", "name", "snake", "case", "kebab", "case", "b", "c", "http",
                "server", "base64", "mp3", "player"
            ]
        );
    }

    #[test]
    fn joins_phrases_and_drops_stopwords() {
        let mut out = Vec::new();
        words_into("Can you look up the weather and log in?", &mut out);
        assert_eq!(out, ["lookup", "weather", "login"]);
    }

    #[test]
    fn name_words_rank_first() {
        let docs = catalog();
        let idx = SearchIndex::build(&docs);
        assert_eq!(
            top(&idx, &docs, "delete issue").as_deref(),
            Some("delete_issue")
        );
        assert_eq!(
            top(&idx, &docs, "weather forecast").as_deref(),
            Some("getWeatherForecast")
        );
        assert_eq!(top(&idx, &docs, "read file").as_deref(), Some("files.read"));
    }

    #[test]
    fn name_bonus_needs_distinctive_words_each_counted_once() {
        let docs = vec![
            doc(
                "help_finding",
                "Help finding. Locate the closest sushi restaurant.",
            ),
            doc("ResearchFinder", "Tool for searching academic papers."),
            doc(
                "calc_paper",
                "Calc paper. Retrieve the moves a Pokemon can learn.",
            ),
            doc("get_weather", "Current weather for a city."),
            doc("send_email", "Send an email to a recipient."),
        ];
        let idx = SearchIndex::build(&docs);
        // "help" and "find" are generic: together they name `help_finding` but say nothing.
        assert_eq!(
            top(&idx, &docs, "Can you help me find academic papers?").as_deref(),
            Some("ResearchFinder")
        );
        // "academic" (a synonym of paper) and "papers" cover the one word `paper` once.
        assert_eq!(
            top(&idx, &docs, "Search academic papers").as_deref(),
            Some("ResearchFinder")
        );
    }

    #[test]
    fn a_distinctive_word_claims_a_shared_synonym() {
        let docs = vec![
            doc("search_records", "Search the records of the archive."),
            doc("delete_records", "Delete records from the archive."),
        ];
        let idx = SearchIndex::build(&docs);
        let search = idx.terms[&stem_word(&idx.stemmer, "search")];
        // "find" (generic) and "locate" both stand for "search" at the synonym weight:
        // "locate" claims it for the name bonus, whichever comes first.
        for q in ["find locate", "locate find"] {
            let words = idx.query_words(q);
            let claimants: Vec<f32> = words
                .iter()
                .filter(|w| {
                    w.variants
                        .iter()
                        .zip(&w.claims)
                        .any(|(v, &c)| v.0 == search && c)
                })
                .map(|w| w.weight)
                .collect();
            assert_eq!(claimants, [1.0], "{q}");
        }
    }

    #[test]
    fn long_queries_get_a_smaller_name_bonus() {
        let docs = vec![
            doc("list_servers", "Servers of the account."),
            doc("reboot_server", "Restart one server."),
            doc(
                "weather",
                "Weather forecast for a city, tomorrow and today.",
            ),
            doc("email", "Send email messages to recipients."),
            doc("calendar", "Meetings in the calendar this week."),
        ];
        let with = SearchIndex::build(&docs);
        let without = SearchIndex::build(&docs).with_ranking(Ranking {
            name_coverage: 0.0,
            ..Ranking::default()
        });
        let bonus = |q: &str| {
            let score = |idx: &SearchIndex| {
                idx.search(q, 5, &|_| true)
                    .into_iter()
                    .find(|h| h.index == 0)
                    .map(|h| h.score)
                    .unwrap_or(0.0)
            };
            score(&with) - score(&without)
        };
        let short = bonus("list servers");
        let long = bonus("list servers weather forecast email recipients calendar meetings");
        assert!(short > 0.0, "{short}");
        assert!(long > 0.0 && long < short, "{long} vs {short}");
    }

    #[test]
    fn stemming_matches_inflections() {
        let docs = catalog();
        let idx = SearchIndex::build(&docs);
        assert_eq!(
            top(&idx, &docs, "emails sending").as_deref(),
            Some("send-email")
        );
        assert_eq!(
            top(&idx, &docs, "deleting issues").as_deref(),
            Some("delete_issue")
        );
    }

    #[test]
    fn synonyms_match_at_a_discount() {
        let docs = catalog();
        let idx = SearchIndex::build(&docs);
        assert_eq!(
            top(&idx, &docs, "erase an issue").as_deref(),
            Some("delete_issue")
        );
        assert_eq!(
            top(&idx, &docs, "make a new issue").as_deref(),
            Some("create_issue")
        );
        assert_eq!(
            top(&idx, &docs, "look up papers").as_deref(),
            Some("search_papers")
        );
        // The author's own word beats a synonym.
        let a = idx.search("remove issue", 5, &|_| true);
        assert_eq!(docs[a[0].index].name, "delete_issue");
    }

    #[test]
    fn typos_are_tolerated_for_unknown_words() {
        let docs = catalog();
        let idx = SearchIndex::build(&docs);
        assert_eq!(
            top(&idx, &docs, "wether forcast").as_deref(),
            Some("getWeatherForecast")
        );
        assert_eq!(
            top(&idx, &docs, "newset isues").as_deref(),
            Some("list_issues")
        );
        // A transposition: every repository tool, none other.
        let open = SearchIndex::build(&docs).with_threshold(0.0);
        let hits = open.search("repsoitory", 5, &|_| true);
        assert_eq!(hits.len(), 3);
        assert!(hits.iter().all(|h| docs[h.index].name.contains("issue")));
    }

    #[test]
    fn within_one_edit_cases() {
        assert!(within_one_edit(b"search", b"search"));
        assert!(within_one_edit(b"search", b"serch"));
        assert!(within_one_edit(b"search", b"seaarch"));
        assert!(within_one_edit(b"search", b"saerch"));
        assert!(within_one_edit(b"search", b"searcx"));
        assert!(!within_one_edit(b"search", b"sraech"));
        assert!(!within_one_edit(b"search", b"sear"));
        assert!(within_one_edit(b"", b"a"));
    }

    #[test]
    fn run_together_names_are_split() {
        let docs = catalog();
        let idx = SearchIndex::build(&docs);
        assert_eq!(
            top(&idx, &docs, "air quality").as_deref(),
            Some("airqualityforecast")
        );
        let mut out = Vec::new();
        let vocab: HashSet<String> = ["air", "quality", "forecast"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        split_compound("airqualityforecast", &vocab, &mut out);
        assert_eq!(out, ["air", "quality", "forecast"]);
        out.clear();
        split_compound("forecast", &vocab, &mut out);
        assert!(out.is_empty(), "a known word is not split: {out:?}");
    }

    #[test]
    fn keywords_aliases_and_params_count() {
        let docs = catalog();
        let idx = SearchIndex::build(&docs);
        assert_eq!(
            top(&idx, &docs, "knowledgebase").as_deref(),
            Some("search_papers")
        );
        assert_eq!(top(&idx, &docs, "notes").as_deref(), Some("search_papers"));
    }

    #[test]
    fn empty_query_lists_allowed_tools_in_name_order() {
        let docs = catalog();
        let idx = SearchIndex::build(&docs);
        let hits = idx.search("   \t\n", 100, &|i| i != 0);
        let got: Vec<&str> = hits.iter().map(|h| docs[h.index].name.as_str()).collect();
        let mut want: Vec<&str> = docs[1..].iter().map(|d| d.name.as_str()).collect();
        want.sort();
        assert_eq!(got, want);
        assert!(hits.iter().all(|h| h.score == 0.0));
        assert_eq!(idx.search("", 2, &|_| true).len(), 2);
    }

    #[test]
    fn abstains_when_nothing_matches() {
        let docs = catalog();
        let idx = SearchIndex::build(&docs);
        assert!(idx
            .search("banana smoothie recipe", 5, &|_| true)
            .is_empty());
        assert!(idx.search("the of and", 5, &|_| true).is_empty());
        assert!(!idx.search("issue", 5, &|_| true).is_empty());
    }

    #[test]
    fn threshold_abstains_on_the_best_hit() {
        let docs = catalog();
        let strict = SearchIndex::build(&docs).with_threshold(100.0);
        assert!(strict.search("delete issue", 5, &|_| true).is_empty());
        // A clear best match brings the weaker ones along.
        let best = SearchIndex::build(&docs).search("delete issue", 5, &|_| true)[0].score;
        let idx = SearchIndex::build(&docs).with_threshold(best * 0.99);
        let hits = idx.search("delete issue", 5, &|_| true);
        assert_eq!(docs[hits[0].index].name, "delete_issue");
        assert!(hits.len() >= 3 && hits[2].score < idx.threshold());
        let open = SearchIndex::build(&docs).with_threshold(0.0);
        assert!(open.search("delete issue", 5, &|_| true).len() >= 3);
        let nan = SearchIndex::build(&docs).with_threshold(f32::NAN);
        assert_eq!(nan.threshold(), DEFAULT_THRESHOLD);
    }

    #[test]
    fn hidden_tools_do_not_change_visible_results() {
        let docs = catalog();
        let idx = SearchIndex::build(&docs).with_threshold(0.0);
        // Hide every tool that mentions "issue" except one: scores of the rest must equal those
        // of an index built from the visible tools only.
        let hidden = [0usize, 2];
        let visible_docs: Vec<SearchDoc> = docs
            .iter()
            .enumerate()
            .filter(|(i, _)| !hidden.contains(i))
            .map(|(_, d)| d.clone())
            .collect();
        let alone = SearchIndex::build(&visible_docs).with_threshold(0.0);
        for q in [
            "delete issue",
            "repository",
            "send a message",
            "search notes",
            // Long: the words only hidden tools contain must not shrink the name bonus.
            "delete issue open new newest list first",
            "",
        ] {
            let a = idx.search(q, 10, &|i| !hidden.contains(&i));
            let b = alone.search(q, 10, &|_| true);
            let an: Vec<(&str, f32)> = a
                .iter()
                .map(|h| (docs[h.index].name.as_str(), h.score))
                .collect();
            let bn: Vec<(&str, f32)> = b
                .iter()
                .map(|h| (visible_docs[h.index].name.as_str(), h.score))
                .collect();
            assert_eq!(an.len(), bn.len(), "{q}");
            for (x, y) in an.iter().zip(&bn) {
                assert_eq!(x.0, y.0, "{q}");
                assert!((x.1 - y.1).abs() < 1e-5, "{q}: {x:?} vs {y:?}");
            }
            assert!(a.iter().all(|h| !hidden.contains(&h.index)));
        }
        assert!(idx.search("issue", 5, &|_| false).is_empty());
    }

    #[test]
    fn ties_break_by_name() {
        let docs = vec![
            doc("b_tool", "same words"),
            doc("a_tool", "same words"),
            doc("c_tool", "same words"),
        ];
        let idx = SearchIndex::build(&docs).with_threshold(0.0);
        let got: Vec<usize> = idx
            .search("same words", 5, &|_| true)
            .iter()
            .map(|h| h.index)
            .collect();
        assert_eq!(got, [1, 0, 2]);
        let got: Vec<usize> = idx
            .search("same words", 2, &|_| true)
            .iter()
            .map(|h| h.index)
            .collect();
        assert_eq!(got, [1, 0]);
    }

    #[test]
    fn results_are_capped_and_ordered() {
        let docs = catalog();
        let idx = SearchIndex::build(&docs).with_threshold(0.0);
        let hits = idx.search("issue repository", 2, &|_| true);
        assert_eq!(hits.len(), 2);
        assert!(hits[0].score >= hits[1].score);
        assert!(idx.search("issue", 0, &|_| true).is_empty());
    }

    #[test]
    fn hostile_input_does_not_panic() {
        let docs = vec![
            doc("", ""),
            doc("ümlaut_tööl", "Ünïcödé déscription 東京 の 天気"),
            doc("\u{0}\u{1}ctl", "\u{7}\u{1b}[31m red \u{202e}"),
            doc(&"x".repeat(10_000), &"word ".repeat(100_000)),
            doc("A", "İ ß ﬁ"),
        ];
        let idx = SearchIndex::build(&docs);
        for q in [
            "",
            "\u{0}",
            "東京",
            "ümlaut",
            "İ",
            "ß",
            &"a".repeat(1_000_000),
            &"word ".repeat(10_000),
            "\u{202e}\u{1b}",
            "'''",
            "x y z 1 2 3",
        ] {
            let _ = idx.search(q, usize::MAX, &|_| true);
            let _ = idx.search(q, 3, &|i| i % 2 == 0);
        }
        assert_eq!(top(&idx, &docs, "ümlaut").as_deref(), Some("ümlaut_tööl"));
        let empty = SearchIndex::build(&[]);
        assert!(empty.is_empty());
        assert!(empty.search("x", 5, &|_| true).is_empty());
        assert!(empty.search("", 5, &|_| true).is_empty());
    }

    #[test]
    fn long_queries_are_cut() {
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("hi", 10), "hi");
        let docs = catalog();
        let idx = SearchIndex::build(&docs);
        let q = format!("delete issue {}", "zzz ".repeat(10_000));
        assert_eq!(top(&idx, &docs, &q).as_deref(), Some("delete_issue"));
    }

    #[test]
    fn deterministic_across_builds() {
        let docs = catalog();
        let a = SearchIndex::build(&docs);
        let b = SearchIndex::build(&docs);
        for q in ["issue", "send", "forecast wether", "papers notes"] {
            assert_eq!(a.search(q, 10, &|_| true), b.search(q, 10, &|_| true));
        }
        assert!(a.approx_heap_bytes() > 0);
        assert_eq!(a.len(), docs.len());
    }

    #[cfg(feature = "semantic")]
    mod semantic {
        use super::*;
        use std::sync::Arc;

        /// Three directions: the zodiac, money, the weather.
        fn model() -> Arc<crate::search::semantic::SemanticModel> {
            Arc::new(crate::search::semantic::word_model(
                &[
                    "<unk>",
                    "horoscope",
                    "astrology",
                    "currency",
                    "money",
                    "convert",
                    "weather",
                    "rain",
                    "forecast",
                ],
                &[
                    &[0.0, 0.0, 0.0],
                    &[1.0, 0.1, 0.0],
                    &[1.0, 0.0, 0.0],
                    &[0.0, 1.0, 0.0],
                    &[0.1, 1.0, 0.0],
                    &[0.0, 1.0, 0.0],
                    &[0.0, 0.0, 1.0],
                    &[0.1, 0.0, 1.0],
                    &[0.0, 0.1, 1.0],
                ],
            ))
        }

        fn docs() -> Vec<SearchDoc> {
            vec![
                doc("StrologyTool", "Provides astrology services"),
                doc("ExchangeTool", "Convert currency"),
                doc("get_weather", "Weather forecast for a city"),
            ]
        }

        #[test]
        fn a_query_that_shares_no_word_finds_its_tool_by_meaning() {
            let docs = docs();
            let plain = SearchIndex::build(&docs);
            assert!(plain.search("horoscope", 5, &|_| true).is_empty());
            let idx = SearchIndex::build(&docs).with_semantic(model(), &docs);
            let hits = idx.search("horoscope", 5, &|_| true);
            assert_eq!(hits.first().map(|h| h.index), Some(0), "{hits:?}");
            assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
            // First in both rankings scores 1.
            let both = idx.search("weather forecast", 5, &|_| true);
            assert_eq!(both[0].index, 2);
            assert!((both[0].score - 1.0).abs() < 1e-6, "{both:?}");
        }

        #[test]
        fn a_query_abstains_only_when_keywords_and_meaning_both_do() {
            let docs = docs();
            let idx = SearchIndex::build(&docs).with_semantic(model(), &docs);
            // No keyword, but close to the weather tool in the model's space.
            let rain = idx.search("rain", 5, &|_| true);
            assert_eq!(rain.first().map(|h| h.index), Some(2), "{rain:?}");
            // Neither: no keyword, and no token the model knows.
            assert!(idx.search("zzyzx", 5, &|_| true).is_empty());
            let strict = SearchIndex::build(&docs)
                .with_ranking(Ranking {
                    semantic_threshold: 2.0,
                    ..Ranking::default()
                })
                .with_semantic(model(), &docs);
            assert!(strict.search("rain", 5, &|_| true).is_empty());
            // An empty query still lists the tools by name.
            assert_eq!(idx.search(" ", 5, &|_| true).len(), 3);
        }

        #[test]
        fn a_near_tie_in_meaning_leaves_the_keywords_to_decide() {
            // Both texts are close to "currency weather": one exactly (cosine 1), the other at
            // 3 / sqrt(10) = 0.95. The keywords clearly prefer the second (its name).
            let docs = vec![
                doc("daily_report", "Currency weather"),
                doc("currency_weather_feed", "Weather feed"),
            ];
            let idx = SearchIndex::build(&docs).with_semantic(model(), &docs);
            let hits = idx.search("currency weather", 5, &|_| true);
            assert_eq!(hits.first().map(|h| h.index), Some(1), "{hits:?}");
            let keywords = SearchIndex::build(&docs).search("currency weather", 5, &|_| true);
            assert_eq!(keywords.first().map(|h| h.index), Some(1), "{keywords:?}");
        }

        #[test]
        fn a_weak_keyword_match_is_not_counted_as_a_full_one() {
            // "tool" says a tool is wanted, not which: its one match must not tie with the
            // tool nearest in meaning (which would then lose on its name).
            let docs = vec![
                doc("tool_box", "A tool"),
                doc("weather_now", "Weather forecast for a city"),
            ];
            let idx = SearchIndex::build(&docs).with_semantic(model(), &docs);
            let hits = idx.search("rain tool", 5, &|_| true);
            assert_eq!(hits.first().map(|h| h.index), Some(1), "{hits:?}");
            assert!(hits[0].score > hits[1].score + 0.2, "{hits:?}");
        }

        #[test]
        fn building_both_at_once_gives_the_same_index() {
            // Enough tools for the vectors to be made on a thread of their own.
            let mut docs = docs();
            for i in 0..SEMANTIC_THREAD_MIN_TOOLS {
                docs.push(doc(
                    &format!("tool_{i}"),
                    ["money", "convert currency", "zzz"][i % 3],
                ));
            }
            let apart = SearchIndex::build(&docs).with_semantic(model(), &docs);
            let m = apart.semantic.as_ref().unwrap().model.clone();
            let together = SearchIndex::build_with_semantic(&docs, m);
            let (a, t) = (
                apart.semantic.as_ref().unwrap(),
                together.semantic.as_ref().unwrap(),
            );
            assert_eq!((&a.vectors, &a.texts), (&t.vectors, &t.texts));
            for q in ["horoscope", "money", "rain", "weather forecast", ""] {
                assert_eq!(
                    apart.search(q, 5, &|_| true),
                    together.search(q, 5, &|_| true)
                );
            }
            // Docs that are not the index's own still give one vector per tool.
            let short = SearchIndex::build(&docs).with_semantic(m_of(&apart), &docs[..1]);
            assert_eq!(short.semantic.as_ref().unwrap().texts.len(), docs.len());
            let by_keywords = short.search("weather forecast", 5, &|_| true);
            assert_eq!(by_keywords.first().map(|h| h.index), Some(2));
            assert!(short.search("rain", 5, &|_| true).is_empty());
        }

        fn m_of(index: &SearchIndex) -> Arc<crate::search::semantic::SemanticModel> {
            index.semantic.as_ref().unwrap().model.clone()
        }

        #[test]
        fn tools_far_from_the_query_are_not_added_to_its_results() {
            let mut docs = docs();
            docs.push(doc("blank", "zzz qqq"));
            let idx = SearchIndex::build(&docs).with_semantic(model(), &docs);
            let hits = idx.search("weather forecast", 5, &|_| true);
            assert_eq!(
                hits.iter().map(|h| h.index).collect::<Vec<_>>(),
                [2],
                "{hits:?}"
            );
        }

        #[test]
        fn a_derived_index_reuses_the_vectors_of_the_tools_it_shares() {
            let base_docs = docs();
            let mut base = SearchIndex::build(&base_docs).with_semantic(model(), &base_docs);
            // Marks in the base's vectors show which ones were taken over.
            for name in ["StrologyTool", "ExchangeTool", "get_weather"] {
                base.semantic_vector_mut(name).unwrap().fill(0.5);
            }
            // A caller's own tool, and the shared ones in another order; one of them under its
            // old name but with a new text (a rebuilt catalog), which is embedded again.
            let mut docs = vec![doc("astro_daily", "Daily horoscope")];
            docs.extend(base_docs.iter().rev().cloned());
            docs[2].description = "Rain forecast".into();
            let m = m_of(&base);
            let mut reused =
                SearchIndex::build(&docs).with_semantic_reusing(m.clone(), &docs, Some(&base));
            let mut fresh = SearchIndex::build(&docs).with_semantic(m.clone(), &docs);
            for name in ["StrologyTool", "get_weather"] {
                assert!(reused
                    .semantic_vector_mut(name)
                    .unwrap()
                    .iter()
                    .all(|&v| v == 0.5));
            }
            for name in ["astro_daily", "ExchangeTool"] {
                let own = reused.semantic_vector_mut(name).unwrap().to_vec();
                assert_eq!(own, fresh.semantic_vector_mut(name).unwrap(), "{name}");
            }
            // Built at once, with the base: the same.
            let mut at_once = SearchIndex::build_with_semantic_reusing(&docs, m, Some(&base));
            for name in ["StrologyTool", "get_weather", "astro_daily", "ExchangeTool"] {
                let a = at_once.semantic_vector_mut(name).unwrap().to_vec();
                assert_eq!(a, reused.semantic_vector_mut(name).unwrap(), "{name}");
            }
        }

        #[test]
        fn hidden_tools_change_no_visible_semantic_result() {
            let mut docs = docs();
            docs.push(doc("zodiac_secret", "Astrology horoscope readings"));
            let idx = SearchIndex::build(&docs).with_semantic(model(), &docs);
            let visible = |i: usize| i != 3;
            let seen = idx.search("horoscope money", 5, &visible);
            assert!(seen.iter().all(|h| h.index != 3));
            let alone = SearchIndex::build(&docs[..3]).with_semantic(model(), &docs[..3]);
            let expected = alone.search("horoscope money", 5, &|_| true);
            assert_eq!(seen, expected);
        }
    }
}
