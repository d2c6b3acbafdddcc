//! The lexicon: which strings are words of English, the lemmas of inflected words, and the
//! antonym relation, compiled from SCOWL (size 50 and smaller) and WordNet 3.0 by `build.py`
//! beside this file (licences in `LICENSE-SCOWL` and `LICENSE-WORDNET`).
//!
//! Resolution reads it to tell a typo from another word: `payee` is a word, so it is never a
//! misspelling of `payer`; `serch` is not, so it may be one of `search`. Relations between words
//! are lemmas (`created` is `create`, `news` is not `new`) and antonyms, never edits.
//!
//! Layout in memory, chosen for the lookup on every fuzzy request word: the words as sorted
//! 64-bit fingerprints (FNV-1a, mixed so that their top bits are uniform; two different words
//! share a fingerprint with odds near 2^-64 per pair, and a test checks that none of the list
//! do), and the lemma lines keyed the same way, each hit checked against the line's text. A
//! table of where each run of equal top bits starts sends a lookup straight to the one or two
//! cache lines that can hold its key: a binary search over the whole list would touch a dozen
//! lines of half a megabyte, cold between requests. The text itself stays in the binary's
//! read-only data. A hand-written table rather than a crate (`fst`, `phf`): the data is a few
//! sorted lists a Python script writes, and a sorted array of integers with a start table is the
//! smallest structure that answers in one or two cache misses with no start-up cost beyond
//! sorting once.

use std::ops::Range;
use std::sync::OnceLock;

use super::hash::fnv;

const WORDS: &str = include_str!("words.txt");
const LEMMAS: &str = include_str!("lemmas.txt");
const ANTONYMS: &str = include_str!("antonyms.txt");

/// Top bits of a fingerprint that pick its run in a [`Keyed`] table: 8,192 runs of about
/// eight words, four lemma lines.
const RUN_BITS: u32 = 13;

/// Entries sorted by a fingerprint, with where each run of equal top bits starts. The
/// fingerprint leads each entry's own order (a fingerprint, or a tuple that starts with it), so
/// sorting the entries sorts them by it, and a tie between two lines of one form (there is
/// none today) goes the same way on every build.
struct Keyed<T> {
    entries: Vec<T>,
    /// `starts[r]..starts[r + 1]` are the entries whose key's top bits are `r`.
    starts: Vec<u32>,
}

impl<T: Ord> Keyed<T> {
    fn new(mut entries: Vec<T>, key: impl Fn(&T) -> u64) -> Self {
        entries.sort_unstable();
        let runs = 1usize << RUN_BITS;
        let mut starts = Vec::with_capacity(runs + 1);
        let mut at = 0usize;
        for run in 0..runs {
            while at < entries.len() && run_of(key(&entries[at])) < run {
                at += 1;
            }
            // The lists are a few tens of thousands of lines: every index fits.
            starts.push(at as u32);
        }
        starts.push(entries.len() as u32);
        Keyed { entries, starts }
    }

    /// The entries that may carry `key`: its run.
    fn run(&self, key: u64) -> &[T] {
        let r = run_of(key);
        let range: Range<usize> = self.starts[r] as usize..self.starts[r + 1] as usize;
        &self.entries[range]
    }

    fn heap_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<T>()
            + self.starts.capacity() * std::mem::size_of::<u32>()
    }
}

fn run_of(key: u64) -> usize {
    (key >> (64 - RUN_BITS)) as usize
}

struct Tables {
    /// Fingerprints of `WORDS`.
    words: Keyed<u64>,
    /// A form's fingerprint, and where its line is in `LEMMAS` (byte offset, length).
    lemmas: Keyed<(u64, u32, u32)>,
}

/// FNV-1a, then the finalizer of MurmurHash3 (`fmix64`): FNV-1a's top bits follow the last
/// bytes of a short word too closely to cut the list into even runs.
fn fingerprint(word: &str) -> u64 {
    let mut h = fnv(word.bytes());
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let words = Keyed::new(WORDS.lines().map(fingerprint).collect(), |&f| f);
        let mut lemmas = Vec::with_capacity(LEMMAS.len() / 16);
        let mut at = 0usize;
        for line in LEMMAS.split_inclusive('\n') {
            // As `lines` reads a line: a checkout that writes `\r\n` changes nothing.
            let text = line.trim_end_matches(['\n', '\r']);
            let form = text.split(' ').next().unwrap_or("");
            // The file is a few hundred KiB: every offset and length fits.
            lemmas.push((fingerprint(form), at as u32, text.len() as u32));
            at += line.len();
        }
        Tables {
            words,
            lemmas: Keyed::new(lemmas, |&(f, _, _)| f),
        }
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
    let key = fingerprint(word);
    tables().words.run(key).contains(&key)
}

/// The lemmas WordNet gives `word` when they are not just the word itself (`created` ->
/// `create`; `better` -> `better`, `good`, `well`), and for a word ending in `s` that is its
/// own only lemma (`news` -> `news`); `None` for any other word.
pub(crate) fn lemmas(word: &str) -> Option<impl Iterator<Item = &'static str>> {
    if word.is_empty() || word.len() > 32 {
        return None;
    }
    let key = fingerprint(word);
    tables()
        .lemmas
        .run(key)
        .iter()
        .filter(|&&(f, _, _)| f == key)
        .find_map(|&(_, at, len)| {
            let line = LEMMAS.get(at as usize..at as usize + len as usize)?;
            let (form, rest) = line.split_once(' ')?;
            (form == word).then_some(())?;
            Some(
                rest.split(' ')
                    .filter(move |lemma| !undoubled_inflection(form, lemma)),
            )
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
        t.words.heap_bytes() + t.lemmas.heap_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_two_words_share_a_fingerprint() {
        let t = tables();
        assert!(t.words.entries.windows(2).all(|w| w[0] != w[1]));
        assert_eq!(t.words.entries.len(), WORDS.lines().count());
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
    fn every_entry_is_in_its_run() {
        fn check<T>(table: &Keyed<T>, key: impl Fn(&T) -> u64) {
            assert_eq!(table.starts.len(), (1 << RUN_BITS) + 1);
            assert!(table.starts.windows(2).all(|w| w[0] <= w[1]));
            for (r, w) in table.starts.windows(2).enumerate() {
                for entry in &table.entries[w[0] as usize..w[1] as usize] {
                    assert_eq!(run_of(key(entry)), r);
                }
            }
        }
        let t = tables();
        check(&t.words, |&f| f);
        check(&t.lemmas, |&(f, _, _)| f);
        assert!(WORDS.lines().all(is_english));
    }

    #[test]
    fn every_line_is_found() {
        for line in LEMMAS.lines() {
            let form = line.split(' ').next().unwrap();
            assert!(lemmas(form).is_some(), "{form}");
        }
    }
}
