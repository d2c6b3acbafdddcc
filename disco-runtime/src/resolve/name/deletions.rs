//! A symmetric-delete table: deletion hash -> the numbers (spellings or forms) it was made
//! from, held as one sorted array.
//!
//! A hash map of lists holds a list per hash, and almost every hash has one or two numbers:
//! a catalog of 20,000 tools makes hundreds of thousands of deletions, and a map entry with
//! its own allocation costs several times the 16 bytes a sorted pair does. A lookup is a
//! binary search, made a few dozen times per mistaken name, never on an exact one.

/// Deletion hash -> numbers, built by [`DeletionTable::build`].
#[derive(Default)]
pub(super) struct DeletionTable {
    /// Sorted by hash, then number; each pair once.
    pairs: Box<[(u64, u32)]>,
}

impl DeletionTable {
    /// The table of `pairs` (a hash and a number each), in any order, repeats allowed.
    pub(super) fn build(mut pairs: Vec<(u64, u32)>) -> DeletionTable {
        pairs.sort_unstable();
        pairs.dedup();
        DeletionTable {
            pairs: pairs.into_boxed_slice(),
        }
    }

    /// The numbers under `hash`, in increasing order (the order in which a build that adds
    /// them number by number would have listed them).
    pub(super) fn get(&self, hash: u64) -> impl Iterator<Item = u32> + '_ {
        let start = self.pairs.partition_point(|&(h, _)| h < hash);
        self.pairs[start..]
            .iter()
            .take_while(move |&&(h, _)| h == hash)
            .map(|&(_, id)| id)
    }

    /// Number of pairs held.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.pairs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::DeletionTable;
    use crate::text::hash::FastMap;

    /// The table answers as the map of lists it replaces, built number by number: for every
    /// hash, the same numbers in the same order, and nothing for a hash never added.
    #[test]
    fn answers_as_a_map_of_lists() {
        // Hashes drawn from a small range so that many numbers share one, with repeats.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut pairs = Vec::new();
        let mut map: FastMap<u64, Vec<u32>> = FastMap::default();
        for id in 0..2_000u32 {
            for _ in 0..(next() % 6) {
                let hash = next() % 500;
                pairs.push((hash, id));
                let list = map.entry(hash).or_default();
                if list.last() != Some(&id) {
                    list.push(id);
                }
            }
        }
        // Pairs arrive in any order.
        pairs.reverse();
        let table = DeletionTable::build(pairs);
        assert_eq!(table.len(), map.values().map(Vec::len).sum::<usize>());
        for hash in 0..600 {
            let got: Vec<u32> = table.get(hash).collect();
            assert_eq!(got, map.get(&hash).cloned().unwrap_or_default(), "{hash}");
        }
        assert_eq!(table.get(u64::MAX).count(), 0);
        assert_eq!(DeletionTable::default().get(0).count(), 0);
    }
}
