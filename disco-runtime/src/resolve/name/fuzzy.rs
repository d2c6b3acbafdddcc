//! Tier 4, the candidates: every visible form that shares a word (as written, misspelled or
//! synonymous) with the request, scored by `cost.rs`, cheapest first, one per tool; and
//! the bounds that keep the gathering cheap on large catalogs.

use super::cost::{is_filler, score, EXTRA, FILLER, UNIT};
use super::decide::MARGIN;
use super::equivalent::bag_key;
use super::index::Form;
use super::query::Query;
use super::suggest::MAX_SUGGESTIONS;
use super::{NameIndex, Rule};
use crate::resolve::meaning::{read_word, Reading, RequestWord};
use crate::resolve::vocab::is_known_word;
use crate::text::edits::{each_char_deletion_hash, osa_distance, osa_within};
use crate::text::hash::{FastMap, FastSet};
use crate::text::words::char_len;
use std::collections::hash_map::Entry;

/// A second posting list longer than this is not scanned (see `NameIndex::fuzzy`).
const SCAN_LIMIT: usize = 256;
/// Visible tools scored for suggestions only, beyond those sharing the rarest word.
const SUGGESTION_SCAN: usize = 48;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Same,
    Synonym,
    Typo,
    /// Within a typo of the catalog word, but a known word itself: matched like a typo,
    /// never corrected (`resolve/meaning.rs`).
    Guess,
    /// A word opposed to the catalog word, or a misspelling as close to its opposite: never
    /// matched, and the candidate is blocked.
    Opposed,
}

/// Fuzzy candidates, cheapest first, one per tool.
pub(super) struct FuzzyCandidates {
    pub(super) candidates: Vec<Candidate>,
    /// Every tool that could come within the margin of the best was scored.
    pub(super) complete: bool,
}

#[derive(Clone, Debug)]
pub(super) struct Candidate {
    pub(super) tool: usize,
    pub(super) cost: u32,
    pub(super) rule: Rule,
    /// Within the fuzzy tier's limits on its own (before comparing with the runner-up).
    pub(super) correctable: bool,
    /// Differs from the request by an opposite: never corrected to, never suggested.
    pub(super) blocked: bool,
}

impl NameIndex {
    /// The rules of meaning on request word `i`'s typo entries: a request word that is a word
    /// (English, APIs, or a word of a tool the caller sees) is no misspelling of another word,
    /// and a misspelling as close to an opposite, a word of APIs or another visible catalog
    /// word is not a correction (`resolve/meaning.rs`). Words of hidden tools count for
    /// nothing here, so that whether a typo is corrected reveals none of them.
    fn read_typos(
        &self,
        query: &Query,
        i: usize,
        list: &mut [(&str, u32, Kind)],
        visible: &dyn Fn(usize) -> bool,
    ) {
        if !list.iter().any(|e| e.2 == Kind::Typo) {
            return;
        }
        let seen = |word: &str| self.visible_word(word, visible);
        let (raw, stem) = (query.raw[i].as_str(), query.stems[i].as_str());
        // Known as written, or as a catalog word; a singular made by rule is no word of its
        // own (`nots` is not `not`).
        let known = is_known_word(raw) || seen(stem) || (stem != raw && seen(raw));
        // Another catalog word as close competes through the tools it stands in: the margin
        // of `decide` refuses a correction when another visible tool is as close. A word of
        // no visible tool names nothing the request could mean (`polt_sine_wave` is
        // `plot_sine_wave` although `poll` is a word of another tool).
        let (as_stem, as_raw) = (RequestWord::new(stem, known), RequestWord::new(raw, known));
        for entry in list.iter_mut().filter(|e| e.2 == Kind::Typo) {
            let d = (entry.1 / UNIT) as usize;
            // The word as written is weighed too: `moonlets` is a misspelled `moonless` (the
            // opposite of `moonlit`) though its rule-made singular `moonlet` is closer to
            // `moonlit`.
            let by_stem = read_word(&as_stem, entry.0, d, self);
            let by_raw = if raw == stem {
                by_stem
            } else {
                let d_raw = osa_distance(raw, entry.0);
                read_word(&as_raw, entry.0, d_raw, self)
            };
            let reading = if by_raw == Reading::Opposed {
                by_raw
            } else {
                by_stem
            };
            entry.2 = match reading {
                Reading::Typo => Kind::Typo,
                Reading::Word => Kind::Guess,
                Reading::Opposed => Kind::Opposed,
            };
        }
    }

