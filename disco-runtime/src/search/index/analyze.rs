//! The search analyzer: text to indexed words (splitting, phrases, stopwords, length cap),
//! stemming, and the splitting of run-together names into the catalog's words.

use std::collections::HashSet;

use rust_stemmers::Stemmer;

use super::vocab::{PHRASES, STOPWORDS};

/// Words longer than this are not indexed (encoded blobs, hashes) and not searched.
const MAX_WORD_CHARS: usize = 40;

pub(super) fn truncate_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Splits text into lowercase words: at every character that is not a letter or digit, and
/// inside identifiers at case changes (`getUserName`, `HTTPServer` -> http, server), so that
/// snake_case, camelCase, kebab-case and dotted names all yield their words. Digits stay with
/// their letters (`base64`, `mp3`). Stopwords are dropped and two-word expressions joined.
pub(super) fn words_into(text: &str, out: &mut Vec<String>) {
    let start = out.len();
    let chars: Vec<char> = text.chars().collect();
    let mut cur = String::new();
    let mut cur_chars = 0usize;
    let flush = |cur: &mut String, cur_chars: &mut usize, out: &mut Vec<String>| {
        if !cur.is_empty() && *cur_chars <= MAX_WORD_CHARS {
            out.push(std::mem::take(cur));
        }
        cur.clear();
        *cur_chars = 0;
    };
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            // An apostrophe inside a word ("what's", "don't") joins rather than splits.
            if (c == '\'' || c == '\u{2019}') && !cur.is_empty() {
                continue;
            }
            flush(&mut cur, &mut cur_chars, out);
            continue;
        }
        if i > 0 && !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = c.is_uppercase()
                && (prev.is_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_uppercase() && next_lower));
            if boundary {
                flush(&mut cur, &mut cur_chars, out);
            }
        }
        for l in c.to_lowercase() {
            cur.push(l);
        }
        cur_chars += 1;
    }
    flush(&mut cur, &mut cur_chars, out);

    // Join two-word expressions, then drop stopwords.
    let mut i = start;
    let mut w = start;
    while i < out.len() {
        // (Every phrase ends in a short word: test that first, it is the common miss.)
        let joined = out
            .get(i + 1)
            .filter(|next| next.len() <= 4)
            .and_then(|next| {
                PHRASES
                    .iter()
                    .find(|(a, b, _)| *a == out[i] && *b == next.as_str())
                    .map(|(_, _, j)| *j)
            });
        let (word, step) = match joined {
            Some(j) => (j.to_owned(), 2),
            None => (std::mem::take(&mut out[i]), 1),
        };
        i += step;
        if !is_stopword(&word) {
            out[w] = word;
            w += 1;
        }
    }
    out.truncate(w);
}

pub(crate) fn is_stopword(w: &str) -> bool {
    w.len() <= 10 && STOPWORDS.binary_search(&w).is_ok()
}

pub(super) fn same_words(a: &str, b: &str) -> bool {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    words_into(a, &mut x);
    words_into(b, &mut y);
    x == y
}

/// Snowball English stem of an ASCII word; other words (numbers, non-Latin scripts) as they are.
pub(super) fn stem_word(stemmer: &Stemmer, w: &str) -> String {
    if w.len() >= 3 && w.bytes().all(|c| c.is_ascii_lowercase()) {
        stemmer.stem(w).into_owned()
    } else {
        w.to_owned()
    }
}

/// Splits a run-together word ("airqualityforecast", "texttospeech") into the catalog's own
/// words of 3+ letters, when they cover most of it. Only long ASCII words that the prose of the
/// catalog never uses on their own are tried, so a real word is not split.
pub(super) fn split_compound(w: &str, vocab: &HashSet<String>, out: &mut Vec<String>) {
    const MIN_PIECE: usize = 3;
    const MAX_PIECE: usize = 16;
    let n = w.len();
    if !(7..=MAX_WORD_CHARS).contains(&n) || !w.bytes().all(|c| c.is_ascii_lowercase()) {
        return;
    }
    if vocab.contains(w) {
        return;
    }
    // covered[i]: most letters of w[..i] covered by known words; ties prefer fewer pieces.
    let mut covered = vec![(0usize, 0usize); n + 1];
    let mut from = vec![(usize::MAX, false); n + 1];
    for i in 1..=n {
        covered[i] = covered[i - 1];
        from[i] = (i - 1, false);
        for len in MIN_PIECE..=MAX_PIECE.min(i) {
            let j = i - len;
            if !vocab.contains(&w[j..i]) {
                continue;
            }
            let cand = (covered[j].0 + len, covered[j].1 + 1);
            if cand.0 > covered[i].0 || (cand.0 == covered[i].0 && cand.1 < covered[i].1) {
                covered[i] = cand;
                from[i] = (j, true);
            }
        }
    }
    if covered[n].1 < 2 || covered[n].0 * 10 < n * 7 {
        return;
    }
    let mut i = n;
    let start = out.len();
    while i > 0 {
        let (j, piece) = from[i];
        if piece && !is_stopword(&w[j..i]) {
            out.push(w[j..i].to_owned());
        }
        i = j;
    }
    out[start..].reverse();
}
