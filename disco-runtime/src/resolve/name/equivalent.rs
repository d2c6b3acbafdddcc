//! Tier 3, spelling equivalents: the same words under another case, separators, number or
//! order (`Equivalence`), behind a client's namespace prefix (`namespace_tails`,
//! `split_namespace`, `CLIENT_PREFIXES`, `prefix_allowed`), and the compatibility folding of
//! a requested name (`fold`) that comes before every tier but the exact one.

use super::index::KeyMap;
use super::opposites::opposed_forms;
use super::query::Query;
use super::{visible_tools, NameIndex, Rule};
use crate::resolve::polarity::{is_affix, is_negation, opposites};
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
            if form.is_some_and(|f| opposed_forms(query, f)) {
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

    /// What is left of `requested` after each client namespace prefix that may be stripped. With a known server name only that name (or one of its words, since clients
    /// let users name servers) and the generic client prefixes are stripped, so that
    /// `github__create_issue` is not taken for this server's `create_issue`. Without it, any
    /// one leading segment is taken as a namespace.
    pub(super) fn namespace_tails<'r>(
        &self,
        requested: &'r str,
        server_name: Option<&str>,
    ) -> Vec<&'r str> {
        let mut tails = Vec::new();
        let mut rest = requested;
        // At most two segments: `mcp__server__tool`.
        for _ in 0..2 {
            let Some((prefix, tail)) = split_namespace(rest) else {
                break;
            };
            if tail.is_empty() || !prefix_allowed(prefix, server_name) {
                break;
            }
            tails.push(tail);
            rest = tail;
        }
        tails
    }
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

/// Splits off one namespace segment: `a__b` (MCP clients), `a.b`, `a/b`, `a:b`.
fn split_namespace(name: &str) -> Option<(&str, &str)> {
    let mut best: Option<(usize, usize)> = None;
    for (sep, len) in [("__", 2), (".", 1), ("/", 1), (":", 1)] {
        if let Some(at) = name.find(sep) {
            if best.is_none_or(|(b, _)| at < b) {
                best = Some((at, len));
            }
        }
    }
    let (at, len) = best?;
    if at == 0 {
        return None;
    }
    Some((&name[..at], &name[at + len..]))
}

/// Prefixes clients put before tool names whatever the server is called.
const CLIENT_PREFIXES: &[&str] = &[
    "functions",
    "function",
    "defaultapi",
    "default",
    "mcp",
    "tools",
    "tool",
    "api",
];

fn prefix_allowed(prefix: &str, server_name: Option<&str>) -> bool {
    let words = split_words(prefix);
    let compact = words.concat();
    if compact.is_empty() {
        return false;
    }
    // `not.lock_door`, `undo__lock_door` and `un.lock_door` are not namespaces: a negation,
    // a bare prefix or an opposite word changes the meaning.
    if words
        .iter()
        .any(|w| is_negation(w) || is_affix(w) || opposites().contains_key(w.as_str()))
    {
        return false;
    }
    if CLIENT_PREFIXES.contains(&compact.as_str()) {
        return true;
    }
    let Some(server) = server_name else {
        return true;
    };
    let server_words = split_words(server);
    compact == server_words.concat()
        || words.iter().all(|w| server_words.contains(w))
        || server_words.iter().all(|w| words.contains(w))
}
