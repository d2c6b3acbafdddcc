//! Polarity: which words negate, reverse or oppose each other.

use std::sync::OnceLock;

use super::vocab::{FAMILIES, SYNONYMS};
use crate::text::edits::osa_within;
use crate::text::hash::FastMap;
use crate::text::lexicon;

/// Word pairs of opposite meaning. Pairs that differ by a negation prefix (`lock`/`unlock`)
/// are also caught by `NEGATION_PREFIXES`; the table lists the ones the prefix alone would not
/// say (`enable`/`disable`, `add`/`remove`) and a few prefix pairs for documentation.
pub(crate) const OPPOSITES: &[(&str, &str)] = &[
    ("create", "delete"),
    ("create", "destroy"),
    ("add", "remove"),
    ("add", "delete"),
    ("add", "subtract"),
    ("insert", "remove"),
    ("insert", "delete"),
    ("new", "delete"),
    ("enable", "disable"),
    ("subscribe", "unsubscribe"),
    ("grant", "revoke"),
    ("grant", "deny"),
    ("import", "export"),
    ("start", "stop"),
    ("start", "end"),
    ("begin", "end"),
    ("open", "close"),
    ("show", "hide"),
    ("allow", "deny"),
    ("allow", "block"),
    ("accept", "reject"),
    ("accept", "decline"),
    ("approve", "reject"),
    ("approve", "deny"),
    ("upload", "download"),
    ("encrypt", "decrypt"),
    ("encode", "decode"),
    ("compress", "decompress"),
    ("zip", "unzip"),
    ("attach", "detach"),
    ("mount", "unmount"),
    ("follow", "unfollow"),
    ("increase", "decrease"),
    ("increment", "decrement"),
    ("inc", "dec"),
    ("push", "pull"),
    ("push", "pop"),
    ("read", "write"),
    ("get", "set"),
    ("get", "put"),
    ("set", "unset"),
    ("set", "clear"),
    ("load", "unload"),
    ("login", "logout"),
    ("signin", "signout"),
    ("signup", "signout"),
    ("in", "out"),
    ("on", "off"),
    ("up", "down"),
    ("min", "max"),
    ("minimum", "maximum"),
    ("minimize", "maximize"),
    ("first", "last"),
    ("before", "after"),
    ("next", "previous"),
    ("next", "prev"),
    ("forward", "backward"),
    ("to", "from"),
    ("true", "false"),
    ("yes", "no"),
    ("input", "output"),
    ("incoming", "outgoing"),
    ("inbound", "outbound"),
    ("asc", "desc"),
    ("ascending", "descending"),
    ("plus", "minus"),
    ("buy", "sell"),
    ("deposit", "withdraw"),
    ("credit", "debit"),
    ("pause", "resume"),
    ("suspend", "resume"),
    ("play", "pause"),
    ("freeze", "unfreeze"),
    ("expand", "collapse"),
    ("grow", "shrink"),
    ("include", "exclude"),
    ("join", "leave"),
    ("merge", "split"),
    ("send", "receive"),
    ("connect", "disconnect"),
    ("activate", "deactivate"),
    ("register", "unregister"),
    ("register", "deregister"),
    ("install", "uninstall"),
    ("archive", "unarchive"),
    ("pin", "unpin"),
    ("star", "unstar"),
    ("block", "unblock"),
    ("mute", "unmute"),
    ("ban", "unban"),
    ("lock", "unlock"),
    ("link", "unlink"),
    ("assign", "unassign"),
    ("share", "unshare"),
    ("watch", "unwatch"),
    ("like", "unlike"),
    ("like", "dislike"),
    ("upvote", "downvote"),
    ("upgrade", "downgrade"),
    ("commit", "rollback"),
    ("do", "undo"),
    ("redo", "undo"),
    ("visible", "hidden"),
    ("public", "private"),
    ("online", "offline"),
    ("select", "deselect"),
    ("check", "uncheck"),
    ("mark", "unmark"),
    ("publish", "unpublish"),
    ("before", "after"),
    ("above", "below"),
    ("over", "under"),
    ("win", "lose"),
    ("success", "failure"),
    ("valid", "invalid"),
    ("include", "omit"),
];

/// Words that negate, reverse or cancel what they stand beside: `not_found`, `no_cache`,
/// `undo_unlock_door`, `enable_feature_off`, `skip_confirm`. A name or key that has one of
/// them on one side only means something else; it is never dropped as an extra word, nor taken
/// as a namespace. A bare negating affix written as a word of its own (`un_lock`) counts too.
pub(crate) fn is_negation(word: &str) -> bool {
    is_negating_particle(word) || is_negating_verb(word)
}

/// The negating words that are particles, not verbs: in an argument key, `stops` and
/// `reverse` are things, while `no`, `not`, `dont`, `without`, `skip`, `off` only negate.
pub(crate) fn is_negating_particle(word: &str) -> bool {
    matches!(
        word,
        "not"
            | "no"
            | "non"
            | "none"
            | "dont"
            | "never"
            | "neither"
            | "nor"
            | "without"
            | "cannot"
            | "cant"
            | "nothing"
            | "skip"
            | "disable"
            | "disabled"
            | "off"
            | "false"
            | "un"
            | "de"
            | "dis"
            | "anti"
            | "mis"
    )
}

/// Verbs that undo or stop what they stand beside (`undo_unlock_door`, `stop_start_server`).
fn is_negating_verb(word: &str) -> bool {
    matches!(
        word,
        "undo"
            | "revert"
            | "reverse"
            | "rollback"
            | "cancel"
            | "abort"
            | "unset"
            | "negate"
            | "except"
            | "stop"
    )
}

// Polarity roles of an affix. Two affixes are opposed when a pair of `OPPOSED_ROLES` sets them
// apart; two different affixes that are not opposed still make another word (`unregister` is
// not a typo of `deregister`, `reinstall` is not a typo of `install`).
const BARE: u16 = 1;
const NEG: u16 = 1 << 1;
const RE: u16 = 1 << 2;
const EN: u16 = 1 << 3;
const IN: u16 = 1 << 4;
const OUT: u16 = 1 << 5;
const UP: u16 = 1 << 6;
const DOWN: u16 = 1 << 7;
const PRE: u16 = 1 << 8;
const POST: u16 = 1 << 9;
const OVER: u16 = 1 << 10;
const UNDER: u16 = 1 << 11;

/// Role pairs that make two affixes opposites: a negation against the bare word
/// (`lock`/`unlock`), against a repetition (`reactivate`/`deactivate`) and against `en`
/// (`enqueue`/`dequeue`, `enable`/`disable`), and the directions (`increase`/`decrease`,
/// `inbound`/`outbound`, `upload`/`download`, `preorder`/`postorder`, `overflow`/`underflow`).
const OPPOSED_ROLES: &[(u16, u16)] = &[
    (NEG, BARE),
    (NEG, RE),
    (NEG, EN),
    (IN, OUT),
    (IN, DOWN),
    (UP, DOWN),
    (PRE, POST),
    (OVER, UNDER),
];

struct Affix {
    text: &'static str,
    roles: u16,
    /// Also the start of many plain words (`a`: `amount`, `in`: `index`): counts only before a
    /// stem of four letters or more, and only with that stem unchanged.
    weak: bool,
}

