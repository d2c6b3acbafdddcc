//! The learned candidates, ready to paste: the gateway's `disco.aliases` / `disco.keywords`
//! entries, or `#[mcp_tool(aliases(...), keywords(...))]` lines.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::learner::{Candidate, Lesson, Status};

/// The ready (and, with `approved_too`, the waiting-for-approval) candidates as the gateway's
/// configuration: `{"aliases": {tool: [names]}, "keywords": {tool: [words]}}`, the two
/// objects of the `disco` key.
pub fn gateway_entries(candidates: &[Candidate], approved_too: bool) -> Value {
    let (aliases, keywords) = by_tool(candidates, approved_too);
    json!({"aliases": aliases, "keywords": keywords})
}

/// The same candidates as one `#[mcp_tool(...)]` line per tool.
pub fn attribute_lines(candidates: &[Candidate], approved_too: bool) -> Vec<String> {
    let (aliases, keywords) = by_tool(candidates, approved_too);
    let mut tools: Vec<&String> = aliases.keys().chain(keywords.keys()).collect();
    tools.sort();
    tools.dedup();
    let list = |v: Option<&Vec<String>>| {
        v.map(|v| {
            v.iter()
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    tools
        .into_iter()
        .map(|tool| {
            let mut parts = Vec::new();
            if let Some(a) = list(aliases.get(tool)) {
                parts.push(format!("aliases({a})"));
            }
            if let Some(k) = list(keywords.get(tool)) {
                parts.push(format!("keywords({k})"));
            }
            format!("// {tool}\n#[mcp_tool({})]", parts.join(", "))
        })
        .collect()
}

type ByTool = BTreeMap<String, Vec<String>>;

fn by_tool(candidates: &[Candidate], approved_too: bool) -> (ByTool, ByTool) {
    let mut aliases = ByTool::new();
    let mut keywords = ByTool::new();
    for c in candidates {
        let usable = match c.status {
            Status::Ready => true,
            Status::NeedsApproval => approved_too,
            _ => false,
        };
        if !usable {
            continue;
        }
        match &c.lesson {
            Lesson::Alias { name, tool } => {
                aliases.entry(tool.clone()).or_default().push(name.clone())
            }
            Lesson::Keyword { word, tool } => {
                keywords.entry(tool.clone()).or_default().push(word.clone())
            }
        }
    }
    (aliases, keywords)
}

/// A human-readable table of every candidate with its evidence.
pub fn table(candidates: &[Candidate]) -> String {
    let mut out = String::new();
    for c in candidates {
        let (what, status) = (
            match &c.lesson {
                Lesson::Alias { name, tool } => format!("alias   {name} -> {tool}"),
                Lesson::Keyword { word, tool } => format!("keyword {word} -> {tool}"),
            },
            match &c.status {
                Status::Ready => "ready".to_string(),
                Status::NeedsApproval => "needs approval (the tool is not read-only)".into(),
                Status::TooFew => "too few callers or sessions".into(),
                Status::Refused(why) => format!("refused: {why}"),
            },
        );
        out.push_str(&format!(
            "{what}  [{} callers, {} sessions, {} events]  {status}\n",
            c.callers, c.sessions, c.events
        ));
    }
    out
}
