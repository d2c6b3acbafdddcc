//! A discoverability lint: what in a catalog will make a model pick the wrong tool, send the
//! wrong arguments, or never see a tool at all, found before a model ever does.
//!
//! Models choose tools by their names and descriptions. A published experiment replaced a to-do
//! app's tool descriptions with "Works with an item." and correct tool choices fell from 17/20
//! to 8/20. Every rule below is a heuristic with a stated threshold (see [`LintOptions`]); each
//! finding says what is wrong and how to fix it.
//!
//! | code | severity | rule |
//! |---|---|---|
//! | `description-short` | error below 5 words, warning below 10 | too short to choose by |
//! | `description-no-returns` | warning | says nothing of what comes back |
//! | `description-no-when` | warning | has a neighbour, but does not say when to use it |
//! | `param-no-description` | warning | a parameter without a description |
//! | `annotations-missing` | info | neither `read_only` nor `destructive` stated: destructive by the MCP defaults, so name correction never guesses it |
//! | `names-equivalent` | error | two names equal after normalising case, separators, plurals, word order |
//! | `alias-shadows` | error | an alias equal (so normalised) to another tool's name or alias |
//! | `alias-redundant` | info | an alias the spelling-equivalent tier already covers |
//! | `names-confusable` | warning | names a fuzzy tier could confuse (<= 2 edits and >= 75% alike) |
//! | `descriptions-similar` | warning | near-duplicate descriptions (word-pair Jaccard >= 0.5) |
//! | `schema-ref` | error | `$ref` in an input schema (recursive types) |
//! | `schema-nullable` | error | a type array or `anyOf` branch with `"null"` in an input schema |
//! | `schema-dialect` | error | a `$schema` other than draft-07 or 2020-12 |
//! | `schema-not-object` | error | a root schema that is not `"type": "object"` |
//! | `output-schema-ref` | warning | `$ref` in an output schema |
//! | `schema-uncompiled` | warning | a schema that cannot be compiled: the tool is kept, its arguments go unchecked |
//! | `schema-older-draft` | info | a schema written in an older draft than it declares (validated with that draft) |
//! | `token-cost` | info | estimated tokens of tools/list, heaviest tools |
//! | `catalog-too-large` | warning | more tools or tokens than models choose well among |
//! | `tool-token-cost` | warning | one tool's entry is unusually expensive |
//! | `search-misranked` | warning (info when in the top 5) | an example request whose expected tool search does not rank first |
//! | `request-unknown-tool` | error | an example request expecting a tool the catalog lacks |
//! | `catalog-empty` | error | no tools at all: the binary links none (tools in another binary's `src/main.rs`) |
//!
//! Words are maximal runs of letters and digits, lower-cased; `add_todo` is two words. Plural
//! normalising drops a final `s` (`ies` → `y`, `ses`/`xes`/`ches`/`shes` → drop `es`), the
//! same rule for every word, so it can over-merge (`news` ~ `new`) but never misses `notes` ~
//! `note`.

mod descriptions;
mod names;
mod requests;
mod schemas;
mod tokens;
mod words;

use std::collections::BTreeSet;
use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use super::docs::estimated_tokens;
use super::{Catalog, CatalogTool};
use crate::text::words::plain_words;
use crate::tool::Caller;

use descriptions::neighbours;
use descriptions::{annotation_rules, description_rules, param_rules};
use names::{name_rules, similar_descriptions};
use requests::request_rules;
pub use requests::{parse_requests, ExampleRequest};
use schemas::schema_rules;
use tokens::token_rules;
use words::Text;

/// How bad a finding is. `--deny warnings` fails on [`Severity::Warning`] and above.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing (token costs, a redundant alias, unstated annotations), not a fault in
    /// itself.
    Info,
    /// Likely to make a model choose or call worse, or pay more tokens than it needs to.
    Warning,
    /// Will mislead a model or break a client (names a model cannot tell apart, a
    /// description too short to choose by, a schema MCP or common clients reject): fix it
    /// before serving.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One problem: which tool (none for catalog-wide findings), how bad, a stable code, what is
/// wrong and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// The tool it is about; `None` for a finding about the whole catalog.
    pub tool: Option<String>,
    /// How bad it is.
    pub severity: Severity,
    /// The rule's code from the table above (`description-short`, ...), stable across
    /// releases so that scripts can filter on it.
    pub code: &'static str,
    /// What is wrong, in one sentence.
    pub problem: String,
    /// How to fix it.
    pub fix: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.severity, self.code)?;
        if let Some(tool) = &self.tool {
            write!(f, " `{tool}`")?;
        }
        write!(f, ": {}\n  fix: {}", self.problem, self.fix)
    }
}