const fn affix(text: &'static str, roles: u16, weak: bool) -> Affix {
    Affix { text, roles, weak }
}

/// Prefixes that carry polarity, grouped by first letter, longer ones first (`dis` before
/// `de`, `non` before `no`).
const AFFIXES: &[Affix] = &[
    affix("anti", NEG, false),
    affix("a", NEG, true),
    affix("counter", NEG, false),
    affix("dont", NEG, false),
    affix("down", DOWN, false),
    affix("dis", NEG, false),
    affix("de", NEG | DOWN, false),
    affix("em", EN, false),
    affix("en", EN, false),
    affix("ex", OUT, false),
    affix("il", NEG, true),
    affix("im", NEG | IN, true),
    affix("in", NEG | IN, true),
    affix("ir", NEG, true),
    affix("mis", NEG, false),
    affix("non", NEG, false),
    affix("not", NEG, false),
    affix("no", NEG, false),
    affix("over", OVER, false),
    affix("out", OUT, false),
    affix("post", POST, false),
    affix("pre", PRE, false),
    affix("re", RE, false),
    affix("under", UNDER, false),
    affix("un", NEG, false),
    affix("up", UP, false),
];

/// The prefixes that start with `first`, longest first: a range of `AFFIXES`, which keeps
/// the prefixes of one letter together.
fn affix_range(first: u8) -> (u8, u8) {
    static RANGES: OnceLock<[(u8, u8); 128]> = OnceLock::new();
    let ranges = RANGES.get_or_init(|| {
        let mut ranges = [(0u8, 0u8); 128];
        for (i, a) in AFFIXES.iter().enumerate() {
            let r = &mut ranges[usize::from(a.text.as_bytes()[0] & 0x7f)];
            if r.0 == r.1 {
                *r = (i as u8, i as u8 + 1);
            } else {
                r.1 = i as u8 + 1;
            }
        }
        ranges
    });
    if first >= 128 {
        return (0, 0);
    }
    ranges[usize::from(first)]
}

/// The shortest stem an affix may stand before (`undo` is `un` + `do` only through the table).
const MIN_STEM: usize = 3;
const MIN_WEAK_STEM: usize = 4;

/// Whether `word` is one of the polarity prefixes on its own (`un`, `de`, `re`).
pub(crate) fn is_affix(word: &str) -> bool {
    AFFIXES.iter().any(|a| a.text == word)
}

/// How many character edits a word of this length may carry and still be recognised. Short
/// words get none: `get_cat` is not a typo of `get_car`. For a word with a polarity prefix
/// this is the allowance of its stem: an edit of the prefix is never a typo.
pub(crate) fn typo_allowance(len: usize) -> usize {
    match len {
        0..=3 => 0,
        4..=8 => 1,
        _ => MAX_TYPO_ALLOWANCE,
    }
}

/// The most edits [`typo_allowance`] gives any word.
pub(crate) const MAX_TYPO_ALLOWANCE: usize = 2;

/// The reading of a word with no prefix.
const BARE_AFFIX: Affix = affix("", BARE, false);

/// What the polarity model reads in one word, computed once: the fuzzy tier compares each
/// request word with many catalog words, and each catalog word with many requests, so the
/// name index keeps this beside every word it holds and a request computes it once per word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Polarity {
    /// The prefixed readings (the bare one is implied): the prefix's place in `AFFIXES` and
    /// the byte where the stem starts.
    prefixed: [(u8, u8); 3],
    len: u8,
    /// The ids the opposites table gives the word (with its synonyms), if it has any.
    table: Option<&'static [u16]>,
    /// The same for the stem of each prefixed reading, and the characters of every reading
    /// (saturated at 255): a pair of words is compared reading by reading, many times over,
    /// and neither needs a lookup or a count then.
    stem_table: [Option<&'static [u16]>; 3],
    chars: [u8; 4],
}

impl Polarity {
    pub(crate) fn of(word: &str) -> Polarity {
        let ids = &opposite_ids().ids;
        let mut out = Polarity {
            prefixed: [(0, 0); 3],
            len: 0,
            table: ids.get(word).map(Vec::as_slice),
            stem_table: [None; 3],
            chars: [saturated_chars(word), 0, 0, 0],
        };
        let Some(&first) = word.as_bytes().first() else {
            return out;
        };
        // Only the prefixes of its first letter.
        let (from, to) = affix_range(first);
        for i in from..to {
            let a = &AFFIXES[usize::from(i)];
            let Some(rest) = word.strip_prefix(a.text) else {
                continue;
            };
            let stem = rest.strip_prefix(['_', '-']).unwrap_or(rest);
            let min = if a.weak { MIN_WEAK_STEM } else { MIN_STEM };
            if usize::from(out.len) < out.prefixed.len() && stem.chars().take(min).count() == min {
                // A prefix and its separator are at most eight bytes.
                let at = (word.len() - stem.len()) as u8;
                let k = usize::from(out.len);
                out.prefixed[k] = (i, at);
                out.stem_table[k] = ids.get(stem).map(Vec::as_slice);
                out.chars[k + 1] = saturated_chars(stem);
                out.len += 1;
            }
        }
        out
    }

    /// How many readings the word has: as it is, and after each polarity prefix it starts
    /// with (a `_` or `-` after the prefix is part of it: `un-lock`). At most four: no word
    /// starts with more than three of the prefixes (`nonstop`: `non`, `no`).
    fn readings(&self) -> usize {
        1 + usize::from(self.len)
    }

    /// Reading `k` of `word`, which this was computed for: its prefix and its stem. Reading 0
    /// is the bare word.
    fn reading<'w>(&self, word: &'w str, k: usize) -> (&'static Affix, &'w str) {
        if k == 0 {
            return (&BARE_AFFIX, word);
        }
        let (i, at) = self.prefixed[k - 1];
        (
            &AFFIXES[usize::from(i)],
            word.get(usize::from(at)..).unwrap_or(""),
        )
    }

    /// The opposites table's ids of reading `k`'s stem.
    fn reading_table(&self, k: usize) -> Option<&'static [u16]> {
        if k == 0 {
            self.table
        } else {
            self.stem_table[k - 1]
        }
    }
}

/// Characters in `text`, at most 255. A saturated count only weakens the length test before an
/// edit distance (the allowance is the same for every stem over eight characters), so no
/// decision depends on it.
fn saturated_chars(text: &str) -> u8 {
    u8::try_from(text.chars().count()).unwrap_or(u8::MAX)
}

/// A word with its `Polarity`.
#[derive(Clone, Copy)]
pub(crate) struct Word<'w> {
    pub(crate) text: &'w str,
    pub(crate) polarity: &'w Polarity,
}

impl<'w> Word<'w> {
    pub(crate) fn new(text: &'w str, polarity: &'w Polarity) -> Word<'w> {
        Word { text, polarity }
    }
}

/// `f` of two words whose polarity is computed here.
fn of_both<R>(a: &str, b: &str, f: impl FnOnce(Word<'_>, Word<'_>) -> R) -> R {
    let (pa, pb) = (Polarity::of(a), Polarity::of(b));
    f(Word::new(a, &pa), Word::new(b, &pb))
}

