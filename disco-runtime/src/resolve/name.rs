//! Tool-name resolution: which tool did the caller mean?
//!
//! Tiers, strongest first (DESIGN.md, "Correct only what is safe to correct"):
//!
//! 1. the exact name;
//! 2. an alias the author declared;
//! 3. a spelling-equivalent name: the same words written with another case, other separators,
//!    camelCase/PascalCase, another number (plural/singular) of any word, another word order, or
//!    behind a client's namespace prefix (`mcp__server__tool`, `server.tool`, `functions.tool`, ...);
//! 4. a fuzzy match (typo, a dropped or extra word, a synonym), applied only when the best
//!    candidate is clearly better than the runner-up and only to a tool that is not destructive.
//!
//! Tiers 1-3 may resolve to destructive tools: they name the same tool, just spelled differently.
//! A typo may name another tool, so tier 4 only ever corrects to tools that cannot do harm.
//!
//! Invariants that carry the product:
//! - never across opposites (`unlock_door` is never `lock_door`, `add` is never `remove`), at any
//!   tier;
//! - hidden is hidden: resolving against a catalog with hidden tools gives exactly the result of
//!   resolving against the catalog without them, so neither the outcome, nor an ambiguity, nor a
//!   suggestion can reveal that a hidden tool exists;
//! - bounded work: the catalog is indexed once; a call costs a handful of hash lookups plus
//!   scoring of the few tools that share a (possibly misspelled or synonymous) word with the
//!   request, and nothing at all past [`MAX_NAME_LEN`].

use super::polarity::{
    fused_affixes, fused_ids, fused_table, is_affix, is_negation, negates_known_word, opposed,
    opposed_words, opposites, typo_allowance, typo_possible, Affixes,
};
use super::vocab::canon;
use crate::text::edits::{deletions, each_deletion};
use crate::text::hash::{FastMap, FastSet};
use crate::text::words::{char_len, singular, split_words};

/// Spelling key -> forms.
type KeyMap = FastMap<Box<str>, Vec<u32>>;

