//! The lexical layer: words, hashes and edit neighbourhoods, with no tool, catalog or search
//! types. Everything above it that cuts text into words does it here, except the search
//! analyzer, for the reasons below.
//!
//! Three tokenizers, one purpose each:
//!
//! - [`words::split_words`]: names and argument keys, for name resolution, argument repair and
//!   the lint's name rules. It splits at separators and case changes and keeps a plural
//!   acronym whole (`listURLs` -> list, urls), because a name's words are compared one to one
//!   with another name's, and `urls`/`url` must meet as a plural does.
//! - `search::index::analyze`'s `words_into`: descriptions and queries, for ranking. It joins across
//!   apostrophes, drops stopwords, joins two-word expressions and caps word length, and it
//!   splits a plural acronym at its last capital (`listURLs` -> list, ur, ls) like any other
//!   case change. Its output is stemmed and indexed: changing how it splits changes every
//!   search figure, so it stays as tuned (see BENCHMARKS.md) rather than being merged with the
//!   name tokenizer. That the two read `listURLs` differently is known and kept on purpose
//!   until a change is measured on every dataset.
//! - [`words::plain_words`]: lowercase runs of letters and digits, for the lint's comparisons of
//!   descriptions (shingles), where case changes inside words do not occur.
//!
//! Two synonym tables exist, also on purpose: the verb classes of name resolution
//! (`resolve::vocab`, where a synonym may replace a word of a tool name and opposites must be
//! known) and the topical synonyms of search (`search::index::vocab`, which only widen a query).

pub(crate) mod edits;
pub(crate) mod hash;
pub mod lexicon;
pub(crate) mod similar;
pub(crate) mod words;
