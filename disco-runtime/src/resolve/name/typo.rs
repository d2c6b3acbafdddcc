//! Typo lookup: the catalog spellings within a typo of a request word, found through their
//! shared deletions (symmetric delete), and the `Neighbour`s precomputed for every catalog
//! spelling at build time.

use super::NameIndex;
use crate::resolve::polarity::{typo_allowance, typo_possible_of, Polarity, Word};
use crate::text::edits::{each_char_deletion_hash, osa_within};
use crate::text::words::char_len;

/// A catalog spelling that shares a deletion with another (see `NameIndex::typo_lookup`).
pub(super) struct Neighbour {
    /// Position in `NameIndex::spellings`.
    pub(super) spelling: u32,
    /// The edit distance when the spelling is a typo of the other one.
    pub(super) distance: Option<u8>,
}

impl NameIndex {
    /// Calls `f(spelling, distance)` for every catalog spelling (its number) that shares a
    /// deletion with `written`, once each, in the order in which `written`'s deletions first
    /// reach them. `distance` is `None` when the spelling is not a typo of `written`: farther
    /// than the typo allowance of the longer of the two, the same word, or its opposite. The
    /// caller still sees those, so that a spelling ruled out for one form of a request word is
    /// not taken for another form of it.
    pub(super) fn typo_lookup(&self, written: &str, f: &mut impl FnMut(u32, Option<u8>)) {
        let len = char_len(written);
        let polarity = Polarity::of(written);
        let written_word = Word::new(written, &polarity);
        // A spelling shares many deletions with a word close to it: measure it once.
        let mut seen: Vec<u32> = Vec::new();
        each_char_deletion_hash(written, typo_allowance(len), &mut |del| {
            let Some(ids) = self.word_deletes.get(&del) else {
                return;
            };
            for &id in ids {
                if seen.contains(&id) {
                    continue;
                }
                seen.push(id);
                let text = &*self.spellings[id as usize].0;
                let text_len = char_len(text);
                let limit = typo_allowance(len.max(text_len));
                // Only whether it is within the limit matters: measured with that bound (the
                // lengths alone may rule it out).
                let d = osa_within(written, text, limit).unwrap_or(usize::MAX);
                // `unecosystem` is two letters from `ecosystem`, but its negation, and
                // `reinstall` two from `uninstall`: a change of prefix is never a typo.
                let typo = d > 0
                    && d <= limit
                    && typo_possible_of(
                        written_word,
                        Word::new(text, &self.spelling_polarity[id as usize]),
                    );
                f(id, typo.then_some(d as u8));
            }
        });
    }
}
