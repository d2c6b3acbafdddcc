//! A dropped or changed namespace: `prime_factors` for `number_analysis.prime_factors`,
//! `get_rate` for `currency_conversion.get_rate`, `bio.get_cell_info` for
//! `biology.get_cell_info`, `think` for `mcp0_think`. A request whose part after its namespace
//! (all of it, when it has none) is spelled like the part after the namespace of exactly one
//! visible tool is that tool, at the tier of a dropped word: never a destructive tool (then it
//! is suggested first), and never when the request's namespace names another namespace the
//! caller can see (`github.search_issues` is not `jira.search_issues` while some `github.` tool
//! is visible). When several visible tools end alike, the one whose namespace the request's
//! spells, exactly or but for a typo, is the one (`githb.search_issues` among `github.` and
//! `jira.`); otherwise they are suggested. Like a dropped word, it must be clearly better than
//! every other tool the fuzzy tier finds, for the whole request and for its rest
//! (`clearly_first`).
//!
//! Only tools whose names have a namespace, and one that carries no polarity, are found this
//! way. A tool without one still counts when it ends alike: then the request names two tools.
//! A name behind another server's namespace is not this server's tool of that name
//! (`equivalent.rs`, `namespace_tails`).

use super::cost::DROPPED;
use super::decide::MARGIN;
use super::equivalent::{carries_meaning, CLIENT_PREFIXES};
use super::fuzzy::FuzzyCandidates;
use super::query::Query;
use super::{visible_tools, NameIndex, MAX_NAME_LEN};
use crate::resolve::polarity::{typo_allowance, typo_possible};
use crate::text::edits::osa_within;
use crate::text::hash::FastMap;
use crate::text::words::{char_len, singular, split_words};

/// The tools by the part of their names after the namespace, built once with the index.
#[derive(Default)]
pub(super) struct Namespaces {
    /// Spelling key (words as singulars, joined) of a name's part after its namespace -> the
    /// tools; a name without a namespace is its own part.
    by_tail: FastMap<Box<str>, Vec<usize>>,
    /// Per tool: the keys of its namespace's segments (`mcp__Memory` -> mcp, memory); empty
    /// for a name without one.
    segments: Vec<Box<[Box<str>]>>,
    /// Segment key -> the tools whose namespace holds it.
    by_segment: FastMap<Box<str>, Vec<usize>>,
    /// Per tool: whether the rule may name it (its name has a namespace, and one that carries
    /// no polarity: `undo.lock_door` is not `lock_door`). The others still end alike.
    reachable: Vec<bool>,
}

impl Namespaces {
    /// Indexes one tool's name (tools in order).
    pub(super) fn add(&mut self, tool: usize, name: &str) {
        if name.len() > MAX_NAME_LEN {
            self.segments.push(Box::default());
            self.reachable.push(false);
            return;
        }
        let (segments, tail, reachable) = match split(name, None) {
            // The tool's own words only: whether it is reachable depends on no other tool.
            Some((namespace, tail)) => (
                segments(namespace, None),
                tail,
                !carries_meaning(&split_words(namespace), tail, &|_| false),
            ),
            None => (Vec::new(), name, false),
        };
        self.reachable.push(reachable);
        let key = tail_key(tail);
        if !key.is_empty() {
            self.by_tail.entry(key.into()).or_default().push(tool);
        }
        for segment in &segments {
            let tools = self.by_segment.entry(segment.as_str().into()).or_default();
            if tools.last() != Some(&tool) {
                tools.push(tool);
            }
        }
        self.segments
            .push(segments.into_iter().map(Into::into).collect());
    }
}

impl Namespaces {
    /// Whether some visible tool's namespace has a segment that `asked` spells: the exact key
    /// first, then every key whose length is within a typo (a scan of the catalog's distinct
    /// segments, made only once a request's tail has matched).
    fn seen_namespace(&self, asked: &str, visible: &dyn Fn(usize) -> bool) -> bool {
        let seen = |tools: &Vec<usize>| tools.iter().any(|&t| visible(t));
        if self.by_segment.get(asked).is_some_and(seen) {
            return true;
        }
        (self.by_segment.iter()).any(|(own, tools)| spelled_like(asked, own) && seen(tools))
    }
}

