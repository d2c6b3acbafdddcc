//! Doc comments -> the text a model reads.
//!
//! A model sees the description as plain text, usually rendered as Markdown. The rules:
//! - paragraphs, lists, code spans and fenced code blocks are kept;
//! - lines that rustdoc would join into one paragraph are joined (fewer tokens, same meaning);
//! - the rustdoc `# Arguments` section (`* `query` - text`) becomes parameter descriptions and
//!   leaves the tool description;
//! - `# Examples` sections are dropped: they hold Rust doctests, which say nothing to a model
//!   calling the tool over JSON.

use proc_macro2::Span;

/// The tool description and the parameter texts found in the doc comments.
#[derive(Debug, Default, PartialEq)]
pub struct Docs {
    pub description: String,
    /// `(parameter name, description, span of the doc line that documents it)`
    pub params: Vec<DocParam>,
}

#[derive(Debug, PartialEq)]
pub struct DocParam {
    pub name: String,
    pub text: String,
    pub span: SpanEq,
}

/// A span that compares equal to any other, so `Docs` can be compared in tests.
#[derive(Debug, Clone, Copy)]
pub struct SpanEq(pub Span);

impl PartialEq for SpanEq {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Collects the `#[doc = "..."]` attributes of an item, one entry per line, with their spans.
pub fn doc_lines(attrs: &[syn::Attribute]) -> Vec<(String, Span)> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                // A `/** ... */` block arrives as one attribute with several lines.
                for line in s.value().lines() {
                    lines.push((line.to_string(), s.span()));
                }
            }
        }
    }
    lines
}

const ARGUMENT_HEADINGS: &[&str] = &["arguments", "parameters", "args", "params"];
const DROPPED_HEADINGS: &[&str] = &["examples", "example"];

enum Section {
    Text,
    Arguments,
    Dropped,
}

/// Splits doc lines into the tool description and the parameter texts.
pub fn parse(lines: &[(String, Span)]) -> Docs {
    let indent = lines
        .iter()
        .filter(|(l, _)| !l.trim().is_empty())
        .map(|(l, _)| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut kept: Vec<&str> = Vec::new();
    let mut params: Vec<DocParam> = Vec::new();
    let mut section = Section::Text;
    let mut section_level = 0;
    let mut in_fence = false;

    for (raw, span) in lines {
        let line = raw.get(indent..).unwrap_or_else(|| raw.trim_start());
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            if matches!(section, Section::Text) {
                kept.push(line);
            }
            continue;
        }
        if !in_fence {
            if let Some((level, title)) = heading(trimmed) {
                let title = title.to_ascii_lowercase();
                if !matches!(section, Section::Text) && level > section_level {
                    // A sub-heading inside a section belongs to it.
                } else if ARGUMENT_HEADINGS.contains(&title.as_str()) {
                    section = Section::Arguments;
                    section_level = level;
                    continue;
                } else if DROPPED_HEADINGS.contains(&title.as_str()) {
                    section = Section::Dropped;
                    section_level = level;
                    continue;
                } else {
                    section = Section::Text;
                }
            }
        }
        match section {
            Section::Text => kept.push(line),
            Section::Dropped => {}
            Section::Arguments => {
                if let Some((name, text)) = argument_item(trimmed) {
                    params.push(DocParam {
                        name,
                        text,
                        span: SpanEq(*span),
                    });
                } else if !trimmed.is_empty() {
                    match params.last_mut() {
                        // A continuation line of the item above.
                        Some(last) => {
                            if !last.text.is_empty() {
                                last.text.push(' ');
                            }
                            last.text.push_str(trimmed);
                        }
                        // Prose before the first item stays in the description.
                        None => kept.push(line),
                    }
                }
            }
        }
    }
    Docs {
        description: reflow(&kept),
        params,
    }
}

/// `## Title` -> `(2, "Title")`.
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|b| *b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &line[level..];
    if !rest.starts_with(' ') {
        return None;
    }
    Some((level, rest.trim()))
}

/// `* `query` - what to look for` -> `("query", "what to look for")`.
/// Accepts `*`, `-` or `+` bullets, the name with or without backticks, and `-`, `:` or `—`.
fn argument_item(line: &str) -> Option<(String, String)> {
    let rest = line
        .strip_prefix("* ")
        .or_else(|| line.strip_prefix("- "))
        .or_else(|| line.strip_prefix("+ "))?
        .trim_start();
    let (name, after) = if let Some(inner) = rest.strip_prefix('`') {
        let end = inner.find('`')?;
        (&inner[..end], &inner[end + 1..])
    } else {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (&rest[..end], &rest[end..])
    };
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let after = after.trim_start();
    let text = if let Some(t) = after.strip_prefix("--") {
        t
    } else if let Some(t) = after.strip_prefix('-') {
        t
    } else if let Some(t) = after.strip_prefix(':') {
        t
    } else if let Some(t) = after.strip_prefix('—') {
        t
    } else if after.is_empty() {
        ""
    } else {
        return None;
    };
    Some((name.to_string(), text.trim().to_string()))
}

