//! The lexicon: which strings are words of English, the lemmas of inflected words, and the
//! antonym relation, compiled from SCOWL (size 50 and smaller) and WordNet 3.0 by `build.py`
//! beside this file (licences in `LICENSE-SCOWL` and `LICENSE-WORDNET`).
//!
//! Resolution reads it to tell a typo from another word: `payee` is a word, so it is never a
//! misspelling of `payer`; `serch` is not, so it may be one of `search`. Relations between words
//! are lemmas (`created` is `create`, `news` is not `new`) and antonyms, never edits.
//!
//! Layout in memory, chosen for the lookup on every fuzzy request word: the words as sorted
//! 64-bit FNV-1a fingerprints (a binary search over 61k integers; two different words share a
//! fingerprint with odds near 2^-64 per pair, and a test checks that none of the list do), and
//! the lemma lines indexed the same way, each hit checked against the line's text. The text
//! itself stays in the binary's read-only data. A hand-written table rather than a crate
//! (`fst`, `phf`): the data is a few sorted lists a Python script writes, and a sorted array of
//! integers is the smallest structure that answers in a few hundred nanoseconds with no
//! start-up cost beyond sorting once.

use std::sync::OnceLock;

use super::hash::fnv;

const WORDS: &str = include_str!("words.txt");
const LEMMAS: &str = include_str!("lemmas.txt");
const ANTONYMS: &str = include_str!("antonyms.txt");

struct Tables {
    /// Fingerprints of `WORDS`, sorted.
    words: Vec<u64>,
    /// (fingerprint of a form, byte offset of its line in `LEMMAS`), sorted.
    lemmas: Vec<(u64, u32)>,
}

fn fingerprint(word: &str) -> u64 {
    fnv(word.bytes())
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut words: Vec<u64> = WORDS.lines().map(fingerprint).collect();
        words.sort_unstable();
        let mut lemmas = Vec::with_capacity(LEMMAS.len() / 16);
        let mut at = 0usize;
        for line in LEMMAS.split_inclusive('\n') {
            let form = line.split(' ').next().unwrap_or("");
            // The file is a few hundred KiB: every offset fits.
            lemmas.push((fingerprint(form), at as u32));
            at += line.len();
        }
        lemmas.sort_unstable();
        Tables { words, lemmas }
    })
}

/// Builds the tables now rather than on the first request that needs them.
pub(crate) fn warm() {
    tables();
}

/// Whether `word` (lowercase ASCII letters) is a word of English: SCOWL's lists of size 50 and
/// smaller, lowercase entries only.
pub(crate) fn is_english(word: &str) -> bool {
    if word.is_empty() || word.len() > 32 {
        return false;
    }
    tables().words.binary_search(&fingerprint(word)).is_ok()
}

/// The lemmas WordNet gives `word` when they are not just the word itself (`created` ->
/// `create`; `better` -> `better`, `good`, `well`), and for a word ending in `s` that is its
/// own only lemma (`news` -> `news`); `None` for any other word.
pub(crate) fn lemmas(word: &str) -> Option<impl Iterator<Item = &'static str>> {
    if word.is_empty() || word.len() > 32 {
        return None;
    }
    let table = &tables().lemmas;
    let key = fingerprint(word);
    let first = table.partition_point(|&(f, _)| f < key);
    table[first..]
        .iter()
        .take_while(|&&(f, _)| f == key)
        .find_map(|&(_, at)| {
            let line = LEMMAS[at as usize..].lines().next()?;
            let mut fields = line.split(' ');
            let form = fields.next().filter(|&f| f == word)?;
            Some(fields.filter(move |lemma| !undoubled_inflection(form, lemma)))
        })
}

