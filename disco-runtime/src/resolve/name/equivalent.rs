//! Tier 3, spelling equivalents: the same words under another case, separators, number or
//! order (`Equivalence`), behind a client's namespace prefix (`namespace_tails`,
//! `split_namespace`, `CLIENT_PREFIXES`, `segment`), and the compatibility folding of
//! a requested name (`fold`) that comes before every tier but the exact one.

use super::index::KeyMap;
use super::opposites::opposed_forms;
use super::query::Query;
use super::relation;
use super::{visible_tools, NameIndex, Rule};
use crate::resolve::polarity::carries_polarity;
use crate::resolve::vocab::is_known_word;
use crate::text::words::split_words;

impl NameIndex {
    /// Tier 3. Each key is tried in turn; a key that several visible tools share is ambiguous,
    /// and an ambiguity is reported rather than resolved by a weaker tier.
    pub(super) fn equivalent(
        &self,
        query: &Query,
        requested: &str,
        visible: &dyn Fn(usize) -> bool,
    ) -> Equivalence {
        if query.compact.is_empty() {
            return Equivalence::None;
        }
        let keys: [(&KeyMap, &str); 3] = [
            (&self.by_compact, &query.compact),
            (&self.by_stems, &query.stem_compact),
            (&self.by_bag, &query.bag),
        ];
        for (tier, (map, key)) in keys.into_iter().enumerate() {
            let Some(forms) = map.get(key) else { continue };
            // The same words in another order name the tool only while its relational words
            // keep their neighbours (`relation.rs`): `copy_remote_to_local` is not
            // `copy_local_to_remote`, not even a candidate beside it.
            let kept: Vec<u32>;
            let forms: &[u32] = if tier == 2 {
                kept = (forms.iter().copied())
                    .filter(|&f| !relation::moved(query, &self.forms[f as usize]))
                    .collect();
                &kept
            } else {
                forms
            };
            let tools = visible_tools(forms.iter().map(|&f| self.forms[f as usize].tool), visible);
            match tools.len() {
                0 => continue,
                1 => {}
                _ => return Equivalence::Ambiguous(tools),
            }
            let tool = tools[0];
            // Same letters or same stems cannot hide an opposite, but the guard is cheap and
            // the rule is absolute.
            let form = forms
                .iter()
                .map(|&f| &self.forms[f as usize])
                .find(|f| f.tool == tool);
            if form.is_some_and(|f| opposed_forms(self, query, f)) {
                return Equivalence::None;
            }
            // A fused request word that is itself a word stays whole: `offset` is not
            // `off_set`, `download` not `down_load`, `login` not `log_in`.
            if form.is_some_and(|f| fuses_a_word(&query.raw, &f.raw)) {
                return Equivalence::None;
            }
            let rule = match tier {
                0 if requested.to_lowercase() == *self.lower_names[tool] => Rule::Case,
                0 => Rule::Separators,
                1 => Rule::Plural,
                _ => Rule::WordOrder,
            };
            return Equivalence::One(tool, rule);
        }
        Equivalence::None
    }

    /// Whether a tool the caller sees has `word` (a stem) among its words: what the caller
    /// cannot see is no word of the catalog either, or a label's polarity would tell of it.
    pub(super) fn visible_word(&self, word: &str, visible: &dyn Fn(usize) -> bool) -> bool {
        (self.postings.get(word))
            .is_some_and(|forms| forms.iter().any(|&f| visible(self.forms[f as usize].tool)))
    }

    /// What is left of `requested` after each namespace segment that may be stripped, at
    /// most two (`mcp__server__tool`), with whether the fuzzy tier may run on it.
    ///
    /// A client prefix (`mcp`, `functions`, ...) and the server's own name (or one of its
    /// words, since clients let users name servers) are known segments: the tail behind them
    /// goes through every tier. Clients that put the user's own label for the server behind
    /// `mcp__` (Claude Code's `mcp__<label>__<tool>`, with the label given to `claude mcp
    /// add`) make any one segment there a namespace too, and so does any leading segment when
    /// the server's name is not known; such a segment is unknown, and a tail behind it must
    /// name a tool exactly, by an alias or by a spelling equivalent: a misspelled tool behind
    /// a label nobody can check is two guesses, not one. With a known server name, another
    /// segment that does not follow `mcp__` is not stripped, so that `github__create_issue`
    /// is not taken for this server's `create_issue`. A negation, a bare polarity prefix or
    /// an opposite word is never a namespace (`mcp__undo__lock_door`).
    pub(super) fn namespace_tails<'r>(
        &self,
        requested: &'r str,
        server_name: Option<&str>,
        visible: &dyn Fn(usize) -> bool,
    ) -> Vec<Tail<'r>> {
        let mut tails = Vec::new();
        let mut rest = requested;
        let mut behind_mcp = false;
        for step in 0..2 {
            let Some((prefix, sep, tail)) = split_namespace(rest) else {
                break;
            };
            if tail.is_empty() {
                break;
            }
            let catalog_word = |w: &str| self.visible_word(w, visible);
            let known = match segment(prefix, tail, server_name, &catalog_word) {
                Segment::Refused => break,
                Segment::Known => true,
                Segment::Other if (behind_mcp && sep == "__") || server_name.is_none() => false,
                Segment::Other => break,
            };
            behind_mcp = step == 0 && prefix == "mcp" && sep == "__";
            tails.push(Tail {
                name: tail,
                fuzzy: known,
            });
            rest = tail;
        }
        // Fuzzy matching never reaches through an unknown segment, neither on the tail behind
        // it nor on a tail that still holds it (`label__delete_isue` behind `mcp__`).
        if tails.iter().any(|t| !t.fuzzy) {
            for t in &mut tails {
                t.fuzzy = false;
            }
        }
        tails
    }
}

