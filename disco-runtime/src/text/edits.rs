//! Edit neighbourhoods: the deletions a symmetric-delete typo index is built from and looked
//! up with, and a bounded edit-distance test.

use super::hash::fnv;

/// Calls `f` with `word` and every string obtained by deleting up to `k` characters from it,
/// spelled out: the reference the hashed neighbourhoods (`each_char_deletion_hash`) are tested
/// against. Deletions are made left to right (the second after the first), so each set of
/// deleted positions is visited once rather than once per order. A string can still come
/// twice when it arises from different positions (`ab` from `aab`).
#[cfg(test)]
pub(crate) fn each_deletion(word: &str, k: usize, f: &mut impl FnMut(&str)) {
    f(word);
    deletions_from(word, 0, k, f);
}

#[cfg(test)]
pub(crate) fn deletions_from(word: &str, from: usize, k: usize, f: &mut impl FnMut(&str)) {
    if k == 0 {
        return;
    }
    let mut buf = String::with_capacity(word.len());
    for (at, c) in word.char_indices().filter(|(at, _)| *at >= from) {
        buf.clear();
        buf.push_str(&word[..at]);
        buf.push_str(&word[at + c.len_utf8()..]);
        if !buf.is_empty() {
            f(&buf);
            // The next deletion starts where this one was: the character now at `at`.
            deletions_from(&buf, at, k - 1, f);
        }
    }
}

/// The hash of a string of a deletion neighbourhood: a polynomial in its bytes, each byte a
/// step `h * BASE + byte + 1` (wrapping) from 0. The hash of two strings joined is the first's
/// times `BASE` to the power of the second's length, plus the second's: a deletion's hash is
/// the hashes of what is left on each side put together with one multiplication, where a hash
/// made byte by byte (FNV-1a) has to pass over everything after the deletion again. Like any
/// 64-bit hash it has collisions, and a polynomial's can be found on purpose (two names of
/// twelve letters with one key, a prefix of sixteen whose key is 0): every user verifies a hit
/// on the strings themselves before it counts, so a collision costs a comparison. The
/// neighbourhoods below compute it without making the strings; this is their reference.
#[cfg(test)]
pub(crate) fn deletion_key(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |h, &b| key_step(h, b))
}

/// An odd multiplier (FNV's prime): every power of it is odd, so no byte's weight vanishes.
const BASE: u64 = 0x0000_0100_0000_01b3;

fn key_step(h: u64, b: u8) -> u64 {
    h.wrapping_mul(BASE).wrapping_add(u64::from(b) + 1)
}

/// Calls `f` with the [`deletion_key`] of `bytes` and of every byte string made by deleting
/// one or two of its bytes (`k`, at most 2), each set of positions once: the symmetric-delete
/// neighbourhood of an ASCII word as hashes, without making a string for each. Equal strings
/// from different positions (`ab` from `aab`) come once each; callers verify hits.
pub(crate) fn each_deletion_hash(bytes: &[u8], k: usize, f: &mut impl FnMut(u64)) {
    deletion_hashes(bytes, bytes.len(), |i| i, k, f);
}

/// `each_deletion_hash` by characters: the hashes of `word`'s UTF-8 bytes and of every string
/// made by deleting one or two of its characters, in the order and with the repeats of
/// `each_deletion`, each the [`deletion_key`] of that string's bytes. The typo index is built
/// and looked up with it, so that neither makes a string per deletion.
pub(crate) fn each_char_deletion_hash(word: &str, k: usize, f: &mut impl FnMut(u64)) {
    if word.is_ascii() {
        return each_deletion_hash(word.as_bytes(), k, f);
    }
    // Where each character starts, and the end: deleting a character deletes its bytes.
    let bounds: Vec<usize> = word
        .char_indices()
        .map(|(at, _)| at)
        .chain([word.len()])
        .collect();
    deletion_hashes(word.as_bytes(), bounds.len() - 1, |i| bounds[i], k, f);
}