/// WordNet's morphology makes lemmas by rule (strip `-ing`, `-ed`), which also makes `rat` a
/// lemma of `rating` and `hop` one of `hoping`: a word of one syllable that ends in one
/// vowel and one consonant doubles that consonant before the suffix (`ratting`, `hopping`),
/// so the undoubled form is another word's (`rate`, `hope`). Those lemmas are left out.
fn undoubled_inflection(form: &str, lemma: &str) -> bool {
    let Some(suffix) = form.strip_prefix(lemma) else {
        return false;
    };
    if suffix != "ing" && suffix != "ed" {
        return false;
    }
    let b = lemma.as_bytes();
    let vowel = |c: u8| matches!(c, b'a' | b'e' | b'i' | b'o' | b'u');
    let n = b.len();
    // Consonant, vowel, consonant at the end (not w, x or y, which never double), and no
    // other vowel before: one syllable.
    n >= 3
        && !vowel(b[n - 1])
        && !matches!(b[n - 1], b'w' | b'x' | b'y')
        && vowel(b[n - 2])
        && !vowel(b[n - 3])
        && !b[..n - 2].iter().any(|&c| vowel(c) || c == b'y')
}

/// Whether two words are forms of one lemma (`created`/`create`, `mice`/`mouse`,
/// `stopped`/`stops`), by WordNet's morphology; a word shares its lemma with itself.
pub(crate) fn same_lemma(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    // No list is made: this runs for every known request word read against a catalog word,
    // and a word has one lemma or a few (`left`: `leave`, `left`).
    if lemmas(a).is_some_and(|mut la| la.any(|l| l == b)) {
        return true;
    }
    lemmas(b).is_some_and(|mut lb| {
        lb.any(|l| l == a || lemmas(a).is_some_and(|mut la| la.any(|x| x == l)))
    })
}

/// WordNet's antonym pairs between single-word lemmas (`major`/`minor`, `north`/`south`).
pub fn antonyms() -> impl Iterator<Item = (&'static str, &'static str)> {
    ANTONYMS.lines().filter_map(|line| line.split_once(' '))
}

/// Every word of the lexicon, in order (the generated test corpora read it).
pub fn english_words() -> impl Iterator<Item = &'static str> {
    WORDS.lines()
}

/// Bytes of the lexicon's data in the binary, and on the heap once built.
pub fn footprint() -> (usize, usize) {
    let t = tables();
    (
        WORDS.len() + LEMMAS.len() + ANTONYMS.len(),
        t.words.capacity() * std::mem::size_of::<u64>()
            + t.lemmas.capacity() * std::mem::size_of::<(u64, u32)>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_two_words_share_a_fingerprint() {
        let t = tables();
        assert!(t.words.windows(2).all(|w| w[0] != w[1]));
        assert_eq!(t.words.len(), WORDS.lines().count());
    }

    #[test]
    fn words_and_lemmas() {
        for w in [
            "payee", "payer", "minor", "major", "news", "offset", "download", "stock",
        ] {
            assert!(is_english(w), "{w}");
        }
        for w in [
            "serch", "sstock", "mn", "dsable", "eclude", "poweroff", "", "PAYEE",
        ] {
            assert!(!is_english(w), "{w}");
        }
        assert!(same_lemma("created", "create"));
        assert!(same_lemma("mice", "mouse"));
        assert!(same_lemma("stopped", "stops"));
        // A consonant doubled is another word's inflection than one not doubled.
        for (a, b) in [("rating", "rate"), ("hoping", "hope"), ("hopping", "hop")] {
            assert!(same_lemma(a, b), "{a} {b}");
        }
        for (a, b) in [
            ("rating", "ratting"),
            ("hoping", "hopping"),
            ("rated", "rat"),
        ] {
            assert!(!same_lemma(a, b), "{a} {b}");
        }
        assert!(!same_lemma("news", "new"));
        assert!(!same_lemma("payee", "payer"));
        assert!(antonyms().any(|p| p == ("major", "minor")));
    }

    #[test]
    fn every_line_is_found() {
        for line in LEMMAS.lines() {
            let form = line.split(' ').next().unwrap();
            assert!(lemmas(form).is_some(), "{form}");
        }
    }
}