/// Spellings of one prefix: `em` before b/m/p, `im`/`il`/`ir` before m, l, r.
fn family(prefix: &str) -> &str {
    match prefix {
        "em" => "en",
        "im" | "il" | "ir" => "in",
        other => other,
    }
}

fn roles_opposed(a: u16, b: u16) -> bool {
    OPPOSED_ROLES
        .iter()
        .any(|&(x, y)| (a & x != 0 && b & y != 0) || (a & y != 0 && b & x != 0))
}

/// How two different words relate through their prefixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Affixes {
    /// No reading of one is a prefix change of the other.
    Unrelated,
    /// The same stem behind different prefixes (`reinstall`/`install`, `unregister`/
    /// `deregister`): another word, never a typo of it.
    Changed,
    /// Opposed prefixes before the same stem, or before a typo of it (`reactivte`/
    /// `deactivate`, `unlcok`/`lock`): never a typo, never a suggestion.
    Opposed,
}

/// The relation of two words through their polarity prefixes. The allowance for a typo is
/// the stem's: a typo in the stem does not hide a change of prefix. `a` is the request's word
/// and `b` the catalog's: letters of the request read bare count as a stem only when they are
/// a word (see `stem_is_word`).
pub(crate) fn affixes(a: &str, b: &str) -> Affixes {
    of_both(a, b, affixes_of)
}

/// `affixes` of two words whose polarity is known.
pub(crate) fn affixes_of(wa: Word<'_>, wb: Word<'_>) -> Affixes {
    let (a, b) = (wa.text, wb.text);
    if a == b {
        return Affixes::Unrelated;
    }
    let (pa, pb) = (wa.polarity, wb.polarity);
    let mut best = prefix_added(a, b);
    if pa.len == 0 && pb.len == 0 {
        return best;
    }
    // Only computed when a reading pair needs it: whether the two words are one typo apart
    // as written.
    let mut plain_typo: Option<bool> = None;
    for i in 0..pa.readings() {
        let (x, x_stem) = pa.reading(a, i);
        let lx = usize::from(pa.chars[i]);
        for j in 0..pb.readings() {
            let (y, y_stem) = pb.reading(b, j);
            // Opposite stems behind prefixes that do not negate (`reenable`/`disable`,
            // `reopen`/`reclose`) are opposites too.
            if (x.roles & NEG == 0) == (y.roles & NEG == 0)
                && (i + j > 0)
                && ids_opposed(pa.reading_table(i), pb.reading_table(j))
            {
                return Affixes::Opposed;
            }
            if family(x.text) == family(y.text) {
                continue;
            }
            let opposed = roles_opposed(x.roles, y.roles);
            if x_stem == y_stem {
                if !stem_is_word(i, a, y) {
                    continue;
                }
                best = best.max(if opposed {
                    Affixes::Opposed
                } else {
                    Affixes::Changed
                });
                continue;
            }
            if x.weak || y.weak {
                continue;
            }
            let Some(distance) = stems_within_typo(x_stem, lx, y_stem, usize::from(pb.chars[j]))
            else {
                continue;
            };
            if i > 0 && j > 0 {
                // Two prefixes, one stem with a typo: `reactivte`/`deactivate`.
                best = best.max(if opposed {
                    Affixes::Opposed
                } else {
                    Affixes::Changed
                });
            } else if opposed && distance == 1 {
                // A bare word against a prefixed one with one typo in the stem (`unlcok`/
                // `lock`) is opposed, unless the two are simply one typo apart as written
                // (`dlete` is `delete` with a letter dropped, not a negated `lete`).
                let typo = *plain_typo.get_or_insert_with(|| {
                    let longest = a.chars().count().max(b.chars().count());
                    osa_within(a, b, typo_allowance(longest)).is_some()
                });
                if !typo {
                    best = Affixes::Opposed;
                }
            }
        }
    }
    best
}

/// The edit distance of two stems (of `lx` and `ly` characters) when it is within the typo
/// allowance of the longer one; the letter-count bound rules most pairs out first.
fn stems_within_typo(x: &str, lx: usize, y: &str, ly: usize) -> Option<usize> {
    let allowance = typo_allowance(lx.max(ly));
    if lx.abs_diff(ly) > allowance || letters_differ_by_more(x, y, allowance) {
        return None;
    }
    osa_within(x, y, allowance)
}

/// One word is the other with one or two letters put in front (`dactivate`/`activate`): an
/// edit of the word's start only, where the polarity prefixes are: another word, not a typo.
fn prefix_added(a: &str, b: &str) -> Affixes {
    let (long, short) = if a.len() > b.len() { (a, b) } else { (b, a) };
    if long.len() == short.len() || !long.ends_with(short) {
        return Affixes::Unrelated;
    }
    // Only a real prefix before a known word: `sstock` is `stock` with a letter typed twice,
    // `ppayer` is `payer`, but `reinstall` is another word than `install`.
    let extra = &long[..long.len() - short.len()];
    let extra = extra.strip_suffix(['_', '-']).unwrap_or(extra);
    // A full prefix before four letters or more is one whatever the lexicon knows
    // (`detokenize`); a weak one (`a`, `in`) only before a known word (`aable`, not `agency`).
    let stem_ok = |affix: &Affix| {
        super::vocab::is_known_word(short) || (!affix.weak && short.chars().count() >= 4)
    };
    if extra.chars().count() <= 3
        && short.chars().take(MIN_STEM).count() == MIN_STEM
        && AFFIXES
            .iter()
            .any(|affix| affix.text == extra && stem_ok(affix))
    {
        Affixes::Changed
    } else {
        Affixes::Unrelated
    }
}

/// Every curated pair of opposites: the table above and the families of `vocab.rs`, each
/// side of a family against every word of the other.
pub(crate) fn curated_pairs() -> impl Iterator<Item = (&'static str, &'static str)> {
    let families = FAMILIES.iter().flat_map(|&(left, right)| {
        left.iter()
            .flat_map(move |&a| right.iter().map(move |&b| (a, b)))
    });
    OPPOSITES.iter().copied().chain(families)
}

/// The opposites of each word of `OPPOSITES`, both ways: the words the letter-level guard looks
/// for inside fused names, and the stems a negating prefix is read before (`unlock`). The
/// families of `vocab.rs` are left out of both: their words are short (`lt`, `hi`) or stand
/// inside plain words (`detail` is not a negated `tail`).
pub(crate) fn opposites() -> &'static FastMap<&'static str, Vec<&'static str>> {
    static MAP: OnceLock<FastMap<&'static str, Vec<&'static str>>> = OnceLock::new();
    MAP.get_or_init(|| pair_map(OPPOSITES.iter().copied()))
}

fn pair_map(
    pairs: impl Iterator<Item = (&'static str, &'static str)>,
) -> FastMap<&'static str, Vec<&'static str>> {
    let mut map: FastMap<&'static str, Vec<&'static str>> = FastMap::default();
    for (a, b) in pairs {
        for (x, y) in [(a, b), (b, a)] {
            let list = map.entry(x).or_default();
            if !list.contains(&y) {
                list.push(y);
            }
        }
    }
    map
}

/// Whether `word`, or the head of its synonym class, is in the opposites table: the words that
/// carry polarity wherever they stand. The families of `vocab.rs` and WordNet's antonyms only
/// oppose words to one another (`local` against `remote`); they do not make a label such as
/// `localServer` a negation, nor every adjective a word that may not be dropped.
fn curated(word: &str) -> bool {
    let head = super::vocab::canon(word);
    let map = opposites();
    map.contains_key(word) || (!head.is_empty() && map.contains_key(head))
}

