//! Which tools of an upstream's `tools/list` are served, each entry admitted on its own: one
//! unusable entry is left out, named in the log and in `lint`, and its siblings serve.
//!
//! An upstream's tool names are held to the rules a requested name is (SECURITY.md, section
//! 3): a name holding a control or format character (NUL, an ANSI escape, a line break, a bidi
//! override, a zero-width space), an empty name, or one over [`MAX_TOOL_NAME_CHARS`] is
//! refused, never listed and never called. A schema that alone is unusable (`true`, `false`,
//! `[]`, a string, `null`, missing) does not cost the tool: it is served as declaring no
//! parameters, without argument checks (as a schema that cannot be compiled already is), and
//! the log and `lint` say so.
//!
//! Names that only look alike (a Cyrillic `е` for a Latin `e`, full-width letters) are not
//! refused here: [`same_name_key`] is what the provider and `lint` compare them by.

use std::collections::HashMap;

use disco_runtime::rmcp;
use rmcp::model::{ServerResult, Tool};
use serde_json::{Map, Value};
use unicode_normalization::UnicodeNormalization;

pub use crate::text::{clip, shown};
use crate::wire::UNREADABLE;

pub use crate::text::MAX_TOOL_NAME_CHARS;

/// A tool left out of the catalog, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The name as it may be shown: control, format and other invisible characters escaped
    /// (`\u{202e}`), clipped to [`MAX_TOOL_NAME_CHARS`] characters.
    pub tool: String,
    pub why: String,
}

/// One upstream's tools after admission: those served, what was wrong with the schemas of
/// some of them (they serve without argument checks), and those left out.
#[derive(Clone, Debug, Default)]
pub struct Admitted {
    pub tools: Vec<Tool>,
    /// By upstream tool name: what was made of an unusable schema.
    pub notes: HashMap<String, String>,
    pub refused: Vec<Refusal>,
}

/// Why an upstream's tool name cannot be served, if it cannot.
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("its name is empty".into());
    }
    let chars = name.chars().count();
    if chars > MAX_TOOL_NAME_CHARS {
        return Some(format!(
            "its name is {chars} characters long, over the limit of {MAX_TOOL_NAME_CHARS}"
        ));
    }
    if disco_runtime::resolve::name::unreadable(name) {
        return Some(
            "its name holds a control or format character or a line break (a request holding \
             one is refused as well)"
                .into(),
        );
    }
    None
}

/// What two names are compared by when they must not be told apart by eye: their
/// compatibility folding (NFKC: full-width letters are letters), then their confusable
/// skeleton (Unicode TR39: a Cyrillic `е` is a Latin `e`). Two names with one key read as one.
pub fn same_name_key(name: &str) -> String {
    let folded: String = name.nfkc().collect();
    unicode_security::confusable_detection::skeleton(&folded).collect()
}

/// One page of `tools/list`: its entries as rmcp read them and the next cursor. rmcp reads a
/// page whose every entry is a valid tool as `ListToolsResult`; a page with one malformed
/// entry does not fit that type and comes as the JSON it was (`CustomResult`), read here entry
/// by entry.
pub(crate) fn page(result: ServerResult) -> Result<(Vec<Entry>, Option<String>), String> {
    match result {
        ServerResult::ListToolsResult(list) => Ok((
            list.tools.into_iter().map(Entry::Typed).collect(),
            list.next_cursor,
        )),
        ServerResult::CustomResult(custom) => {
            let Value::Object(mut result) = custom.0 else {
                return Err("its answer to tools/list is not an object".into());
            };
            let cursor = match result.remove("nextCursor") {
                None | Some(Value::Null) => None,
                Some(Value::String(c)) => Some(c),
                Some(_) => return Err("its tools/list `nextCursor` is not a string".into()),
            };
            match result.remove("tools") {
                Some(Value::Array(entries)) => {
                    Ok((entries.into_iter().map(Entry::Raw).collect(), cursor))
                }
                _ => Err("its answer to tools/list has no `tools` array".into()),
            }
        }
        _ => Err("it answered tools/list with something other than a list of tools".into()),
    }
}

/// One entry of a `tools/list` page.
pub(crate) enum Entry {
    /// Read by rmcp as a tool.
    Typed(Tool),
    /// As the upstream wrote it (the page held an entry rmcp could not read).
    Raw(Value),
}

