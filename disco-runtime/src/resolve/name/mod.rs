//! Tool-name resolution: which tool did the caller mean?
//!
//! Tiers, strongest first (DESIGN.md, "Correct only what is safe to correct"):
//!
//! 1. the exact name;
//! 2. an alias the author declared;
//! 3. a spelling-equivalent name: the same words written with another case, other separators,
//!    camelCase/PascalCase, another number (plural/singular) of any word, another word order
//!    that keeps every relational word's neighbours, or behind a client's namespace prefix
//!    (`mcp__server__tool`, `server.tool`, `functions.tool`, ...; behind `mcp__<label>__` with a
//!    label the server does not know, tiers 1-3 only);
//! 4. a fuzzy match, applied only when the best candidate is clearly better than the runner-up
//!    and only to a tool that is not destructive: first a dropped or changed namespace (the
//!    rest of the name is exactly one visible tool's rest after its own namespace:
//!    `prime_factors` for `number_analysis.prime_factors`, `bio.get_cell_info` for
//!    `biology.get_cell_info`, `think` for `mcp0_think`; never when the request's namespace is
//!    another one the caller sees), then a typo, a dropped or extra word, a synonym.
//!
//! Tiers 1-3 may resolve to destructive tools: they name the same tool, just spelled differently.
//! A typo may name another tool, so tier 4 only ever corrects to tools that cannot do harm.
//!
//! Invariants that carry the product:
//! - never across opposites (`unlock_door` is never `lock_door`, `add` is never `remove`), at any
//!   tier; words moved across a relational word (`to`, `from`, `by`, ...) are an opposite too:
//!   `copy_remote_to_local` is never `copy_local_to_remote`;
//! - hidden is hidden: resolving against a catalog with hidden tools gives exactly the result of
//!   resolving against the catalog without them, so neither the outcome, nor an ambiguity, nor a
//!   suggestion can reveal that a hidden tool exists;
//! - bounded work: the catalog is indexed once; a call costs a handful of hash lookups plus
//!   scoring of the few tools that share a (possibly misspelled or synonymous) word with the
//!   request, and nothing at all past [`MAX_NAME_LEN`].
//!
//! One step per file: `index.rs` builds the index (`typo.rs` precomputes its spelling
//! neighbours), this file holds the tier ladder, `equivalent.rs` is tier 3, `query.rs`
//! analyses the request, `namespace.rs` is tier 4's namespace rule, `fuzzy.rs` gathers tier
//! 4's candidates, `cost.rs` prices them,
//! `decide.rs` applies the guard, `suggest.rs` answers an unknown name, `opposites.rs`
//! is "never across opposites" applied to names, and `relation.rs` is word order where a
//! relational word stands between.

mod cost;
mod decide;
mod deletions;
mod equivalent;
mod fuzzy;
mod index;
mod namespace;
mod opposites;
mod query;
mod relation;
mod suggest;
mod typo;

#[cfg(test)]
mod tests;

pub use index::NameIndex;

use equivalent::{fold, Equivalence, Folded, Tail};
use fuzzy::Candidate;
use namespace::Namespaced;
use query::Query;
use suggest::{truncate, MAX_SUGGESTIONS, SUGGEST_MAX_COST};

/// Longer requested names are looked up exactly and otherwise answered as unknown, without
/// suggestions: no client legitimately sends them, and they must not buy quadratic work.
pub const MAX_NAME_LEN: usize = 256;

/// Whether a name holds a control or format character (bidi controls and zero-width
/// characters among them) or a line or paragraph separator: such a requested name is nobody's
/// tool (SECURITY.md, section 3). Public so that names from elsewhere (an upstream server's, in
/// disco-gateway) are held to the rule requests are held to.
pub fn unreadable(name: &str) -> bool {
    matches!(fold(name), Folded::Unreadable(_))
}

/// One tool as the name index sees it. `index` of an entry = its position in the input.
#[derive(Clone, Copy, Debug)]
pub struct NameEntry<'a> {
    pub name: &'a str,
    pub aliases: &'a [String],
    /// Per MCP annotations a tool is destructive unless it is read-only or says
    /// `destructiveHint: false`.
    pub destructive: bool,
}

/// How far resolution may go beyond the exact name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Policy {
    /// Exact names only.
    Off,
    /// Exact names and declared aliases.
    Strict,
    /// All tiers, with the fuzzy tier guarded.
    #[default]
    Safe,
}

/// Why a requested name resolved to a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    Exact,
    Alias,
    Case,
    Separators,
    Plural,
    WordOrder,
    NamespacePrefix,
    /// A fuzzy match that combines several kinds of difference.
    Fuzzy,
    Typo,
    Synonym,
    DroppedWord,
    ExtraWord,
    /// A dropped or changed namespace: the request is spelled like exactly one visible tool's
    /// name after its namespace (`namespace.rs`).
    Namespace,
    /// An alias learned from traffic (`crate::learn`), applied by the catalog after the
    /// spelling-equivalent tier and before the fuzzy one, to a read-only tool only.
    LearnedAlias,
}