    /// How many forms of visible tools the stems of `list` post, counted up to one past `cap`
    /// (at most `SCAN_LIMIT`): which word is rarest, and whether the second is scanned, must
    /// not depend on hidden tools (a catalog's hidden part would otherwise decide what a
    /// caller's request is corrected to). Counting stops past the cap, so a common word costs
    /// at most `cap + 1` visibility checks.
    fn visible_postings(
        &self,
        list: &[(&str, u32, Kind)],
        visible: &dyn Fn(usize) -> bool,
        cap: usize,
    ) -> usize {
        let cap = cap.min(SCAN_LIMIT);
        let mut size = 0;
        for (word, _, _) in list {
            for &f in self.postings.get(*word).map_or(&[][..], Vec::as_slice) {
                if visible(self.forms[f as usize].tool) {
                    size += 1;
                    if size > cap {
                        return size;
                    }
                }
            }
        }
        size
    }

    /// How many forms the stems of `list` post, visible or not: a bound on
    /// `visible_postings`.
    fn all_postings(&self, list: &[(&str, u32, Kind)]) -> usize {
        list.iter()
            .map(|(word, _, _)| self.postings.get(*word).map_or(0, Vec::len))
            .sum()
    }

    /// Scores every visible form that shares a word (as written, misspelled or synonymous)
    /// with the request, cheapest first, one entry per tool.
    pub(super) fn fuzzy(&self, query: &Query, visible: &dyn Fn(usize) -> bool) -> FuzzyCandidates {
        if query.stems.is_empty() || query.stems.len() > 16 {
            return FuzzyCandidates {
                candidates: Vec::new(),
                complete: true,
            };
        }
        // For each request word: the catalog stems it may stand for, with the cost of that.
        let expansions: Vec<Vec<(&str, u32, Kind)>> = (0..query.stems.len())
            .map(|i| self.expand(query, i, visible))
            .collect();
        let order = self.rarest_first(query, &expansions, visible);
        let (mut first, mut second, complete) = self.sharing_forms(query, &expansions, &order);
        let by_letters = self.forms_by_letters(query);
        first.extend_from_slice(&by_letters);
        first.sort_unstable();
        first.dedup();
        second.sort_unstable();
        second.dedup();

        let mut scorer = Scorer {
            index: self,
            query,
            expansions: &expansions,
            by_letters: &by_letters,
            visible,
            // At most one candidate a tool, and most tools of the rarest word's forms score.
            best: FastMap::with_capacity_and_hasher(first.len(), Default::default()),
        };
        for &f in &first {
            let form = &self.forms[f as usize];
            if scorer.close_in_length(form) && visible(form.tool) {
                scorer.score(f);
            }
        }
        let (threshold, mut budget) = scorer.second_bounds();
        for &f in &second {
            if first.binary_search(&f).is_ok() {
                continue;
            }
            let form = &self.forms[f as usize];
            if !scorer.close_in_length(form) {
                continue;
            }
            let uncovered = (form.stems.len() + 1).saturating_sub(query.stems.len()) as u32;
            if EXTRA + FILLER * uncovered >= threshold || !visible(form.tool) {
                continue;
            }
            if budget == 0 {
                break;
            }
            budget -= 1;
            scorer.score(f);
        }
        let mut candidates: Vec<Candidate> = scorer.best.into_values().collect();
        candidates.sort_by_key(|c| (c.cost, c.tool));
        FuzzyCandidates {
            candidates,
            complete,
        }
    }

