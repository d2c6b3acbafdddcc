//! The catalog as a model sees it, written down for people: Markdown with one section per tool,
//! and the exact JSON a client receives from tools/list.
//!
//! Both outputs are deterministic (the catalog is sorted by name and JSON objects are written
//! with sorted keys), so they can be checked in and kept fresh by CI with [`write()`] in check
//! mode: a model reads these descriptions and schemas, and a reviewer should see every change
//! to them in a diff.
//!
//! ```no_run
//! use disco_runtime::catalog::docs;
//! let catalog = disco_runtime::Catalog::from_inventory().unwrap();
//! // `true`: compare with the files in docs/tools and fail, naming the stale ones.
//! docs::write(&catalog, "docs/tools", true).unwrap();
//! ```

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use serde_json::Value;

use rmcp::model::Tool;

use super::{Catalog, CatalogTool};
use crate::tool::Caller;

/// The Markdown file [`write()`] produces.
pub const MARKDOWN_FILE: &str = "CATALOG.md";
/// The JSON file [`write()`] produces (the tools/list result).
pub const JSON_FILE: &str = "tools.json";

/// What [`write()`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Files created or rewritten (always empty in check mode).
    pub written: Vec<PathBuf>,
    /// Files whose content was already up to date.
    pub unchanged: Vec<PathBuf>,
}

/// Why [`write()`] failed.
#[derive(Debug)]
pub enum DocsError {
    /// Check mode: these files are missing or differ from what the catalog generates.
    Stale {
        /// The stale files, under the directory given to [`write()`].
        files: Vec<PathBuf>,
    },
    /// A file could not be read or written.
    Io {
        /// The file (or the directory, when it could not be created).
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

impl fmt::Display for DocsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocsError::Stale { files } => {
                write!(
                    f,
                    "the catalog docs are stale (regenerate them and commit the result):"
                )?;
                for file in files {
                    write!(f, "\n- {}", file.display())?;
                }
                Ok(())
            }
            DocsError::Io { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for DocsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DocsError::Io { source, .. } => Some(source),
            DocsError::Stale { .. } => None,
        }
    }
}

/// Writes [`MARKDOWN_FILE`] and [`JSON_FILE`] into `dir` (created if needed), leaving files
/// that are already up to date untouched. With `check`, writes nothing and fails with
/// [`DocsError::Stale`] naming every file that is missing or differs. Line endings are ignored
/// in the comparison (a checkout with `core.autocrlf` is not stale).
pub fn write(catalog: &Catalog, dir: impl AsRef<Path>, check: bool) -> Result<Report, DocsError> {
    let dir = dir.as_ref();
    let outputs = [
        (dir.join(MARKDOWN_FILE), markdown(catalog)),
        (dir.join(JSON_FILE), tools_list_json(catalog)),
    ];
    let mut report = Report::default();
    let mut stale = Vec::new();
    for (path, content) in outputs {
        let current = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(DocsError::Io { path, source }),
        };
        if current.is_some_and(|c| c.replace("\r\n", "\n") == content) {
            report.unchanged.push(path);
        } else if check {
            stale.push(path);
        } else {
            std::fs::create_dir_all(dir).map_err(|source| DocsError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
            std::fs::write(&path, content).map_err(|source| DocsError::Io {
                path: path.clone(),
                source,
            })?;
            report.written.push(path);
        }
    }
    if stale.is_empty() {
        Ok(report)
    } else {
        Err(DocsError::Stale { files: stale })
    }
}

/// The result of tools/list as an anonymous client receives it, pretty-printed:
/// `{"tools": [...]}` with the search meta-tools when search is on, then every tool that is
/// shown (not hidden, or pinned under search-first exposure), in catalog (name) order. The
/// server may add `nextCursor` when it pages the list, and `resultType` for clients of the
/// 2026 protocol; the tool entries are exactly these.
pub fn tools_list_json(catalog: &Catalog) -> String {
    let tools = catalog.list(&Caller::anonymous());
    let mut text = serde_json::to_string_pretty(&serde_json::json!({ "tools": tools }))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}

/// The estimated number of model tokens a tool's tools/list entry costs: the characters of
/// its compact JSON divided by 4 (rounded up). Tokenizers differ; for English text and JSON,
/// about 4 characters per token is the usual rule of thumb (OpenAI and Anthropic both quote
/// it). It is an estimate for comparing tools and catalogs, not a bill.
pub fn estimated_tokens(tool: &Tool) -> usize {
    serde_json::to_string(tool)
        .map(|s| s.chars().count().div_ceil(4))
        .unwrap_or(0)
}

