//! Keywords learned from traffic (`crate::learn`): an input to ranking only. They are held
//! apart from the tools' fields, so nothing that publishes a tool's words (search hints,
//! group words, instructions, descriptions, docs, lint) can see them; a query word that is a
//! tool's learned keyword adds at most the keyword's weight (capped when set) times the
//! score of one distinctive word, and a tool's learned words together at most
//! [`MAX_LEARNED_SCORE`] of it. Only tools the caller can see are scored, as for every field.

use std::collections::HashMap;
use std::sync::Arc;

use super::analyze::{stem_word, words_into};
use super::SearchIndex;

/// The most one tool's learned keywords add to its score, in units of one distinctive
/// word's match.
pub const MAX_LEARNED_SCORE: f32 = 1.0;
/// The most one learned keyword weighs.
pub const MAX_LEARNED_WEIGHT: f32 = 0.5;

/// Stemmed word -> (tool position, weight).
#[derive(Default)]
pub(super) struct LearnedWords {
    by_stem: HashMap<String, Vec<(u32, f32)>>,
}

impl SearchIndex {
    /// Sets the learned keywords, `(tool name, word, weight)` each (weights capped at
    /// [`MAX_LEARNED_WEIGHT`]); a name the index does not hold is ignored. Replaces the
    /// previous set; an empty slice clears it.
    pub fn set_learned(&self, keywords: &[(String, String, f32)]) {
        let learned = if keywords.is_empty() {
            None
        } else {
            let position: HashMap<&str, u32> = self
                .names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.as_str(), i as u32))
                .collect();
            let mut words = LearnedWords::default();
            let mut buf = Vec::new();
            for (tool, word, weight) in keywords {
                let Some(&d) = position.get(tool.as_str()) else {
                    continue;
                };
                let weight = weight.clamp(0.0, MAX_LEARNED_WEIGHT);
                buf.clear();
                words_into(word, &mut buf);
                for w in &buf {
                    let entry = words
                        .by_stem
                        .entry(stem_word(&self.stemmer, w))
                        .or_default();
                    if !entry.iter().any(|e| e.0 == d) {
                        entry.push((d, weight));
                    }
                }
            }
            Some(Arc::new(words))
        };
        *crate::util::write(&self.learned) = learned;
    }

    /// What the learned keywords add to each visible tool for `query`, in units of one
    /// distinctive word's match: (position, addition), nothing without learned keywords.
    pub(super) fn learned_scores(&self, query: &str, visible: &[bool]) -> Vec<(usize, f32)> {
        let Some(learned) = crate::util::read(&self.learned).clone() else {
            return Vec::new();
        };
        let mut raw = Vec::new();
        words_into(query, &mut raw);
        let mut stems: Vec<String> = raw.iter().map(|w| stem_word(&self.stemmer, w)).collect();
        stems.sort();
        stems.dedup();
        let mut added: HashMap<usize, f32> = HashMap::new();
        for s in &stems {
            for &(d, w) in learned.by_stem.get(s).into_iter().flatten() {
                let d = d as usize;
                if visible.get(d).copied().unwrap_or(false) {
                    let e = added.entry(d).or_default();
                    *e = (*e + w).min(MAX_LEARNED_SCORE);
                }
            }
        }
        let mut out: Vec<(usize, f32)> = added.into_iter().collect();
        out.sort_by_key(|e| e.0);
        out
    }
}
