//! Building the index: the words of every field (pass 1), run-together names split and
//! postings counted (pass 2), then synonyms and spelling neighbourhoods resolved to the
//! catalog's terms.

use std::collections::{HashMap, HashSet};

use rust_stemmers::{Algorithm, Stemmer};

use super::analyze::{same_words, split_compound, stem_word, words_into};
use super::query::TYPO_MIN_CHARS;
use super::vocab::SYNONYMS;
use super::{Posting, Ranking, SearchDoc, SearchIndex};
use super::{F_ALIASES, F_DESC, F_KEYWORDS, F_NAME, F_PARAM_DESC, F_PARAM_NAME, F_TITLE, NF};
use crate::text::edits::for_each_delete;

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
        let doc_words: Vec<[Vec<String>; NF]> = docs.iter().map(field_words).collect();
        let mut vocab: HashSet<String> = HashSet::new();
        for f in &doc_words {
            add_prose_vocabulary(f, &mut vocab);
        }

        // Pass 2: split run-together name words, then postings.
        let mut field_len = Vec::with_capacity(docs.len());
        let mut total_len = [0u64; NF];
        let mut name_len = Vec::with_capacity(docs.len());
        let mut buf = Vec::new();
        let mut pairs: Vec<(u32, usize)> = Vec::new();
        for (doc, mut f) in doc_words.into_iter().enumerate() {
            name_len.push(split_run_together(&mut f, &vocab, &mut buf));
            let lens = b.add_postings(doc, &f, &mut pairs);
            for field in 0..NF {
                total_len[field] += u64::from(lens[field]);
            }
            field_len.push(lens);
        }

        let Builder {
            stems,
            terms,
            mut postings,
            ..
        } = b;
        let synonyms = synonyms_in(&terms, &stemmer);
        let Spelling {
            surface_words,
            surface_index,
            deletes,
        } = spelling_neighbourhoods(stems);
        let names: Vec<String> = docs.iter().map(|d| d.name.clone()).collect();
        let by_name = name_order(&names);
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
            learned: Default::default(),
        }
    }
}

/// The words of each field of one tool.
fn field_words(d: &SearchDoc) -> [Vec<String>; NF] {
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
    f
}

/// Adds the words of one tool's prose fields (three characters or more) to `vocab`: the
/// words run-together names are split into.
fn add_prose_vocabulary(f: &[Vec<String>; NF], vocab: &mut HashSet<String>) {
    let prose = [F_TITLE, F_KEYWORDS, F_DESC, F_PARAM_NAME, F_PARAM_DESC];
    for w in prose.iter().flat_map(|&i| &f[i]) {
        if w.chars().count() >= 3 && !vocab.contains(w.as_str()) {
            vocab.insert(w.clone());
        }
    }
}

/// Adds the parts of the run-together words of a tool's name and aliases to their fields;
/// the number of distinct words of the name (a run-together word counted as its parts).
fn split_run_together(
    f: &mut [Vec<String>; NF],
    vocab: &HashSet<String>,
    buf: &mut Vec<String>,
) -> u8 {
    let mut name_len = 0;
    for field in [F_NAME, F_ALIASES] {
        let mut name_words: Vec<String> = Vec::new();
        let mut extra = Vec::new();
        for w in &f[field] {
            split_compound(w, vocab, buf);
            if field == F_NAME && buf.is_empty() {
                name_words.push(w.clone());
            }
            extra.append(buf);
        }
        if field == F_NAME {
            name_words.extend(extra.iter().cloned());
            name_words.sort_unstable();
            name_words.dedup();
            name_len = u8::try_from(name_words.len()).unwrap_or(u8::MAX);
        }
        f[field].extend(extra);
    }
    name_len
}

/// Synonyms by stem, resolved to the terms this catalog has.
fn synonyms_in(terms: &HashMap<String, u32>, stemmer: &Stemmer) -> HashMap<String, Vec<u32>> {
    let mut synonyms: HashMap<String, Vec<u32>> = HashMap::new();
    for group in SYNONYMS {
        let stems: Vec<String> = group.iter().map(|w| stem_word(stemmer, w)).collect();
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
    synonyms
}

/// What typo tolerance looks words up in (the fields of [`SearchIndex`] of the same names).
struct Spelling {
    surface_words: Vec<(Box<str>, u32)>,
    surface_index: HashMap<Box<str>, u32>,
    deletes: Vec<(u64, u32)>,
}

/// The spelling neighbourhoods of the surface words long enough to be corrected to: the
/// surface words (with their terms) in order, each one's position, and the hashes of their
/// one-character deletions with the position they came from.
fn spelling_neighbourhoods(stems: HashMap<String, u32>) -> Spelling {
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
    Spelling {
        surface_words,
        surface_index,
        deletes,
    }
}

/// The positions of the tools in name order (then position), what an empty query lists.
fn name_order(names: &[String]) -> Vec<u32> {
    let mut by_name: Vec<u32> = (0..names.len() as u32).collect();
    by_name.sort_by(|&a, &b| names[a as usize].cmp(&names[b as usize]).then(a.cmp(&b)));
    by_name
}

struct Builder<'a> {
    stemmer: &'a Stemmer,
    /// Surface word -> term id (each distinct word is stemmed once).
    stems: HashMap<String, u32>,
    terms: HashMap<String, u32>,
    postings: Vec<Vec<Posting>>,
}

impl Builder<'_> {
    /// Adds the postings of tool `doc` (its words per field, `f`); the length of each field.
    /// `pairs` is scratch space.
    fn add_postings(
        &mut self,
        doc: usize,
        f: &[Vec<String>; NF],
        pairs: &mut Vec<(u32, usize)>,
    ) -> [u16; NF] {
        pairs.clear();
        let mut lens = [0u16; NF];
        for (field, words) in f.iter().enumerate() {
            lens[field] = u16::try_from(words.len()).unwrap_or(u16::MAX);
            for w in words {
                pairs.push((self.term_of(w), field));
            }
        }
        pairs.sort_unstable();
        let doc32 = u32::try_from(doc).unwrap_or(u32::MAX);
        for chunk in pairs.chunk_by(|a, b| a.0 == b.0) {
            let mut tf = [0u8; NF];
            for &(_, field) in chunk {
                tf[field] = tf[field].saturating_add(1);
            }
            self.postings[chunk[0].0 as usize].push(Posting { doc: doc32, tf });
        }
        lens
    }

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
