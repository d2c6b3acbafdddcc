//! Jaro-Winkler similarity, as `strsim::jaro_winkler` computes it, for the suggestions of small
//! catalogs: an unknown name is compared with every name of the catalog, so this runs hundreds
//! of times for one request.
//!
//! Written here rather than taken from strsim for ASCII text of up to 64 bytes (every name a
//! model sends in practice): strsim's version walks `char` iterators, restarts the scan of the
//! second string from its start for each character of the first, and allocates its match
//! flags, which made it a quarter of the instructions of resolving a name among ten tools.
//! Here the flags are two 64-bit masks, and the first free match in a window is found with a
//! mask of where each byte occurs: two passes over the bytes instead of one scan per byte.
//! The result is the same `f64`, computed by the same formula in the same order (a test
//! compares the two on generated strings); other text goes to strsim.

/// `strsim::jaro_winkler(a, b)`.
pub(crate) fn jaro_winkler(a: &str, b: &str) -> f64 {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    if !a.is_ascii() || !b.is_ascii() || x.len() > 64 || y.len() > 64 {
        return strsim::jaro_winkler(a, b);
    }
    let sim = jaro(x, y);
    if sim > 0.7 {
        let prefix = x.iter().zip(y).take(4).take_while(|(p, q)| p == q).count();
        sim + 0.1 * prefix as f64 * (1.0 - sim)
    } else {
        sim
    }
}

/// Jaro similarity of two byte strings of at most 64 bytes each.
fn jaro(x: &[u8], y: &[u8]) -> f64 {
    let (lx, ly) = (x.len(), y.len());
    if lx == 0 && ly == 0 {
        return 1.0;
    }
    if lx == 0 || ly == 0 {
        return 0.0;
    }
    // A byte of `y` matches one of `x` within this distance of its position.
    let window = (lx.max(ly) / 2).saturating_sub(1);
    // Where each byte occurs in `y`: the first free one in the window is a bit search.
    let mut at = [0u64; 128];
    for (j, &c) in y.iter().enumerate() {
        at[usize::from(c)] |= 1 << j;
    }
    let (mut x_matched, mut y_matched) = (0u64, 0u64);
    let mut matches = 0usize;
    for (i, &c) in x.iter().enumerate() {
        let lo = i.saturating_sub(window);
        let hi = ly.min(i + window + 1);
        if lo >= hi {
            continue;
        }
        // Bits lo..hi, with hi at most 64.
        let span = (u64::MAX >> (64 - (hi - lo))) << lo;
        let free = at[usize::from(c)] & span & !y_matched;
        if free != 0 {
            x_matched |= 1 << i;
            y_matched |= free & free.wrapping_neg();
            matches += 1;
        }
    }
    if matches == 0 {
        return 0.0;
    }
    // The matched bytes of each side in order: the pairs that differ are transposed.
    let mut transpositions = 0usize;
    let mut ys = y_matched;
    let mut xs = x_matched;
    while xs != 0 {
        let i = xs.trailing_zeros() as usize;
        let j = ys.trailing_zeros() as usize;
        if x[i] != y[j] {
            transpositions += 1;
        }
        xs &= xs - 1;
        ys &= ys - 1;
    }
    let transpositions = transpositions / 2;
    ((matches as f64 / lx as f64)
        + (matches as f64 / ly as f64)
        + ((matches - transpositions) as f64 / matches as f64))
        / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair of generated strings over a small alphabet (so that matches, windows and
    /// transpositions all occur) gives strsim's value to the bit, at lengths 0 to 64 and past
    /// them, and non-ASCII text too.
    #[test]
    fn the_same_as_strsim() {
        let mut rng = fastrand::Rng::with_seed(0x4a61_726f);
        let alphabets: [&[u8]; 3] = [b"ab", b"abcde", b"etaoinshrdlu_0123"];
        let mut compared = 0;
        for round in 0..20_000 {
            let alphabet = alphabets[round % alphabets.len()];
            let mut word = |max: usize| -> String {
                let n = rng.usize(0..=max);
                (0..n)
                    .map(|_| char::from(alphabet[rng.usize(..alphabet.len())]))
                    .collect()
            };
            // Long strings against near copies (even rounds) and unrelated ones (odd).
            let max = if round % 10 < 2 { 70 } else { 16 };
            let (a, b) = (word(max), word(max));
            // A near copy as often as not: the region where the threshold is decided.
            let b = if round % 2 == 0 && !a.is_empty() {
                let mut near = a.clone().into_bytes();
                let i = rng.usize(..near.len());
                let last = near.len() - 1;
                near.swap(i, (i + 1).min(last));
                let keep = rng.usize(near.len().saturating_sub(2)..=near.len());
                near.truncate(keep);
                String::from_utf8(near).expect("ASCII")
            } else {
                b
            };
            assert_eq!(
                jaro_winkler(&a, &b).to_bits(),
                strsim::jaro_winkler(&a, &b).to_bits(),
                "{a:?} {b:?}"
            );
            compared += 1;
        }
        for (a, b) in [("café", "cafe"), ("naïve", "naive"), ("", ""), ("a", "")] {
            assert_eq!(
                jaro_winkler(a, b).to_bits(),
                strsim::jaro_winkler(a, b).to_bits()
            );
        }
        assert_eq!(compared, 20_000);
    }
}