    /// The catalog stems request word `i` may stand for, with the cost of that: itself, its
    /// synonyms, and the catalog words within a typo of it (as read by `read_typos`).
    fn expand(
        &self,
        query: &Query,
        i: usize,
        visible: &dyn Fn(usize) -> bool,
    ) -> Vec<(&str, u32, Kind)> {
        let stem = &query.stems[i];
        // Room for the word, a few synonyms and typo targets without growing on every push.
        let mut list: Vec<(&str, u32, Kind)> = Vec::with_capacity(16);
        if let Some((key, _)) = self.postings.get_key_value(&**stem) {
            list.push((key, 0, Kind::Same));
        }
        if let Some(members) = self
            .class_members
            .get(query.canon[i])
            .filter(|_| !query.canon[i].is_empty())
        {
            for member in members {
                if **member != **stem {
                    list.push((member, UNIT, Kind::Synonym));
                }
            }
        }
        // Symmetric deletes: a catalog word within reach shares a deletion with the request
        // word (or is one). The allowance follows the longer of the two words, so a letter
        // dropped from a short word (`dor` for `door`) is still found.
        let mut seen: FastSet<u32> = FastSet::with_capacity_and_hasher(16, Default::default());
        let raw = query.raw[i].as_str();
        // As written first: a catalog word of English keeps the number WordNet gives it
        // (`politics`), which a misspelling's rule-made singular (`poliitic`) may miss.
        for written in [raw, stem.as_str()]
            .into_iter()
            .take(if raw == stem { 1 } else { 2 })
        {
            // A spelling reached once for this request word is settled, typo or not.
            let mut add = |id: u32, d: Option<u8>| {
                let target = &*self.spellings[id as usize].1;
                if target != stem.as_str() && seen.insert(id) {
                    if let Some(d) = d {
                        list.push((target, UNIT * u32::from(d), Kind::Typo));
                    }
                }
            };
            let cached = self
                .spelling_ids
                .get(written)
                .is_some_and(|&id| self.typo_neighbours.each(id, &mut add));
            if !cached {
                self.typo_lookup(written, &mut add);
            }
        }
        self.read_typos(query, i, &mut list, visible);
        list
    }

    /// The request's two rarest content words (of all its words if it has none), rarest
    /// first: `(forms of visible tools it reaches, word)`. A correctable candidate leaves at
    /// most one request content word unmatched (fillers cost little), so it shares a word with
    /// one of the two most specific content words.
    fn rarest_first(
        &self,
        query: &Query,
        expansions: &[Vec<(&str, u32, Kind)>],
        visible: &dyn Fn(usize) -> bool,
    ) -> Vec<(usize, usize)> {
        let content: Vec<usize> = (0..query.stems.len())
            .filter(|&i| !is_filler(&query.stems[i]))
            .collect();
        let selection = if content.is_empty() {
            (0..query.stems.len()).collect()
        } else {
            content
        };
        // Only the two rarest are used (`sharing_forms`), so a word's visible forms are
        // counted only while it may still be one of them: the words are taken by how many
        // forms they post at all (a bound on the visible ones), and once two are counted, a
        // count stops past the second's. The two it keeps are counted exactly: the same two,
        // in the same order, as counting every word to `SCAN_LIMIT`.
        let mut by_bound: Vec<(usize, usize)> = selection
            .iter()
            .map(|&i| (self.all_postings(&expansions[i]), i))
            .collect();
        by_bound.sort_unstable();
        let mut order: Vec<(usize, usize)> = Vec::with_capacity(3);
        for (_, i) in by_bound {
            let cap = if order.len() < 2 {
                SCAN_LIMIT
            } else {
                order[1].0
            };
            let size = self.visible_postings(&expansions[i], visible, cap);
            if order.len() == 2 && (size, i) > order[1] {
                continue;
            }
            order.push((size, i));
            order.sort_unstable();
            order.truncate(2);
        }
        order
    }