/// Two nouns of one relation seen from its two ends: the one it is done to (`-ee`: `payee`,
/// `employee`, `lessee`, `followee`, `callee`) and the one who does it (`-er`, `-or`: `payer`,
/// `employer`, `lessor`, `follower`, `caller`). A rule of English morphology rather than a
/// list: the pairs are open-ended (`grantee`, `assignee`, `interviewee`, ...).
/// The fuzzy tier asks this of every pair of words it compares, and few words end in `-ee`: the
/// test of the last letters is done in line, before any call.
#[inline]
pub(crate) fn role_opposed(a: &str, b: &str) -> bool {
    (a.ends_with("ee") && role_pair(a, b)) || (b.ends_with("ee") && role_pair(b, a))
}

/// `patient` ends in `-ee` and `agent` in `-er`/`-or` on the same stem of three letters or more
/// (`referee`/`referrer`: the agent may double the stem's last letter).
fn role_pair(patient: &str, agent: &str) -> bool {
    let Some(p) = patient.strip_suffix("ee").filter(|s| s.len() >= 3) else {
        return false;
    };
    let Some(g) = agent
        .strip_suffix("er")
        .or_else(|| agent.strip_suffix("or"))
    else {
        return false;
    };
    p == g
        || g.strip_prefix(p)
            .is_some_and(|rest| rest.len() == 1 && p.ends_with(rest))
}

/// Whether two words mean opposite things: by their prefixes (`lock`/`unlock`,
/// `reactivate`/`deactivate`, `enqueue`/`dequeue`, with or without a typo in the stem),
/// directly by the table, or through their synonym classes (`add`/`remove` as create/delete).
pub(crate) fn opposed(a: &str, b: &str) -> bool {
    of_both(a, b, opposed_of)
}

/// `opposed` of two words whose polarity is known.
pub(crate) fn opposed_of(a: Word<'_>, b: Word<'_>) -> bool {
    if a.text == b.text {
        return false;
    }
    if ids_opposed(a.polarity.table, b.polarity.table) || role_opposed(a.text, b.text) {
        return true;
    }
    // Two words without a prefix are opposed by the table alone: every other opposition
    // is read from a prefix.
    (a.polarity.len > 0 || b.polarity.len > 0) && affixes_opposed(a, b)
}

/// `affixes_of(wa, wb) == Affixes::Opposed`, without the work that can only find `Changed`:
/// the fuzzy tier asks this of every leftover pair of words, and most pairs have no opposed
/// prefixes, so their stems are never compared letter by letter.
fn affixes_opposed(wa: Word<'_>, wb: Word<'_>) -> bool {
    let (a, b, pa, pb) = (wa.text, wb.text, wa.polarity, wb.polarity);
    if a == b {
        return false;
    }
    let mut plain_typo: Option<bool> = None;
    for i in 0..pa.readings() {
        let (x, x_stem) = pa.reading(a, i);
        for j in 0..pb.readings() {
            let (y, y_stem) = pb.reading(b, j);
            if (x.roles & NEG == 0) == (y.roles & NEG == 0)
                && (i + j > 0)
                && ids_opposed(pa.reading_table(i), pb.reading_table(j))
            {
                return true;
            }
            if family(x.text) == family(y.text) || !roles_opposed(x.roles, y.roles) {
                continue;
            }
            if x_stem == y_stem {
                if stem_is_word(i, a, y) {
                    return true;
                }
                continue;
            }
            if x.weak || y.weak {
                continue;
            }
            let (lx, ly) = (usize::from(pa.chars[i]), usize::from(pb.chars[j]));
            let Some(distance) = stems_within_typo(x_stem, lx, y_stem, ly) else {
                continue;
            };
            if i > 0 && j > 0 {
                return true;
            }
            if distance == 1 {
                let typo = *plain_typo.get_or_insert_with(|| {
                    let longest = a.chars().count().max(b.chars().count());
                    osa_within(a, b, typo_allowance(longest)).is_some()
                });
                if !typo {
                    return true;
                }
            }
        }
    }
    false
}

/// The roles of the polarity prefix `word` has before `base` (`reinstall` of `install`: a
/// repetition; `unlock` of `lock`: a negation), if it is `base` behind one.
fn prefix_roles(word: &str, base: &str) -> Option<u16> {
    AFFIXES.iter().find_map(|a| {
        word.strip_prefix(a.text)
            .map(|rest| rest.strip_prefix(['_', '-']).unwrap_or(rest))
            .filter(|rest| *rest == base)
            .map(|_| a.roles)
    })
}

/// Whether `word` is `base` behind a prefix that negates it (`unlock` of `lock`,
/// `noadsorbent` of `adsorbent`): where `base` is a word of the tool, that is a word, and the
/// prefix makes its opposite.
pub(crate) fn negated_form(word: &str, base: &str) -> bool {
    prefix_roles(word, base).is_some_and(|roles| roles & NEG != 0)
}

/// Whether `word` is `base` behind any polarity prefix (`reinstall` of `install`).
pub(crate) fn prefixed_form(word: &str, base: &str) -> bool {
    prefix_roles(word, base).is_some()
}

/// For a request word `a` read bare (`i == 0`) against a catalog word that is it behind prefix
/// `y`: whether `a` counts as the stem `y` stands before. A full prefix always makes a word of
/// its own (`tokenize` against `detokenize`, whatever the lexicon says of `tokenize`); a weak
/// one (`a`, `in`, `im`, ...) begins many plain words, so there the edit is an affix change
/// only when what remains is a known word: the catalog's own word is one (`aisothermal`
/// against `isothermal` is a negation), a request's letters are one only when the lexicon says
/// so (`gency` is `agency` with its first letter dropped).
fn stem_is_word(i: usize, a: &str, y: &Affix) -> bool {
    i > 0 || !y.weak || super::vocab::is_known_word(a)
}

/// Whether the table (with synonyms) says two words are opposites.
fn table_opposed(a: &str, b: &str) -> bool {
    let ids = &opposite_ids().ids;
    ids_opposed(ids.get(a).map(Vec::as_slice), ids.get(b).map(Vec::as_slice)) || role_opposed(a, b)
}

pub(crate) fn ids_opposed(a: Option<&[u16]>, b: Option<&[u16]>) -> bool {
    let (Some(ia), Some(ib)) = (a, b) else {
        return false;
    };
    let table = opposite_ids();
    ia.iter()
        .any(|&x| ib.iter().any(|&y| table.pair_opposed(x, y)))
}

