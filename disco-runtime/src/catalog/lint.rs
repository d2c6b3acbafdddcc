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

use std::collections::BTreeSet;
use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use super::docs::estimated_tokens;
use super::{Catalog, CatalogTool};
use crate::text::words::plain_words;
use crate::tool::Caller;

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

/// One example request: what a user might ask, and the tool that should answer it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ExampleRequest {
    /// The request as a user would put it, searched as a `tool_search` query.
    pub query: String,
    /// The name (or an alias) of the tool that should rank first for it.
    pub expected: String,
}

/// Reads example requests from JSON Lines: one `{"query": "...", "expected": "tool"}` per line;
/// blank lines and lines starting with `#` or `//` are skipped. Errors name the line.
pub fn parse_requests(text: &str) -> Result<Vec<ExampleRequest>, String> {
    let mut requests = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("//") {
            continue;
        }
        let request: ExampleRequest = serde_json::from_str(line).map_err(|e| {
            format!(
                "line {}: {e} (expected {{\"query\": \"...\", \"expected\": \"tool_name\"}})",
                i + 1
            )
        })?;
        requests.push(request);
    }
    Ok(requests)
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

// ------------------------------------------------------------------------- words

/// Singular of one lower-case word: the resolver's own rule, so the lint sees names as the
/// spelling-equivalent tier does.
fn singular(word: &str) -> String {
    crate::text::words::singular(word)
}

/// The words of a tool name or alias: split at separators and at lower-to-upper case changes
/// (`getUser` = `get_user`), singular.
fn name_words(name: &str) -> Vec<String> {
    crate::text::words::split_words(name)
        .iter()
        .map(|w| singular(w))
        .collect()
}

/// A name as the spelling-equivalent tier sees it: its singular words in any order, whatever
/// the case and separators (`list_notes`, `ListNote` and `note-list` are one spelling).
fn normalised(name: &str) -> String {
    let mut words = name_words(name);
    words.sort();
    words.join(" ")
}

/// The letters of a name without separators, singular, in order: what edit distance is
/// measured on.
fn compact(name: &str) -> String {
    name_words(name).concat()
}

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "does", "each", "e", "eg",
    "for", "from", "g", "has", "have", "if", "in", "into", "is", "it", "its", "it's", "of", "on",
    "one", "or", "so", "such", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "to", "too", "was", "what", "when", "which", "who", "will", "with", "you", "your",
];

/// What the similarity rules compare.
struct Text {
    /// Content words of the description (stop words dropped, singular).
    content: BTreeSet<String>,
    /// Pairs of consecutive words of the description (w-shingles with w = 2), singular.
    shingles: BTreeSet<String>,
    /// Words of 3+ letters of the tool's name, singular.
    name_words: BTreeSet<String>,
}

fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        0.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

impl Text {
    fn of(tool: &CatalogTool) -> Text {
        let all: Vec<String> = plain_words(&tool.description)
            .iter()
            .map(|w| singular(w))
            .collect();
        let content = all
            .iter()
            .filter(|w| !STOP_WORDS.contains(&w.as_str()))
            .cloned()
            .collect();
        let shingles = if all.len() < 2 {
            all.iter().cloned().collect()
        } else {
            all.windows(2).map(|w| w.join(" ")).collect()
        };
        let name_words = name_words(&tool.name)
            .into_iter()
            .filter(|w| w.len() >= 3)
            .collect();
        Text {
            content,
            shingles,
            name_words,
        }
    }

    /// Near-duplicate measure: Jaccard similarity of the word-pair shingles (Broder's
    /// w-shingling). Reworded text shares few pairs even when it shares many words.
    fn resemblance(&self, other: &Text) -> f64 {
        jaccard(&self.shingles, &other.shingles)
    }

    /// Topic overlap: Jaccard similarity of the content-word sets.
    fn overlap(&self, other: &Text) -> f64 {
        jaccard(&self.content, &other.content)
    }
}

// ----------------------------------------------------------------- descriptions

