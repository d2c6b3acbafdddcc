//! Whether a word that differs from a catalog word by a few letters is a misspelling of it,
//! another word, or its opposite: the rules that keep a correction from changing what the
//! model meant, shared by tool names (`name/fuzzy.rs`, `name/cost.rs`) and argument keys
//! (`args/keys.rs`).
//!
//! 1. A word that is a word is not a typo. A request word that is itself a known word
//!    (English, a word of APIs, or a word of the catalog the caller sees) is never read as a
//!    misspelling of a different word, unless the two are forms of one lemma (`created` for
//!    `create`): `payee` is not `payer`, `lte` is not `lt`, `ad` is not `add`.
//! 2. A non-word is a misspelling of catalog word W only when nothing opposed to W is as close:
//!    its opposites, its role partner, W negated, a word of APIs opposed to it. `mn` is one edit
//!    from `min` and two from `max`, so it is not `max`; `eclude` is one edit from `exclude`,
//!    so it is not `include`. English words that are not in the catalog do not compete (`serch`
//!    is `search`, although `perch` is one edit away); another word of the catalog competes
//!    through its tool, by the margin of the name tier (`name/decide.rs`), and another field by
//!    the margin of `args/keys.rs`; a word of APIs that is not opposed to W does not compete
//!    (measured on the name corpora, it refused 10 typo corrections and kept no meaning).
//!
//! When a rival opposed to W is at least as close, the reading is [`Reading::Opposed`]: never
//! corrected, never suggested, never advised. A known word that is no form of W gives
//! [`Reading::Word`]: suggested, never corrected.

use super::polarity::{inflects, opposed, opposed_of, opposite_words, Polarity, Word};
use super::vocab::{api_words, is_known_role, is_known_word};
use crate::text::edits::{each_char_deletion_hash, each_deletion_hash, osa_within, LetterCounts};
use crate::text::hash::FastMap;
use crate::text::lexicon::same_lemma;
use crate::text::words::{char_len, singular, split_words};
use std::sync::OnceLock;

/// What a request word may be taken for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Reading {
    /// A misspelling (or another form) of the catalog word: may be corrected.
    Typo,
    /// Another word (a known word that is no form of the catalog word): may be suggested,
    /// never corrected, and not even close for the margin between argument keys.
    Word,
    /// A misspelling of the catalog word's opposite, or the opposite itself: never used.
    Opposed,
}

/// Negating prefixes a rival may carry (`lock` against `unlock`, `able` against `disable`).
const NEGATIONS: &[&str] = &["un", "dis", "de", "non", "no"];

/// The words opposed to `word`: its opposites in the tables (with synonyms and inflections),
/// its role partner (`payee` for `payer`), and the word negated or un-negated by a prefix.
pub(crate) fn opposed_rivals(word: &str) -> Vec<String> {
    let mut out: Vec<String> = opposite_words(word)
        .into_iter()
        .map(str::to_string)
        .collect();
    // The role partner, where it is a word of English or of APIs: `payee` for `payer`,
    // `followee` for `follower`; `countee` is no word, and no rival of `counter`.
    let role = |_stem: &str, partner: String| is_known_role(&partner).then_some(partner);
    if let Some(stem) = word.strip_suffix("ee").filter(|s| s.len() >= 3) {
        out.extend(role(stem, format!("{stem}er")));
        out.extend(role(stem, format!("{stem}or")));
    }
    for agent in ["er", "or"] {
        if let Some(stem) = word.strip_suffix(agent).filter(|s| s.len() >= 3) {
            out.extend(role(stem, format!("{stem}ee")));
        }
    }
    if word.len() >= 3 {
        for prefix in NEGATIONS {
            out.push(format!("{prefix}{word}"));
            // Un-negated where what remains is a word or a stem of four letters or more
            // (`unlock` -> `lock`, `detokenize` -> `tokenize`): `nodes` is not `no` + `des`.
            if let Some(rest) = word
                .strip_prefix(prefix)
                .filter(|r| r.len() >= 4 || (r.len() >= 3 && is_known_word(r)))
            {
                out.push(rest.to_string());
            }
        }
    }
    out.retain(|w| w != word);
    out
}