/// What the rule makes of a request.
pub(super) enum Namespaced {
    /// The one tool it names.
    One(usize),
    /// The one tool it names, but destructive or not clearly first: suggested first, and
    /// nothing else corrected to in its place.
    Suggested(usize),
    /// Visible tools that end alike, none singled out: suggested first.
    Several(Vec<usize>),
    None,
}

impl NameIndex {
    /// The rule (see the module docs) for `requested`; `query` is its analysis, `ranking` the
    /// fuzzy tier's candidates for it.
    pub(super) fn namespaced(
        &self,
        query: &Query,
        requested: &str,
        visible: &dyn Fn(usize) -> bool,
        server_name: Option<&str>,
        ranking: &FuzzyCandidates,
    ) -> Namespaced {
        let ns = &self.namespaces;
        let split_key;
        let (namespace, tail, key) = match split(requested, server_name) {
            Some((namespace, tail)) => {
                split_key = tail_key(tail);
                (Some(namespace), tail, split_key.as_str())
            }
            // All of it: its spelling key is the request's own.
            None => (None, requested, query.stem_compact.as_str()),
        };
        let Some(tools) = ns.by_tail.get(key) else {
            return Namespaced::None;
        };
        let seen = visible_tools(tools.iter().copied(), visible);
        if seen.is_empty() {
            return Namespaced::None;
        }
        let known = |w: &str| self.visible_word(w, visible);
        let asked = match namespace {
            Some(namespace) if carries_meaning(&split_words(namespace), tail, &known) => {
                return Namespaced::None;
            }
            Some(namespace) => segments(namespace, server_name),
            None => Vec::new(),
        };
        let server = server_name.map(|s| split_words(s).concat());
        // A segment of the request that spells a namespace the caller sees (but for a typo,
        // `githb.` is still GitHub's), and not one of this tool's.
        let names_another = |tool: usize| {
            asked.iter().any(|s| {
                !ns.segments[tool].iter().any(|own| spelled_like(s, own))
                    && !CLIENT_PREFIXES.contains(&s.as_str())
                    && server.as_deref() != Some(s.as_str())
                    && ns.seen_namespace(s, visible)
            })
        };
        let named = match self.single_out(query, &seen, &asked) {
            Ok(tool) => tool,
            Err(several) => return Namespaced::Several(several),
        };
        // A tool without a namespace is reached by the tiers that read its whole name.
        if !ns.reachable[named] || names_another(named) || self.opposed_tool(query, named) {
            return Namespaced::None;
        }
        // Clearly first for the whole request, and for its rest after the namespace: what
        // else that rest could name (`mcp__work__get_current` is `get_current`). The tools
        // that end alike were weighed above, by their namespaces.
        let clear = clearly_first(named, &seen, ranking)
            && (namespace.is_none()
                || clearly_first(named, &seen, &self.fuzzy(&Query::new(tail), visible)));
        if self.destructive[named] || !clear {
            Namespaced::Suggested(named)
        } else {
            Namespaced::One(named)
        }
    }

    /// The one of `seen` (the visible tools that end alike) the request names: the only one,
    /// or the only one whose namespace the request's (`asked`) spells, exactly or but for a
    /// typo. Else those to suggest, never the opposite of the request.
    fn single_out(
        &self,
        query: &Query,
        seen: &[usize],
        asked: &[String],
    ) -> Result<usize, Vec<usize>> {
        let ns = &self.namespaces;
        if let &[tool] = seen {
            return Ok(tool);
        }
        let spelled: Vec<usize> = (seen.iter().copied())
            .filter(|&t| {
                asked
                    .iter()
                    .any(|s| ns.segments[t].iter().any(|own| spelled_like(s, own)))
            })
            .collect();
        match spelled.as_slice() {
            &[tool] => Ok(tool),
            _ => Err((seen.iter().copied())
                .filter(|&t| !self.opposed_tool(query, t))
                .collect()),
        }
    }
}