/// Words that say what comes back. A lead verb naming the output (`List ...`, `Count ...`)
/// counts too; `Get`/`Read`/`Find` name the object but not its shape, so they do not.
const RETURN_WORDS: &[&str] = &[
    "return",
    "returns",
    "returned",
    "returning",
    "give",
    "gives",
    "lists",
    "shows",
    "yields",
    "output",
    "outputs",
    "produces",
    "reports",
    "responds",
    "result",
    "results",
    "answers",
    "replies",
];
const RETURN_LEAD_VERBS: &[&str] = &["list", "show", "count", "summarize", "summarise"];

/// Words that say when to use the tool, or when to use another one.
const WHEN_WORDS: &[&str] = &[
    "use",
    "used",
    "using",
    "pick",
    "choose",
    "select",
    "when",
    "whenever",
    "instead",
    "rather",
    "prefer",
    "unlike",
    "versus",
    "vs",
    "otherwise",
];

fn neighbours<'a>(
    i: usize,
    tools: &[&'a CatalogTool],
    texts: &[Text],
    options: &LintOptions,
) -> Vec<&'a str> {
    tools
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != i)
        .filter(|&(j, _)| {
            !texts[i].name_words.is_disjoint(&texts[j].name_words)
                || texts[i].overlap(&texts[j]) >= options.neighbour_similarity
        })
        .map(|(_, t)| t.name.as_str())
        .collect()
}

fn description_rules(
    tool: &CatalogTool,
    neighbours: &[&str],
    tools: &[&CatalogTool],
    options: &LintOptions,
    out: &mut Vec<Finding>,
) {
    let name = Some(tool.name.as_str());
    let count = tool
        .description
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count();
    if count < options.min_words {
        let severity = if count < options.min_words_error {
            Severity::Error
        } else {
            Severity::Warning
        };
        out.push(finding(
            name,
            severity,
            "description-short",
            format!(
                "the description has {count} word(s); a model chooses among tools by their \
                 descriptions, and {} is too little to choose by",
                if count < options.min_words_error {
                    "this"
                } else {
                    "this many"
                }
            ),
            format!(
                "say in at least {} words what the tool does, what it returns, and when to use it \
                 rather than a similar tool",
                options.min_words
            ),
        ));
    }

    let ws = plain_words(&tool.description);
    let lead = ws.first().map(String::as_str).unwrap_or("");
    let says_returns =
        ws.iter().any(|w| RETURN_WORDS.contains(&w.as_str())) || RETURN_LEAD_VERBS.contains(&lead);
    if !says_returns {
        out.push(finding(
            name,
            Severity::Warning,
            "description-no-returns",
            "the description does not say what the tool returns (none of: returns, gives, \
             lists, shows, result, ...)"
                .into(),
            "add a sentence such as \"Returns the note with its id\", or \"Returns an empty list \
             when nothing matches\""
                .into(),
        ));
    }

    if !neighbours.is_empty() {
        let mentions_other = tools
            .iter()
            .filter(|t| t.name != tool.name)
            .any(|t| tool.description.contains(&t.name));
        let says_when = mentions_other || ws.iter().any(|w| WHEN_WORDS.contains(&w.as_str()));
        if !says_when {
            let list = neighbours
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ");
            out.push(finding(
                name,
                Severity::Warning,
                "description-no-when",
                format!(
                    "the description does not say when to use this tool rather than its \
                     neighbour(s) {list} (no use/pick/when/instead/rather, and no other tool named)"
                ),
                format!(
                    "add a sentence such as \"Use this when ...; for ... use `{}` instead\"",
                    neighbours[0]
                ),
            ));
        }
    }
}

fn param_rules(tool: &CatalogTool, out: &mut Vec<Finding>) {
    for p in &tool.params {
        if p.description.as_deref().is_none_or(|d| d.trim().is_empty()) {
            out.push(finding(
                Some(&tool.name),
                Severity::Warning,
                "param-no-description",
                format!(
                    "parameter `{}` has no description: a model has only its name and type to \
                     guess what to pass",
                    p.name
                ),
                format!(
                    "document it in the doc comment's `# Arguments` section: \
                     \"* `{}` - what it is, its unit or format, an example\"",
                    p.name
                ),
            ));
        }
    }
}