/// Whether `a` and `b` cannot be within `k` edits of one another, by their letters alone:
/// a change of one letter changes the count of at most one letter on each side, so when more
/// than `k` letters of one are missing from the other, no `k` edits join them. A cheap test
/// before `strsim::osa_distance` (which has no bound to stop at); ASCII only, otherwise it
/// says nothing.
fn letters_differ_by_more(a: &str, b: &str, k: usize) -> bool {
    if !a.is_ascii() || !b.is_ascii() {
        return false;
    }
    let mut count = [0i16; 128];
    for &c in a.as_bytes() {
        count[usize::from(c)] += 1;
    }
    for &c in b.as_bytes() {
        count[usize::from(c)] -= 1;
    }
    // Each letter's surplus is counted once, at its first occurrence, then cleared.
    let (mut only_a, mut only_b) = (0usize, 0usize);
    for &c in a.as_bytes() {
        let n = &mut count[usize::from(c)];
        if *n > 0 {
            only_a += n.unsigned_abs() as usize;
            *n = 0;
        }
    }
    for &c in b.as_bytes() {
        let n = &mut count[usize::from(c)];
        if *n < 0 {
            only_b += n.unsigned_abs() as usize;
            *n = 0;
        }
    }
    only_a.max(only_b) > k
}

/// Whether two words may be taken for one another by a typo: not when they differ by a
/// prefix (`reinstall`/`uninstall`, `async`/`sync`), nor when they are opposites.
pub(crate) fn typo_possible(a: &str, b: &str) -> bool {
    affixes(a, b) == Affixes::Unrelated && !table_opposed(a, b)
}

/// `typo_possible` of two words whose polarity is known.
pub(crate) fn typo_possible_of(a: Word<'_>, b: Word<'_>) -> bool {
    affixes_of(a, b) == Affixes::Unrelated
        && !ids_opposed(a.polarity.table, b.polarity.table)
        && !role_opposed(a.text, b.text)
}

/// `word` negates a word this catalog or the tables know (`unget`, `unrun`, `noforce`): the
/// request negates something the tool does not even have.
pub(crate) fn negates_known_word(word: Word<'_>, known: &dyn Fn(&str) -> bool) -> bool {
    let p = word.polarity;
    (1..p.readings()).any(|k| {
        let (affix, stem) = p.reading(word.text, k);
        affix.roles & NEG != 0
            && (known(stem)
                || !super::vocab::canon(stem).is_empty()
                || opposites().contains_key(stem))
    })
}

/// Whether `word` carries polarity, so that a request holding it means something other than
/// the same request without it: a negating word or bare prefix (`not`, `undo`, `un`), a word
/// of the opposites table or a synonym of one, as written, in the singular or by its English
/// stem (`halt`, `erases`, `stopped`),
/// a negated word this catalog or the tables know (`undelete`, `disarm` beside `arm`), or the
/// opposite of one of `beside`, the words it would be dropped from (`relock` before `unlock`).
///
/// `beside` gives those words when they are needed: most words are settled before.
pub(crate) fn carries_polarity<'b>(
    word: &str,
    beside: impl FnOnce() -> &'b [String],
    known: &dyn Fn(&str) -> bool,
) -> bool {
    if is_negation(word)
        || is_affix(word)
        || curated(word)
        || inflection_bases(word, |base| is_negation(base) || curated(base))
    {
        return true;
    }
    let polarity = Polarity::of(word);
    negates_known_word(Word::new(word, &polarity), known)
        || beside().iter().any(|b| {
            shared_ending(word, b) >= MIN_STEM
                && same_stem_opposed(Word::new(word, &polarity), Word::new(b, &Polarity::of(b)))
        })
}

/// How many bytes `a` and `b` share at their ends.
fn shared_ending(a: &str, b: &str) -> usize {
    a.bytes()
        .rev()
        .zip(b.bytes().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// Whether `a` and `b` are one stem behind opposed prefixes, exactly (`relock`/`unlock`,
/// `lock`/`unlock`): the affix model without its allowance for a typo in the stem, for words
/// that stand apart rather than in place of one another (`test` is not a misspelled
/// `no-tes` of `notes`).
///
/// The fuzzy tier asks this of every extra request word against every word of every scored
/// form, and most words have no prefix: that test is made in line, before any call.
#[inline]
pub(crate) fn same_stem_opposed(wa: Word<'_>, wb: Word<'_>) -> bool {
    (wa.polarity.len > 0 || wb.polarity.len > 0) && prefixed_stems_opposed(wa, wb)
}

/// `same_stem_opposed` of two words of which one at least has a prefix.
fn prefixed_stems_opposed(wa: Word<'_>, wb: Word<'_>) -> bool {
    let (a, b, pa, pb) = (wa.text, wb.text, wa.polarity, wb.polarity);
    // One stem behind two prefixes ends both words: most pairs end apart.
    if shared_ending(a, b) < MIN_STEM {
        return false;
    }
    (0..pa.readings()).any(|i| {
        let (x, x_stem) = pa.reading(a, i);
        (0..pb.readings()).any(|j| {
            let (y, y_stem) = pb.reading(b, j);
            i + j > 0
                && x_stem == y_stem
                && family(x.text) != family(y.text)
                && roles_opposed(x.roles, y.roles)
        })
    })
}

/// The ids the opposites table gives `word` as written or with a regular inflection undone
/// (`created`, `creating` and `creates` stand for `create`, `stopped` for `stop`, `copies` for
/// `copy`).
pub(crate) fn inflected_ids(word: &str) -> Option<Box<[u16]>> {
    let ids = &opposite_ids().ids;
    // The word's own ids and those of every base it may inflect: `destroyed` is an antonym
    // in WordNet of its own and the past of `destroy`, the opposite of `create`.
    let mut found: Vec<u16> = ids.get(word).cloned().unwrap_or_default();
    inflection_bases(word, |base| {
        for &id in ids.get(base).map_or(&[][..], Vec::as_slice) {
            if !found.contains(&id) {
                found.push(id);
            }
        }
        false
    });
    (!found.is_empty()).then(|| found.into_boxed_slice())
}

/// Whether `f` holds for a base `word` may be an inflection of: without `-s`, `-es`, `-ies`
/// (for `-y`), `-d`, `-ed`, `-ing`, with a doubled last letter undone or an `e` put back. A
/// handful of suffix rules rather than a stemmer: a stemmer cuts `added` to `ad` and `create`
/// to `creat`, so its stems would have to be matched against the table's stems, and it
/// allocates for every word. `-es` follows only a hissing sound or an `o` (`boxes`, `pushes`,
/// `echoes`); after any other letter the `e` is the base's own and `-s` the inflection:
/// `deles` is `dele` with `-s`, never `del` (`delete`) with `-es`, so it is no inflection of an
/// opposite of `create`.
fn inflection_bases(word: &str, mut f: impl FnMut(&str) -> bool) -> bool {
    if word.len() < 3 || !word.is_ascii() {
        return false;
    }
    // A word of English is read by its morphology: `created` is `create`, `news` is no
    // inflection of `new`, `stopped` is `stop`.
    if let Some(mut lemmas) = lexicon::lemmas(word) {
        return lemmas.any(|l| l != word && f(l));
    }
    if lexicon::is_english(word) {
        return false;
    }
    let mut buf = String::new();
    for suffix in ["ing", "ies", "ed", "es", "s", "d"] {
        let Some(base) = word.strip_suffix(suffix).filter(|b| b.len() >= 2) else {
            continue;
        };
        if suffix == "es" && !takes_es(base) {
            // The `e` put back would be `word` without `-s`: the rule for `-s` below.
            continue;
        }
        if f(base) {
            return true;
        }
        let b = base.as_bytes();
        if b.len() >= 3 && b[b.len() - 1] == b[b.len() - 2] && f(&base[..base.len() - 1]) {
            return true;
        }
        buf.clear();
        buf.push_str(base);
        buf.push(if suffix == "ies" { 'y' } else { 'e' });
        if f(&buf) {
            return true;
        }
    }
    false
}

/// Whether `word` may be read as a polarity prefix before a stem (`dedes` as `de` + `des`,
/// `rebota` as `re` + `bota`): the generated names of the tests avoid those.
#[cfg(test)]
pub(crate) fn has_prefix_reading(word: &str) -> bool {
    Polarity::of(word).len > 0
}

/// Whether `word` is a regular inflection of `base` (`petalouses` of `petalous`, `created` of
/// `create`), as `inflected_ids` reads it: the opposites of `base` are then `word`'s own.
pub(crate) fn inflects(word: &str, base: &str) -> bool {
    word != base && inflection_bases(word, |b| b == base)
}

/// Whether a base ends in a hissing sound or an `o`, the endings English adds `-es` to
/// (`box`, `buzz`, `pass`, `push`, `match`, `echo`); a doubled `z` or `s` is undone after.
fn takes_es(base: &str) -> bool {
    ["s", "x", "z", "ch", "sh", "o"]
        .iter()
        .any(|end| base.ends_with(end))
}

/// The opposites in a form that costs two lookups per word pair: every word of a pair (the
/// curated ones and WordNet's antonyms), and every synonym of a word of the table, gets the
/// ids it stands for.
pub(crate) struct OppositeIds {
    ids: FastMap<&'static str, Vec<u16>>,
    /// The ids opposed to each id, sorted: a few each, among a few thousand ids.
    opposite: Vec<Vec<u16>>,
    /// The words that hold each id.
    words: Vec<Vec<&'static str>>,
}

impl OppositeIds {
    fn pair_opposed(&self, x: u16, y: u16) -> bool {
        self.opposite
            .get(usize::from(x))
            .is_some_and(|list| list.binary_search(&y).is_ok())
    }
}

pub(crate) fn opposite_ids() -> &'static OppositeIds {
    static TABLE: OnceLock<OppositeIds> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut id_of: FastMap<&'static str, u16> = FastMap::default();
        let mut opposite: Vec<Vec<u16>> = Vec::new();
        for (a, b) in curated_pairs().chain(lexicon::antonyms()) {
            let mut id = |w: &'static str| {
                let next = u16::try_from(id_of.len()).expect("fewer than 65,536 opposed words");
                *id_of.entry(w).or_insert(next)
            };
            let (ia, ib) = (id(a), id(b));
            opposite.resize(id_of.len(), Vec::new());
            opposite[usize::from(ia)].push(ib);
            opposite[usize::from(ib)].push(ia);
        }
        for list in &mut opposite {
            list.sort_unstable();
            list.dedup();
        }
        let mut ids: FastMap<&'static str, Vec<u16>> = FastMap::default();
        let mut words: Vec<Vec<&'static str>> = vec![Vec::new(); id_of.len()];
        for (&word, &id) in &id_of {
            ids.entry(word).or_default().push(id);
            words[usize::from(id)].push(word);
        }
        for &(word, head) in SYNONYMS {
            if let Some(&id) = id_of.get(head) {
                let list = ids.entry(word).or_default();
                if !list.contains(&id) {
                    list.push(id);
                    words[usize::from(id)].push(word);
                }
            }
        }
        OppositeIds {
            ids,
            opposite,
            words,
        }
    })
}