/// A requested name without one or more namespace segments (see
/// [`NameIndex::namespace_tails`]).
pub(super) struct Tail<'r> {
    pub(super) name: &'r str,
    /// Whether the fuzzy tier may correct it: every segment stripped from the request is a
    /// client prefix or the server's name.
    pub(super) fuzzy: bool,
}

/// A requested name as text.
pub(super) enum Folded {
    /// Already in its folded form (every ASCII name).
    Same,
    /// Its compatibility folding (NFKC) differs.
    Changed(String),
    /// It holds a control or format character or a line break; what is left without them
    /// (for suggestions only).
    Unreadable(String),
}

pub(super) fn fold(requested: &str) -> Folded {
    use unicode_general_category::{get_general_category, GeneralCategory as C};
    use unicode_normalization::UnicodeNormalization;
    let unreadable = |c: char| {
        c.is_control()
            || matches!(
                get_general_category(c),
                C::Format | C::LineSeparator | C::ParagraphSeparator
            )
    };
    if requested.is_ascii() {
        if requested.bytes().any(|b| b.is_ascii_control()) {
            return Folded::Unreadable(requested.chars().filter(|&c| !unreadable(c)).collect());
        }
        return Folded::Same;
    }
    if requested.chars().any(unreadable) {
        let letters: String = requested.chars().filter(|&c| !unreadable(c)).collect();
        return Folded::Unreadable(letters.nfkc().collect());
    }
    let folded: String = requested.nfkc().collect();
    if folded == requested {
        Folded::Same
    } else {
        Folded::Changed(folded)
    }
}

pub(super) enum Equivalence {
    One(usize, Rule),
    Ambiguous(Vec<usize>),
    None,
}

pub(super) fn bag_key<S: AsRef<str>>(stems: &[S]) -> String {
    let mut words: Vec<&str> = stems.iter().map(AsRef::as_ref).collect();
    words.sort_unstable();
    words.join(" ")
}

/// Splits off one namespace segment: `a__b` (MCP clients), `a.b`, `a/b`, `a:b`; returns the
/// segment, the separator and the rest.
fn split_namespace(name: &str) -> Option<(&str, &str, &str)> {
    // The first separator, in one pass over the bytes (every separator is ASCII, so a byte
    // position found here is a character boundary).
    let b = name.as_bytes();
    let (at, len) = (0..b.len()).find_map(|i| match b[i] {
        b'.' | b'/' | b':' => Some((i, 1)),
        b'_' if b.get(i + 1) == Some(&b'_') => Some((i, 2)),
        _ => None,
    })?;
    if at == 0 {
        return None;
    }
    Some((&name[..at], &name[at..at + len], &name[at + len..]))
}

/// Whether the words of a namespace segment change the meaning of the name behind it, so that
/// the segment is no namespace: `not.lock_door`, `undo__lock_door`, `un.lock_door`,
/// `mcp__undelete__delete_file` and `mcp__halt__start_server` hold a word that carries
/// polarity.
pub(super) fn carries_meaning(words: &[String], tail: &str, known: &dyn Fn(&str) -> bool) -> bool {
    let tail_words = std::cell::OnceCell::new();
    let beside = || tail_words.get_or_init(|| split_words(tail)).as_slice();
    words.iter().any(|w| carries_polarity(w, beside, known))
}

/// Prefixes clients put before tool names whatever the server is called.
pub(super) const CLIENT_PREFIXES: &[&str] = &[
    "functions",
    "function",
    "defaultapi",
    "default",
    "mcp",
    "tools",
    "tool",
    "api",
];

/// What a namespace segment is to this server.
enum Segment {
    /// Changes the meaning: never stripped.
    Refused,
    /// A client prefix, or the server's own name or one of its words.
    Known,
    /// Any other name.
    Other,
}

fn segment(
    prefix: &str,
    tail: &str,
    server_name: Option<&str>,
    known: &dyn Fn(&str) -> bool,
) -> Segment {
    let words = split_words(prefix);
    let compact = words.concat();
    if compact.is_empty() {
        return Segment::Refused;
    }
    if carries_meaning(&words, tail, known) {
        return Segment::Refused;
    }
    if CLIENT_PREFIXES.contains(&compact.as_str()) {
        return Segment::Known;
    }
    let Some(server) = server_name else {
        return Segment::Other;
    };
    let server_words = split_words(server);
    if compact == server_words.concat()
        || words.iter().all(|w| server_words.contains(w))
        || server_words.iter().all(|w| words.contains(w))
    {
        Segment::Known
    } else {
        Segment::Other
    }
}

/// Whether a request word that is a known word stands where the tool has two or more words
/// whose letters make it (`offset` against `off`, `set`): a word of its own, which a
/// segmentation would turn into other words.
fn fuses_a_word<T: AsRef<str>>(request: &[String], tool: &[T]) -> bool {
    let words: Vec<&str> = tool.iter().map(AsRef::as_ref).collect();
    request.iter().any(|w| {
        !words.contains(&w.as_str())
            && is_known_word(w)
            && (0..words.len()).any(|s| (s + 2..=words.len()).any(|e| words[s..e].concat() == *w))
    })
}