/// A catalog word's rivals, spelled out: its opposed words (`opposed_rivals`) and the words
/// of APIs within two edits of it that are opposed to it, none a form of the word itself. A
/// name index makes them for each of its words when it is built ([`Rivals::complete`]); other
/// words (argument keys) have them made on first use per thread, the words of APIs on first
/// need (only fused and dropped-word requests compare letters with them).
/// Kept compact: a name index holds one for each of its words.
pub(crate) struct Rivals {
    /// The opposed words, one after the other, and the length of each in bytes (words come
    /// from names and keys of at most a few hundred bytes, so a length always fits).
    opposed: Box<str>,
    lengths: Box<[u16]>,
    apis: OnceLock<Box<[&'static str]>>,
}

impl Rivals {
    /// The opposed words now, the words of APIs on first need.
    fn of(word: &str) -> Rivals {
        let (mut opposed, mut lengths) = (String::new(), Vec::new());
        for rival in opposed_rivals(word) {
            if let Ok(length) = u16::try_from(rival.len()) {
                opposed.push_str(&rival);
                lengths.push(length);
            }
        }
        Rivals {
            opposed: opposed.into(),
            lengths: lengths.into(),
            apis: OnceLock::new(),
        }
    }

    /// The words opposed to the word (`opposed_rivals`).
    pub(crate) fn opposed(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.lengths.iter().map(move |&length| {
            let end = start + usize::from(length);
            let rival = self.opposed.get(start..end).unwrap_or_default();
            start = end;
            rival
        })
    }

    /// The opposed words, each with its length in characters: counted only when some opposed
    /// word is not ASCII (one test of the whole string, where a count is one per word).
    pub(crate) fn opposed_with_chars(&self) -> impl Iterator<Item = (&str, usize)> {
        let ascii = self.opposed.is_ascii();
        self.opposed()
            .map(move |r| (r, if ascii { r.len() } else { char_len(r) }))
    }

    /// Both now.
    pub(crate) fn complete(word: &str) -> Rivals {
        let rivals = Rivals::of(word);
        rivals.apis(word);
        rivals
    }

    /// The words of APIs opposed to `word`, whose rivals these are.
    fn apis(&self, word: &str) -> &[&'static str] {
        self.apis.get_or_init(|| {
            api_words_within(word, 2)
                .into_iter()
                .map(|(a, _)| a)
                .filter(|a| opposed(a, word) && !same_lemma(a, word))
                .collect()
        })
    }
}

/// The rivals of a word: kept by a table, or made for this thread.
pub(crate) enum RivalsRef<'a> {
    Kept(&'a Rivals),
    Made(std::rc::Rc<Rivals>),
}

impl std::ops::Deref for RivalsRef<'_> {
    type Target = Rivals;

    fn deref(&self) -> &Rivals {
        match self {
            RivalsRef::Kept(r) => r,
            RivalsRef::Made(r) => r,
        }
    }
}

/// Where the rules of meaning find a catalog word's rivals: a name index keeps its words'
/// (`NameIndex`); a word it does not keep has them made per thread ([`PerThread`]).
pub(crate) trait RivalTable {
    fn rivals(&self, word: &str) -> RivalsRef<'_>;

    /// `Polarity::of(word)`: a name index keeps its words'.
    fn polarity(&self, word: &str) -> Polarity {
        Polarity::of(word)
    }
}

/// No table: every word's rivals made on first use per thread ([`rivals_of`]).
pub(crate) struct PerThread;

impl RivalTable for PerThread {
    fn rivals(&self, word: &str) -> RivalsRef<'_> {
        RivalsRef::Made(rivals_of(word))
    }
}

/// Catalog words whose rivals a thread keeps: the guard asks for the same few words on every
/// candidate of every request. Past this many the table starts again (a catalog replaced by
/// another does not grow it without bound).
const RIVALS_KEPT: usize = 8_192;

thread_local! {
    static RIVALS: std::cell::RefCell<FastMap<Box<str>, std::rc::Rc<Rivals>>> =
        std::cell::RefCell::new(FastMap::default());
}

