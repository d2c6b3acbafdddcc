//! Polarity: which words negate, reverse or oppose each other.

use std::sync::OnceLock;

use super::hash::{FastMap, FastSet};
use super::vocab::SYNONYMS;

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

/// Prefixes that negate a word: `unlock`, `disable`, `deactivate`, `invalid`, `nonempty`.
pub(crate) const NEGATION_PREFIXES: &[&str] = &[
    "un", "dis", "de", "in", "im", "ir", "il", "non", "not", "no", "anti", "mis",
];

/// Words that negate what follows: `not_found`, `no_cache`, `dont_track`.
pub(crate) fn is_negation(word: &str) -> bool {
    matches!(
        word,
        "not" | "no" | "non" | "dont" | "never" | "without" | "cannot" | "cant" | "nothing"
    )
}

pub(crate) fn opposites() -> &'static FastMap<&'static str, Vec<&'static str>> {
    static MAP: OnceLock<FastMap<&'static str, Vec<&'static str>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut map: FastMap<&'static str, Vec<&'static str>> = FastMap::default();
        for &(a, b) in OPPOSITES {
            map.entry(a).or_default().push(b);
            map.entry(b).or_default().push(a);
        }
        map
    })
}

/// Whether two words mean opposite things, directly, through their synonym classes
/// (`add`/`remove` as create/delete), or by a negation prefix (`lock`/`unlock`).
pub(crate) fn opposed(a: &str, b: &str) -> bool {
    if a == b {
        return false;
    }
    if negated(a, b) || negated(b, a) {
        return true;
    }
    let table = opposite_ids();
    let (Some(ia), Some(ib)) = (table.ids.get(a), table.ids.get(b)) else {
        return false;
    };
    ia.iter()
        .any(|x| ib.iter().any(|y| table.pairs.contains(&(*x, *y))))
}

/// The opposites table in a form that costs two lookups per word pair: every word of the
/// table, and every synonym of a word of the table, gets the ids it stands for.
pub(crate) struct OppositeIds {
    ids: FastMap<&'static str, Vec<u16>>,
    pairs: FastSet<(u16, u16)>,
}

pub(crate) fn opposite_ids() -> &'static OppositeIds {
    static TABLE: OnceLock<OppositeIds> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut id_of: FastMap<&'static str, u16> = FastMap::default();
        let mut pairs = FastSet::default();
        for &(a, b) in OPPOSITES {
            let next = id_of.len() as u16;
            let ia = *id_of.entry(a).or_insert(next);
            let next = id_of.len() as u16;
            let ib = *id_of.entry(b).or_insert(next);
            pairs.insert((ia, ib));
            pairs.insert((ib, ia));
        }
        let mut ids: FastMap<&'static str, Vec<u16>> = FastMap::default();
        for (&word, &id) in &id_of {
            ids.entry(word).or_default().push(id);
        }
        for &(word, head) in SYNONYMS {
            if let Some(&id) = id_of.get(head) {
                let list = ids.entry(word).or_default();
                if !list.contains(&id) {
                    list.push(id);
                }
            }
        }
        OppositeIds { ids, pairs }
    })
}

/// `long` is `short` with a negation prefix in front (`unlock`/`lock`).
pub(crate) fn negated(long: &str, short: &str) -> bool {
    short.len() >= 3
        && long.len() > short.len()
        && long.ends_with(short)
        && NEGATION_PREFIXES.iter().any(|p| {
            long.strip_prefix(p)
                .is_some_and(|rest| rest == short || rest.strip_prefix(['_', '-']) == Some(short))
        })
}

/// Whether the request and a tool's words differ by an opposite: some word present on one side
/// only is the opposite of a word present on the other side only, or a negation word is
/// present on one side only.
pub(crate) fn opposed_words<S: AsRef<str>, T: AsRef<str>>(
    request: &[S],
    tool: &[T],
    negation_words: bool,
) -> bool {
    let only_request = request
        .iter()
        .map(AsRef::as_ref)
        .filter(|w| !tool.iter().any(|t| t.as_ref() == *w));
    let only_tool = || {
        tool.iter()
            .map(AsRef::as_ref)
            .filter(|w| !request.iter().any(|r| r.as_ref() == *w))
    };
    if negation_words && only_request.clone().chain(only_tool()).any(is_negation) {
        return true;
    }
    only_request
        .clone()
        .any(|r| only_tool().any(|t| opposed(r, t)))
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