impl Admitted {
    /// Admits one entry (`index`: its place in the whole listing, for an entry without a name).
    pub(crate) fn entry(&mut self, index: usize, entry: Entry) {
        let mut note = None;
        let tool = match entry {
            Entry::Typed(tool) => tool,
            Entry::Raw(value) => match raw(value) {
                Ok((tool, n)) => {
                    note = n;
                    tool
                }
                Err((name, why)) => {
                    let tool = match name {
                        Some(name) => shown(&name),
                        None => format!("(entry {index})"),
                    };
                    self.refused.push(Refusal { tool, why });
                    return;
                }
            },
        };
        if let Some(why) = name_problem(&tool.name) {
            self.refused.push(Refusal {
                tool: shown(&tool.name),
                why,
            });
            return;
        }
        if let Some(why) = tool
            .meta
            .as_ref()
            .and_then(|m| m.get(UNREADABLE))
            .and_then(Value::as_str)
        {
            self.refused.push(Refusal {
                tool: shown(&tool.name),
                why: clip(why, 200),
            });
            return;
        }
        if let Some(note) = note {
            self.notes.insert(tool.name.to_string(), note);
        }
        self.tools.push(tool);
    }

    /// Leaves out every tool whose name is listed more than once: which of its definitions
    /// the upstream means cannot be known, and a call by the name could reach either.
    pub(crate) fn drop_duplicates(&mut self) {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for t in &self.tools {
            *count.entry(&t.name).or_default() += 1;
        }
        let twice: Vec<(String, usize)> = count
            .into_iter()
            .filter(|&(_, n)| n > 1)
            .map(|(name, n)| (name.to_string(), n))
            .collect();
        if twice.is_empty() {
            return;
        }
        self.tools
            .retain(|t| !twice.iter().any(|(name, _)| *name == t.name));
        for (name, n) in twice {
            self.notes.remove(&name);
            self.refused.push(Refusal {
                tool: shown(&name),
                why: format!(
                    "it is listed {n} times: which definition is meant cannot be known, so \
                     none is served"
                ),
            });
        }
        self.refused.sort_by(|a, b| a.tool.cmp(&b.tool));
    }
}

/// A tool from an entry rmcp could not read, with a note when its schema had to be replaced;
/// or its name (when it has one) and why it is left out.
fn raw(value: Value) -> Result<(Tool, Option<String>), (Option<String>, String)> {
    let Value::Object(mut entry) = value else {
        return Err((
            None,
            format!("the entry is {}, not a tool object", kind(&value)),
        ));
    };
    let name = match entry.get("name") {
        Some(Value::String(name)) => name.clone(),
        Some(other) => return Err((None, format!("its `name` is {}", kind(other)))),
        None => return Err((None, "the entry has no `name`".into())),
    };
    let refuse = |why: String| Err((Some(name.clone()), why));
    // A schema that is no object is the schema's problem alone: the tool serves as one that
    // declares no parameters (the catalog answers keys it does not know with the tool's
    // parameters, none), and the upstream checks what it gets.
    let mut note = None;
    match entry.get("inputSchema") {
        Some(Value::Object(_)) => {}
        other => {
            note = Some(format!(
                "its inputSchema is {}, not an object: served as declaring no parameters, \
                 without argument checks",
                other.map_or("missing", kind)
            ));
            let mut object = Map::new();
            object.insert("type".into(), Value::String("object".into()));
            entry.insert("inputSchema".into(), Value::Object(object));
        }
    }
    match entry.get("outputSchema") {
        None | Some(Value::Object(_)) => {}
        Some(other) => {
            let what = format!(
                "its outputSchema is {}, not an object: structured output is not checked",
                kind(other)
            );
            note = Some(match note {
                Some(n) => format!("{n}; {what}"),
                None => what,
            });
            entry.remove("outputSchema");
        }
    }
    match serde_json::from_value::<Tool>(Value::Object(entry)) {
        Ok(tool) => Ok((tool, note)),
        Err(e) => refuse(format!(
            "its entry is not a valid tool: {}",
            clip(&e.to_string(), 200)
        )),
    }
}

/// What a JSON value is, for a message (never the value: it may be huge).
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(true) => "`true`",
        Value::Bool(false) => "`false`",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