/// The rivals of catalog word `word`, made once per thread (see [`RIVALS_KEPT`]).
pub(crate) fn rivals_of(word: &str) -> std::rc::Rc<Rivals> {
    if let Some(kept) = RIVALS.with(|t| t.borrow().get(word).cloned()) {
        return kept;
    }
    let made = std::rc::Rc::new(Rivals::of(word));
    RIVALS.with(|t| {
        let mut t = t.borrow_mut();
        if t.len() >= RIVALS_KEPT {
            t.clear();
        }
        t.insert(word.into(), made.clone());
    });
    made
}

/// Builds the tables the rules of meaning read on a first typo (the words of APIs by their
/// deletions), so that a name index built before requests arrive leaves none of that work to
/// the first mistaken name.
pub(crate) fn warm() {
    api_deletes();
}

/// The words of APIs by the hashes of their deletion neighbourhoods (up to two letters
/// deleted), to find those within two edits of a request word without measuring each. The
/// words of APIs are ASCII; a hit is measured before it counts (hashes may collide).
fn api_deletes() -> &'static FastMap<u64, Vec<&'static str>> {
    static MAP: OnceLock<FastMap<u64, Vec<&'static str>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut map: FastMap<u64, Vec<&'static str>> = FastMap::default();
        for &word in api_words() {
            each_deletion_hash(word.as_bytes(), 2, &mut |h| {
                let list = map.entry(h).or_default();
                if list.last() != Some(&word) && !list.contains(&word) {
                    list.push(word);
                }
            });
        }
        map
    })
}

/// The words of APIs within `d` edits of `word` (at most 2), other than `word`, with their
/// distances.
pub(crate) fn api_words_within(word: &str, d: usize) -> Vec<(&'static str, usize)> {
    let d = d.min(2);
    let mut out: Vec<(&'static str, usize)> = Vec::new();
    let mut tried: Vec<&'static str> = Vec::new();
    let mut consider = |candidate: &'static str| {
        if candidate != word && !tried.contains(&candidate) {
            tried.push(candidate);
            if let Some(distance) = osa_within(word, candidate, d) {
                out.push((candidate, distance));
            }
        }
    };
    let map = api_deletes();
    // By characters: the words of APIs are ASCII, so their byte deletions are their character
    // deletions, and a request word's character deletions hash as those strings would.
    each_char_deletion_hash(word, d, &mut |h| {
        for &candidate in map.get(&h).map_or(&[][..], Vec::as_slice) {
            consider(candidate);
        }
    });
    out
}

