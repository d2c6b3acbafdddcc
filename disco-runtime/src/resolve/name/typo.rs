//! Typo lookup: the catalog spellings within a typo of a request word, found through their
//! shared deletions (symmetric delete), and the neighbours precomputed for every catalog
//! spelling at build time (`TypoNeighbours`).

use super::NameIndex;
use crate::resolve::polarity::{
    typo_allowance, typo_possible_of, Polarity, Word, MAX_TYPO_ALLOWANCE,
};
use crate::text::edits::{each_char_deletion_hash, osa_within};
use crate::text::words::char_len;

/// The low bits of a packed neighbour that hold its distance.
const DISTANCE_BITS: u32 = 2;
const DISTANCE_MASK: u32 = (1 << DISTANCE_BITS) - 1;
// Every typo distance, up to the largest allowance, fits in the distance's bits.
const _: () = assert!(MAX_TYPO_ALLOWANCE as u32 <= DISTANCE_MASK);

/// Per catalog spelling, the spellings that share a deletion with it, in the order of
/// `NameIndex::typo_lookup`, each with its edit distance when it is a typo of the first.
///
/// Held as one array for all spellings, each neighbour in a `u32` (the spelling's number
/// shifted left by [`DISTANCE_BITS`], the distance, 0 for none, in the low bits: a typo is at
/// most [`MAX_TYPO_ALLOWANCE`] edits, which a compile-time check keeps within those bits),
/// rather than a list of pairs per spelling: numbered names (`tool_1` to
/// `tool_20000`) give each number a hundred neighbours or more, and the lists of pairs took
/// more memory than the rest of the name index.
#[derive(Default)]
pub(super) struct TypoNeighbours {
    /// Where each spelling's neighbours start in `packed`, and the end: one more than the
    /// spellings. Empty: nothing precomputed, every lookup is made in full.
    starts: Vec<u32>,
    packed: Vec<u32>,
}

impl TypoNeighbours {
    /// Spelling numbers from here on do not fit beside a distance: such a catalog (a billion
    /// words) is left to the lookup made per request.
    const MAX_SPELLINGS: usize = 1 << (u32::BITS - DISTANCE_BITS);

    /// The neighbours of every spelling of `index`, numbered from 0.
    pub(super) fn of(index: &NameIndex) -> TypoNeighbours {
        let count = index.spellings.len();
        if count >= Self::MAX_SPELLINGS {
            return TypoNeighbours::default();
        }
        let mut starts = Vec::with_capacity(count + 1);
        let mut packed = Vec::new();
        for (text, _) in &index.spellings {
            // Past `u32::MAX` neighbours in all (a catalog of billions of spellings shared):
            // nothing precomputed, as for too many spellings.
            let Ok(start) = u32::try_from(packed.len()) else {
                return TypoNeighbours::default();
            };
            starts.push(start);
            index.typo_lookup(text, &mut |spelling, distance| {
                let distance = u32::from(distance.unwrap_or(0));
                debug_assert!(distance as usize <= MAX_TYPO_ALLOWANCE);
                packed.push((spelling << DISTANCE_BITS) | distance.min(DISTANCE_MASK));
            });
        }
        let Ok(end) = u32::try_from(packed.len()) else {
            return TypoNeighbours::default();
        };
        starts.push(end);
        packed.shrink_to_fit();
        TypoNeighbours { starts, packed }
    }

    /// Calls `f(spelling, distance)` for each neighbour of spelling `id`, as
    /// `NameIndex::typo_lookup` of its text would; `false` when none were precomputed.
    pub(super) fn each(&self, id: u32, f: &mut impl FnMut(u32, Option<u8>)) -> bool {
        let id = id as usize;
        let (Some(&start), Some(&end)) = (self.starts.get(id), self.starts.get(id + 1)) else {
            return false;
        };
        let range = start as usize..end as usize;
        for &n in self.packed.get(range).unwrap_or_default() {
            let distance = (n & DISTANCE_MASK) as u8;
            f(n >> DISTANCE_BITS, (distance > 0).then_some(distance));
        }
        true
    }

    /// Forgets what was precomputed (tests: the lookups made in full must agree).
    #[cfg(test)]
    pub(super) fn clear(&mut self) {
        self.starts.clear();
        self.packed.clear();
    }
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
            for id in self.word_deletes.get(del) {
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