/// Joins soft-wrapped lines into paragraphs the way rustdoc renders them, keeping blank-line
/// paragraph breaks, list items and headings on their own lines and code blocks verbatim.
pub fn reflow(lines: &[&str]) -> String {
    let mut out = String::new();
    let mut in_fence = false;
    // Whether the previous line may be continued by a soft-wrapped line.
    let mut open = false;
    let mut pending_blank = false;
    for line in lines {
        let trimmed = line.trim();
        let is_fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
        if in_fence || is_fence {
            if pending_blank && !out.is_empty() {
                out.push_str("\n\n");
            } else if !out.is_empty() {
                out.push('\n');
            }
            pending_blank = false;
            out.push_str(line.trim_end());
            if is_fence {
                in_fence = !in_fence;
            }
            open = false;
            continue;
        }
        if trimmed.is_empty() {
            pending_blank = true;
            open = false;
            continue;
        }
        let starts_block = heading(trimmed).is_some()
            || list_marker(trimmed)
            || trimmed.starts_with('|')
            || trimmed.starts_with('>');
        if out.is_empty() {
            // first line
        } else if pending_blank {
            out.push_str("\n\n");
        } else if open && !starts_block {
            out.push(' ');
        } else {
            out.push('\n');
            // keep a list item's indentation so nested lists survive
            let lead = line.len() - line.trim_start().len();
            if starts_block && lead > 0 {
                out.push_str(&line[..lead]);
            }
        }
        pending_blank = false;
        out.push_str(trimmed);
        open = heading(trimmed).is_none() && !trimmed.starts_with('|');
    }
    out.trim().to_string()
}

fn list_marker(line: &str) -> bool {
    if line.starts_with("- ") || line.starts_with("* ") || line.starts_with("+ ") {
        return true;
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && (line[digits..].starts_with(". ") || line[digits..].starts_with(") "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(text: &str) -> Docs {
        let lines: Vec<(String, Span)> = text
            .lines()
            .map(|l| (format!(" {l}"), Span::call_site()))
            .collect();
        parse(&lines)
    }

    #[test]
    fn joins_soft_wrapped_lines_and_keeps_paragraphs() {
        let d = docs("Search my knowledge base\nby meaning.\n\nUse this when the user asks.");
        assert_eq!(
            d.description,
            "Search my knowledge base by meaning.\n\nUse this when the user asks."
        );
    }

    #[test]
    fn keeps_lists_code_spans_and_code_blocks() {
        let d = docs(
            "Converts units.\n\nSupported:\n- `km` to `mi`\n- `kg` to\n  `lb`\n\n```json\n{\"a\": 1}\n```\nAfter.",
        );
        assert_eq!(
            d.description,
            "Converts units.\n\nSupported:\n- `km` to `mi`\n- `kg` to `lb`\n\n```json\n{\"a\": 1}\n```\nAfter."
        );
    }

    #[test]
    fn arguments_section_becomes_parameter_texts() {
        let d = docs(
            "Search.\n\n# Arguments\n* `query` - what to look for,\n  in the user's words\n* `limit`: how many\n- max_results — cap\n\n# Returns\nThe best matches.",
        );
        assert_eq!(d.description, "Search.\n\n# Returns\nThe best matches.");
        let params: Vec<(&str, &str)> = d
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.text.as_str()))
            .collect();
        assert_eq!(
            params,
            vec![
                ("query", "what to look for, in the user's words"),
                ("limit", "how many"),
                ("max_results", "cap"),
            ]
        );
    }

    #[test]
    fn examples_are_dropped_but_later_sections_kept() {
        let d = docs("Adds.\n\n# Examples\n```\n# use x;\nassert_eq!(add(1, 2), 3);\n```\n\n# Errors\nOverflow.");
        assert_eq!(d.description, "Adds.\n\n# Errors\nOverflow.");
    }

    #[test]
    fn heading_inside_code_block_is_not_a_section() {
        let d = docs("Runs a script.\n\n```sh\n# Arguments\necho hi\n```");
        assert_eq!(
            d.description,
            "Runs a script.\n\n```sh\n# Arguments\necho hi\n```"
        );
        assert!(d.params.is_empty());
    }

    #[test]
    fn no_docs_is_empty() {
        assert_eq!(docs("").description, "");
        assert_eq!(parse(&[]).description, "");
    }

    #[test]
    fn numbered_lists_and_nested_items() {
        let d = docs("Steps:\n1. open\n2. read\n   - slowly\n3. close");
        assert_eq!(
            d.description,
            "Steps:\n1. open\n2. read\n   - slowly\n3. close"
        );
    }

    #[test]
    fn argument_items_reject_prose() {
        assert_eq!(argument_item("* not an item here"), None);
        assert_eq!(argument_item("plain"), None);
        assert_eq!(
            argument_item("* `x` -"),
            Some(("x".to_string(), String::new()))
        );
    }
}
