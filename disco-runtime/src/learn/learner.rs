//! Events to evidence, evidence to candidates.
//!
//! - **Alias**: an unknown name X followed in the same session, within `window` steps, by a
//!   successful call of T is evidence for X -> T, unless disco suggested T for X (a model
//!   following a suggestion proves nothing).
//! - **Keyword**: a search whose results did not hold T first, followed within `window`
//!   steps by a successful call of T, is evidence for each of the query's words as T's
//!   keyword; only words of the lexicon or of the catalog, with no digit, that are no
//!   stopword and not already T's.
//!
//! A candidate is ready only with enough distinct callers and sessions, and when enough of
//! the sessions that asked for the name (or searched the word) ended in that tool (noise and
//! abandoned sessions stay below it); an alias never
//! crosses an opposite, and one that reaches a tool that is not read-only waits for the
//! operator's approval. Evidence is per tool: a candidate reaches a caller only through a tool
//! that caller can see (`crate::catalog::View` applies that rule).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::Serialize;

use super::store::StoredEvent;
use crate::catalog::{Catalog, Discovery};

/// What the learner asks of evidence.
#[derive(Clone, Debug)]
pub struct LearnOptions {
    /// How many later steps of a session an unknown name or a search reaches (default 3).
    pub window: usize,
    /// Distinct callers an alias needs (default 3).
    pub alias_callers: usize,
    /// Distinct sessions an alias needs (default 3).
    pub alias_sessions: usize,
    /// Distinct callers a keyword needs (default 3).
    pub keyword_callers: usize,
    /// The most a learned keyword weighs in ranking, against a declared keyword's 1.0
    /// (default 0.5).
    pub max_keyword_weight: f32,
    /// The most learned keywords one tool keeps, the best supported first (default 8).
    pub max_keywords_per_tool: usize,
    /// The least share of the sessions that searched a word which then called the tool, for
    /// the word to be the tool's keyword (default 0.2): what sessions ending anywhere
    /// (noise, a model that gave up) teach stays below it. The share counts sessions, not
    /// tools, so no tool a caller cannot see changes what it learns.
    pub keyword_share: f32,
    /// The least share of the sessions that asked for a name which then called the tool, for
    /// the name to be the tool's alias (default 0.5).
    pub alias_share: f32,
}

impl Default for LearnOptions {
    fn default() -> Self {
        LearnOptions {
            window: 3,
            alias_callers: 3,
            alias_sessions: 3,
            keyword_callers: 3,
            max_keyword_weight: 0.5,
            max_keywords_per_tool: 8,
            keyword_share: 0.2,
            alias_share: 0.5,
        }
    }
}

/// Who supports one candidate.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Support {
    /// The distinct callers (their HMACs).
    pub callers: BTreeSet<String>,
    /// The distinct sessions.
    pub sessions: BTreeSet<String>,
    /// How many times it was seen.
    pub events: u64,
}

impl Support {
    fn add(&mut self, caller: &str, session: &str) {
        self.events += 1;
        if !self.callers.contains(caller) {
            self.callers.insert(caller.to_string());
        }
        if !self.sessions.contains(session) {
            self.sessions.insert(session.to_string());
        }
    }
}

/// Evidence by (name, tool) and (word, tool).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evidence {
    /// By (unknown name, tool called).
    pub aliases: BTreeMap<(String, String), Support>,
    /// By (query word, tool called).
    pub keywords: BTreeMap<(String, String), Support>,
    /// How many sessions asked for each unknown name.
    pub name_sessions: BTreeMap<String, u64>,
    /// How many sessions searched each word.
    pub word_sessions: BTreeMap<String, u64>,
}

struct Pending<'a> {
    step: usize,
    kind: PendingKind<'a>,
}

enum PendingKind<'a> {
    Unknown {
        name: &'a str,
        suggested: &'a [String],
    },
    Search {
        query: &'a str,
        first: Option<&'a str>,
    },
}