/// A request word as [`read_word`] reads it against each catalog word within reach of it:
/// what depends on the request word alone is found once.
pub(crate) struct RequestWord<'w> {
    text: &'w str,
    /// A known word, the caller's catalog included.
    known: bool,
    /// The words of APIs within one and within two edits of it, each found on first need.
    apis: [std::cell::OnceCell<Vec<(&'static str, usize)>>; 2],
    /// `Polarity::of(text)`, found on first need: once for every catalog word it is read
    /// against.
    polarity: std::cell::OnceCell<Polarity>,
}

impl<'w> RequestWord<'w> {
    pub(crate) fn new(text: &'w str, known: bool) -> Self {
        RequestWord {
            text,
            known,
            apis: Default::default(),
            polarity: std::cell::OnceCell::new(),
        }
    }

    fn polarity(&self) -> &Polarity {
        self.polarity.get_or_init(|| Polarity::of(self.text))
    }

    /// The words of APIs within `d` edits (at most 2).
    fn apis(&self, d: usize) -> &[(&'static str, usize)] {
        match d {
            0 => &[],
            1 => self.apis[0].get_or_init(|| api_words_within(self.text, 1)),
            _ => self.apis[1].get_or_init(|| api_words_within(self.text, 2)),
        }
    }
}

/// How `request` reads against `target`, a catalog word `d` edits away. The other catalog
/// words the caller can see compete through their tools, by the margin of the name tier
/// (`name/decide.rs`), and other fields by the margin of `args/keys.rs`.
pub(crate) fn read_word(
    request: &RequestWord<'_>,
    target: &str,
    d: usize,
    table: &dyn RivalTable,
) -> Reading {
    let text = request.text;
    if text == target {
        return Reading::Typo;
    }
    let target_polarity = table.polarity(target);
    if opposed_of(
        Word::new(text, request.polarity()),
        Word::new(target, &target_polarity),
    ) {
        return Reading::Opposed;
    }
    if request.known {
        return if same_lemma(text, target) {
            Reading::Typo
        } else {
            Reading::Word
        };
    }
    // A catalog word that inflects the request's (`petalouses` of `petalous`) has the
    // request's opposites for its own: none of them is a word the request misspells. Asked
    // only of a request a rival comes close to (the lemmas are a lookup).
    let rival = || {
        if inflects(target, text) {
            Reading::Typo
        } else {
            Reading::Opposed
        }
    };
    let close = |x: &str| osa_within(text, x, d).is_some();
    if table.rivals(target).opposed().any(close) {
        return rival();
    }
    let other = |x: &str| x != target && !same_lemma(x, target);
    // A word of APIs shorter than the request does not compete: abbreviations are written on
    // purpose, and a letter added to one (`nme` after `ne`) is a rarer slip than a letter
    // dropped from a word (`nme` for `name`).
    // A word of APIs as close that is opposed to the target settles it (`mn` is as close to
    // `min` as to `max`). One that is not opposed names something the catalog does not have
    // (`fwd_pois` for `fid_pois` beside `find_pois`), or a tool the margin of the name tier
    // weighs anyway: measured on the name corpora, it refused 10 typo corrections (0.7 points)
    // and kept no meaning.
    if request
        .apis(d)
        .iter()
        .any(|&(a, _)| other(a) && opposed(a, target))
    {
        return rival();
    }
    Reading::Typo
}

/// A key or a fused name against a catalog name whose letters it is close to, when their words
/// do not pair one to one: the request is compared, letters to letters, with the catalog name
/// in which one word is replaced by one of its rivals (opposed words, words of APIs within two
/// edits); a rival spelling that comes at least as close as the name itself settles it
/// (`pricelt` against `price_gt`: `pricelt` is `price_lt` exactly). `d`: the edit distance of
/// the two as compact strings.
pub(crate) fn read_letters<T: AsRef<str>>(
    request: &str,
    target_words: &[T],
    d: usize,
    table: &dyn RivalTable,
) -> Reading {
    read_letters_within(request, target_words, d, d, table)
}

/// `read_letters`, where a rival spelling must also be within `reach` edits of the request: a
/// request far from the tool's letters but within a typo of its opposite's (`addppresence`
/// against `add_absence`: four edits from it, one from `add_presence`).
pub(crate) fn read_letters_within<T: AsRef<str>>(
    request: &str,
    target_words: &[T],
    d: usize,
    reach: usize,
    table: &dyn RivalTable,
) -> Reading {
    let within = d.min(reach);
    let mut spelled = String::with_capacity(request.len() + 16);
    // A rival spelling whose length is already more than `within` from the request's is not
    // spelled out at all.
    let request_len = char_len(request);
    let target_len: usize = target_words.iter().map(|w| char_len(w.as_ref())).sum();
    // Nor one whose letters are more than `within` edits from the request's (ASCII only: the
    // count is of bytes).
    let ascii = request.is_ascii() && target_words.iter().all(|w| w.as_ref().is_ascii());
    let mut apart = LetterCounts::new();
    apart.add(request);
    target_words.iter().for_each(|w| apart.remove(w.as_ref()));
    for (j, word) in target_words.iter().enumerate() {
        let word = word.as_ref();
        let word_len = char_len(word);
        let others_len = target_len - word_len;
        // Words of APIs compete only when opposed, as in `read_word`. They are within two
        // edits of the word, so within two letters of its length: when no such length brings
        // a spelling within `within` of the request's (a dropped or an extra word), the length
        // test below would pass over each of them, and they are not looked for.
        let kept = table.rivals(word);
        let apis_in_reach = request_len + within + 2 >= others_len + word_len
            && request_len <= others_len + word_len + 2 + within;
        let apis: &[&'static str] = if apis_in_reach { kept.apis(word) } else { &[] };
        // Each rival with its length in characters: the words of APIs are ASCII (vocab's
        // tests), their length is their bytes.
        let rivals = kept
            .opposed_with_chars()
            .chain(apis.iter().map(|&a| (a, a.len())));
        for (rival, rival_len) in rivals {
            if request_len.abs_diff(others_len + rival_len) > within {
                continue;
            }
            // As many characters as bytes: the rival is ASCII.
            if ascii && rival_len == rival.len() {
                let mut counts = apart;
                counts.add(word);
                counts.remove(rival);
                if counts.apart() > within {
                    continue;
                }
            }
            spelled.clear();
            for (k, w) in target_words.iter().enumerate() {
                spelled.push_str(if k == j { rival } else { w.as_ref() });
            }
            if osa_within(request, &spelled, within).is_some() && !same_lemma(rival, word) {
                return Reading::Opposed;
            }
        }
    }
    Reading::Typo
}

/// How argument key `key` reads against a parameter name `name`, with `other_words`: the words
/// of every name and alias of the tool's parameters (the catalog a key is read against).
/// `Typo` when a misspelling of `name` may be corrected into it.
pub(crate) fn read_key(key: &str, name: &str, other_words: &[String]) -> Reading {
    // Words as written: the rivals of a word are spelled in full (`mits` is a misspelling of
    // `miss`, its rule-made singular `mit` is nothing), and forms of one lemma meet through
    // `same_lemma`.
    let singular_of = |words: &[String]| words.iter().map(|w| singular(w)).collect::<Vec<_>>();
    let (kw, nw) = (split_words(key), split_words(name));
    if singular_of(&kw) == singular_of(&nw) {
        return Reading::Typo;
    }
    let known = |w: &str| is_known_word(w) || other_words.iter().any(|o| o == w);
    if kw.len() == nw.len() {
        let mut worst = Reading::Typo;
        for (k, w) in kw.iter().zip(&nw) {
            if k == w {
                continue;
            }
            let d = strsim::osa_distance(k, w);
            // The other fields compete as whole names, by the margin of `near_miss`: here only
            // the words that are no field's (opposites, words of APIs) are rivals.
            worst = worst.max(read_word(&RequestWord::new(k, known(k)), w, d, &PerThread));
            if worst == Reading::Opposed {
                return worst;
            }
        }
        return worst;
    }
    let compact = kw.concat();
    let d = strsim::osa_distance(&compact, &nw.concat());
    read_letters(&compact, &nw, d, &PerThread)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The deletion index finds exactly the words of APIs that measuring each would find, for
    /// every word of APIs changed by one and two edits, and for words of other alphabets.
    #[test]
    fn words_of_apis_are_found_as_measuring_each_would() {
        assert!(api_words().iter().all(|w| w.is_ascii()));
        let mut rng = fastrand::Rng::with_seed(0xA9_1D);
        let mut requests: Vec<String> = vec!["é".into(), "ép".into(), "ûp".into(), "mïn".into()];
        for &w in api_words() {
            for _ in 0..3 {
                let mut chars: Vec<char> = w.chars().collect();
                for _ in 0..rng.usize(1..=2) {
                    let at = rng.usize(0..=chars.len());
                    match rng.u8(0..3) {
                        0 if at < chars.len() => {
                            chars.remove(at);
                        }
                        1 if at < chars.len() => {
                            chars[at] = rng.choice(['x', 'é', 'a']).unwrap_or('x');
                        }
                        _ => chars.insert(at, rng.choice(['z', 'ü', 'e']).unwrap_or('z')),
                    }
                }
                requests.push(chars.into_iter().collect());
            }
        }
        for request in &requests {
            for d in 0..=2 {
                let mut found = api_words_within(request, d);
                found.sort_unstable();
                let mut measured: Vec<(&str, usize)> = api_words()
                    .iter()
                    .filter(|&&a| a != request)
                    .filter_map(|&a| {
                        let x = strsim::osa_distance(request, a);
                        (x <= d).then_some((a, x))
                    })
                    // A deletion that leaves nothing is no key of the index: a word of APIs
                    // is reached through a common non-empty deletion only.
                    .filter(|&(a, x)| common_deletion(request, a, x))
                    .collect();
                measured.sort_unstable();
                assert_eq!(found, measured, "{request:?} within {d}");
            }
        }
    }

    /// The compact rivals give back every opposed word in order, made now or on first need,
    /// for words of APIs, role nouns, negated words and words with opposites in the tables.
    #[test]
    fn rivals_keep_every_opposed_word_in_order() {
        let words = [
            "lock", "unlock", "payer", "payee", "include", "max", "enable", "increase",
        ];
        for word in words
            .into_iter()
            .chain(api_words().iter().copied().step_by(7))
        {
            let spelled = opposed_rivals(word);
            let (made, complete) = (Rivals::of(word), Rivals::complete(word));
            assert_eq!(made.opposed().collect::<Vec<_>>(), spelled, "{word}");
            assert_eq!(complete.opposed().collect::<Vec<_>>(), spelled, "{word}");
            assert_eq!(made.apis(word), complete.apis(word), "{word}");
            assert_eq!(
                &*PerThread.rivals(word).opposed().collect::<Vec<_>>(),
                spelled
            );
        }
        assert!(!opposed_rivals("lock").is_empty() && !opposed_rivals("payer").is_empty());
    }

    /// Whether the two share a non-empty string each reaches by deleting at most `k`
    /// characters (the symmetric-delete rule), measured by spelling both neighbourhoods out.
    fn common_deletion(a: &str, b: &str, k: usize) -> bool {
        use crate::text::edits::each_deletion;
        let mut left = std::collections::BTreeSet::new();
        each_deletion(a, k, &mut |d| {
            left.insert(d.to_string());
        });
        let mut shared = false;
        each_deletion(b, k, &mut |d| shared |= !d.is_empty() && left.contains(d));
        shared
    }

    fn key(k: &str, name: &str, others: &[&str]) -> Reading {
        let words: Vec<String> = others
            .iter()
            .flat_map(|o| split_words(o))
            .map(|w| singular(&w))
            .collect();
        read_key(k, name, &words)
    }

    #[test]
    fn keys_that_are_words_or_typos_of_opposites_are_not_repaired() {
        assert_eq!(key("payee_id", "payer_id", &["payer_id"]), Reading::Opposed);
        assert_eq!(key("price_lt", "price_gt", &["price_gt"]), Reading::Opposed);
        assert_eq!(
            key("mn_results", "max_results", &["max_results"]),
            Reading::Opposed
        );
        assert_eq!(
            key("eclude_archived", "include_archived", &["include_archived"]),
            Reading::Opposed
        );
        assert_eq!(
            key("dsable_beta", "enable_beta", &["enable_beta"]),
            Reading::Opposed
        );
        assert_eq!(
            key("sort_decending", "sort_ascending", &["sort_ascending"]),
            Reading::Opposed
        );
        assert_eq!(
            key("notify_ff", "notify_on", &["notify_on"]),
            Reading::Opposed
        );
        assert_eq!(key("pricelt", "price_gt", &["price_gt"]), Reading::Opposed);
        assert_eq!(
            key("ppayer_id", "payer_id", &["payer_id", "payee_id"]),
            Reading::Typo
        );
        assert_eq!(
            key("ayer_id", "payee_id", &["payer_id", "payee_id"]),
            Reading::Opposed
        );
        assert_eq!(
            key("serch_query", "search_query", &["search_query"]),
            Reading::Typo
        );
        // `a` is a prefix and `archived` a word: an affix change, not a typo.
        assert_eq!(
            key(
                "include_aarchived",
                "include_archived",
                &["include_archived"]
            ),
            Reading::Opposed
        );
        assert_eq!(
            key("get_sstock", "get_stock", &["get_stock"]),
            Reading::Typo
        );
    }
}
