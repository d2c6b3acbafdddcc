//! A query as the index reads it: its distinct words, each with the terms it may match
//! (itself, its synonyms, or its one-edit spelling neighbours) and their weights.

use std::collections::{HashMap, HashSet};

use super::analyze::{stem_word, words_into};
use super::vocab::GENERIC;
use super::{SearchIndex, MAX_QUERY_TERMS};
use crate::text::edits::{for_each_delete, within_one_edit};

/// Typo tolerance starts at this many characters: shorter words have too many neighbours
/// ("cat", "car", "cap").
pub(super) const TYPO_MIN_CHARS: usize = 5;

/// One query word with everything it may match.
pub(super) struct QueryWord {
    pub(super) weight: f32,
    pub(super) variants: Vec<(u32, f32)>,
    /// Per variant: whether this word is the one that claims the term for name coverage (a
    /// name word covered by two query words, as itself and as a synonym, counts once).
    pub(super) claims: Vec<bool>,
}

impl SearchIndex {
    /// The query's distinct words, each with the terms it may match and their weights.
    pub(super) fn query_words(&self, query: &str) -> Vec<QueryWord> {
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
}