/// The words opposed to `word` by the tables (curated, WordNet's antonyms, through synonyms),
/// as written or with a regular inflection undone.
pub(crate) fn opposite_words(word: &str) -> Vec<&'static str> {
    let table = opposite_ids();
    let mut out: Vec<&'static str> = Vec::new();
    for &x in inflected_ids(word).as_deref().unwrap_or(&[]) {
        for &y in &table.opposite[usize::from(x)] {
            for &w in &table.words[usize::from(y)] {
                if !out.contains(&w) {
                    out.push(w);
                }
            }
        }
    }
    out
}

/// Whether the request and a tool's words differ by an opposite: some word present on one side
/// only is the opposite of a word present on the other side only, or a negation word is
/// present on one side only.
pub(crate) fn opposed_words<S: AsRef<str>, T: AsRef<str>>(
    request: &[S],
    tool: &[T],
    negation_words: bool,
) -> bool {
    if negation_words && negation_on_one_side(request, tool) {
        return true;
    }
    opposed_pairs(request, tool, |i, j| {
        opposed(request[i].as_ref(), tool[j].as_ref())
    })
}

/// Whether a negation word is present on one side only.
pub(crate) fn negation_on_one_side<S: AsRef<str>, T: AsRef<str>>(
    request: &[S],
    tool: &[T],
) -> bool {
    let only_request = request
        .iter()
        .map(AsRef::as_ref)
        .filter(|w| !tool.iter().any(|t| t.as_ref() == *w));
    let only_tool = tool
        .iter()
        .map(AsRef::as_ref)
        .filter(|w| !request.iter().any(|r| r.as_ref() == *w));
    only_request.chain(only_tool).any(is_negation)
}

/// `opposed_words` without negation words, of words whose polarity is known (`Polarity::of`
/// each, in order): the name index keeps its words', a request computes its own once.
pub(crate) fn opposed_words_of<S: AsRef<str>, T: AsRef<str>>(
    request: &[S],
    request_polarity: &[Polarity],
    tool: &[T],
    tool_polarity: &[Polarity],
) -> bool {
    opposed_pairs(request, tool, |i, j| {
        match (request_polarity.get(i), tool_polarity.get(j)) {
            (Some(p), Some(q)) => opposed_of(
                Word::new(request[i].as_ref(), p),
                Word::new(tool[j].as_ref(), q),
            ),
            _ => opposed(request[i].as_ref(), tool[j].as_ref()),
        }
    })
}

/// Whether `opposed(i, j)` holds of some word `i` of the request that the tool lacks and
/// some word `j` of the tool that the request lacks.
pub(crate) fn opposed_pairs<S: AsRef<str>, T: AsRef<str>>(
    request: &[S],
    tool: &[T],
    opposed: impl Fn(usize, usize) -> bool,
) -> bool {
    let lacks = |words: &[T], w: &str| !words.iter().any(|x| x.as_ref() == w);
    let lacked = |words: &[S], w: &str| !words.iter().any(|x| x.as_ref() == w);
    (0..request.len()).any(|i| {
        lacks(tool, request[i].as_ref())
            && (0..tool.len()).any(|j| lacked(request, tool[j].as_ref()) && opposed(i, j))
    })
}

/// The words of the opposites table, numbered, with the numbers of their opposites: the
/// letter-level guard looks for them inside compact forms.
pub(crate) struct FusedTable {
    /// Finds every table word inside a string, overlapping ones included; pattern `i` is
    /// word `i` of the sorted word list.
    pub(crate) finder: aho_corasick::AhoCorasick,
    pub(crate) opposite: Vec<Vec<u16>>,
}