    /// The forms to score: `first`, those with the rarest word, scored in full; `second`,
    /// those with the second rarest, scored only when they can still matter; and whether
    /// every form that could come close is among them.
    fn sharing_forms(
        &self,
        query: &Query,
        expansions: &[Vec<(&str, u32, Kind)>],
        order: &[(usize, usize)],
    ) -> (Vec<u32>, Vec<u32>, bool) {
        let mut first: Vec<u32> = Vec::new();
        let mut second: Vec<u32> = Vec::new();
        let mut complete = true;
        for (rank, &(size, i)) in order.iter().take(2).enumerate() {
            let forms = if rank == 0 { &mut first } else { &mut second };
            if rank == 1 && size > SCAN_LIMIT {
                // The second word is common (`get`, `details`): rather than scanning every tool
                // that has it, look up the only kind of tool without the rarest word that can
                // come close, the request minus that word. Farther ones may be missed, so the
                // ranking is marked incomplete and only the closest corrections are allowed.
                complete = false;
                let skip = order[0].1;
                let rest: Vec<&str> = (0..query.stems.len())
                    .filter(|&k| k != skip)
                    .map(|k| query.stems[k].as_str())
                    .collect();
                if let Some(list) = self.by_bag.get(bag_key(&rest).as_str()) {
                    forms.extend_from_slice(list);
                }
                continue;
            }
            for (word, _, _) in &expansions[i] {
                if let Some(list) = self.postings.get(*word) {
                    forms.extend_from_slice(list);
                }
            }
        }
        (first, second, complete)
    }

    /// Letters only, for requests that lost their word boundaries: the forms whose compact
    /// spelling is within one deletion of the request's, in order.
    fn forms_by_letters(&self, query: &Query) -> Vec<u32> {
        let mut by_letters: Vec<u32> = Vec::new();
        if char_len(&query.compact) >= 6 {
            each_char_deletion_hash(&query.compact, 1, &mut |del| {
                by_letters.extend(self.compact_deletes.get(del));
            });
            by_letters.sort_unstable();
            by_letters.dedup();
            // A shared deletion is within two edits: a hit farther than that is a collision of
            // the deletion keys, not a neighbour.
            by_letters.retain(|&form| {
                osa_within(&query.compact, &self.forms[form as usize].compact, 2).is_some()
            });
        }
        by_letters
    }
}

/// The forms of one request being scored, the cheapest candidate of each tool kept.
struct Scorer<'s, 'i> {
    index: &'i NameIndex,
    query: &'s Query,
    expansions: &'s [Vec<(&'i str, u32, Kind)>],
    /// The forms found by their letters alone (`NameIndex::forms_by_letters`).
    by_letters: &'s [u32],
    visible: &'s dyn Fn(usize) -> bool,
    best: FastMap<usize, Candidate>,
}

impl Scorer<'_, '_> {
    /// Three words more or fewer cannot come close (a cheap filter before scoring).
    fn close_in_length(&self, form: &Form) -> bool {
        let words = self.query.stems.len();
        form.stems.len() <= words + 2 && words <= form.stems.len() + 2
    }

    /// Scores form `f`; kept when it is its tool's cheapest (an unblocked one first).
    fn score(&mut self, f: u32) {
        let index = self.index;
        let form = &index.forms[f as usize];
        let letters = self.by_letters.binary_search(&f).is_ok();
        // Words of tools the caller can see only: a hidden tool's word must not decide whether
        // a request word negates a known one (`disarm` beside a hidden `arm`).
        let visible = self.visible;
        let known = |w: &str| index.visible_word(w, visible);
        let candidate = score(index, self.query, form, self.expansions, letters, &known);
        // One lookup for both the comparison and the replacement.
        match self.best.entry(form.tool) {
            Entry::Occupied(mut kept) => {
                let old = kept.get();
                if (old.blocked, old.cost) > (candidate.blocked, candidate.cost) {
                    kept.insert(candidate);
                }
            }
            Entry::Vacant(slot) => {
                slot.insert(candidate);
            }
        }
    }