/// Thresholds of the lint. The defaults are what the findings' texts justify; change them for
/// a catalog that has reasons to differ.
#[derive(Clone, Debug)]
pub struct LintOptions {
    /// A description with fewer words is an error (default 5: "Works with an item." is 4).
    pub min_words_error: usize,
    /// A description with fewer words is a warning (default 10: what the tool does, what it
    /// returns and when to use it rarely fit in fewer).
    pub min_words: usize,
    /// Two names (or aliases) are confusable when, written without separators and in the
    /// singular, they are at most [`name_max_edits`](Self::name_max_edits) Damerau-Levenshtein
    /// edits apart and their normalised similarity (1 - distance / longer length) is at least
    /// this (default 0.75: at most one letter in four differs). `lock_door` / `unlock_door`:
    /// 2 edits, 0.80, confusable; `get_user` / `set_user`: 1 edit, 0.86, confusable;
    /// `new_note` / `get_note`: 2 edits, 0.71, not; `convert_length` / `convert_weight`: 3
    /// edits, not.
    pub name_similarity: f64,
    /// See [`name_similarity`](Self::name_similarity) (default 2: one slip away from being one
    /// slip away).
    pub name_max_edits: usize,
    /// Two descriptions whose word-pair shingles (consecutive words, lower case, singular) have
    /// a Jaccard similarity of at least this are near-duplicates (default 0.5). On the
    /// repository's examples the most alike distinct descriptions score 0.27; "Search the
    /// notes for a word ..." against "... for a phrase ..." scores 0.67.
    pub description_similarity: f64,
    /// Tools are neighbours (and must say when to use one rather than the other) when their
    /// names share a word of 3+ letters or the Jaccard similarity of their descriptions'
    /// content-word sets is at least this (default 0.4).
    pub neighbour_similarity: f64,
    /// More tools than this in tools/list: advise search-first exposure (default 40, within the
    /// 30-50 tools past which tool selection accuracy degrades per Anthropic's tool search
    /// documentation).
    pub max_listed_tools: usize,
    /// More estimated tokens than this in tools/list: advise search-first exposure (default
    /// 10,000, the figure Anthropic gives for switching to tool search).
    pub max_listed_tokens: usize,
    /// One tool's tools/list entry costing more than this is a warning (default 1,500: several
    /// times a well-described tool, usually a schema that inlines large types).
    pub max_tool_tokens: usize,
    /// Example requests to check the search ranking with (see [`parse_requests`]).
    pub requests: Vec<ExampleRequest>,
    /// How many results the model sees from one `tool_search` (default 5, the meta-tool's
    /// default): an expected tool ranked below first but within these is an info finding,
    /// below them (or not found) a warning.
    pub search_results: usize,
    /// How deep to look for the expected tool when it is not first (default 10).
    pub search_depth: usize,
}

impl Default for LintOptions {
    fn default() -> Self {
        LintOptions {
            min_words_error: 5,
            min_words: 10,
            name_similarity: 0.75,
            name_max_edits: 2,
            description_similarity: 0.5,
            neighbour_similarity: 0.4,
            max_listed_tools: 40,
            max_listed_tokens: 10_000,
            max_tool_tokens: 1_500,
            requests: Vec::new(),
            search_results: 5,
            search_depth: 10,
        }
    }
}

/// Runs every rule. Findings come sorted: per tool in name order (catalog-wide ones last), most
/// severe first.
pub fn lint(catalog: &Catalog, options: &LintOptions) -> Vec<Finding> {
    let tools: Vec<&CatalogTool> = catalog.tools().iter().map(|t| &**t).collect();
    let texts: Vec<Text> = tools.iter().map(|t| Text::of(t)).collect();
    let mut findings = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let neighbours = neighbours(i, &tools, &texts, options);
        description_rules(tool, &neighbours, &tools, options, &mut findings);
        param_rules(tool, &mut findings);
        annotation_rules(tool, &mut findings);
        schema_rules(tool, &mut findings);
    }
    if tools.is_empty() {
        findings.push(finding(
            None,
            Severity::Error,
            "catalog-empty",
            "the catalog has no tools: this binary links no `#[mcp_tool]` function (an \
             example or a test cannot link the tools of another binary, such as those in a \
             server's `src/main.rs`)"
                .to_string(),
            "declare the tools in a library crate (`src/lib.rs` or a module of it) and link \
             it from the binary that builds the catalog with `use my_crate as _;`"
                .to_string(),
        ));
    }
    name_rules(&tools, options, &mut findings);
    similar_descriptions(&tools, &texts, options, &mut findings);
    token_rules(catalog, options, &mut findings);
    request_rules(catalog, options, &mut findings);

    findings.sort_by(|a, b| {
        let key = |f: &Finding| (f.tool.is_none(), f.tool.clone());
        key(a)
            .cmp(&key(b))
            .then(b.severity.cmp(&a.severity))
            .then(a.code.cmp(b.code))
            .then(a.problem.cmp(&b.problem))
    });
    findings
}

/// The most severe finding, if any: what `--deny` compares against.
pub fn worst(findings: &[Finding]) -> Option<Severity> {
    findings.iter().map(|f| f.severity).max()
}

fn finding(
    tool: Option<&str>,
    severity: Severity,
    code: &'static str,
    problem: String,
    fix: String,
) -> Finding {
    Finding {
        tool: tool.map(str::to_string),
        severity,
        code,
        problem,
        fix,
    }
}
