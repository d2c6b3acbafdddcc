//! A symmetric-delete table: deletion hash -> the numbers (spellings or forms) it was made
//! from, held as one sorted array cut into buckets.
//!
//! A hash map of lists holds a list per hash, and almost every hash has one or two numbers:
//! a catalog of 20,000 tools makes hundreds of thousands of deletions, and a map entry with
//! its own allocation costs several times the 16 bytes a sorted pair does. A lookup is made a
//! few dozen times per mistaken name (once per deletion of each request word), never on an
//! exact one: a binary search over every pair took a hundred instructions and more each, so
//! the pairs are grouped by the high bits of their mixed hash, and a lookup reads where its
//! bucket starts and scans the few pairs there (a table of one to two bytes a pair).

/// Deletion hash -> numbers, built by [`DeletionTable::build`].
#[derive(Default)]
pub(super) struct DeletionTable {
    /// Sorted by bucket, then hash, then number; each pair once.
    pairs: Box<[(u64, u32)]>,
    /// Where each bucket's pairs start in `pairs`, and the end: one more than the buckets.
    /// Empty when the pairs are not bucketed (sorted by hash alone, found by binary search).
    starts: Box<[u32]>,
    /// `64 - log2(buckets)`: a hash's bucket is the high bits of its mixed value.
    shift: u32,
}

/// The bucket of `hash` in a table of `64 - shift` bits of buckets. The hashes are polynomial
/// keys (`text::edits`), whose low bits depend on the low bits of the bytes only: the bucket is the high bits of the
/// hash times an odd constant (Fibonacci hashing), which every bit of the hash reaches.
fn bucket(hash: u64, shift: u32) -> usize {
    (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl DeletionTable {
    /// The table of `pairs` (a hash and a number each), in any order, repeats allowed: about
    /// one bucket for every two to four pairs.
    pub(super) fn build(pairs: Vec<(u64, u32)>) -> DeletionTable {
        // Bucket starts are `u32`: past that many pairs (billions), binary search.
        let bits = if u32::try_from(pairs.len()).is_ok() {
            (pairs.len() / 2).max(2).ilog2()
        } else {
            0
        };
        Self::build_with(pairs, bits)
    }

    /// The table of `pairs` with `2^bits` buckets (at most 2^31); none (binary search) for 0.
    fn build_with(mut pairs: Vec<(u64, u32)>, bits: u32) -> DeletionTable {
        let bits = bits.min(31);
        pairs.sort_unstable();
        pairs.dedup();
        if bits == 0 || u32::try_from(pairs.len()).is_err() {
            return DeletionTable {
                pairs: pairs.into_boxed_slice(),
                starts: Box::default(),
                shift: 0,
            };
        }
        let shift = 64 - bits;
        // Counted into their buckets in the order of the sort, so that within a bucket they
        // stay sorted by hash, then number. Fits: fewer pairs than `u32::MAX` (checked above).
        let buckets = 1usize << bits;
        let mut starts = vec![0u32; buckets + 1];
        for &(h, _) in &pairs {
            starts[bucket(h, shift) + 1] += 1;
        }
        for b in 0..buckets {
            starts[b + 1] += starts[b];
        }
        let mut next = starts.clone();
        let mut placed = vec![(0u64, 0u32); pairs.len()];
        for &(h, id) in &pairs {
            let at = &mut next[bucket(h, shift)];
            placed[*at as usize] = (h, id);
            *at += 1;
        }
        DeletionTable {
            pairs: placed.into_boxed_slice(),
            starts: starts.into_boxed_slice(),
            shift,
        }
    }

    /// The numbers under `hash`, in increasing order (the order in which a build that adds
    /// them number by number would have listed them).
    pub(super) fn get(&self, hash: u64) -> impl Iterator<Item = u32> + '_ {
        let pairs = if self.starts.is_empty() {
            let start = self.pairs.partition_point(|&(h, _)| h < hash);
            &self.pairs[start..]
        } else {
            let b = bucket(hash, self.shift);
            let (start, end) = match (self.starts.get(b), self.starts.get(b + 1)) {
                (Some(&start), Some(&end)) => (start as usize, end as usize),
                _ => (0, 0),
            };
            self.pairs.get(start..end).unwrap_or_default()
        };
        pairs
            .iter()
            .skip_while(move |&&(h, _)| h < hash)
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
        // Hashes over the whole range too, many sharing their high or their low bits.
        let mut wide: Vec<u64> = (0..500).collect();
        for _ in 0..300 {
            let hash = next();
            let low = next() % 8;
            wide.extend([
                hash,
                hash | 0xFFFF,
                hash & !0xFFFF,
                low << 61,
                u64::MAX - low,
            ]);
        }
        for &hash in &wide[500..] {
            for _ in 0..(next() % 3) {
                let id = (next() % 2_000) as u32;
                pairs.push((hash, id));
                let list = map.entry(hash).or_default();
                if !list.contains(&id) {
                    list.push(id);
                    list.sort_unstable();
                }
            }
        }
        for list in map.values_mut() {
            list.sort_unstable();
        }
        let by_build = DeletionTable::build(pairs.clone());
        // No buckets, one, a few, about one a pair, and many more buckets than pairs.
        let tables = [0, 1, 3, 12, 20].map(|bits| DeletionTable::build_with(pairs.clone(), bits));
        for table in tables.iter().chain([&by_build]) {
            assert_eq!(table.len(), map.values().map(Vec::len).sum::<usize>());
            for &hash in &wide {
                let got: Vec<u32> = table.get(hash).collect();
                assert_eq!(got, map.get(&hash).cloned().unwrap_or_default(), "{hash}");
            }
            assert_eq!(table.get(600).count(), 0);
        }
        assert_eq!(DeletionTable::default().get(0).count(), 0);
        assert_eq!(DeletionTable::build(Vec::new()).get(0).count(), 0);
    }
}