/// The evidence in `events` (oldest first). Events without a session are no sequence and give
/// none.
pub fn gather(events: &[StoredEvent], window: usize) -> Evidence {
    let mut sessions: BTreeMap<&str, Vec<&StoredEvent>> = BTreeMap::new();
    for e in events {
        if let Some(s) = &e.session {
            sessions.entry(s).or_default().push(e);
        }
    }
    let mut evidence = Evidence::default();
    for (session, steps) in sessions {
        let mut pending: Vec<Pending<'_>> = Vec::new();
        let mut names_here: HashSet<&str> = HashSet::new();
        let mut words_here: HashSet<String> = HashSet::new();
        for e in &steps {
            match &e.event {
                Discovery::Unknown { requested, .. } => {
                    names_here.insert(requested);
                }
                Discovery::Search { query, .. } => words_here.extend(query_words(query)),
                _ => {}
            }
        }
        for n in names_here {
            *evidence.name_sessions.entry(n.to_string()).or_default() += 1;
        }
        for w in words_here {
            *evidence.word_sessions.entry(w).or_default() += 1;
        }
        for (step, e) in steps.iter().enumerate() {
            pending.retain(|p| step - p.step <= window);
            match &e.event {
                Discovery::Unknown {
                    requested,
                    suggested,
                } => pending.push(Pending {
                    step,
                    kind: PendingKind::Unknown {
                        name: requested,
                        suggested,
                    },
                }),
                Discovery::Search { query, shown } => pending.push(Pending {
                    step,
                    kind: PendingKind::Search {
                        query,
                        first: shown.first().map(String::as_str),
                    },
                }),
                Discovery::Corrected { .. } => {}
                Discovery::Call { tool, ok } => {
                    if !ok {
                        continue;
                    }
                    for p in &pending {
                        match p.kind {
                            PendingKind::Unknown { name, suggested } => {
                                if name != tool && !suggested.iter().any(|s| s == tool) {
                                    evidence
                                        .aliases
                                        .entry((name.to_string(), tool.clone()))
                                        .or_default()
                                        .add(&e.caller, session);
                                }
                            }
                            PendingKind::Search { query, first } => {
                                if first == Some(tool.as_str()) {
                                    continue;
                                }
                                let mut seen = HashSet::new();
                                for word in query_words(query) {
                                    if seen.insert(word.clone()) {
                                        evidence
                                            .keywords
                                            .entry((word, tool.clone()))
                                            .or_default()
                                            .add(&e.caller, session);
                                    }
                                }
                            }
                        }
                    }
                    // A successful call ends what came before it.
                    pending.clear();
                }
            }
        }
    }
    evidence
}

/// The words of a query as the learner reads them: lowercase runs of ASCII letters, of at
/// least 3 letters, that are no stopword (a word with a digit, an address or a number is
/// no word here: it is split off and dropped).
pub fn query_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() >= 3 && w.len() <= 32 && w.bytes().all(|b| b.is_ascii_alphabetic()))
        .map(str::to_ascii_lowercase)
        .filter(|w| !crate::search::index::is_stopword(w))
        .collect()
}

/// What the learner knows of one tool.
#[derive(Clone, Debug)]
pub struct ToolFacts {
    /// Its name.
    pub name: String,
    /// The words of its name, title, description, aliases and keywords.
    pub words: HashSet<String>,
    /// Marked read-only.
    pub read_only: bool,
    /// Destructive (per the MCP annotations' defaults).
    pub destructive: bool,
    /// Its name and declared aliases.
    pub names: Vec<String>,
}

/// The facts of every tool of a catalog (hidden ones included: the report is the operator's).
pub fn facts_of(catalog: &Catalog) -> Vec<ToolFacts> {
    catalog
        .tools()
        .iter()
        .map(|t| {
            let mut text = vec![t.name.clone(), t.description.clone()];
            text.extend(t.title.clone());
            text.extend(t.aliases.iter().cloned());
            text.extend(t.keywords.iter().cloned());
            let words = text.iter().flat_map(|s| query_words(s)).collect();
            let ann = &t.annotations;
            ToolFacts {
                name: t.name.clone(),
                words,
                read_only: ann.read_only == Some(true),
                destructive: ann.is_destructive(),
                names: std::iter::once(t.name.clone())
                    .chain(t.aliases.iter().cloned())
                    .collect(),
            }
        })
        .collect()
}

/// Where a candidate stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "why")]
pub enum Status {
    /// Safe to use: online for a read-only tool, or to paste.
    Ready,
    /// Enough evidence, but the tool is not read-only: only the operator may add it.
    NeedsApproval,
    /// Not enough distinct callers or sessions yet.
    TooFew,
    /// Never: the reason.
    Refused(String),
}

/// What a candidate teaches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Lesson {
    /// `name` is an alias of `tool`.
    Alias {
        /// The name callers used.
        name: String,
        /// The tool they meant.
        tool: String,
    },
    /// `word` is a keyword of `tool`.
    Keyword {
        /// The query word.
        word: String,
        /// The tool it found.
        tool: String,
    },
}

/// One candidate with its evidence.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    /// What it teaches.
    #[serde(flatten)]
    pub lesson: Lesson,
    /// Whether it may be used.
    #[serde(flatten)]
    pub status: Status,
    /// Distinct callers behind it.
    pub callers: usize,
    /// Distinct sessions behind it.
    pub sessions: usize,
    /// Times seen.
    pub events: u64,
    /// A keyword's weight in ranking (0 for an alias).
    pub weight: f32,
}

