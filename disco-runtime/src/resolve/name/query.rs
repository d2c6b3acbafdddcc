//! The requested name, analysed once per call: its words, their singulars and synonym
//! classes, and the keys of tier 3.

use super::cost::is_filler;
use super::equivalent::bag_key;
use super::relation;
use super::MAX_NAME_LEN;
use crate::resolve::polarity::{
    fused_ids, inflected_ids, is_negation, negates_known_word, Polarity, Word,
};
use crate::resolve::vocab::canon;
use crate::text::words::{singular, split_words};

/// A word's `inflected_ids`, found on first need.
type LazyIds = std::cell::OnceCell<Option<Box<[u16]>>>;

/// The requested name, analysed once per call.
pub(super) struct Query {
    pub(super) raw: Vec<String>,
    pub(super) stems: Vec<String>,
    /// `Polarity::of` each of `stems`, computed on first use: only the fuzzy tier needs it.
    stem_polarity: std::cell::OnceCell<Vec<Polarity>>,
    /// `inflected_ids` of each word as written (`raw`), each computed on first use: a word's
    /// ids matter only against a word that has ids of its own, which most words lack.
    raw_inflected: std::cell::OnceCell<Box<[LazyIds]>>,
    /// `negates_known_word` of each of `stems`, computed on first use: it depends on the
    /// word alone (and the catalog), not on the form it is compared with.
    negates_known: std::cell::OnceCell<Vec<bool>>,
    /// Per word as written: a negation (`is_negation`); per stem: a filler (`is_filler`).
    /// Computed on first use, then read for every form the request is scored against.
    negations_fillers: std::cell::OnceCell<(Vec<bool>, Vec<bool>)>,
    pub(super) canon: Vec<&'static str>,
    pub(super) compact: String,
    pub(super) stem_compact: String,
    pub(super) bag: String,
    /// `fused_ids(compact)`, computed on first use: most requests never need it.
    pub(super) fused: std::cell::OnceCell<Vec<u16>>,
    /// Whether a word of `raw` is relational (`relation.rs`).
    pub(super) relational: bool,
}

impl Query {
    pub(super) fn fused(&self) -> &[u16] {
        self.fused.get_or_init(|| fused_ids(&self.compact))
    }

    pub(super) fn stem_polarity(&self) -> &[Polarity] {
        self.stem_polarity
            .get_or_init(|| self.stems.iter().map(|s| Polarity::of(s)).collect())
    }

    /// `inflected_ids` of word `i` as written.
    pub(super) fn raw_inflected(&self, i: usize) -> Option<&[u16]> {
        let cells = self.raw_inflected.get_or_init(|| {
            (0..self.raw.len())
                .map(|_| std::cell::OnceCell::new())
                .collect()
        });
        let cell = cells.get(i)?;
        cell.get_or_init(|| inflected_ids(&self.raw[i])).as_deref()
    }

    /// Whether each of `stems` negates a word `known` (the catalog) or the tables hold. The
    /// first call's `known` is kept: a query is only ever ranked against the index it was
    /// made for.
    pub(super) fn negates_known(&self, known: &dyn Fn(&str) -> bool) -> &[bool] {
        self.negates_known.get_or_init(|| {
            let polarity = self.stem_polarity();
            (self.stems.iter().zip(polarity))
                .map(|(s, p)| negates_known_word(Word::new(s, p), known))
                .collect()
        })
    }

    /// Whether each word as written is a negation (`is_negation`).
    pub(super) fn negations(&self) -> &[bool] {
        &self.negations_fillers().0
    }

    /// Whether each stem is a filler word (`cost::is_filler`).
    pub(super) fn fillers(&self) -> &[bool] {
        &self.negations_fillers().1
    }

    fn negations_fillers(&self) -> &(Vec<bool>, Vec<bool>) {
        self.negations_fillers.get_or_init(|| {
            let negations = self.raw.iter().map(|w| is_negation(w)).collect();
            (negations, self.stems.iter().map(|s| is_filler(s)).collect())
        })
    }

    pub(super) fn new(requested: &str) -> Query {
        let raw = if requested.len() > MAX_NAME_LEN {
            Vec::new()
        } else {
            split_words(requested)
        };
        let stems: Vec<String> = raw.iter().map(|w| singular(w)).collect();
        let canon = stems.iter().map(|s| canon(s)).collect();
        Query {
            relational: relation::any_relational(&raw),
            compact: raw.concat(),
            stem_compact: stems.concat(),
            bag: bag_key(&stems),
            raw,
            stem_polarity: std::cell::OnceCell::new(),
            raw_inflected: std::cell::OnceCell::new(),
            negates_known: std::cell::OnceCell::new(),
            negations_fillers: std::cell::OnceCell::new(),
            stems,
            canon,
            fused: std::cell::OnceCell::new(),
        }
    }
}
