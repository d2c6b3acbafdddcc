//! Edit neighbourhoods: the deletions a symmetric-delete typo index is built from and looked
//! up with, and a bounded edit-distance test.

use super::hash::fnv;

/// Every string obtained by deleting up to `k` characters (the symmetric-delete typo index).
pub(crate) fn deletions(word: &str, k: usize) -> Vec<String> {
    let mut out = vec![word.to_string()];
    let mut frontier = vec![word.chars().collect::<Vec<char>>()];
    for _ in 0..k {
        let mut next = Vec::new();
        for chars in &frontier {
            if chars.len() <= 1 {
                continue;
            }
            for i in 0..chars.len() {
                let mut shorter = chars.clone();
                shorter.remove(i);
                out.push(shorter.iter().collect());
                next.push(shorter);
            }
        }
        frontier = next;
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Calls `f` with `word` and every string obtained by deleting up to `k` characters from it,
/// without collecting them: this runs on every mistaken name. Deletions are made left to right
/// (the second after the first), so each set of deleted positions is visited once rather than
/// once per order: half the lookups at `k = 2`. A string can still come twice when it arises
/// from different positions (`ab` from `aab`); callers keep their own seen-sets.
pub(crate) fn each_deletion(word: &str, k: usize, f: &mut impl FnMut(&str)) {
    f(word);
    deletions_from(word, 0, k, f);
}

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

/// Calls `f` with the hash of `w` and of every word made by deleting one character of `w`.
pub(crate) fn for_each_delete(w: &str, mut f: impl FnMut(u64)) {
    let b = w.as_bytes();
    f(fnv(b.iter().copied()));
    for i in 0..b.len() {
        f(fnv(b[..i].iter().chain(&b[i + 1..]).copied()));
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