/// Longer requested names are looked up exactly and otherwise answered as unknown, without
/// suggestions: no client legitimately sends them, and they must not buy quadratic work.
pub const MAX_NAME_LEN: usize = 256;

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
        }
    }

    /// Whether the rule belongs to the fuzzy tier (the others name the tool exactly or by an
    /// equivalent spelling).
    pub fn is_fuzzy(&self) -> bool {
        matches!(
            self,
            Rule::Fuzzy | Rule::Typo | Rule::Synonym | Rule::DroppedWord | Rule::ExtraWord
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

/// At most this many suggestions: enough for a model to pick from, short enough to read.
const MAX_SUGGESTIONS: usize = 3;

// Fuzzy costs, in quarter units so that everything stays integral.
/// One character edit inside a word, or a synonym.
const UNIT: u32 = 4;
/// A word of the tool missing from the request.
const DROPPED: u32 = 4;
/// A word of the request missing from the tool: dearer than a dropped word, because the caller
/// asked for something this tool does not say it does.
const EXTRA: u32 = 6;
/// A dropped or extra filler word ("with", "tool", "the"): it rarely changes the meaning.
const FILLER: u32 = 2;
/// The smallest gap between the best candidate and the runner-up that counts as clear.
const MARGIN: u32 = UNIT;
/// Candidates costing more than this are not even worth suggesting.
const SUGGEST_MAX_COST: u32 = 4 * UNIT;
/// A second posting list longer than this is not scanned (see `NameIndex::fuzzy`).
const SCAN_LIMIT: usize = 256;
/// Visible tools scored for suggestions only, beyond those sharing the rarest word.
const SUGGESTION_SCAN: usize = 48;
/// Catalogs up to this size get a last-resort similarity scan for suggestions.
const SMALL_CATALOG: usize = 512;

/// A catalog spelling that shares a deletion with another (see `NameIndex::typo_lookup`).
struct Neighbour {
    /// Position in `NameIndex::spellings`.
    spelling: u32,
    /// The edit distance when the spelling is a typo of the other one.
    distance: Option<u8>,
}

/// One spelling of a tool: its name or one of its declared aliases.
struct Form {
    tool: usize,
    /// Lowercased words, as written.
    raw: Vec<Box<str>>,
    /// Singular forms of `raw`.
    stems: Vec<Box<str>>,
    /// Lowercase letters and digits only.
    compact: Box<str>,
    /// `fused_ids(compact)`.
    fused: Vec<u16>,
}

/// The name index of one catalog. Build once, resolve many times.
pub struct NameIndex {
    tools: usize,
    destructive: Vec<bool>,
    /// Lowercased tool names, to tell a change of case from a change of separators.
    lower_names: Vec<Box<str>>,
    /// Tool -> its forms.
    forms_of: Vec<Vec<u32>>,
    exact: FastMap<Box<str>, Vec<usize>>,
    alias: FastMap<Box<str>, Vec<usize>>,
    forms: Vec<Form>,
    /// Spelling-equivalence keys -> forms.
    by_compact: FastMap<Box<str>, Vec<u32>>,
    by_stems: FastMap<Box<str>, Vec<u32>>,
    by_bag: FastMap<Box<str>, Vec<u32>>,
    /// Word stem -> forms containing it.
    postings: FastMap<Box<str>, Vec<u32>>,
    /// Synonym-class head -> stems of that class present in the catalog.
    class_members: FastMap<&'static str, Vec<Box<str>>>,
    /// Every word as written and as stem, with its stem; the other tables number them.
    spellings: Vec<(Box<str>, Box<str>)>,
    /// Spelling -> its number.
    spelling_ids: FastMap<Box<str>, u32>,
    /// Deletion neighbourhood of every spelling -> spellings (symmetric-delete typo lookup).
    /// Both spellings are indexed because a plural may be irregular (`children` -> `child`)
    /// while the typo is made in the word as written (`chidlren`).
    word_deletes: FastMap<Box<str>, Vec<u32>>,
    /// Per spelling: what a lookup of it through `word_deletes` finds, in order. A request
    /// word the catalog knows (the common case) costs one lookup instead of one per deletion.
    typo_neighbours: Vec<Vec<Neighbour>>,
    /// One-deletion neighbourhood of compact forms -> forms, for requests that lost their word
    /// boundaries and contain a typo (`raedfile`).
    compact_deletes: FastMap<Box<str>, Vec<u32>>,
}

impl NameIndex {
    pub fn new<'a>(entries: impl IntoIterator<Item = NameEntry<'a>>) -> NameIndex {
        let mut index = NameIndex {
            tools: 0,
            destructive: Vec::new(),
            lower_names: Vec::new(),
            forms_of: Vec::new(),
            exact: FastMap::default(),
            alias: FastMap::default(),
            forms: Vec::new(),
            by_compact: FastMap::default(),
            by_stems: FastMap::default(),
            by_bag: FastMap::default(),
            postings: FastMap::default(),
            class_members: FastMap::default(),
            spellings: Vec::new(),
            spelling_ids: FastMap::default(),
            word_deletes: FastMap::default(),
            typo_neighbours: Vec::new(),
            compact_deletes: FastMap::default(),
        };
        for (tool, entry) in entries.into_iter().enumerate() {
            index.tools += 1;
            index.destructive.push(entry.destructive);
            index.lower_names.push(entry.name.to_lowercase().into());
            index.forms_of.push(Vec::new());
            index.exact.entry(entry.name.into()).or_default().push(tool);
            index.add_form(tool, entry.name);
            for alias in entry.aliases {
                let list = index.alias.entry(alias.as_str().into()).or_default();
                if !list.contains(&tool) {
                    list.push(tool);
                }
                index.add_form(tool, alias);
            }
        }
        let stems: Vec<Box<str>> = index.postings.keys().cloned().collect();
        for stem in stems {
            let class = canon(&stem);
            if !class.is_empty() {
                index
                    .class_members
                    .entry(class)
                    .or_default()
                    .push(stem.clone());
            }
        }
        let mut stem_of: FastMap<Box<str>, Box<str>> = FastMap::default();
        for form in &index.forms {
            for (raw, stem) in form.raw.iter().zip(&form.stems) {
                stem_of.insert(raw.clone(), stem.clone());
                stem_of.insert(stem.clone(), stem.clone());
            }
        }
        for (id, (text, stem)) in stem_of.into_iter().enumerate() {
            let id = id as u32;
            let mut seen = FastSet::default();
            for del in deletions(&text, typo_allowance(char_len(&text))) {
                if seen.insert(del.clone()) {
                    index.word_deletes.entry(del.into()).or_default().push(id);
                }
            }
            index.spelling_ids.insert(text.clone(), id);
            index.spellings.push((text, stem));
        }
        let typo_neighbours = index
            .spellings
            .iter()
            .map(|(text, _)| {
                let mut found = Vec::new();
                index.typo_lookup(text, &mut |spelling, distance| {
                    found.push(Neighbour { spelling, distance })
                });
                found
            })
            .collect();
        index.typo_neighbours = typo_neighbours;
        for members in index.class_members.values_mut() {
            members.sort();
        }
        index
    }

    /// Calls `f(spelling, distance)` for every catalog spelling (its number) that shares a
    /// deletion with `written`, once each, in the order in which `written`'s deletions first
    /// reach them. `distance` is `None` when the spelling is not a typo of `written`: farther
    /// than the typo allowance of the longer of the two, the same word, or its opposite. The
    /// caller still sees those, so that a spelling ruled out for one form of a request word is
    /// not taken for another form of it.
    fn typo_lookup(&self, written: &str, f: &mut impl FnMut(u32, Option<u8>)) {
        let len = char_len(written);
        // A spelling shares many deletions with a word close to it: measure it once.
        let mut seen: Vec<u32> = Vec::new();
        each_deletion(written, typo_allowance(len), &mut |del| {
            let Some(ids) = self.word_deletes.get(del) else {
                return;
            };
            for &id in ids {
                if seen.contains(&id) {
                    continue;
                }
                seen.push(id);
                let text = &*self.spellings[id as usize].0;
                let text_len = char_len(text);
                let limit = typo_allowance(len.max(text_len));
                // The lengths alone may rule it out, without measuring.
                let d = if len.abs_diff(text_len) > limit {
                    usize::MAX
                } else {
                    strsim::osa_distance(written, text)
                };
                // `unecosystem` is two letters from `ecosystem`, but its negation, and
                // `reinstall` two from `uninstall`: a change of prefix is never a typo.
                let typo = d > 0 && d <= limit && typo_possible(written, text);
                f(id, typo.then_some(d as u8));
            }
        });
    }

    fn add_form(&mut self, tool: usize, name: &str) {
        if name.len() > MAX_NAME_LEN {
            return;
        }
        let raw: Vec<Box<str>> = split_words(name).into_iter().map(Into::into).collect();
        if raw.is_empty() {
            return;
        }
        let stems: Vec<Box<str>> = raw.iter().map(|w| singular(w).into()).collect();
        let compact: Box<str> = raw.concat().into();
        let id = self.forms.len() as u32;
        self.forms_of[tool].push(id);
        let push = |map: &mut FastMap<Box<str>, Vec<u32>>, key: Box<str>| {
            let list = map.entry(key).or_default();
            if !list.contains(&id) {
                list.push(id);
            }
        };
        push(&mut self.by_compact, compact.clone());
        push(&mut self.by_stems, stems.concat().into());
        push(&mut self.by_bag, bag_key(&stems).into());
        for stem in &stems {
            push(&mut self.postings, stem.clone());
        }
        if char_len(&compact) >= 6 {
            for del in deletions(&compact, 1) {
                push(&mut self.compact_deletes, del.into());
            }
        }
        self.forms.push(Form {
            tool,
            raw,
            stems,
            fused: fused_ids(&compact),
            compact,
        });
    }

    /// Number of tools indexed.
    pub fn len(&self) -> usize {
        self.tools
    }

    pub fn is_empty(&self) -> bool {
        self.tools == 0
    }

    /// `visible(i)` says whether the caller may see tool i; invisible tools are never returned
    /// nor suggested, and never influence the outcome (the result equals that of an index built
    /// from the visible tools only). `server_name`: the server's own name if known, for
    /// namespace prefixes (works without it too).
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
        if let Some(tools) = self.alias.get(requested) {
            let seen = visible_tools(tools.iter().copied(), visible);
            match seen.len() {
                0 => {}
                1 => return Resolution::resolved(seen[0], Rule::Alias),
                _ => return Resolution::unknown(truncate(seen)),
            }
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
        let tails = self.namespace_tails(requested, server_name);
        let tail_queries: Vec<Query> = tails.iter().map(|t| Query::new(t)).collect();
        for (tail, tail_query) in tails.iter().zip(&tail_queries) {
            if let Some(tool) = self.first_visible(self.exact.get(*tail), visible) {
                return Resolution::resolved(tool, Rule::NamespacePrefix);
            }
            if let Some(tools) = self.alias.get(*tail) {
                let seen = visible_tools(tools.iter().copied(), visible);
                match seen.len() {
                    0 => {}
                    1 => return Resolution::resolved(seen[0], Rule::NamespacePrefix),
                    _ => return Resolution::unknown(truncate(seen)),
                }
            }
            match self.equivalent(tail_query, tail, visible) {
                Equivalence::One(tool, _) => {
                    return Resolution::resolved(tool, Rule::NamespacePrefix)
                }
                Equivalence::Ambiguous(tools) => return Resolution::unknown(truncate(tools)),
                Equivalence::None => {}
            }
        }

        // Fuzzy tier: first on the name as sent (dotted tool names such as `math.factorial`
        // exist), then without the namespace prefix.
        let ranking = self.fuzzy(&query, visible);
        if let Some(decision) = self.decide(&query, &ranking) {
            return decision;
        }
        let mut ranked = ranking.candidates;
        for tail_query in &tail_queries {
            let tail_ranking = self.fuzzy(tail_query, visible);
            if let Some(decision) = self.decide(tail_query, &tail_ranking) {
                return decision;
            }
            ranked.extend(tail_ranking.candidates);
        }
        ranked.sort_by_key(|c| (c.cost, c.tool));
        let mut suggestions = Vec::new();
        for candidate in ranked.iter().filter(|c| !c.blocked) {
            if candidate.cost > SUGGEST_MAX_COST {
                break;
            }
            if self.opposed_tool(&query, candidate.tool) {
                continue;
            }
            if !suggestions.contains(&candidate.tool) {
                suggestions.push(candidate.tool);
            }
            if suggestions.len() == MAX_SUGGESTIONS {
                return Resolution::unknown(suggestions);
            }
        }
        self.fill_suggestions(&query, visible, &mut suggestions);
        Resolution::unknown(suggestions)
    }

    fn first_visible(
        &self,
        tools: Option<&Vec<usize>>,
        visible: &dyn Fn(usize) -> bool,
    ) -> Option<usize> {
        tools?.iter().copied().find(|&t| visible(t))
    }

    /// Tier 3. Each key is tried in turn; a key that several visible tools share is ambiguous,
    /// and an ambiguity is reported rather than resolved by a weaker tier.
    fn equivalent(
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
    fn namespace_tails<'r>(&self, requested: &'r str, server_name: Option<&str>) -> Vec<&'r str> {
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

    /// Scores every visible form that shares a word (as written, misspelled or synonymous)
    /// with the request, cheapest first, one entry per tool.
    fn fuzzy(&self, query: &Query, visible: &dyn Fn(usize) -> bool) -> Ranking {
        if query.stems.is_empty() || query.stems.len() > 16 {
            return Ranking {
                candidates: Vec::new(),
                complete: true,
            };
        }
        // For each request word: the catalog stems it may stand for, with the cost of that.
        let mut expansions: Vec<Vec<(&str, u32, Kind)>> = Vec::with_capacity(query.stems.len());
        for (i, stem) in query.stems.iter().enumerate() {
            let mut list: Vec<(&str, u32, Kind)> = Vec::new();
            if let Some((key, _)) = self.postings.get_key_value(&**stem) {
                list.push((key, 0, Kind::Same));
            }
            if let Some(members) = self
                .class_members
                .get(query.canon[i])
                .filter(|_| !query.canon[i].is_empty())
            {
                for member in members {
                    if **member != **stem {
                        list.push((member, UNIT, Kind::Synonym));
                    }
                }
            }
            // Symmetric deletes: a catalog word within reach shares a deletion with the
            // request word (or is one). The allowance follows the longer of the two words, so
            // a letter dropped from a short word (`dor` for `door`) is still found.
            let mut seen: FastSet<u32> = FastSet::default();
            let raw = query.raw[i].as_str();
            for written in [stem.as_str(), raw]
                .into_iter()
                .take(if raw == stem { 1 } else { 2 })
            {
                // A spelling reached once for this request word is settled, typo or not.
                let mut add = |id: u32, d: Option<u8>| {
                    let target = &*self.spellings[id as usize].1;
                    if target != stem.as_str() && seen.insert(id) {
                        if let Some(d) = d {
                            list.push((target, UNIT * u32::from(d), Kind::Typo));
                        }
                    }
                };
                let cached = self
                    .spelling_ids
                    .get(written)
                    .and_then(|&id| self.typo_neighbours.get(id as usize));
                match cached {
                    Some(known) => known.iter().for_each(|n| add(n.spelling, n.distance)),
                    None => self.typo_lookup(written, &mut add),
                }
            }
            expansions.push(list);
        }
        // A correctable candidate leaves at most one request content word unmatched (fillers
        // cost little), so it shares a word with one of the two most specific content words.
        let content: Vec<usize> = (0..query.stems.len())
            .filter(|&i| !is_filler(&query.stems[i]))
            .collect();
        let selection = if content.is_empty() {
            (0..query.stems.len()).collect()
        } else {
            content
        };
        let mut order: Vec<(usize, usize)> = selection
            .iter()
            .map(|&i| (i, &expansions[i]))
            .map(|(i, list)| {
                let size = list
                    .iter()
                    .map(|(w, _, _)| self.postings.get(*w).map_or(0, Vec::len))
                    .sum();
                (size, i)
            })
            .collect();
        order.sort();
        // `first`: tools with the rarest word (or near it in letters), scored in full;
        // `second`: tools with the second rarest, scored only when they can still matter.
        let mut first: Vec<u32> = Vec::new();
        let mut second: Vec<u32> = Vec::new();
        let mut complete = true;
        for (rank, &(size, i)) in order.iter().take(2).enumerate() {
            let forms = if rank == 0 { &mut first } else { &mut second };
            if rank == 1 && size > SCAN_LIMIT {
                // The second word is common (`get`, `details`): rather than scanning every tool
                // that has it, look up the only kind of tool without the rarest word that can
                // come close, the request minus that word. Farther ones may be missed, so the
                // ranking is marked incomplete and only the closest corrections are allowed.
                complete = false;
                let skip = order[0].1;
                let rest: Vec<&str> = (0..query.stems.len())
                    .filter(|&k| k != skip)
                    .map(|k| query.stems[k].as_str())
                    .collect();
                if let Some(list) = self.by_bag.get(bag_key(&rest).as_str()) {
                    forms.extend_from_slice(list);
                }
                continue;
            }
            for (word, _, _) in &expansions[i] {
                if let Some(list) = self.postings.get(*word) {
                    forms.extend_from_slice(list);
                }
            }
        }
        // Letters only, for requests that lost their word boundaries.
        let mut by_letters: Vec<u32> = Vec::new();
        if char_len(&query.compact) >= 6 {
            each_deletion(&query.compact, 1, &mut |del| {
                if let Some(list) = self.compact_deletes.get(del) {
                    by_letters.extend_from_slice(list);
                }
            });
            by_letters.sort_unstable();
            by_letters.dedup();
        }
        first.extend_from_slice(&by_letters);
        first.sort_unstable();
        first.dedup();
        second.sort_unstable();
        second.dedup();

        let mut best: FastMap<usize, Candidate> = FastMap::default();
        let words = query.stems.len();
        let mut threshold = u32::MAX;
        let mut budget = usize::MAX;
        for (batch, forms) in [&first, &second].into_iter().enumerate() {
            if batch == 1 {
                // A tool without the rarest word pays for it as an extra word, and for each of
                // its own words the rest of the request cannot cover. Once it cannot reach
                // the margin of the best nor the suggestions, it need not be scored.
                // When the best so far may be applied, only its runners-up matter; otherwise
                // the suggestions do, but scoring tools that share only a common word is
                // capped (they are weak suggestions anyway).
                let mut costs: Vec<(u32, usize)> =
                    best.values().map(|c| (c.cost, c.tool)).collect();
                costs.sort_unstable();
                if let Some(&(b, tool)) = costs.first() {
                    let applicable = best[&tool].correctable && !self.destructive[tool];
                    threshold = if applicable {
                        b + MARGIN
                    } else {
                        budget = SUGGESTION_SCAN;
                        (b + MARGIN).max(costs.get(MAX_SUGGESTIONS - 1).map_or(0, |c| c.0))
                    };
                }
            }
            for &f in forms {
                if batch == 1 && first.binary_search(&f).is_ok() {
                    continue;
                }
                let form = &self.forms[f as usize];
                // Three words more or fewer cannot come close (cheap filter before scoring).
                if form.stems.len() > words + 2 || words > form.stems.len() + 2 {
                    continue;
                }
                if batch == 1 {
                    let uncovered = (form.stems.len() + 1).saturating_sub(words) as u32;
                    if EXTRA + FILLER * uncovered >= threshold {
                        continue;
                    }
                }
                if !visible(form.tool) {
                    continue;
                }
                if batch == 1 {
                    if budget == 0 {
                        break;
                    }
                    budget -= 1;
                }
                let letters = by_letters.binary_search(&f).is_ok();
                let known = |w: &str| self.postings.contains_key(w);
                let candidate = score(query, form, &expansions, letters, &known);
                match best.get(&form.tool) {
                    Some(old) if (old.blocked, old.cost) <= (candidate.blocked, candidate.cost) => {
                    }
                    _ => {
                        best.insert(form.tool, candidate);
                    }
                }
            }
        }
        let mut candidates: Vec<Candidate> = best.into_values().collect();
        candidates.sort_by_key(|c| (c.cost, c.tool));
        Ranking {
            candidates,
            complete,
        }
    }

    /// Applies the fuzzy tier's guards to a ranking: the best candidate must be good enough on
    /// its own, clearly better than every other visible tool (opposites included: a request
    /// halfway between `lock` and `unlock` is not clear), not opposed, and not destructive.
    fn decide(&self, query: &Query, ranking: &Ranking) -> Option<Resolution> {
        let ranked = &ranking.candidates;
        let best = ranked.first()?;
        if best.blocked || !best.correctable || self.destructive[best.tool] {
            return None;
        }
        if !ranking.complete && best.cost > UNIT {
            return None;
        }
        // "Clearly better": the runner-up differs by at least one more whole edit.
        if let Some(runner_up) = ranked.get(1) {
            if runner_up.cost < best.cost + MARGIN {
                return None;
            }
        }
        if self.opposed_tool(query, best.tool) {
            return None;
        }
        Some(Resolution::resolved(best.tool, best.rule))
    }

    /// The full opposites guard against every spelling of a tool.
    fn opposed_tool(&self, query: &Query, tool: usize) -> bool {
        self.forms_of[tool]
            .iter()
            .any(|&f| opposed_forms(query, &self.forms[f as usize]))
    }

    fn unknown_with_suggestions(
        &self,
        requested: &str,
        visible: &dyn Fn(usize) -> bool,
        policy: Policy,
    ) -> Resolution {
        if requested.len() > MAX_NAME_LEN {
            return Resolution::unknown(Vec::new());
        }
        let query = Query::new(requested);
        let mut suggestions = Vec::new();
        if policy != Policy::Off {
            match self.equivalent(&query, requested, visible) {
                Equivalence::One(tool, _) => suggestions.push(tool),
                Equivalence::Ambiguous(tools) => suggestions.extend(truncate(tools)),
                Equivalence::None => {}
            }
        }
        for candidate in self
            .fuzzy(&query, visible)
            .candidates
            .iter()
            .filter(|c| !c.blocked)
        {
            if candidate.cost > SUGGEST_MAX_COST || suggestions.len() == MAX_SUGGESTIONS {
                break;
            }
            if self.opposed_tool(&query, candidate.tool) {
                continue;
            }
            if !suggestions.contains(&candidate.tool) {
                suggestions.push(candidate.tool);
            }
        }
        self.fill_suggestions(&query, visible, &mut suggestions);
        Resolution::unknown(suggestions)
    }

    /// Last resort for small catalogs: names that look alike as strings.
    fn fill_suggestions(
        &self,
        query: &Query,
        visible: &dyn Fn(usize) -> bool,
        suggestions: &mut Vec<usize>,
    ) {
        if suggestions.len() >= MAX_SUGGESTIONS
            || self.forms.len() > SMALL_CATALOG
            || char_len(&query.compact) < 3
        {
            return;
        }
        let mut scored: Vec<(u32, usize)> = Vec::new();
        for form in &self.forms {
            if suggestions.contains(&form.tool) || !visible(form.tool) {
                continue;
            }
            // The cheap string measure first: the opposites check is only worth running on
            // the few names that look alike.
            // Every spelling of the tool, not only the one that looks alike: a tool whose
            // name is the opposite of the request is not suggested through an alias.
            let similarity = strsim::jaro_winkler(&query.compact, &form.compact);
            if similarity >= 0.8 && !self.opposed_tool(query, form.tool) {
                scored.push(((1000.0 * (1.0 - similarity)) as u32, form.tool));
            }
        }
        scored.sort_unstable();
        for (_, tool) in scored {
            if suggestions.len() == MAX_SUGGESTIONS {
                break;
            }
            if !suggestions.contains(&tool) {
                suggestions.push(tool);
            }
        }
    }
}

/// A requested name as text.
enum Folded {
    /// Already in its folded form (every ASCII name).
    Same,
    /// Its compatibility folding (NFKC) differs.
    Changed(String),
    /// It holds a control or format character or a line break; what is left without them
    /// (for suggestions only).
    Unreadable(String),
}

fn fold(requested: &str) -> Folded {
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

enum Equivalence {
    One(usize, Rule),
    Ambiguous(Vec<usize>),
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Same,
    Synonym,
    Typo,
}

/// Fuzzy candidates, cheapest first, one per tool.
struct Ranking {
    candidates: Vec<Candidate>,
    /// Every tool that could come within the margin of the best was scored.
    complete: bool,
}

#[derive(Clone, Debug)]
struct Candidate {
    tool: usize,
    cost: u32,
    rule: Rule,
    /// Within the fuzzy tier's limits on its own (before comparing with the runner-up).
    correctable: bool,
    /// Differs from the request by an opposite: never corrected to, never suggested.
    blocked: bool,
}

/// The requested name, analysed once per call.
struct Query {
    raw: Vec<String>,
    stems: Vec<String>,
    canon: Vec<&'static str>,
    compact: String,
    stem_compact: String,
    bag: String,
    /// `fused_ids(compact)`, computed on first use: most requests never need it.
    fused: std::cell::OnceCell<Vec<u16>>,
}

impl Query {
    fn fused(&self) -> &[u16] {
        self.fused.get_or_init(|| fused_ids(&self.compact))
    }

    fn new(requested: &str) -> Query {
        let raw = if requested.len() > MAX_NAME_LEN {
            Vec::new()
        } else {
            split_words(requested)
        };
        let stems: Vec<String> = raw.iter().map(|w| singular(w)).collect();
        let canon = stems.iter().map(|s| canon(s)).collect();
        Query {
            compact: raw.concat(),
            stem_compact: stems.concat(),
            bag: bag_key(&stems),
            raw,
            stems,
            canon,
            fused: std::cell::OnceCell::new(),
        }
    }
}

/// Scores one form against the request. Words are matched as a bag (order was tier 3's
/// business): identical stems first, then synonyms, then typos; what is left over on either
/// side is an extra or a dropped word.
fn score(
    query: &Query,
    form: &Form,
    expansions: &[Vec<(&str, u32, Kind)>],
    letters: bool,
    known: &dyn Fn(&str) -> bool,
) -> Candidate {
    let mut used = vec![false; form.stems.len()];
    let mut matched = vec![false; query.stems.len()];
    let mut cost = 0;
    let mut kinds = [false; 4]; // typo, synonym, dropped, extra
    let mut anchored = false; // some word matched as written or with a typo
    for pass in [Kind::Same, Kind::Synonym, Kind::Typo] {
        for (i, list) in expansions.iter().enumerate() {
            if matched[i] {
                continue;
            }
            let mut best: Option<(u32, usize)> = None;
            for (word, word_cost, kind) in list {
                if *kind != pass {
                    continue;
                }
                if let Some(j) =
                    (0..form.stems.len()).find(|&j| !used[j] && *form.stems[j] == **word)
                {
                    if best.is_none_or(|(c, _)| *word_cost < c) {
                        best = Some((*word_cost, j));
                    }
                }
            }
            if let Some((word_cost, j)) = best {
                used[j] = true;
                matched[i] = true;
                cost += word_cost;
                match pass {
                    Kind::Same => anchored = true,
                    Kind::Typo => {
                        anchored = true;
                        kinds[0] = true;
                    }
                    Kind::Synonym => kinds[1] = true,
                }
            }
        }
    }
    // A request word opposed to a leftover tool word (`set` against `get`) pairs up at the
    // price of a substitution: the candidate can then never be chosen, but it stays as close
    // as it really is, so that a request halfway between two opposite tools is not "clear".
    let mut blocked = false;
    for (i, r) in query.stems.iter().enumerate() {
        if matched[i] {
            continue;
        }
        if let Some(j) = (0..form.stems.len()).find(|&j| !used[j] && opposed(r, &form.stems[j])) {
            used[j] = true;
            matched[i] = true;
            cost += 2 * UNIT;
            blocked = true;
        }
    }
    let (mut dropped, mut extra, mut content_edits) = (false, false, 0);
    for (j, stem) in form.stems.iter().enumerate() {
        if !used[j] {
            dropped = true;
            if is_filler(stem) {
                cost += FILLER;
            } else {
                cost += DROPPED;
                content_edits += 1;
            }
        }
    }
    for (i, stem) in query.stems.iter().enumerate() {
        if !matched[i] {
            extra = true;
            if is_filler(stem) {
                cost += FILLER;
            } else {
                cost += EXTRA;
                content_edits += 1;
            }
            // `unget_team_info` is not `team_info` with a stray word: it negates `get`.
            blocked |= negates_known_word(stem, known);
        }
    }
    kinds[2] = dropped;
    kinds[3] = extra;
    let mut rule = match kinds {
        [true, false, false, false] => Rule::Typo,
        [false, true, false, false] => Rule::Synonym,
        [false, false, true, false] => Rule::DroppedWord,
        [false, false, false, true] => Rule::ExtraWord,
        _ => Rule::Fuzzy,
    };
    let matched_words = matched.iter().filter(|m| **m).count();
    // A word missing on one side and another word on the other is a substitution: another
    // object (`delete_user` is not `delete_file`), never a correction.
    let mut correctable = anchored
        && cost > 0
        && !(dropped && extra)
        && match content_edits {
            // Typos, synonyms and fillers: one edit for a one-word name, two for longer ones.
            0 => {
                cost <= if form.stems.len() <= 1 {
                    UNIT
                } else {
                    2 * UNIT
                }
            }
            // One dropped or extra word and nothing else but a filler; what is left must still
            // say enough (two words in common) to single the tool out.
            1 => cost <= EXTRA && matched_words >= 2,
            _ => false,
        };

    // The request may have lost its word boundaries (`raedfile`): compare the letters.
    if letters && query.stems.len() != form.stems.len() {
        let len = char_len(&query.compact);
        let allowance = match len {
            0..=5 => 0,
            6..=11 => 1,
            _ => 2,
        };
        // A typo of the letters never changes a word's prefix (`dequeuevehicle` is not
        // `enqueue_vehicle`).
        if allowance > 0 && !letters_change_a_prefix(query, form) {
            let d = strsim::osa_distance(&query.compact, &form.compact);
            if d > 0 && d <= allowance && (UNIT * d as u32) < cost {
                cost = UNIT * d as u32;
                rule = Rule::Typo;
                correctable = true;
            }
        }
    }

    Candidate {
        tool: form.tool,
        cost,
        rule,
        correctable,
        // Opposed pairs were found above; a negation word left over on either side blocks too.
        // The complete guard (`opposed_forms`) runs again on the final choice and on each
        // suggestion.
        blocked: blocked
            || (0..query.raw.len()).any(|i| !matched[i] && is_negation(&query.raw[i]))
            || (0..form.raw.len()).any(|j| !used[j] && is_negation(&form.raw[j])),
    }
}

/// Whether the request's letters, aligned with the form's words (or the form's with the
/// request's, whichever has fewer words), change the prefix of some word.
fn letters_change_a_prefix(query: &Query, form: &Form) -> bool {
    if query.raw.len() < form.raw.len() {
        fused_affixes(&query.compact, &form.raw) != Affixes::Unrelated
    } else {
        fused_affixes(&form.compact, &query.raw) != Affixes::Unrelated
    }
}

fn is_filler(word: &str) -> bool {
    matches!(
        word,
        "a" | "an"
            | "the"
            | "of"
            | "for"
            | "with"
            | "by"
            | "at"
            | "my"
            | "and"
            | "tool"
            | "function"
            | "func"
            | "fn"
            | "api"
            | "cmd"
            | "command"
            | "action"
            | "method"
    )
}

// ---------------------------------------------------------------------------------------------
// Words

fn bag_key<S: AsRef<str>>(stems: &[S]) -> String {
    let mut words: Vec<&str> = stems.iter().map(AsRef::as_ref).collect();
    words.sort_unstable();
    words.join(" ")
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

fn truncate(mut tools: Vec<usize>) -> Vec<usize> {
    tools.truncate(MAX_SUGGESTIONS);
    tools
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

/// The full guard for a chosen tool: word-level, and letter-level for requests whose word
/// boundaries differ from the tool's (`unlockdoor` against `lock_door`).
fn opposed_forms(query: &Query, form: &Form) -> bool {
    if opposed_words(&query.raw, &form.raw, true) || opposed_words(&query.stems, &form.stems, false)
    {
        return true;
    }
    let (a, b) = (query.compact.as_str(), &*form.compact);
    if a == b || query.raw.len() == form.raw.len() {
        return false;
    }
    // Strip what both share at the start and the end; what remains is what differs.
    let prefix: usize = a
        .chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum();
    let (a_rest, b_rest) = (&a[prefix..], &b[prefix..]);
    let suffix: usize = a_rest
        .chars()
        .rev()
        .zip(b_rest.chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum();
    let da = &a_rest[..a_rest.len() - suffix];
    let db = &b_rest[..b_rest.len() - suffix];
    let negation_inserted = |x: &str, y: &str| y.is_empty() && is_negation(x);
    if negation_inserted(da, db) || negation_inserted(db, da) {
        return true;
    }
    // Words fused on one side: align the letters with the tool's words and compare word by
    // word (`dequeuevehicle` against `enqueue_vehicle`, `unlockdoor` against `lock_door`).
    if query.raw.len() < form.raw.len() && fused_affixes(a, &form.raw) == Affixes::Opposed {
        return true;
    }
    if form.raw.len() < query.raw.len() && fused_affixes(b, &query.raw) == Affixes::Opposed {
        return true;
    }
    // Opposite words fused into the compact form on one side only.
    let table = fused_table();
    let (qa, fb) = (query.fused(), &form.fused);
    for &x in qa {
        if fb.binary_search(&x).is_ok() {
            continue;
        }
        if table.opposite[usize::from(x)]
            .iter()
            .any(|y| fb.binary_search(y).is_ok() && qa.binary_search(y).is_err())
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(names: &[(&str, bool)]) -> NameIndex {
        NameIndex::new(names.iter().map(|&(name, destructive)| NameEntry {
            name,
            aliases: &[],
            destructive,
        }))
    }

    fn all(_: usize) -> bool {
        true
    }

    fn resolve(ix: &NameIndex, name: &str) -> Resolution {
        ix.resolve(name, &all, Policy::Safe, None)
    }

    fn resolved(ix: &NameIndex, name: &str) -> Option<(usize, Rule)> {
        match resolve(ix, name).outcome {
            Outcome::Resolved { index, rule } => Some((index, rule)),
            Outcome::Unknown => None,
        }
    }

    fn filesystem() -> NameIndex {
        index(&[
            ("read_file", false),
            ("read_text_file", false),
            ("read_media_file", false),
            ("read_multiple_files", false),
            ("write_file", true),
            ("edit_file", true),
            ("create_directory", false),
            ("list_directory", false),
            ("list_directory_with_sizes", false),
            ("directory_tree", false),
            ("move_file", true),
            ("search_files", false),
            ("get_file_info", false),
            ("list_allowed_directories", false),
        ])
    }

    #[test]
    fn precomputed_typo_neighbours_change_nothing() {
        // The neighbours computed at build time are a cache of the lookup made per request:
        // an index without them must resolve and suggest exactly the same.
        let names = [
            ("read_file", false),
            ("read_files", false),
            ("list_children", false),
            ("list_child_nodes", false),
            ("get_child", false),
            ("lock_door", true),
            ("unlock_door", true),
            ("search_papers", false),
            ("search_paper_notes", false),
            ("delete_directory", true),
            ("create_directory", false),
            ("get_weather_forecast", false),
            ("get_ecosystem_report", false),
        ];
        let cached = index(&names);
        let mut uncached = index(&names);
        uncached.typo_neighbours.clear();
        for request in [
            "list_childrens",
            "list_chidlren",
            "list_child",
            "get_childs",
            "read_fiel",
            "raed_files",
            "lock_dor",
            "unlok_door",
            "serch_papers",
            "search_paper_note",
            "creat_directory",
            "delete_directry",
            "get_wether_forecast",
            "get_unecosystem_report",
            "weather_forecast_get",
            "frobnicate_files",
        ] {
            for policy in [Policy::Safe, Policy::Strict, Policy::Off] {
                assert_eq!(
                    cached.resolve(request, &all, policy, None),
                    uncached.resolve(request, &all, policy, None),
                    "{request} under {policy:?}"
                );
            }
        }
    }

    #[test]
    fn exact_and_rule_names() {
        let ix = filesystem();
        assert_eq!(resolved(&ix, "read_file"), Some((0, Rule::Exact)));
        assert_eq!(resolved(&ix, "write_file"), Some((4, Rule::Exact)));
        assert_eq!(Rule::WordOrder.as_str(), "word_order");
        assert_eq!(Rule::NamespacePrefix.as_str(), "namespace_prefix");
        assert!(Rule::Typo.is_fuzzy() && !Rule::Plural.is_fuzzy());
    }

    #[test]
    fn spelling_equivalents_reach_destructive_tools() {
        let ix = filesystem();
        assert_eq!(resolved(&ix, "WRITE_FILE"), Some((4, Rule::Case)));
        assert_eq!(resolved(&ix, "write-file"), Some((4, Rule::Separators)));
        assert_eq!(resolved(&ix, "writeFile"), Some((4, Rule::Separators)));
        assert_eq!(resolved(&ix, "WriteFile"), Some((4, Rule::Separators)));
        assert_eq!(resolved(&ix, "write file"), Some((4, Rule::Separators)));
        assert_eq!(resolved(&ix, "write.file"), Some((4, Rule::Separators)));
        assert_eq!(resolved(&ix, "write_files"), Some((4, Rule::Plural)));
        assert_eq!(resolved(&ix, "file_write"), Some((4, Rule::WordOrder)));
        assert_eq!(resolved(&ix, "read_multiple_file"), Some((3, Rule::Plural)));
        assert_eq!(
            resolved(&ix, "list_directories_with_size"),
            Some((8, Rule::Plural))
        );
    }

    #[test]
    fn namespace_prefixes() {
        let ix = filesystem();
        for name in [
            "mcp__filesystem__read_text_file",
            "filesystem__read_text_file",
            "filesystem.read_text_file",
            "filesystem/read_text_file",
            "functions.read_text_file",
            "default_api.read_text_file",
            "mcp__filesystem__readTextFile",
        ] {
            assert_eq!(
                resolved(&ix, name),
                Some((1, Rule::NamespacePrefix)),
                "{name}"
            );
            assert_eq!(
                ix.resolve(name, &all, Policy::Safe, Some("filesystem"))
                    .outcome,
                Outcome::Resolved {
                    index: 1,
                    rule: Rule::NamespacePrefix
                },
                "{name}"
            );
        }
        // Known server name: another server's namespace is not stripped.
        let r = ix.resolve(
            "github__read_text_file",
            &all,
            Policy::Safe,
            Some("filesystem"),
        );
        assert!(!matches!(
            r.outcome,
            Outcome::Resolved {
                rule: Rule::NamespacePrefix,
                ..
            }
        ));
        // The server's self-reported name may be longer than the client's label.
        let r = ix.resolve(
            "mcp__filesystem__read_file",
            &all,
            Policy::Safe,
            Some("secure-filesystem-server"),
        );
        assert_eq!(
            r.outcome,
            Outcome::Resolved {
                index: 0,
                rule: Rule::NamespacePrefix
            }
        );
        // A negation is never a namespace.
        let lock = index(&[("lock_door", false)]);
        assert_eq!(resolved(&lock, "not.lock_door"), None);
        assert_eq!(resolved(&lock, "no__lock_door"), None);
    }

    #[test]
    fn dotted_tool_names_are_not_namespaces() {
        let ix = index(&[
            ("math.factorial", false),
            ("factorial", false),
            ("math.gcd", false),
        ]);
        assert_eq!(resolved(&ix, "math.factorial"), Some((0, Rule::Exact)));
        assert_eq!(resolved(&ix, "Math.Factorial"), Some((0, Rule::Case)));
        assert_eq!(
            resolved(&ix, "functions.math.factorial"),
            Some((0, Rule::NamespacePrefix))
        );
        assert_eq!(resolved(&ix, "math_gcd"), Some((2, Rule::Separators)));
    }

    #[test]
    fn aliases_and_policies() {
        let aliases = vec![
            "search_paper".to_string(),
            "search_knowledgebase".to_string(),
        ];
        let ix = NameIndex::new([
            NameEntry {
                name: "search_papers",
                aliases: &aliases,
                destructive: false,
            },
            NameEntry {
                name: "delete_paper",
                aliases: &[],
                destructive: true,
            },
        ]);
        let r = ix.resolve("search_knowledgebase", &all, Policy::Strict, None);
        assert_eq!(
            r.outcome,
            Outcome::Resolved {
                index: 0,
                rule: Rule::Alias
            }
        );
        let r = ix.resolve("searchKnowledgebase", &all, Policy::Safe, None);
        assert_eq!(
            r.outcome,
            Outcome::Resolved {
                index: 0,
                rule: Rule::Separators
            }
        );
        let r = ix.resolve("search_knowledgebase", &all, Policy::Off, None);
        assert_eq!(r.outcome, Outcome::Unknown);
        assert_eq!(r.suggestions, vec![0]);
        let r = ix.resolve("SEARCH_PAPERS", &all, Policy::Strict, None);
        assert_eq!(r.outcome, Outcome::Unknown);
        assert_eq!(r.suggestions.first(), Some(&0));
        let r = ix.resolve("search_paperz", &all, Policy::Strict, None);
        assert_eq!(r.outcome, Outcome::Unknown);
    }

    #[test]
    fn typos_synonyms_and_words_on_safe_tools() {
        let ix = filesystem();
        assert_eq!(resolved(&ix, "read_fiel"), Some((0, Rule::Typo)));
        assert_eq!(resolved(&ix, "serach_files"), Some((11, Rule::Typo)));
        assert_eq!(resolved(&ix, "get_file_infos"), Some((12, Rule::Plural)));
        assert_eq!(resolved(&ix, "fetch_file_info"), Some((12, Rule::Synonym)));
        assert_eq!(resolved(&ix, "find_files"), Some((11, Rule::Synonym)));
        assert_eq!(
            resolved(&ix, "list_directory_sizes"),
            Some((8, Rule::DroppedWord))
        );
        assert_eq!(
            resolved(&ix, "directory_tree_tool"),
            Some((9, Rule::ExtraWord))
        );
        assert_eq!(
            resolved(&ix, "get_file_info_details"),
            Some((12, Rule::ExtraWord))
        );
        assert_eq!(resolved(&ix, "raedtextfile"), Some((1, Rule::Typo)));
    }

    #[test]
    fn destructive_tools_are_suggested_not_fuzzily_corrected() {
        let ix = filesystem();
        let r = resolve(&ix, "wirte_file");
        assert_eq!(r.outcome, Outcome::Unknown);
        assert_eq!(r.suggestions.first(), Some(&4));
        let r = resolve(&ix, "modify_file");
        assert_eq!(r.outcome, Outcome::Unknown);
        assert!(r.suggestions.contains(&5));
    }

    #[test]
    fn never_across_opposites() {
        let ix = index(&[
            ("lock_door", false),
            ("create_user", false),
            ("enable_logging", false),
            ("add_item", false),
            ("subscribe", false),
            ("grant_access", false),
            ("import_data", false),
            ("upload_file", false),
        ]);
        for name in [
            "unlock_door",
            "unlockDoor",
            "unlockdoor",
            "UnlockDoor",
            "door_unlock",
            "unlock_doors",
            "delete_user",
            "remove_user",
            "disable_logging",
            "remove_item",
            "delete_item",
            "unsubscribe",
            "revoke_access",
            "export_data",
            "download_file",
            "not_lock_door",
            "lock_door_not",
            "un_lock_door",
            "dont_lock_door",
        ] {
            let r = resolve(&ix, name);
            assert_eq!(r.outcome, Outcome::Unknown, "{name} must not be corrected");
        }
        // The opposite itself is not suggested either.
        assert!(!resolve(&ix, "unlock_door").suggestions.contains(&0));
        // But a lone typo near both sides is resolved to the right side only when clear.
        let both = index(&[("lock_door", false), ("unlock_door", false)]);
        assert_eq!(resolved(&both, "unlock_dor"), Some((1, Rule::Typo)));
        assert_eq!(resolved(&both, "lock_dor"), Some((0, Rule::Typo)));
        assert_eq!(resolved(&both, "unlock_doorr"), Some((1, Rule::Typo)));
        assert_eq!(resolved(&both, "unlock_door"), Some((1, Rule::Exact)));
    }

    /// The cases found by trying names nobody had written into a test: a `re-` verb against its
    /// `de-`/`un-` opposite is two letters away, which a long word's typo allowance covered.
    #[test]
    fn a_change_of_prefix_is_never_a_typo() {
        let pairs = [
            ("reactivate_account", "deactivate_account"),
            ("reinstall_package", "uninstall_package"),
            ("reinstall_app", "deinstall_app"),
            ("resubscribe_newsletter", "unsubscribe_newsletter"),
            ("reregister_device", "deregister_device"),
            ("recompress_archive", "decompress_archive"),
            ("requeue_job", "dequeue_job"),
            ("reselect_item", "deselect_item"),
            ("rearchive_project", "unarchive_project"),
            ("dequeue_vehicle", "enqueue_vehicle"),
            ("sync_data", "async_data"),
            ("async_data", "sync_data"),
            ("reinstall_package", "install_package"),
            ("deinstall_app", "uninstall_app"),
            ("reactivte_account", "deactivate_account"),
            ("unlcok_door", "lock_door"),
        ];
        for (request, tool) in pairs {
            let ix = index(&[(tool, false), ("search_files", false)]);
            for policy in [Policy::Safe, Policy::Strict, Policy::Off] {
                let r = ix.resolve(request, &all, policy, None);
                assert_eq!(
                    r.outcome,
                    Outcome::Unknown,
                    "{request} -> {tool} ({policy:?})"
                );
            }
        }
        // Opposed prefixes are not suggested either; a mere change of prefix may be.
        let ix = index(&[("deactivate_account", false)]);
        assert!(resolve(&ix, "reactivate_account").suggestions.is_empty());
        let ix = index(&[("install_package", false)]);
        assert_eq!(resolve(&ix, "reinstall_package").suggestions, vec![0]);
    }

    #[test]
    fn negating_words_are_never_extra() {
        let ix = index(&[
            ("unlock_door", false),
            ("enable_feature", false),
            ("grant_access", false),
        ]);
        for request in [
            "undo_unlock_door",
            "revert_unlock_door",
            "cancel_unlock_door",
            "unlock_door_undo",
            "skip_unlock_door",
            "never_unlock_door",
            "enable_feature_off",
            "disable_enable_feature",
            "undo_grant_access",
            "grant_access_rollback",
            "no_grant_access",
        ] {
            let r = resolve(&ix, request);
            assert_eq!(r.outcome, Outcome::Unknown, "{request}");
            assert!(r.suggestions.is_empty(), "{request}: {:?}", r.suggestions);
        }
        // A namespace is never a negation: `undo__unlock_door` is not `unlock_door`.
        for request in ["undo__unlock_door", "un.lock_door", "cancel.grant_access"] {
            assert_eq!(resolved(&ix, request), None, "{request}");
        }
    }

    #[test]
    fn fused_words_keep_their_prefixes() {
        let ix = index(&[
            ("enqueue_vehicle", false),
            ("async_fetch", false),
            ("sync_data", false),
            ("lock_door", false),
        ]);
        for request in [
            "dequeuevehicle",
            "DequeueVehicle",
            "syncfetch",
            "sync_fetch",
            "asyncdata",
            "asyncData",
            "unlockdoor",
            "relockdoor",
        ] {
            let r = resolve(&ix, request);
            assert_eq!(r.outcome, Outcome::Unknown, "{request}");
        }
        for (request, opposite) in [("dequeuevehicle", 0), ("unlockdoor", 3), ("syncfetch", 1)] {
            let r = resolve(&ix, request);
            assert!(
                !r.suggestions.contains(&opposite),
                "{request}: {:?}",
                r.suggestions
            );
        }
    }

    #[test]
    fn suggestions_never_list_the_opposite() {
        let ix = index(&[
            ("lock_door", false),
            ("unlock_door", false),
            ("start_server", false),
        ]);
        let hide_lock = |i: usize| i != 0;
        let r = ix.resolve("relock_door", &hide_lock, Policy::Safe, None);
        assert_eq!(r.outcome, Outcome::Unknown);
        assert!(!r.suggestions.contains(&1), "{:?}", r.suggestions);
        for request in [
            "halt_server",
            "shutdown_server",
            "stop_server",
            "kill_server",
        ] {
            let r = resolve(&ix, request);
            assert_eq!(r.outcome, Outcome::Unknown, "{request}");
            assert!(
                !r.suggestions.contains(&2),
                "{request}: {:?}",
                r.suggestions
            );
        }
    }

    #[test]
    fn names_are_text_not_bytes() {
        let ix = index(&[("lock_door", true), ("get_weather", false)]);
        for request in [
            "lock_door\u{0}",
            "lock_door\n",
            "lock\r_door",
            "lock_door\u{7f}",
            "lock\u{200b}_door",
            "lock_door\u{202e}",
            "lock_door\u{2028}",
            "get_weather\u{0}",
        ] {
            for policy in [Policy::Safe, Policy::Strict, Policy::Off] {
                let r = ix.resolve(request, &all, policy, None);
                assert_eq!(r.outcome, Outcome::Unknown, "{request:?} ({policy:?})");
            }
        }
        // Compatibility folding: the Kelvin sign is K, full-width letters are letters.
        assert_eq!(resolved(&ix, "loc\u{212a}_door"), Some((0, Rule::Case)));
        assert_eq!(
            resolved(&ix, "\u{ff4c}\u{ff4f}\u{ff43}\u{ff4b}_door"),
            Some((0, Rule::Case))
        );
        // A combining mark belongs to its letter: `do\u{301}or` is not `do` + `or`, so the
        // destructive tool is only suggested.
        let r = resolve(&ix, "lock_do\u{301}or");
        assert_eq!(r.outcome, Outcome::Unknown);
        assert_eq!(r.suggestions, vec![0]);
        assert_eq!(split_words("do\u{301}or"), ["do\u{301}or"]);
    }

    #[test]
    fn recovery_is_kept() {
        let ix = index(&[
            ("get_papers", false),
            ("delete_file", true),
            ("get_weather_forecast", false),
            ("unlock_door", false),
            ("deactivate_account", false),
        ]);
        assert_eq!(resolved(&ix, "get_paper"), Some((0, Rule::Plural)));
        let r = resolve(&ix, "delte_file");
        assert_eq!(r.outcome, Outcome::Unknown);
        assert_eq!(r.suggestions.first(), Some(&1));
        assert_eq!(resolved(&ix, "get_weather_forcast"), Some((2, Rule::Typo)));
        assert_eq!(resolved(&ix, "unlock_dor"), Some((3, Rule::Typo)));
        assert_eq!(resolved(&ix, "deactivte_account"), Some((4, Rule::Typo)));
        assert_eq!(resolved(&ix, "deactivate_acount"), Some((4, Rule::Typo)));
    }

    #[test]
    fn another_object_is_not_a_typo() {
        let ix = index(&[
            ("delete_file", false),
            ("get_car", false),
            ("read_graph", false),
        ]);
        assert_eq!(resolved(&ix, "delete_user"), None);
        assert_eq!(resolved(&ix, "get_cat"), None);
        assert_eq!(resolved(&ix, "read_file"), None);
    }

    #[test]
    fn close_runner_up_means_suggest() {
        let ix = index(&[("search_files", false), ("search_nodes", false)]);
        let r = resolve(&ix, "search");
        assert_eq!(r.outcome, Outcome::Unknown);
        assert_eq!(r.suggestions, vec![0, 1]);
        // Two tools equivalent to the request: ambiguous.
        let ix = index(&[("read_file", false), ("ReadFile", false), ("other", false)]);
        let r = resolve(&ix, "READ-FILE");
        assert_eq!(r.outcome, Outcome::Unknown);
        assert_eq!(r.suggestions, vec![0, 1]);
    }

    #[test]
    fn hidden_tools_never_leak() {
        let ix = index(&[
            ("read_file", false),
            ("ReadFile", false),
            ("admin_reset", false),
        ]);
        let hide_1 = |i: usize| i != 1;
        // The hidden twin does not make the visible tool ambiguous.
        let r = ix.resolve("READ-FILE", &hide_1, Policy::Safe, None);
        assert_eq!(
            r.outcome,
            Outcome::Resolved {
                index: 0,
                rule: Rule::Separators
            }
        );
        // A hidden tool is not reachable by exact name, equivalence or fuzzy.
        let hide_2 = |i: usize| i != 2;
        for name in ["admin_reset", "ADMIN_RESET", "admin_rest", "adminReset"] {
            let r = ix.resolve(name, &hide_2, Policy::Safe, None);
            assert_eq!(r.outcome, Outcome::Unknown, "{name}");
            assert!(!r.suggestions.contains(&2), "{name}");
        }
    }

    /// Resolving with a visibility filter equals resolving against the visible tools only.
    #[test]
    fn visibility_is_the_same_as_a_smaller_catalog() {
        let names = [
            "read_file",
            "read_files",
            "readFile",
            "write_file",
            "list_directory",
            "list_directory_with_sizes",
            "search_files",
            "search_nodes",
            "lock_door",
            "unlock_door",
            "get_file_info",
            "fetch_file",
            "delete_entities",
            "create_entities",
        ];
        let requests = [
            "read_file",
            "READ_FILE",
            "read-files",
            "raed_file",
            "search",
            "serach_files",
            "unlock_dor",
            "lock_dor",
            "get_file",
            "fetch_file_info",
            "delete_entity",
            "create_entitie",
            "list_directory_sizes",
            "functions.read_file",
            "list_dirs",
        ];
        let mut seed = 0x9e37_79b9_u32;
        for _ in 0..200 {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let mask = seed;
            let visible = move |i: usize| mask & (1 << i) != 0;
            let entries: Vec<(usize, &str)> = names
                .iter()
                .copied()
                .enumerate()
                .filter(|&(i, _)| visible(i))
                .collect();
            let full = index(&names.iter().map(|&n| (n, false)).collect::<Vec<_>>());
            let small = index(&entries.iter().map(|&(_, n)| (n, false)).collect::<Vec<_>>());
            for request in requests {
                let a = full.resolve(request, &visible, Policy::Safe, None);
                let b = small.resolve(request, &all, Policy::Safe, None);
                let map = |r: Resolution| Resolution {
                    outcome: match r.outcome {
                        Outcome::Resolved { index, rule } => Outcome::Resolved {
                            index: entries[index].0,
                            rule,
                        },
                        Outcome::Unknown => Outcome::Unknown,
                    },
                    suggestions: r.suggestions.into_iter().map(|i| entries[i].0).collect(),
                };
                assert_eq!(a, map(b), "request {request} mask {mask:b}");
            }
        }
    }

    #[test]
    fn suggestions_are_few_and_relevant() {
        let ix = filesystem();
        let r = resolve(&ix, "read");
        assert_eq!(r.outcome, Outcome::Unknown);
        assert!(!r.suggestions.is_empty() && r.suggestions.len() <= 3);
        assert!(r.suggestions.iter().all(|&i| i <= 3));
        let r = resolve(&ix, "send_email");
        assert_eq!(r.outcome, Outcome::Unknown);
        assert!(r.suggestions.len() <= 3);
    }

    #[test]
    fn no_panics_on_hostile_input() {
        let ix = filesystem();
        let long = "a".repeat(MAX_NAME_LEN + 1);
        let long_words = "read_file_".repeat(100);
        for name in [
            "",
            " ",
            "_",
            "__",
            ".",
            "::",
            "/",
            "\u{0}",
            "\u{7}\u{1b}[31m",
            "ÉCRIRE_FICHIER",
            "读取文件",
            "read_fïle",
            "🙂🙂🙂",
            "ǅemal",
            "İstanbul",
            "ß",
            "A",
            "AB",
            "URLs",
            "mcp__",
            "__read_file",
            "read_file__",
            "a.b.c.d.e.f",
            long.as_str(),
            long_words.as_str(),
        ] {
            let r = resolve(&ix, name);
            assert!(r.suggestions.len() <= 3);
            if name.len() > MAX_NAME_LEN {
                assert_eq!(r, Resolution::unknown(Vec::new()));
            }
        }
        let empty = NameIndex::new(std::iter::empty());
        assert!(empty.is_empty());
        assert_eq!(resolve(&empty, "x"), Resolution::unknown(Vec::new()));
    }

    /// Common words (`get`, `details`) take the bounded path; corrections stay exact.
    #[test]
    fn large_catalogs_with_common_words() {
        let objects = [
            "invoice",
            "customer",
            "shipment",
            "warehouse",
            "employee",
            "payroll",
            "contract",
            "supplier",
            "quotation",
            "campaign",
        ];
        let mut names = Vec::new();
        for verb in ["get", "list", "count", "export"] {
            for object in objects {
                for n in 0..40 {
                    names.push(format!("{verb}_{object}{n}_details"));
                }
            }
        }
        names.push("get_weather_details".to_string());
        let entries: Vec<(&str, bool)> = names.iter().map(|n| (n.as_str(), false)).collect();
        let ix = index(&entries);
        let weather = names.len() - 1;
        assert_eq!(
            resolved(&ix, "get_waether_details"),
            Some((weather, Rule::Typo))
        );
        assert_eq!(
            resolved(&ix, "fetch_weather_details"),
            Some((weather, Rule::Synonym))
        );
        assert_eq!(
            resolved(&ix, "GetWeatherDetail"),
            Some((weather, Rule::Plural))
        );
        let r = resolve(&ix, "get_details");
        assert_eq!(r.outcome, Outcome::Unknown);
        assert!(r.suggestions.len() <= 3);
        // Another object with common words around it is still not a typo.
        assert_eq!(resolved(&ix, "get_forecast_details"), None);
    }

    #[test]
    fn words_and_singulars() {
        assert_eq!(split_words("getHTTPServer"), ["get", "http", "server"]);
        assert_eq!(split_words("listURLs"), ["list", "urls"]);
        assert_eq!(
            split_words("get-annotated message"),
            ["get", "annotated", "message"]
        );
        assert_eq!(split_words("v2Api"), ["v2", "api"]);
        for (plural, one) in [
            ("entities", "entity"),
            ("directories", "directory"),
            ("files", "file"),
            ("matches", "match"),
            ("sizes", "size"),
            ("aliases", "alias"),
            ("status", "status"),
            ("addresses", "address"),
            ("urls", "url"),
            ("photos", "photo"),
        ] {
            assert_eq!(singular(plural), singular(one), "{plural}");
        }
    }
}