/// Per the MCP annotations, a tool that states neither `readOnlyHint` nor `destructiveHint`
/// is destructive, so name correction never guesses it (only exact names and declared aliases
/// reach it). Correct, but silent: say it, per tool.
fn annotation_rules(tool: &CatalogTool, out: &mut Vec<Finding>) {
    let a = &tool.annotations;
    if a.read_only == Some(true) || a.destructive.is_some() {
        return;
    }
    out.push(finding(
        Some(&tool.name),
        Severity::Info,
        "annotations-missing",
        "states no annotations: by the MCP defaults it may destroy data, so name correction \
         will not guess it (a misspelled call to it is refused, not corrected)"
            .to_string(),
        "add `read_only` if it changes nothing, or `destructive = false` if it cannot destroy \
         data; `destructive` says that it can"
            .to_string(),
    ));
}

// ------------------------------------------------------------------------ names

fn spellings(tool: &CatalogTool) -> impl Iterator<Item = &str> {
    std::iter::once(tool.name.as_str()).chain(tool.aliases.iter().map(String::as_str))
}

fn name_rules(tools: &[&CatalogTool], options: &LintOptions, out: &mut Vec<Finding>) {
    // Aliases that the spelling-equivalent tier already covers.
    for tool in tools {
        let own = normalised(&tool.name);
        for alias in &tool.aliases {
            if normalised(alias) == own {
                out.push(finding(
                    Some(&tool.name),
                    Severity::Info,
                    "alias-redundant",
                    format!(
                        "alias `{alias}` differs from the name only in case, separators, \
                         plurals or word order, which name resolution accepts anyway"
                    ),
                    format!("remove the alias `{alias}` (harmless, but it adds nothing)"),
                ));
            }
        }
    }
    for (i, a) in tools.iter().enumerate() {
        for (j, b) in tools.iter().enumerate() {
            if i == j {
                continue;
            }
            // An alias of `a` that is a spelling of `b` (ordered pairs: each alias once).
            for alias in &a.aliases {
                let n = normalised(alias);
                if let Some(other) = spellings(b).find(|s| normalised(s) == n) {
                    let what = if other == b.name {
                        format!("the name of `{}`", b.name)
                    } else {
                        format!("`{other}`, an alias of `{}`", b.name)
                    };
                    out.push(finding(
                        Some(&a.name),
                        Severity::Error,
                        "alias-shadows",
                        format!(
                            "alias `{alias}` is a spelling of {what} (equal after normalising \
                             case, separators, plurals and word order): a call spelled like \
                             `{other}` could reach either tool"
                        ),
                        format!("remove or rename the alias `{alias}`"),
                    ));
                }
            }
            if j < i {
                continue;
            }
            // Unordered pairs from here on.
            let (na, nb) = (normalised(&a.name), normalised(&b.name));
            if na == nb {
                out.push(finding(
                    Some(&a.name),
                    Severity::Error,
                    "names-equivalent",
                    format!(
                        "`{}` and `{}` differ only in case, separators, plurals or word order: \
                         name resolution treats these as one spelling",
                        a.name, b.name
                    ),
                    format!(
                        "rename one of them so the names say how `{}` and `{}` differ",
                        a.name, b.name
                    ),
                ));
                continue;
            }
            if let Some((sa, sb, why)) = confusable(a, b, options) {
                let guard = if a.is_destructive() || b.is_destructive() {
                    " (fuzzy correction never picks a destructive tool, but both will appear \
                     in \"did you mean\" suggestions)"
                } else {
                    ""
                };
                out.push(finding(
                    Some(&a.name),
                    Severity::Warning,
                    "names-confusable",
                    format!(
                        "`{sa}` and `{sb}` (tool `{}`) {why}: a model's slip on one can land on \
                         the other, and a fuzzy match cannot tell them apart{guard}",
                        b.name
                    ),
                    format!(
                        "make the names differ in a whole word (`{}` vs `{}` should say what \
                         distinguishes them), or drop the alias that is close",
                        a.name, b.name
                    ),
                ));
            }
        }
    }
}