    /// What a form without the rarest word must cost less than to be scored, and how many
    /// such forms may be. It pays for that word as an extra word, and for each of its own
    /// words the rest of the request cannot cover; once it cannot reach the margin of the best
    /// nor the suggestions, it need not be scored. When the best so far may be applied, only
    /// its runners-up matter; otherwise the suggestions do, but scoring tools that share only a
    /// common word is capped (they are weak suggestions anyway).
    fn second_bounds(&self) -> (u32, usize) {
        let mut costs: Vec<(u32, usize)> = self.best.values().map(|c| (c.cost, c.tool)).collect();
        costs.sort_unstable();
        let Some(&(b, tool)) = costs.first() else {
            return (u32::MAX, usize::MAX);
        };
        let applicable = self.best[&tool].correctable && !self.index.destructive[tool];
        if applicable {
            (b + MARGIN, usize::MAX)
        } else {
            let threshold = (b + MARGIN).max(costs.get(MAX_SUGGESTIONS - 1).map_or(0, |c| c.0));
            (threshold, SUGGESTION_SCAN)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::NameEntry;
    use super::*;

    /// The two rarest request words, each counted only while it may still be one of them, are
    /// the two that counting every word's visible forms to the scan limit and sorting gives:
    /// generated catalogs of a few shared words (some posting more forms than the limit), a
    /// random part of them hidden, requests of those words and of fillers.
    #[test]
    fn the_two_rarest_words_are_those_counting_every_word_gives() {
        let words = ["get", "list", "file", "user", "repo", "with", "tool"];
        let mut rng = fastrand::Rng::with_seed(0x2A_5EED);
        let mut saturated = 0usize;
        for _ in 0..30 {
            let n = rng.usize(1..1500);
            let name = |rng: &mut fastrand::Rng, most: usize| -> String {
                (0..rng.usize(1..most))
                    .map(|_| words[rng.usize(..words.len())])
                    .collect::<Vec<_>>()
                    .join("_")
            };
            let names: Vec<String> = (0..n).map(|_| name(&mut rng, 4)).collect();
            let ix = NameIndex::new(names.iter().map(|name| NameEntry {
                name,
                aliases: &[],
                destructive: false,
            }));
            let share = rng.usize(0..=4);
            let hidden: Vec<bool> = (0..n).map(|_| rng.usize(..4) < share).collect();
            let visible = |t: usize| !hidden[t];
            for _ in 0..20 {
                let query = Query::new(&name(&mut rng, 6));
                let expansions: Vec<Vec<(&str, u32, Kind)>> = (0..query.stems.len())
                    .map(|i| ix.expand(&query, i, &visible))
                    .collect();
                let got = ix.rarest_first(&query, &expansions, &visible);
                let content: Vec<usize> = (0..query.stems.len())
                    .filter(|&i| !is_filler(&query.stems[i]))
                    .collect();
                let selection: Vec<usize> = if content.is_empty() {
                    (0..query.stems.len()).collect()
                } else {
                    content
                };
                let mut every: Vec<(usize, usize)> = selection
                    .iter()
                    .map(|&i| (ix.visible_postings(&expansions[i], &visible, SCAN_LIMIT), i))
                    .collect();
                every.sort_unstable();
                saturated += usize::from(every.last().is_some_and(|w| w.0 > SCAN_LIMIT));
                every.truncate(2);
                assert_eq!(got, every, "{:?} among {n} tools", query.raw);
            }
        }
        assert!(
            saturated > 20,
            "only {saturated} requests with a word past the limit"
        );
    }
}