/// The deletions of up to `k` (at most 2) of the `n` units of `bytes`, unit `i` being the
/// bytes from `bound(i)` to `bound(i + 1)`, as [`deletion_key`]s: the hash of what comes
/// before a deletion grows unit by unit, and is joined to the hash of what comes after it,
/// computed once for every offset, so no string is made and no suffix is read twice.
fn deletion_hashes(
    bytes: &[u8],
    n: usize,
    bound: impl Fn(usize) -> usize,
    k: usize,
    f: &mut impl FnMut(u64),
) {
    debug_assert!(k <= 2, "deletions of up to two units");
    let len = bytes.len();
    // `after[t]`: the key of `bytes[t..]`; `power[m]`: BASE to the m. On the stack for the
    // words of names and keys; a longer text takes the heap.
    let mut stack = [0u64; 2 * 65];
    let mut heap = Vec::new();
    let table: &mut [u64] = if len <= 64 {
        &mut stack[..2 * (len + 1)]
    } else {
        heap.resize(2 * (len + 1), 0);
        &mut heap
    };
    let (after, power) = table.split_at_mut(len + 1);
    power[0] = 1;
    for t in (0..len).rev() {
        let m = len - 1 - t;
        after[t] = (u64::from(bytes[t]) + 1)
            .wrapping_mul(power[m])
            .wrapping_add(after[t + 1]);
        power[m + 1] = power[m].wrapping_mul(BASE);
    }
    // The key of a prefix's hash `h` followed by `bytes[at..]`.
    let join = |h: u64, at: usize| h.wrapping_mul(power[len - at]).wrapping_add(after[at]);
    let extend = |h: u64, unit: &[u8]| unit.iter().fold(h, |h, &b| key_step(h, b));
    f(after[0]);
    if k == 0 {
        return;
    }
    let mut before = 0; // the key of units ..i
    for i in 0..n {
        if n > 1 {
            f(join(before, bound(i + 1)));
        }
        if k >= 2 && n > 2 {
            let mut between = before; // the key of units ..i and i + 1..j
            for j in i + 1..n {
                f(join(between, bound(j + 1)));
                between = extend(between, &bytes[bound(j)..bound(j + 1)]);
            }
        }
        before = extend(before, &bytes[bound(i)..bound(i + 1)]);
    }
}

/// Calls `f` with the hash of `w` and of every word made by deleting one character of `w`.
pub(crate) fn for_each_delete(w: &str, mut f: impl FnMut(u64)) {
    let b = w.as_bytes();
    f(fnv(b.iter().copied()));
    for i in 0..b.len() {
        f(fnv(b[..i].iter().chain(&b[i + 1..]).copied()));
    }
}

/// `strsim::osa_distance`, measured as `osa_within` measures: the common prefix and suffix cut
/// first, the rest in rows on the stack (a word and its misspelling share most of their
/// letters), strsim beyond what the rows hold.
pub(crate) fn osa_distance(a: &str, b: &str) -> usize {
    osa_within(a, b, usize::MAX).unwrap_or_else(|| strsim::osa_distance(a, b))
}

/// Rows of the bounded distance kept on the stack: longer differences go to strsim.
const BOUNDED_MAX: usize = 128;