/// Every candidate of `evidence` against the tools `tools`, aliases first, each sorted by
/// support.
pub fn judge(evidence: &Evidence, tools: &[ToolFacts], options: &LearnOptions) -> Vec<Candidate> {
    let by_name: BTreeMap<&str, &ToolFacts> = tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let taken: HashSet<&str> = tools
        .iter()
        .flat_map(|t| t.names.iter().map(String::as_str))
        .collect();
    let catalog_words: HashSet<&str> = tools
        .iter()
        .flat_map(|t| t.words.iter().map(String::as_str))
        .collect();
    let mut out = Vec::new();
    for ((name, tool), support) in &evidence.aliases {
        let status = match by_name.get(tool.as_str()) {
            None => continue,
            Some(facts) => {
                let asked = evidence
                    .name_sessions
                    .get(name)
                    .copied()
                    .unwrap_or(0)
                    .max(1);
                let share = support.sessions.len() as f32 / asked as f32;
                alias_status(name, facts, &taken, support, share, options)
            }
        };
        out.push(Candidate {
            lesson: Lesson::Alias {
                name: name.clone(),
                tool: tool.clone(),
            },
            status,
            callers: support.callers.len(),
            sessions: support.sessions.len(),
            events: support.events,
            weight: 0.0,
        });
    }
    let mut keywords: Vec<Candidate> = Vec::new();
    for ((word, tool), support) in &evidence.keywords {
        let Some(facts) = by_name.get(tool.as_str()) else {
            continue;
        };
        if facts.words.contains(word) {
            continue;
        }
        let callers = support.callers.len();
        let searched = evidence
            .word_sessions
            .get(word)
            .copied()
            .unwrap_or(0)
            .max(1);
        let share = support.sessions.len() as f32 / searched as f32;
        let status = if !(crate::resolve::vocab::is_known_word(word)
            || catalog_words.contains(word.as_str()))
        {
            Status::Refused("not a word of the lexicon or the catalog".into())
        } else if callers < options.keyword_callers || share < options.keyword_share {
            Status::TooFew
        } else {
            Status::Ready
        };
        let k = options.keyword_callers.max(1) as f32;
        keywords.push(Candidate {
            lesson: Lesson::Keyword {
                word: word.clone(),
                tool: tool.clone(),
            },
            weight: if status == Status::Ready {
                options.max_keyword_weight * (callers as f32 / (2.0 * k)).min(1.0)
            } else {
                0.0
            },
            status,
            callers,
            sessions: support.sessions.len(),
            events: support.events,
        });
    }
    // Each tool keeps its best supported keywords; the rest wait.
    keywords.sort_by(|a, b| {
        lesson_tool(&a.lesson)
            .cmp(lesson_tool(&b.lesson))
            .then(b.callers.cmp(&a.callers))
            .then(b.events.cmp(&a.events))
    });
    let mut kept: BTreeMap<String, usize> = BTreeMap::new();
    for c in &mut keywords {
        if c.status == Status::Ready {
            let n = kept.entry(lesson_tool(&c.lesson).to_string()).or_default();
            *n += 1;
            if *n > options.max_keywords_per_tool {
                c.status = Status::Refused(format!(
                    "the tool has {} better supported keywords",
                    options.max_keywords_per_tool
                ));
                c.weight = 0.0;
            }
        }
    }
    out.sort_by(|a, b| b.callers.cmp(&a.callers).then(b.events.cmp(&a.events)));
    out.extend(keywords);
    out
}

fn lesson_tool(l: &Lesson) -> &str {
    match l {
        Lesson::Alias { tool, .. } | Lesson::Keyword { tool, .. } => tool,
    }
}

fn alias_status(
    name: &str,
    tool: &ToolFacts,
    taken: &HashSet<&str>,
    support: &Support,
    share: f32,
    options: &LearnOptions,
) -> Status {
    if taken.contains(name) {
        return Status::Refused("the name is a tool's name or declared alias".into());
    }
    if crate::resolve::name::unreadable(name) || name.chars().count() > 128 {
        return Status::Refused("the name is not a readable tool name".into());
    }
    let requested = crate::text::words::split_words(name);
    let target = crate::text::words::split_words(&tool.name);
    if crate::resolve::polarity::opposed_words(&requested, &target, true) {
        return Status::Refused("the name and the tool's differ by an opposite".into());
    }
    if support.callers.len() < options.alias_callers
        || support.sessions.len() < options.alias_sessions
        || share < options.alias_share
    {
        return Status::TooFew;
    }
    if !tool.read_only || tool.destructive {
        return Status::NeedsApproval;
    }
    Status::Ready
}