/// The catalog as Markdown: an index, then one section per tool that is not hidden, then the
/// hidden tools in a section of their own (they are not in tools/list; callers reach them
/// through search).
pub fn markdown(catalog: &Catalog) -> String {
    let all: Vec<&CatalogTool> = catalog.tools().iter().map(|t| &**t).collect();
    let listed: Vec<&CatalogTool> = all.iter().copied().filter(|t| !t.hidden).collect();
    let hidden: Vec<&CatalogTool> = all.iter().copied().filter(|t| t.hidden).collect();
    let entries = catalog.list(&Caller::anonymous());
    let total_tokens: usize = entries.iter().map(estimated_tokens).sum();
    let meta: Vec<String> = entries
        .iter()
        .filter(|e| !all.iter().any(|t| t.name == e.name))
        .map(|e| format!("`{}`", e.name))
        .collect();

    let mut out = String::new();
    out.push_str("# Tool catalog\n\n");
    out.push_str(
        "<!-- Generated by disco_runtime::catalog::docs from the tools' declarations. \
         Do not edit by hand: regenerate. -->\n\n",
    );
    let _ = writeln!(
        out,
        "{} tool(s), {} of them hidden. tools/list has {} entries costing about {} tokens \
         (estimate: characters of the JSON / 4).\n",
        all.len(),
        hidden.len(),
        entries.len(),
        total_tokens
    );
    if !meta.is_empty() {
        let _ = writeln!(
            out,
            "tools/list also carries the search meta-tools {} (see `{JSON_FILE}`).\n",
            meta.join(", ")
        );
    }
    out.push_str("| Tool | Title | Summary |\n|---|---|---|\n");
    for tool in listed.iter().chain(hidden.iter()) {
        let _ = writeln!(
            out,
            "| [`{name}`](#{anchor}){hidden} | {title} | {summary} |",
            name = tool.name,
            anchor = anchor(&heading(tool)),
            hidden = if tool.hidden { " (hidden)" } else { "" },
            title = cell(tool.title.as_deref().unwrap_or("")),
            summary = cell(first_sentence(&tool.description)),
        );
    }
    out.push('\n');

    if !listed.is_empty() {
        out.push_str("## Tools\n\n");
        for tool in &listed {
            tool_section(&mut out, tool);
        }
    }
    if !hidden.is_empty() {
        out.push_str("## Hidden tools\n\n");
        out.push_str(
            "Hidden: not in tools/list. Callers find them through the search meta-tool and \
             call them through `execute_tool`; visibility is re-checked on every call.\n\n",
        );
        for tool in &hidden {
            tool_section(&mut out, tool);
        }
    }
    // Exactly one newline at the end.
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

fn tool_section(out: &mut String, tool: &CatalogTool) {
    let _ = writeln!(out, "### {}\n", heading(tool));
    if let Some(title) = &tool.title {
        let _ = writeln!(out, "**Title:** {title}\n");
    }
    out.push_str(tool.description.trim_end());
    out.push_str("\n\n");

    let list = |items: &[String]| {
        if items.is_empty() {
            "none".to_string()
        } else {
            items
                .iter()
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let _ = writeln!(out, "- **Aliases:** {}", list(&tool.aliases));
    let _ = writeln!(out, "- **Keywords:** {}", list(&tool.keywords));
    let group = match &tool.group {
        Some(group) => format!("`{group}`"),
        None => "none".to_string(),
    };
    let _ = writeln!(out, "- **Group:** {group}");
    let _ = writeln!(out, "- **Annotations:** {}", annotations(tool));
    let _ = writeln!(
        out,
        "- **Estimated tokens in tools/list:** {}\n",
        estimated_tokens(&tool.entry())
    );

    out.push_str("#### Parameters\n\n");
    if tool.params.is_empty() {
        out.push_str("None.\n\n");
    } else {
        out.push_str(
            "| Name | Type | Required | Default | Aliases | Description |\n\
             |---|---|---|---|---|---|\n",
        );
        for p in &tool.params {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} | {} |",
                p.name,
                cell(&crate::tool::schema::type_label(p.schema())),
                if p.required { "yes" } else { "no" },
                p.default
                    .as_ref()
                    .map(|d| format!("`{}`", cell(&compact(d))))
                    .unwrap_or_else(|| "—".into()),
                if p.aliases.is_empty() {
                    "—".to_string()
                } else {
                    p.aliases
                        .iter()
                        .map(|a| format!("`{a}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
                cell(p.description.as_deref().unwrap_or("*(none)*")),
            );
        }
        out.push('\n');
    }

    out.push_str("#### Input schema\n\n");
    json_block(out, &Value::Object((*tool.input_schema).clone()));
    out.push_str("#### Output schema\n\n");
    match &tool.output_schema {
        Some(schema) => json_block(out, &Value::Object((**schema).clone())),
        None => out.push_str("None: the result is unstructured content (text).\n\n"),
    }
}

/// The MCP hints as sent, and what they mean for name correction.
fn annotations(tool: &CatalogTool) -> String {
    let a = tool.annotations;
    let hints: Vec<String> = [
        ("readOnlyHint", a.read_only),
        ("destructiveHint", a.destructive),
        ("idempotentHint", a.idempotent),
        ("openWorldHint", a.open_world),
    ]
    .iter()
    .filter_map(|(k, v)| v.map(|v| format!("`{k}: {v}`")))
    .collect();
    let stated = if hints.is_empty() {
        "none stated (MCP defaults: may modify, destructive, not idempotent, open world)"
            .to_string()
    } else {
        hints.join(", ")
    };
    let destructive = if tool.is_destructive() {
        "destructive: name correction never guesses this tool"
    } else {
        "not destructive"
    };
    format!("{stated}; {destructive}")
}

fn json_block(out: &mut String, value: &Value) {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let _ = write!(out, "```json\n{text}\n```\n\n");
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Text safe inside a Markdown table cell: no pipes, no line breaks.
fn cell(text: &str) -> String {
    text.trim()
        .replace('|', "\\|")
        .replace("\r\n", "\n")
        .replace("\n\n", "<br>")
        .replace('\n', " ")
}

fn heading(tool: &CatalogTool) -> String {
    if tool.hidden {
        format!("`{}` (hidden)", tool.name)
    } else {
        format!("`{}`", tool.name)
    }
}

/// GitHub's anchor for a heading: lower case, spaces to `-`, other punctuation than `-` and
/// `_` dropped.
fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .flat_map(char::to_lowercase)
        .collect()
}

fn first_sentence(description: &str) -> &str {
    let para = description.trim().split("\n\n").next().unwrap_or("");
    match para.find(". ") {
        Some(i) => &para[..=i],
        None => para,
    }
}