/// The closest pair of spellings of two tools, when close enough to confuse.
fn confusable<'a>(
    a: &'a CatalogTool,
    b: &'a CatalogTool,
    options: &LintOptions,
) -> Option<(&'a str, &'a str, String)> {
    let mut best: Option<(f64, &str, &str, String)> = None;
    for sa in spellings(a) {
        for sb in spellings(b) {
            if normalised(sa) == normalised(sb) {
                // Reported as `alias-shadows`.
                continue;
            }
            let (ca, cb) = (compact(sa), compact(sb));
            let distance = strsim::damerau_levenshtein(&ca, &cb);
            let sim = strsim::normalized_damerau_levenshtein(&ca, &cb);
            if distance <= options.name_max_edits
                && sim >= options.name_similarity
                && best.as_ref().is_none_or(|b| sim > b.0)
            {
                let why = format!("are {distance} edit(s) apart ({:.0}% alike)", sim * 100.0);
                best = Some((sim, sa, sb, why));
            }
        }
    }
    best.map(|(_, sa, sb, why)| (sa, sb, why))
}

fn similar_descriptions(
    tools: &[&CatalogTool],
    texts: &[Text],
    options: &LintOptions,
    out: &mut Vec<Finding>,
) {
    for i in 0..tools.len() {
        for j in i + 1..tools.len() {
            let sim = texts[i].resemblance(&texts[j]);
            if sim >= options.description_similarity {
                out.push(finding(
                    Some(&tools[i].name),
                    Severity::Warning,
                    "descriptions-similar",
                    format!(
                        "its description and `{}`'s are near-duplicates (Jaccard similarity \
                         {sim:.2} of their word pairs, threshold {:.2}): a model cannot tell the \
                         two tools apart",
                        tools[j].name, options.description_similarity
                    ),
                    format!(
                        "rewrite both to say what each does that the other does not, and when \
                         to pick `{}` rather than `{}`",
                        tools[i].name, tools[j].name
                    ),
                ));
            }
        }
    }
}

// ---------------------------------------------------------------------- schemas

const KNOWN_DIALECTS: &[&str] = &[
    "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft-07/schema",
    "https://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2020-12/schema#",
];

#[derive(Default)]
struct SchemaScan {
    refs: Vec<String>,
    nullable: Vec<String>,
    dialects: Vec<String>,
}