/// The optimal-string-alignment distance of `a` and `b` (`strsim::osa_distance`'s), when it is
/// at most `k`. It runs on every rival spelling of every candidate of a mistaken name, and those
/// share most of their letters with the request: the common prefix and suffix are cut first
/// (an optimal alignment keeps them), a length difference over `k` ends it, and the rest is
/// measured in rows on the stack, stopping once two rows in a row are all over `k` (a
/// transposition reaches back two rows). strsim has no bounded form and allocates its rows;
/// it still measures what is not ASCII, or a difference too long for the stack.
pub(crate) fn osa_within(a: &str, b: &str, k: usize) -> Option<usize> {
    let whole = |a: &str, b: &str| Some(strsim::osa_distance(a, b)).filter(|&d| d <= k);
    if !a.is_ascii() || !b.is_ascii() {
        return whole(a, b);
    }
    let (wa, wb) = (a, b);
    let (a, b) = (a.as_bytes(), b.as_bytes());
    // Cutting what both share at either end leaves their difference in length as it is: a
    // pair too far apart in length is ruled out before the cut.
    if a.len().abs_diff(b.len()) > k {
        return None;
    }
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[p..], &b[p..]);
    let s = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[..a.len() - s], &b[..b.len() - s]);
    if a.len().max(b.len()) >= BOUNDED_MAX {
        return whole(wa, wb);
    }
    // Both are now shorter than the rows: no distance exceeds that, so a larger bound is that.
    let k = k.min(BOUNDED_MAX);
    if a.is_empty() || b.is_empty() {
        return Some(a.len().max(b.len()));
    }
    if a.len().max(b.len()) > k + 2 && letters_apart(a, b) > k {
        return None;
    }
    let (la, lb) = (a.len(), b.len());
    // Three rows of at most 128 cells (distances fit a byte), of which only the band of cells
    // within `k` of the diagonal is measured: any cell outside it is over `k` (`over`).
    let over = u8::try_from(k.min(BOUNDED_MAX)).unwrap_or(u8::MAX) + 1;
    // The rows change places by their references, not their cells: a row moved whole would
    // copy its 128 cells twice per letter of `a`.
    let mut rows = [[over; BOUNDED_MAX]; 3];
    let [before, prev, cur] = &mut rows;
    let (mut before, mut prev, mut cur) = (before, prev, cur);
    for (j, cell) in (0u8..).zip(prev.iter_mut().take(lb.min(k) + 1)) {
        *cell = j;
    }
    let mut prev_min = 0u8;
    for row in 1..=la {
        let (lo, hi) = (row.saturating_sub(k).max(1), (row + k).min(lb));
        cur[lo - 1] = if lo == 1 && row <= k {
            u8::try_from(row).unwrap_or(over)
        } else {
            over
        };
        let mut row_min = cur[lo - 1];
        for j in lo..=hi {
            let cost = u8::from(a[row - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if row > 1 && j > 1 && a[row - 1] == b[j - 2] && a[row - 2] == b[j - 1] {
                v = v.min(before[j - 2] + 1);
            }
            cur[j] = v.min(over);
            row_min = row_min.min(cur[j]);
        }
        if hi < lb {
            cur[hi + 1] = over;
        }
        if row_min >= over && prev_min >= over {
            return None;
        }
        prev_min = row_min;
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = usize::from(prev[lb]);
    (d <= k).then_some(d)
}

/// A lower bound of the edit distance of two ASCII strings from their letters alone (the bag
/// distance): an insertion or a deletion changes the count of one letter on one side, a
/// substitution one on each, a transposition none; so no fewer edits than the larger count of
/// letters one side has over the other can join them. It rejects in one pass what the rows of
/// `osa_within` would measure letter by letter.
fn letters_apart(a: &[u8], b: &[u8]) -> usize {
    let mut counts = LetterCounts::new();
    counts.add_bytes(a);
    counts.remove_bytes(b);
    counts.apart()
}

/// Counts of letters, one side's less the other's, to bound an edit distance from below the
/// way `letters_apart` does, for strings that are built from parts: the counts of a string
/// with one part replaced are the counts less the part's plus the replacement's, with no string
/// made. Bytes are counted by their low five bits: letters of both cases share a count, and
/// digits share one with letters, which can only lower the bound (a surplus on one side may
/// cancel one on the other), never raise it.
#[derive(Clone, Copy)]
pub(crate) struct LetterCounts([i32; 32]);

impl LetterCounts {
    pub(crate) fn new() -> Self {
        LetterCounts([0; 32])
    }

    pub(crate) fn add(&mut self, text: &str) {
        self.add_bytes(text.as_bytes());
    }

    pub(crate) fn remove(&mut self, text: &str) {
        self.remove_bytes(text.as_bytes());
    }

    fn add_bytes(&mut self, bytes: &[u8]) {
        for &c in bytes {
            let n = &mut self.0[usize::from(c & 31)];
            *n = n.saturating_add(1);
        }
    }

    fn remove_bytes(&mut self, bytes: &[u8]) {
        for &c in bytes {
            let n = &mut self.0[usize::from(c & 31)];
            *n = n.saturating_sub(1);
        }
    }

    /// No fewer edits join the two sides than this (for ASCII text; a character of several
    /// bytes counts each byte, so the bound holds for ASCII only).
    pub(crate) fn apart(&self) -> usize {
        // One pass: the surplus of one side less that of the other is the sum of the counts.
        let (over, sum) = self.0.iter().fold((0i64, 0i64), |(over, sum), &n| {
            (over + i64::from(n.max(0)), sum + i64::from(n))
        });
        let under = over - sum;
        usize::try_from(over.max(under)).unwrap_or(usize::MAX)
    }
}

/// Optimal-string-alignment distance of at most one.
pub(crate) fn within_one_edit(a: &[u8], b: &[u8]) -> bool {
    let (la, lb) = (a.len(), b.len());
    if la.abs_diff(lb) > 1 {
        return false;
    }
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if p == la && p == lb {
        return true;
    }
    if la == lb {
        // One substitution, or one transposition of neighbours.
        return a[p + 1..] == b[p + 1..]
            || (p + 1 < la && a[p] == b[p + 1] && a[p + 1] == b[p] && a[p + 2..] == b[p + 2..]);
    }
    let (long, short) = if la > lb { (a, b) } else { (b, a) };
    long[p + 1..] == short[p..]
}

#[cfg(test)]
mod tests {
    use super::{
        deletion_key, each_char_deletion_hash, each_deletion, each_deletion_hash, osa_within,
        LetterCounts,
    };
    use std::collections::BTreeSet;

    /// The bound is the larger of the two sides' surpluses, each summed on its own: random
    /// counts of both signs, the extremes of `i32` among them.
    #[test]
    fn letters_apart_is_the_larger_surplus() {
        let mut rng = fastrand::Rng::with_seed(0x1E77E5);
        for round in 0..2_000 {
            let mut counts = LetterCounts::new();
            for n in counts.0.iter_mut() {
                *n = match round % 4 {
                    0 => rng.i32(-3..=3),
                    1 => rng.i32(..),
                    2 => rng.choice([i32::MIN, i32::MAX, 0, -1, 1]).unwrap_or(0),
                    _ => rng.i32(-300..=300),
                };
            }
            let over: u64 = counts
                .0
                .iter()
                .map(|&n| u64::from(n.max(0).unsigned_abs()))
                .sum();
            let under: u64 = counts
                .0
                .iter()
                .map(|&n| u64::from(n.min(0).unsigned_abs()))
                .sum();
            assert_eq!(counts.apart() as u64, over.max(under), "{:?}", counts.0);
        }
    }

    /// Every word over `a`, `b` and `c` of up to `max` letters, the empty word included.
    fn every_word(max: usize) -> Vec<String> {
        let mut words = vec![String::new()];
        for len in 1..=max {
            let mut next = Vec::new();
            for w in words.iter().filter(|w| w.len() == len - 1) {
                for c in ['a', 'b', 'c'] {
                    next.push(format!("{w}{c}"));
                }
            }
            words.extend(next);
        }
        words
    }

    /// `word`'s hashed neighbourhood of `k` deletions is its spelled-out one, key by key.
    fn assert_hashed_in_order(word: &str, k: usize) {
        let mut strings = Vec::new();
        each_deletion(word, k, &mut |d| strings.push(deletion_key(d.as_bytes())));
        let mut hashes = Vec::new();
        each_char_deletion_hash(word, k, &mut |h| hashes.push(h));
        assert_eq!(hashes, strings, "{word:?} with {k} deletions");
    }

    /// By characters, the hashed neighbourhood is the neighbourhood's strings hashed, in the
    /// same order with the same repeats, for every word of up to six characters over an
    /// alphabet of one, two, three and four UTF-8 bytes a character, and up to two deletions.
    #[test]
    fn hashed_char_deletions_are_the_deletions_hashed_in_order() {
        let words = every_word(6);
        for w in &words {
            for mixed in [w.clone(), w.replace('b', "é").replace('c', "€🙂")] {
                for k in 0..=2 {
                    assert_hashed_in_order(&mixed, k);
                }
            }
        }
    }

    /// Past 64 bytes the tables of suffix keys and powers are on the heap: random words of 60
    /// to 100 characters, ASCII and not, hash their neighbourhoods as their strings.
    #[test]
    fn long_words_hash_their_deletions_too() {
        let mut rng = fastrand::Rng::with_seed(0x10_46);
        for round in 0..40 {
            let alphabet = if round % 2 == 0 { "abc" } else { "aé€" };
            let chars: Vec<char> = alphabet.chars().collect();
            // Both sides of the stack's 64 bytes, and beyond.
            let n = if round < 3 {
                63 + round
            } else {
                rng.usize(60..=100)
            };
            let word: String = (0..n).map(|_| chars[rng.usize(..chars.len())]).collect();
            for k in 1..=2 {
                assert_hashed_in_order(&word, k);
            }
        }
    }

    /// The hashed neighbourhood is the hashes of the neighbourhood's strings, for every word
    /// of up to seven letters over a small alphabet and up to two deletions.
    #[test]
    fn hashed_deletions_are_the_deletions_hashed() {
        let words = every_word(7);
        for w in &words {
            for k in 0..=2 {
                let mut strings = BTreeSet::new();
                each_deletion(w, k, &mut |d| {
                    strings.insert(deletion_key(d.as_bytes()));
                });
                let mut hashes = BTreeSet::new();
                each_deletion_hash(w.as_bytes(), k, &mut |h| {
                    hashes.insert(h);
                });
                assert_eq!(hashes, strings, "{w:?} with {k} deletions");
            }
        }
    }

    /// Every pair of strings over a small alphabet, up to four letters each, with one or two
    /// common letters around them, and random longer ones: the bounded distance is strsim's
    /// wherever strsim's is within the bound, and nothing otherwise.
    #[test]
    fn the_bounded_distance_is_strsims_within_the_bound() {
        let words = every_word(4);
        let mut rng = fastrand::Rng::with_seed(0x05A_B0D);
        let mut pairs: Vec<(String, String)> = Vec::new();
        for a in &words {
            for b in &words {
                pairs.push((a.clone(), b.clone()));
                pairs.push((format!("x{a}yz"), format!("x{b}yz")));
            }
        }
        for _ in 0..20_000 {
            let mut word = |n: usize| -> String {
                (0..rng.usize(0..n))
                    .map(|_| rng.choice(['a', 'b', 'c', 'd']).unwrap_or('a'))
                    .collect()
            };
            let (a, b) = (word(14), word(14));
            pairs.push((a, b));
        }
        pairs.push(("é".repeat(3), "e".repeat(3)));
        // Bytes that share their low five bits (`a`, `A`, `!`), counted together by the
        // letter bound, and lengths near the rows' limit after the common parts are cut.
        for _ in 0..2_000 {
            let mut word = |n: usize| -> String {
                (0..rng.usize(0..n))
                    .map(|_| rng.choice(['a', 'A', '!', 'q', '1']).unwrap_or('a'))
                    .collect()
            };
            let (a, b) = (word(10), word(10));
            pairs.push((a, b));
        }
        for n in [120, 126, 127, 128, 129] {
            let a: String = (0..n).map(|i| if i % 3 == 0 { 'a' } else { 'b' }).collect();
            let b: String = a.chars().rev().collect();
            pairs.push((format!("x{a}y"), format!("z{b}w")));
        }
        pairs.push(("a".repeat(70), format!("{}b", "a".repeat(60))));
        for (a, b) in &pairs {
            let d = strsim::osa_distance(a, b);
            for k in [0, 1, 2, 3, 4, 127, 128, 129, 300, usize::MAX] {
                assert_eq!(
                    osa_within(a, b, k),
                    (d <= k).then_some(d),
                    "{a:?} {b:?} within {k}"
                );
            }
        }
    }
}