impl Rule {
    /// Stable snake_case name, used in `_meta`, tracing and eval output.
    pub fn as_str(&self) -> &'static str {
        match self {
            Rule::Exact => "exact",
            Rule::Alias => "alias",
            Rule::Case => "case",
            Rule::Separators => "separators",
            Rule::Plural => "plural",
            Rule::WordOrder => "word_order",
            Rule::NamespacePrefix => "namespace_prefix",
            Rule::Fuzzy => "fuzzy",
            Rule::Typo => "typo",
            Rule::Synonym => "synonym",
            Rule::DroppedWord => "dropped_word",
            Rule::ExtraWord => "extra_word",
            Rule::Namespace => "namespace",
            Rule::LearnedAlias => "learned_alias",
        }
    }

    /// Whether the rule belongs to the fuzzy tier (the others name the tool exactly or by an
    /// equivalent spelling).
    pub fn is_fuzzy(&self) -> bool {
        matches!(
            self,
            Rule::Fuzzy
                | Rule::Typo
                | Rule::Synonym
                | Rule::DroppedWord
                | Rule::ExtraWord
                | Rule::Namespace
        )
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Resolved { index: usize, rule: Rule },
    Unknown,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Resolution {
    pub outcome: Outcome,
    /// Best first, at most 3, only visible tools, empty when resolved.
    pub suggestions: Vec<usize>,
}

impl Resolution {
    fn resolved(index: usize, rule: Rule) -> Self {
        Resolution {
            outcome: Outcome::Resolved { index, rule },
            suggestions: Vec::new(),
        }
    }

    fn unknown(suggestions: Vec<usize>) -> Self {
        Resolution {
            outcome: Outcome::Unknown,
            suggestions,
        }
    }
}

impl NameIndex {
    /// `visible(i)` says whether the caller may see tool i; invisible tools are never returned
    /// nor suggested, and never influence the outcome (the result equals that of an index built
    /// from the visible tools only). `server_name`: the server's own name if known, for
    /// namespace prefixes (works without it too: then any one leading segment is taken as a
    /// namespace, and a tail behind it is resolved by tiers 1-3 only).
    pub fn resolve(
        &self,
        requested: &str,
        visible: &dyn Fn(usize) -> bool,
        policy: Policy,
        server_name: Option<&str>,
    ) -> Resolution {
        if let Some(tool) = self.first_visible(self.exact.get(requested), visible) {
            return Resolution::resolved(tool, Rule::Exact);
        }
        // Names are text a model wrote, compared as text: after compatibility folding (the
        // Kelvin sign is K, a full-width letter is the letter). A name holding a control or
        // format character or a line break is nobody's tool, whatever its letters.
        let folded = match fold(requested) {
            Folded::Same => None,
            Folded::Changed(text) => Some(text),
            Folded::Unreadable(letters) => {
                return self.unknown_with_suggestions(&letters, visible, policy);
            }
        };
        if let Some(text) = &folded {
            if let Some(tool) = self.first_visible(self.exact.get(text.as_str()), visible) {
                return Resolution::resolved(tool, Rule::Case);
            }
        }
        let requested = folded.as_deref().unwrap_or(requested);
        if policy == Policy::Off || requested.len() > MAX_NAME_LEN {
            return self.unknown_with_suggestions(requested, visible, policy);
        }
        // Declared aliases: the author said so, so they are trusted as written. Two visible
        // tools declaring the same alias is a catalog error; do not guess between them.
        if let Some(resolution) = self.by_alias(requested, visible, Rule::Alias) {
            return resolution;
        }
        if policy == Policy::Strict {
            return self.unknown_with_suggestions(requested, visible, policy);
        }

        let query = Query::new(requested);
        match self.equivalent(&query, requested, visible) {
            Equivalence::One(tool, rule) => return Resolution::resolved(tool, rule),
            Equivalence::Ambiguous(tools) => return Resolution::unknown(truncate(tools)),
            Equivalence::None => {}
        }
        // A client's namespace prefix, one segment at a time: `mcp__fs__read_file` is tried as
        // `fs__read_file`, then as `read_file`.
        let tails = self.namespace_tails(requested, server_name, visible);
        let tail_queries: Vec<Query> = tails.iter().map(|t| Query::new(t.name)).collect();
        if let Some(resolution) = self.by_tail(&tails, &tail_queries, visible) {
            return resolution;
        }
        self.fuzzy_tier(
            &query,
            requested,
            &tails,
            &tail_queries,
            visible,
            server_name,
        )
    }

    /// The one visible tool that declares the alias `name`, with `rule`; no tool when two
    /// visible tools declare it (a catalog error: no guess between them), only suggestions.
    fn by_alias(
        &self,
        name: &str,
        visible: &dyn Fn(usize) -> bool,
        rule: Rule,
    ) -> Option<Resolution> {
        let tools = self.alias.get(name)?;
        let seen = visible_tools(tools.iter().copied(), visible);
        match seen.len() {
            0 => None,
            1 => Some(Resolution::resolved(seen[0], rule)),
            _ => Some(Resolution::unknown(truncate(seen))),
        }
    }

    /// Tiers 1 to 3 (exact, alias, spelling-equivalent) on what each namespace prefix leaves.
    fn by_tail(
        &self,
        tails: &[Tail<'_>],
        tail_queries: &[Query],
        visible: &dyn Fn(usize) -> bool,
    ) -> Option<Resolution> {
        for (tail, tail_query) in tails.iter().zip(tail_queries) {
            let tail = tail.name;
            if let Some(tool) = self.first_visible(self.exact.get(tail), visible) {
                return Some(Resolution::resolved(tool, Rule::NamespacePrefix));
            }
            if let Some(resolution) = self.by_alias(tail, visible, Rule::NamespacePrefix) {
                return Some(resolution);
            }
            match self.equivalent(tail_query, tail, visible) {
                Equivalence::One(tool, _) => {
                    return Some(Resolution::resolved(tool, Rule::NamespacePrefix))
                }
                Equivalence::Ambiguous(tools) => return Some(Resolution::unknown(truncate(tools))),
                Equivalence::None => {}
            }
        }
        None
    }

    /// Tier 4, the fuzzy tier. First a dropped or changed namespace: the rest of the name is
    /// exactly one tool's, and no other tool is about as close. Tools named so that are
    /// destructive, not clearly first, or several, are suggested first, and nothing else is
    /// corrected to in their place. Then the fuzzy match: first on the name as sent (dotted
    /// tool names such as `math.factorial` exist), then without the namespace prefix when
    /// every segment stripped is known (a tail behind a label the server cannot check is only
    /// suggested).
    fn fuzzy_tier(
        &self,
        query: &Query,
        requested: &str,
        tails: &[Tail<'_>],
        tail_queries: &[Query],
        visible: &dyn Fn(usize) -> bool,
        server_name: Option<&str>,
    ) -> Resolution {
        let ranking = self.fuzzy(query, visible);
        let mut suggestions = Vec::new();
        match self.namespaced(query, requested, visible, server_name, &ranking) {
            Namespaced::One(tool) => return Resolution::resolved(tool, Rule::Namespace),
            Namespaced::Suggested(tool) => suggestions.push(tool),
            Namespaced::Several(tools) => suggestions.extend(truncate(tools)),
            Namespaced::None => {}
        }
        if suggestions.len() == MAX_SUGGESTIONS {
            return Resolution::unknown(suggestions);
        }
        let may_correct = suggestions.is_empty();
        if may_correct {
            if let Some(decision) = self.decide(query, &ranking) {
                return decision;
            }
        }
        let mut ranked = ranking.candidates;
        for (tail, tail_query) in tails.iter().zip(tail_queries) {
            let tail_ranking = self.fuzzy(tail_query, visible);
            if tail.fuzzy && may_correct {
                if let Some(decision) = self.decide(tail_query, &tail_ranking) {
                    return decision;
                }
            }
            ranked.extend(tail_ranking.candidates);
        }
        ranked.sort_by_key(|c| (c.cost, c.tool));
        self.suggested(query, tail_queries, &ranked, suggestions, visible)
    }

    /// No correction: `suggestions` (those of the namespace rule) completed from `ranked`,
    /// the fuzzy candidates of the request and of its tails, cheapest first, then by
    /// `fill_suggestions`. A suggestion is weighed against what the namespace left too:
    /// behind `mcp__tools__`, `perform_aabductor` is still a misspelled `abductor`, never
    /// `abductee`.
    fn suggested(
        &self,
        query: &Query,
        tail_queries: &[Query],
        ranked: &[Candidate],
        mut suggestions: Vec<usize>,
        visible: &dyn Fn(usize) -> bool,
    ) -> Resolution {
        let opposed = |tool: usize| {
            self.opposed_tool(query, tool)
                || tail_queries.iter().any(|q| self.opposed_tool(q, tool))
        };
        for candidate in ranked.iter().filter(|c| !c.blocked) {
            if candidate.cost > SUGGEST_MAX_COST {
                break;
            }
            if opposed(candidate.tool) {
                continue;
            }
            if !suggestions.contains(&candidate.tool) {
                suggestions.push(candidate.tool);
            }
            if suggestions.len() == MAX_SUGGESTIONS {
                return Resolution::unknown(suggestions);
            }
        }
        let found = suggestions.len();
        self.fill_suggestions(query, visible, &mut suggestions);
        let mut k = 0;
        suggestions.retain(|&t| {
            k += 1;
            k <= found || !opposed(t)
        });
        Resolution::unknown(suggestions)
    }

    fn first_visible(
        &self,
        tools: Option<&Vec<usize>>,
        visible: &dyn Fn(usize) -> bool,
    ) -> Option<usize> {
        tools?.iter().copied().find(|&t| visible(t))
    }
}

fn visible_tools(
    tools: impl Iterator<Item = usize>,
    visible: &dyn Fn(usize) -> bool,
) -> Vec<usize> {
    let mut out: Vec<usize> = tools.filter(|&t| visible(t)).collect();
    out.sort_unstable();
    out.dedup();
    out
}