/// Walks a schema, skipping keywords whose values are data, not schemas.
fn scan(value: &Value, path: &str, found: &mut SchemaScan) {
    match value {
        Value::Object(obj) => {
            for (k, v) in obj {
                let here = format!("{path}/{k}");
                match k.as_str() {
                    "$ref" => found
                        .refs
                        .push(format!("{path} -> {}", v.as_str().unwrap_or("?"))),
                    "$schema" => {
                        let s = v.as_str().unwrap_or("");
                        if !KNOWN_DIALECTS.contains(&s) {
                            found.dialects.push(format!("{path}: {v}"));
                        }
                    }
                    "type" => {
                        if let Value::Array(types) = v {
                            if types.iter().any(|t| t == "null") {
                                found.nullable.push(format!("{here} = {v}"));
                            }
                        }
                    }
                    "anyOf" | "oneOf" => {
                        if let Value::Array(branches) = v {
                            if branches
                                .iter()
                                .any(|b| b.get("type") == Some(&Value::String("null".into())))
                            {
                                found.nullable.push(format!("{here} has a null branch"));
                            }
                        }
                    }
                    _ => {}
                }
                match k.as_str() {
                    "enum" | "const" | "default" | "examples" | "$ref" | "$schema" | "type" => {}
                    _ => scan(v, &here, found),
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                scan(v, &format!("{path}/{i}"), found);
            }
        }
        _ => {}
    }
}

fn at_most_three(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(3)
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > 3 {
        text.push_str(&format!(" and {} more", items.len() - 3));
    }
    text
}

fn schema_rules(tool: &CatalogTool, out: &mut Vec<Finding>) {
    let name = Some(tool.name.as_str());
    for problem in &tool.schema_problems {
        out.push(finding(
            name,
            Severity::Warning,
            "schema-uncompiled",
            format!("the tool is served, but {problem}"),
            "fix the schema (the message says where the validator stopped), or declare the \
             draft it is written in with `$schema`"
                .into(),
        ));
    }
    for note in &tool.schema_notes {
        out.push(finding(
            name,
            Severity::Info,
            "schema-older-draft",
            note.clone(),
            "declare the draft with `$schema`, or rewrite the schema in draft 2020-12".into(),
        ));
    }
    let input = Value::Object((*tool.input_schema).clone());
    let mut found = SchemaScan::default();
    scan(&input, "", &mut found);
    if !found.refs.is_empty() {
        let cause = if tool.recursive_schema {
            "a recursive parameter type keeps `$defs`, because it cannot be inlined"
        } else {
            "the tool uses the full schema form (`full_schema`), which keeps `$defs`"
        };
        out.push(finding(
            name,
            Severity::Error,
            "schema-ref",
            format!(
                "the input schema uses `$ref` ({}); {cause}. Clients in the field that turn \
                 tool schemas into function-calling definitions reject or mangle `$ref`",
                at_most_three(&found.refs)
            ),
            "use a non-recursive parameter type (e.g. a flat list with parent ids instead of a \
             tree), or drop `full_schema` so schemas are inlined"
                .into(),
        ));
    }
    if !found.nullable.is_empty() {
        out.push(finding(
            name,
            Severity::Error,
            "schema-nullable",
            format!(
                "the input schema allows `null` ({}); some model providers reject type arrays \
                 with \"null\" in function parameters",
                at_most_three(&found.nullable)
            ),
            "use the portable schema form (no `full_schema`): an `Option<T>` field becomes an \
             optional `T`, not a nullable one"
                .into(),
        ));
    }
    let mut dialects = found.dialects;
    let output = tool
        .output_schema
        .as_ref()
        .map(|o| Value::Object((**o).clone()));
    let mut out_found = SchemaScan::default();
    if let Some(o) = &output {
        scan(o, "", &mut out_found);
        dialects.extend(out_found.dialects.iter().map(|d| format!("output {d}")));
    }
    if !dialects.is_empty() {
        out.push(finding(
            name,
            Severity::Error,
            "schema-dialect",
            format!(
                "`$schema` names a dialect clients may not support ({}); draft-07 and 2020-12 \
                 are the ones MCP clients are known to handle",
                at_most_three(&dialects)
            ),
            "remove the `$schema` keyword or set it to https://json-schema.org/draft/2020-12/schema"
                .into(),
        ));
    }
    for (which, schema) in [("input", Some(&input)), ("output", output.as_ref())] {
        if let Some(schema) = schema {
            if schema.get("type") != Some(&Value::String("object".into())) {
                out.push(finding(
                    name,
                    Severity::Error,
                    "schema-not-object",
                    format!(
                        "the {which} schema's root is not `\"type\": \"object\"`, which MCP \
                         requires of tool {which} schemas"
                    ),
                    format!("make the {which} an object type (a struct)"),
                ));
            }
        }
    }
    if !out_found.refs.is_empty() {
        out.push(finding(
            name,
            Severity::Warning,
            "output-schema-ref",
            format!(
                "the output schema uses `$ref` ({}): clients that display or convert output \
                 schemas without a full JSON Schema resolver cannot follow it",
                at_most_three(&out_found.refs)
            ),
            "use a non-recursive output type, or drop `full_schema`".into(),
        ));
    }
}

// ----------------------------------------------------------------------- tokens

fn token_rules(catalog: &Catalog, options: &LintOptions, out: &mut Vec<Finding>) {
    // What an anonymous client receives, meta-tools included.
    let entries = catalog.list(&Caller::anonymous());
    let mut costs: Vec<(&str, usize)> = entries
        .iter()
        .map(|t| (&*t.name, estimated_tokens(t)))
        .collect();
    let total: usize = costs.iter().map(|c| c.1).sum();
    for &(name, cost) in &costs {
        if cost > options.max_tool_tokens {
            out.push(finding(
                Some(name),
                Severity::Warning,
                "tool-token-cost",
                format!(
                    "its tools/list entry costs about {cost} tokens (estimate: characters of its \
                     JSON / 4; threshold {}), paid on every request that lists tools",
                    options.max_tool_tokens
                ),
                "shorten the schema: fewer nested types, shorter field docs, enums instead of \
                 free-form objects; or split the tool"
                    .into(),
            ));
        }
    }
    costs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let heaviest = costs
        .iter()
        .take(3)
        .map(|(n, c)| format!("`{n}` {c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let count = costs.len();
    out.push(finding(
        None,
        Severity::Info,
        "token-cost",
        format!(
            "tools/list has {count} tool(s) costing about {total} tokens (estimate: characters \
             of each tool's JSON / 4); heaviest: {}",
            if heaviest.is_empty() {
                "none".into()
            } else {
                heaviest
            }
        ),
        "nothing to do; per-tool estimates are in the generated catalog docs".into(),
    ));
    if count > options.max_listed_tools || total > options.max_listed_tokens {
        out.push(finding(
            None,
            Severity::Warning,
            "catalog-too-large",
            format!(
                "{count} tools and about {total} tokens in tools/list (thresholds: {} tools, {} \
                 tokens). Tool selection accuracy degrades past 30-50 tools loaded at once, and \
                 50 tools can use 10-20K tokens (Anthropic, Agent SDK tool search docs); OpenAI's \
                 function-calling guide suggests fewer than 20 functions at a time",
                options.max_listed_tools, options.max_listed_tokens
            ),
            "expose the catalog search-first: list a few core tools plus the `tool_search` / \
             `execute_tool` meta-tools, and mark the rest `hidden`"
                .into(),
        ));
    }
}

// --------------------------------------------------------------------- requests

fn request_rules(catalog: &Catalog, options: &LintOptions, out: &mut Vec<Finding>) {
    if options.requests.is_empty() {
        return;
    }
    for request in &options.requests {
        let expected = catalog.get(&request.expected).or_else(|| {
            catalog
                .tools()
                .iter()
                .find(|t| t.aliases.contains(&request.expected))
                .map(|t| &**t)
        });
        let Some(expected) = expected else {
            out.push(finding(
                None,
                Severity::Error,
                "request-unknown-tool",
                format!(
                    "example request {:?} expects `{}`, which is not a tool or alias of this \
                     catalog",
                    request.query, request.expected
                ),
                "fix the `expected` field, or remove the request".into(),
            ));
            continue;
        };
        // Every tool, hidden ones included: search is how hidden tools are found.
        let depth = options.search_depth.max(options.search_results).max(1);
        let hits = catalog.search_where(&request.query, depth, &|_| true);
        let rank = hits.iter().position(|(t, _)| t.name == expected.name);
        if rank == Some(0) {
            continue;
        }
        let first = hits.first().map(|(t, _)| t.name.as_str());
        let problem = match (rank, first) {
            (_, None) => format!(
                "search for {:?} finds nothing (every score is below the abstention \
                 threshold); `{}` was expected first",
                request.query, expected.name
            ),
            (Some(r), Some(first)) => format!(
                "search for {:?} ranks `{first}` first and `{}` #{}",
                request.query,
                expected.name,
                r + 1
            ),
            (None, Some(first)) => format!(
                "search for {:?} ranks `{first}` first and `{}` not in the top {depth}",
                request.query, expected.name,
            ),
        };
        let query_words = plain_words(&request.query)
            .into_iter()
            .filter(|w| !STOP_WORDS.contains(&w.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        let severity = match rank {
            Some(r) if r < options.search_results => Severity::Info,
            _ => Severity::Warning,
        };
        out.push(finding(
            Some(&expected.name),
            severity,
            "search-misranked",
            problem,
            format!(
                "use the words people use ({query_words}) in `{}`'s description or keywords{}",
                expected.name,
                match first {
                    Some(f) if f != expected.name => {
                        format!(", and say in `{f}`'s description when not to use it")
                    }
                    _ => String::new(),
                }
            ),
        ));
    }
}
