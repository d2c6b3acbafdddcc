//! The meta-tools that let a model work with a catalog too large to show at once:
//! `tool_search` finds tools by what they do; `execute_tool` calls one found that way (hidden
//! tools included) through the same resolution, repair and authorization path as tools/call.

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

use super::{SearchOptions, MAX_QUERY_STEPS};
use crate::tool::built::MetaKind;
use crate::tool::provider::DynamicTool;

/// The meta-tools' definitions.
pub(crate) fn definitions(options: &SearchOptions) -> Vec<(DynamicTool, MetaKind)> {
    vec![
        (DynamicTool::new(search_tool(options)), MetaKind::Search),
        (DynamicTool::new(execute_tool(options)), MetaKind::Execute),
    ]
}

/// `tool_search`'s tools/list entry.
fn search_tool(options: &SearchOptions) -> Tool {
    let mut search = Tool::new(
        options.search_name.clone(),
        format!(
            "Find the tools for a task among all the tools this server offers, most relevant \
             first, with their input schemas. Use it before calling a tool you do not see \
             listed, then call the tool directly or through `{}`. For a task of several \
             steps, send one query per step in `queries`; to load tools you know by name, \
             `select:name_a,name_b` (as `query` or as a step).",
            options.execute_name
        ),
        object(search_schema(options)),
    );
    search.output_schema = Some(object(search_result_schema()));
    let mut ro = ToolAnnotations::new();
    ro.read_only_hint = Some(true);
    search.annotations = Some(ro);
    search.title = Some("Search tools".into());
    search
}

/// `execute_tool`'s tools/list entry.
fn execute_tool(options: &SearchOptions) -> Tool {
    let mut execute = Tool::new(
        options.execute_name.clone(),
        format!(
            "Call a tool found with `{}` by its name, with its arguments. The result is the \
             tool's own result.",
            options.search_name
        ),
        object(execute_schema(options)),
    );
    execute.title = Some("Execute a tool".into());
    execute
}

/// A schema as rmcp keeps it (each schema below is an object).
fn object(v: Value) -> Arc<Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(Map::new()),
    }
}

/// `tool_search`'s input schema.
fn search_schema(options: &SearchOptions) -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What you want to do, in plain words (e.g. \"convert miles to km\"). An empty query lists tools. `select:name_a,name_b` returns those tools by name."
            },
            "queries": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "maxItems": MAX_QUERY_STEPS,
                "description": "Instead of `query`, for a task of several steps: one query per step (e.g. [\"find the paper\", \"save a summary to notes.md\"]). A step may be `select:name_a,name_b` to load those tools by name: they come first, and the other steps share what is left of `max_results` (possibly nothing). Each result says its step (from 0); `unanswered_steps` lists the steps that brought no tool (none found, or no room left)."
            },
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": options.max_results,
                "default": options.default_results,
                "description": "How many tools to return at most (without it: the default, or one per step of words when there are more, and the tools named by `select:`, up to the most allowed)."
            },
            "compact": {
                "type": "boolean",
                "default": false,
                "description": "Leave out the input schemas (shorter results)."
            }
        },
    })
}

/// `tool_search`'s output schema.
fn search_result_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tools": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "title": {"type": "string"},
                        "description": {"type": "string"},
                        "score": {"type": "number", "description": "How well the tool matches (1 for a tool named by `select:`)."},
                        "step": {"type": "integer", "description": "With `queries`: the step (from 0) this tool answers."},
                        "inputSchema": {"type": "object"}
                    },
                    "required": ["name", "description", "score"]
                }
            },
            "hint": {"type": "string"},
            "unanswered_steps": {
                "type": "array",
                "items": {"type": "integer"},
                "description": "With `queries`: the steps (from 0) no tool matched."
            }
        },
        "required": ["tools"]
    })
}

/// `execute_tool`'s input schema.
fn execute_schema(options: &SearchOptions) -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "description": format!("The tool's name, as `{}` returned it.", options.search_name)
            },
            "arguments": {
                "type": "object",
                "description": "The tool's arguments, following its input schema."
            }
        },
        "required": ["name"]
    })
}
