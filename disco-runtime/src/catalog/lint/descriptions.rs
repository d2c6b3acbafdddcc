//! What each tool says of itself: its description, its parameters' descriptions and its
//! annotations.

use super::words::*;
use super::*;

/// Words that say what comes back. A lead verb naming the output (`List ...`, `Count ...`)
/// counts too; `Get`/`Read`/`Find` name the object but not its shape, so they do not.
pub(super) const RETURN_WORDS: &[&str] = &[
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
pub(super) const RETURN_LEAD_VERBS: &[&str] = &["list", "show", "count", "summarize", "summarise"];

/// Words that say when to use the tool, or when to use another one.
pub(super) const WHEN_WORDS: &[&str] = &[
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

pub(super) fn neighbours<'a>(
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

pub(super) fn description_rules(
    tool: &CatalogTool,
    neighbours: &[&str],
    tools: &[&CatalogTool],
    options: &LintOptions,
    out: &mut Vec<Finding>,
) {
    out.extend(short_description(tool, options));
    let ws = plain_words(&tool.description);
    out.extend(no_returns(tool, &ws));
    out.extend(no_when(tool, &ws, neighbours, tools));
}

/// A description too short to choose a tool by.
fn short_description(tool: &CatalogTool, options: &LintOptions) -> Option<Finding> {
    let count = tool
        .description
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count();
    if count >= options.min_words {
        return None;
    }
    let severity = if count < options.min_words_error {
        Severity::Error
    } else {
        Severity::Warning
    };
    Some(finding(
        Some(&tool.name),
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
    ))
}

/// A description (its plain words `ws`) that does not say what the tool returns.
fn no_returns(tool: &CatalogTool, ws: &[String]) -> Option<Finding> {
    let lead = ws.first().map(String::as_str).unwrap_or("");
    let says_returns =
        ws.iter().any(|w| RETURN_WORDS.contains(&w.as_str())) || RETURN_LEAD_VERBS.contains(&lead);
    if says_returns {
        return None;
    }
    Some(finding(
        Some(&tool.name),
        Severity::Warning,
        "description-no-returns",
        "the description does not say what the tool returns (none of: returns, gives, \
         lists, shows, result, ...)"
            .into(),
        "add a sentence such as \"Returns the note with its id\", or \"Returns an empty list \
         when nothing matches\""
            .into(),
    ))
}

/// A tool with `neighbours` whose description (its plain words `ws`) does not say when to
/// use it rather than them.
fn no_when(
    tool: &CatalogTool,
    ws: &[String],
    neighbours: &[&str],
    tools: &[&CatalogTool],
) -> Option<Finding> {
    let first = neighbours.first()?;
    let mentions_other = tools
        .iter()
        .filter(|t| t.name != tool.name)
        .any(|t| tool.description.contains(&t.name));
    let says_when = mentions_other || ws.iter().any(|w| WHEN_WORDS.contains(&w.as_str()));
    if says_when {
        return None;
    }
    let list = neighbours
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    Some(finding(
        Some(&tool.name),
        Severity::Warning,
        "description-no-when",
        format!(
            "the description does not say when to use this tool rather than its \
             neighbour(s) {list} (no use/pick/when/instead/rather, and no other tool named)"
        ),
        format!("add a sentence such as \"Use this when ...; for ... use `{first}` instead\""),
    ))
}

pub(super) fn param_rules(tool: &CatalogTool, out: &mut Vec<Finding>) {
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
pub(super) fn annotation_rules(tool: &CatalogTool, out: &mut Vec<Finding>) {
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