pub(crate) fn fused_table() -> &'static FusedTable {
    static TABLE: OnceLock<FusedTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut words: Vec<&'static str> = opposites().keys().copied().collect();
        words.sort_unstable();
        let id = |w: &str| words.binary_search(&w).map(|i| i as u16).ok();
        let opposite = words
            .iter()
            .map(|w| {
                let mut ids: Vec<u16> = opposites()[w].iter().filter_map(|y| id(y)).collect();
                ids.sort_unstable();
                ids
            })
            .collect();
        let finder = aho_corasick::AhoCorasick::new(&words)
            .expect("the opposites table is a small set of short words");
        FusedTable { finder, opposite }
    })
}

/// The numbers (ascending) of the opposites-table words that occur inside `compact`.
pub(crate) fn fused_ids(compact: &str) -> Vec<u16> {
    let mut ids: Vec<u16> = fused_table()
        .finder
        .find_overlapping_iter(compact)
        .map(|m| m.pattern().as_usize() as u16)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// A request that lost its word boundaries (`dequeuevehicle`) against a tool's words
/// (`enqueue`, `vehicle`), or the other way round: what the two share at the start and at
/// the end is set aside, the rest is widened to the tool's word boundaries, and the request's
/// letters there are compared with each tool word they stand for (`dequeue` with `enqueue`).
/// The strongest relation of any word is the relation of the whole.
pub(crate) fn fused_affixes<T: AsRef<str>>(request: &str, words: &[T]) -> Affixes {
    // Sized once from the byte lengths (a character is one byte or more), not grown.
    let mut q: Vec<char> = Vec::with_capacity(request.len());
    q.extend(request.chars());
    let mut f: Vec<char> = Vec::with_capacity(words.iter().map(|w| w.as_ref().len()).sum());
    f.extend(words.iter().flat_map(|w| w.as_ref().chars()));
    let (n, m) = (q.len(), f.len());
    if n == 0 || m == 0 {
        return Affixes::Unrelated;
    }
    let mut bounds = Vec::with_capacity(words.len() + 1);
    bounds.push(0);
    for w in words {
        bounds.push(bounds.last().copied().unwrap_or(0) + w.as_ref().chars().count());
    }
    let prefix = q.iter().zip(&f).take_while(|(a, b)| a == b).count();
    let suffix = q[prefix..]
        .iter()
        .rev()
        .zip(f[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    // The tool words the differing letters fall in; letters put in at a word boundary belong
    // to the word after it (prefixes stand there), at the very end to the last word.
    let (from, to) = (prefix, m - suffix);
    if from == to {
        // Letters put in between two tool letters: at a word boundary they may end the word
        // before (`countercount`) or start the word after (`unlock`); try both.
        let mut best = Affixes::Unrelated;
        let after = bounds
            .iter()
            .rposition(|&b| b <= from)
            .unwrap_or(0)
            .min(words.len() - 1);
        let mut candidates = vec![after];
        if after > 0 && bounds[after] == from {
            candidates.push(after - 1);
        }
        if after + 1 < words.len() && bounds[after + 1] == from {
            candidates.push(after + 1);
        }
        for k in candidates {
            let (ws, we) = (bounds[k], bounds[k + 1]);
            if ws > n || m - we > n - ws {
                continue;
            }
            let qe = n - (m - we);
            let piece: String = q[ws..qe].iter().collect();
            best = best.max(relation(&piece, words[k].as_ref()));
        }
        return best;
    }
    let first = bounds
        .iter()
        .rposition(|&b| b <= from)
        .unwrap_or(0)
        .min(words.len() - 1);
    let last = bounds
        .iter()
        .position(|&b| b >= to)
        .map_or(words.len(), |i| i)
        .max(first + 1)
        - 1;
    let (ws, we) = (bounds[first], bounds[last + 1]);
    let (qs, qe) = (ws, n - (m - we));
    if qs > qe {
        return Affixes::Unrelated;
    }
    if first == last {
        let piece: String = q[qs..qe].iter().collect();
        return relation(&piece, words[first].as_ref());
    }
    aligned_affixes(&q[qs..qe], &f[ws..we], &words[first..=last])
}

fn relation(piece: &str, word: &str) -> Affixes {
    // A negating word glued on (`cancelcalculate`, `lockun`).
    let glued = |rest: Option<&str>| rest.is_some_and(is_negation);
    // Both readings of the pair from one polarity of each.
    of_both(piece, word, |p, w| {
        if opposed_of(p, w) || glued(piece.strip_suffix(word)) || glued(piece.strip_prefix(word)) {
            Affixes::Opposed
        } else {
            affixes_of(p, w)
        }
    })
}

/// Several tool words each with an edit: the request's letters are aligned with the tool's
/// (Levenshtein, walked back from the end) and cut at the tool's word boundaries.
fn aligned_affixes<T: AsRef<str>>(q: &[char], f: &[char], words: &[T]) -> Affixes {
    let (n, m) = (q.len(), f.len());
    // On ties the walk leaves a tool letter unaligned first, so that a word missing from the
    // request stays whole, then it matches, and last leaves a request letter unaligned: such
    // letters then fall to the word that follows them, where prefixes are.
    let w = m + 1;
    let mut d = vec![0u32; (n + 1) * w];
    for i in 0..=n {
        d[i * w] = i as u32;
    }
    for (j, cell) in d.iter_mut().enumerate().take(m + 1) {
        *cell = j as u32;
    }
    for i in 1..=n {
        for j in 1..=m {
            let sub = d[(i - 1) * w + j - 1] + u32::from(q[i - 1] != f[j - 1]);
            let del = d[(i - 1) * w + j] + 1;
            let ins = d[i * w + j - 1] + 1;
            d[i * w + j] = sub.min(del).min(ins);
        }
    }
    // `at[j]`: the request position aligned with the start of tool letter j.
    let mut at = vec![0usize; m + 1];
    at[m] = n;
    let (mut i, mut j) = (n, m);
    while i > 0 || j > 0 {
        let here = d[i * w + j];
        if j > 0 && (i == 0 || here == d[i * w + j - 1] + 1) {
            j -= 1;
            at[j] = i;
        } else if i > 0 && j > 0 && here == d[(i - 1) * w + j - 1] + u32::from(q[i - 1] != f[j - 1])
        {
            i -= 1;
            j -= 1;
            at[j] = i;
        } else {
            i -= 1;
            if j < m {
                at[j] = i;
            }
        }
    }
    let mut best = Affixes::Unrelated;
    let mut start = 0;
    for word in words {
        let word = word.as_ref();
        let end = start + word.chars().count();
        let (from, to) = (at[start], at[end]);
        let piece: String = q[from..to.max(from)].iter().collect();
        best = best.max(relation(&piece, word));
        start = end;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every string one edit (deletion, insertion, substitution, swap of neighbours) from
    /// `w`, over a small alphabet.
    fn one_edit(w: &str) -> Vec<String> {
        let b = w.as_bytes();
        let mut out = Vec::new();
        for i in 0..=b.len() {
            for c in [b'a', b'e', b'x', b'_'] {
                let mut v = b.to_vec();
                v.insert(i, c);
                out.push(v);
                if i < b.len() {
                    let mut v = b.to_vec();
                    v[i] = c;
                    out.push(v);
                }
            }
            if i < b.len() {
                let mut v = b.to_vec();
                v.remove(i);
                out.push(v);
            }
            if i + 1 < b.len() {
                let mut v = b.to_vec();
                v.swap(i, i + 1);
                out.push(v);
            }
        }
        out.into_iter()
            .map(|v| String::from_utf8(v).expect("ASCII"))
            .collect()
    }

    #[test]
    fn the_opposition_shortcut_agrees_with_the_full_affix_model() {
        // Words of the tables, each behind every prefix (with and without a separator), and
        // one edit away from each of those: the shortcut `opposed_of` takes must say Opposed
        // exactly when `affixes_of` does, and the precomputed readings must be those of the
        // word.
        let mut words: Vec<String> = Vec::new();
        for &(a, b) in OPPOSITES.iter().step_by(4) {
            for w in [a, b] {
                words.push(w.to_string());
                for affix in AFFIXES {
                    words.push(format!("{}{w}", affix.text));
                    words.push(format!("{}_{w}", affix.text));
                }
            }
        }
        let mut near: Vec<String> = words.iter().step_by(7).flat_map(|w| one_edit(w)).collect();
        near.sort();
        near.dedup();
        let near: Vec<String> = near.into_iter().step_by(5).collect();
        let polarity: Vec<Polarity> = words.iter().map(|w| Polarity::of(w)).collect();
        let near_polarity: Vec<Polarity> = near.iter().map(|w| Polarity::of(w)).collect();
        let (mut pairs, mut opposed) = (0, 0);
        for (a, pa) in words.iter().zip(&polarity) {
            let wa = Word::new(a, pa);
            for k in 0..pa.readings() {
                let (_, stem) = pa.reading(a, k);
                assert_eq!(usize::from(pa.chars[k]), stem.chars().count(), "{a} {k}");
                let ids = opposite_ids().ids.get(stem).map(Vec::as_slice);
                assert_eq!(pa.reading_table(k), ids, "{a} {k}");
            }
            let others = words
                .iter()
                .zip(&polarity)
                .chain(near.iter().zip(&near_polarity));
            for (b, pb) in others.step_by(11) {
                let wb = Word::new(b, pb);
                let full = affixes_of(wa, wb) == Affixes::Opposed;
                assert_eq!(affixes_opposed(wa, wb), full, "{a} / {b}");
                assert_eq!(
                    affixes_opposed(wb, wa),
                    affixes_of(wb, wa) == Affixes::Opposed
                );
                pairs += 1;
                opposed += usize::from(full);
            }
        }
        // The cases reach both answers, many times.
        assert!(
            pairs > 50_000 && opposed > 500,
            "{pairs} pairs, {opposed} opposed"
        );
    }

    #[test]
    fn the_letter_count_bound_never_rules_out_a_pair_within_reach() {
        // Every word of the tables against every string one and two edits away, and against
        // every other word: whenever the bound rules a pair out, the distance is beyond it.
        let words: Vec<&str> = OPPOSITES.iter().flat_map(|&(a, b)| [a, b]).collect();
        let mut checked = 0;
        for &w in &words {
            let near: Vec<String> = one_edit(w)
                .into_iter()
                .flat_map(|e| {
                    let mut two = one_edit(&e);
                    two.push(e);
                    two
                })
                .chain(words.iter().map(|s| s.to_string()))
                .collect();
            for other in &near {
                let d = strsim::osa_distance(w, other);
                for k in 0..=2 {
                    if letters_differ_by_more(w, other, k) {
                        assert!(d > k, "{w:?} / {other:?}: distance {d}, bound says > {k}");
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 100_000, "{checked}");
        // And it does rule pairs out: that is what it is for.
        assert!(letters_differ_by_more("activate", "remove", 2));
        // A swap of neighbours keeps the letters: the bound says nothing, the distance does.
        assert!(!letters_differ_by_more("activate", "actviate", 0));
    }

    #[test]
    fn the_polarity_of_a_word_reads_as_its_prefixes() {
        let p = Polarity::of("nonstop");
        let readings: Vec<(&str, &str)> = (0..p.readings())
            .map(|k| {
                let (a, stem) = p.reading("nonstop", k);
                (a.text, stem)
            })
            .collect();
        assert_eq!(
            readings,
            [("", "nonstop"), ("non", "stop"), ("no", "nstop")]
        );
        let p = Polarity::of("un-lock");
        assert_eq!(p.reading("un-lock", 1).1, "lock");
        assert!(Polarity::of("enable").table.is_some());
        assert!(Polarity::of("vehicle").table.is_none());
        assert_eq!(Polarity::of("").readings(), 1);
    }

    #[test]
    fn prefixes_relate_words() {
        use Affixes::*;
        for (a, b, want) in [
            ("unlock", "lock", Opposed),
            ("reactivate", "deactivate", Opposed),
            ("reactivte", "deactivate", Opposed),
            ("reinstall", "uninstall", Opposed),
            ("enqueue", "dequeue", Opposed),
            ("enable", "disable", Opposed),
            ("async", "sync", Opposed),
            ("increase", "decrease", Opposed),
            ("inbound", "outbound", Opposed),
            ("upload", "download", Opposed),
            ("unlcok", "lock", Opposed),
            ("invalid", "valid", Opposed),
            ("reinstall", "install", Changed),
            ("unregister", "deregister", Changed),
            // A letter put in front that is no prefix is a typo here; that `dactivate` is as
            // close to `deactivate` is for `meaning.rs` to weigh.
            ("dactivate", "activate", Unrelated),
            ("sstock", "stock", Unrelated),
            ("ppayer", "payer", Unrelated),
            // `a` cannot tell `amount` from a negated `mount`: the safe side is to not suggest.
            ("amount", "mount", Opposed),
            // Plain typos and plain words.
            ("dlete", "delete", Unrelated),
            ("reprot", "report", Unrelated),
            ("enbedded", "embedded", Unrelated),
            ("raed", "read", Unrelated),
            ("index", "dex", Unrelated),
            ("reopen", "open", Changed),
            ("unit", "it", Unrelated),
            ("lock", "lock", Unrelated),
        ] {
            assert_eq!(affixes(a, b), want, "{a} {b}");
            assert_eq!(affixes(b, a), want, "{b} {a}");
        }
    }

    #[test]
    fn opposites_come_from_the_table_and_the_prefixes() {
        assert!(opposed("add", "remove"));
        assert!(opposed("halt", "start"));
        assert!(opposed("min", "max"));
        assert!(opposed("relock", "unlock"));
        assert!(!opposed("reinstall", "install"));
        assert!(!opposed("delete", "delete"));
        assert!(typo_possible("delte", "delete"));
        assert!(!typo_possible("reinstall", "uninstall"));
        assert!(!typo_possible("sync", "async"));
    }

    #[test]
    fn fused_letters_are_cut_at_the_tool_words() {
        use Affixes::*;
        for (request, words, want) in [
            ("dequeuevehicle", &["enqueue", "vehicle"][..], Opposed),
            ("unlockdoor", &["lock", "door"], Opposed),
            ("lockdoor", &["unlock", "door"], Opposed),
            ("reactivateacount", &["deactivate", "account"], Opposed),
            ("getunits", &["get", "business", "units"], Unrelated),
            ("c3glide", &["c3", "glide", "details"], Unrelated),
            ("readfiel", &["read", "file"], Unrelated),
            ("reinstallpackage", &["install", "package"], Changed),
        ] {
            assert_eq!(fused_affixes(request, words), want, "{request} {words:?}");
        }
    }
}