/// A namespace left out or changed is one word dropped: the tool it names is corrected to only
/// when no other visible tool but those that end alike (`alike`) comes within the fuzzy tier's
/// margin of that (`get_current` is as much `get_current_time` without its last word as
/// `sports_ranking.get_current` without its namespace).
fn clearly_first(tool: usize, alike: &[usize], ranking: &FuzzyCandidates) -> bool {
    (ranking.candidates.iter())
        .all(|c| c.tool == tool || alike.contains(&c.tool) || c.cost >= DROPPED + MARGIN)
}

/// Whether a segment of the request spells a tool's segment: the same, or a typo within the
/// allowance of the longer, that changes no prefix.
fn spelled_like(asked: &str, own: &str) -> bool {
    if asked == own {
        return true;
    }
    let (a, b) = (char_len(asked), char_len(own));
    let allowance = typo_allowance(a.max(b));
    a.abs_diff(b) <= allowance
        && osa_within(asked, own, allowance).is_some()
        && typo_possible(asked, own)
}

/// A name's namespace and the name behind it, cut at the last separator that clients and
/// aggregators put between them (`.`, `/`, `:`, a run of two or more `_` or `-`: `server.tool`,
/// `mcp__server__tool`, Roo's `mcp--server--tool`), then at a prefix joined by a single `_`
/// (`mcp0_`, Windsurf's; a server name in kebab case, `codebase-memory-mcp_`, as opencode joins
/// them; the server's own name). `None` when there is none.
pub(super) fn split<'n>(name: &'n str, server_name: Option<&str>) -> Option<(&'n str, &'n str)> {
    let b = name.as_bytes();
    let mut cut = None;
    let mut i = 0;
    while i < b.len() {
        // Every separator is ASCII: a byte position found here is a character boundary.
        let run = match b[i] {
            b'.' | b'/' | b':' => 1,
            c @ (b'_' | b'-') => match b[i..].iter().take_while(|&&x| x == c).count() {
                1 => 0,
                n => n,
            },
            _ => 0,
        };
        if run == 0 {
            i += 1;
            continue;
        }
        if has_word(&name[..i]) && has_word(&name[i + run..]) {
            cut = Some((i, i + run));
        }
        i += run;
    }
    let start = cut.map_or(0, |(_, start)| start);
    match joined_prefix(&name[start..], server_name) {
        Some(at) => Some((&name[..start + at], &name[start + at + 1..])),
        None => cut.map(|(end, start)| (&name[..end], &name[start..])),
    }
}

/// Where a prefix joined to the rest of the name by one `_` ends: `mcp<N>_`, a kebab-case
/// name before snake case (`codebase-memory-mcp_search_graph`), or the server's own name.
fn joined_prefix(name: &str, server_name: Option<&str>) -> Option<usize> {
    let first = name.find('_')?;
    let rest = &name[first + 1..];
    if !has_word(rest) {
        return None;
    }
    let head = &name[..first];
    let b = head.as_bytes();
    let mcp = b.len() >= 3
        && b[..3].eq_ignore_ascii_case(b"mcp")
        && b[3..].iter().all(u8::is_ascii_digit);
    let kebab = head.contains('-') && !rest.contains('-') && has_word(head);
    if mcp || kebab {
        return Some(first);
    }
    let server = split_words(server_name?).concat();
    if server.is_empty() {
        return None;
    }
    (name.match_indices('_'))
        .map(|(at, _)| at)
        .find(|&at| has_word(&name[at + 1..]) && split_words(&name[..at]).concat() == server)
}

/// The keys of a namespace's segments, outermost first (`mcp__Memory` -> mcp, memory).
fn segments(namespace: &str, server_name: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = namespace;
    while let Some((outer, inner)) = split(rest, server_name) {
        out.push(split_words(inner).concat());
        rest = outer;
    }
    out.push(split_words(rest).concat());
    out.retain(|s| !s.is_empty());
    out.reverse();
    out.dedup();
    out
}

/// The spelling key of a name's part after its namespace: its words as singulars, joined, so
/// that case, separators and number do not matter (tier 3's stems key).
fn tail_key(tail: &str) -> String {
    split_words(tail).iter().map(|w| singular(w)).collect()
}

/// Whether a side of a cut holds a word: a letter (`gpt-4.1` is a version, not `1` in a
/// namespace `gpt-4`).
fn has_word(text: &str) -> bool {
    text.chars().any(char::is_alphabetic)
}
