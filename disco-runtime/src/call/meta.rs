//! The meta-tools at call time: `tool_search` runs a search for the caller, `execute_tool` runs
//! the named tool through the same pipeline as tools/call (without the meta-tools themselves).
//! Their definitions are made by `search::meta`.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{json, Map, Value};

use crate::catalog::stats::Event;
use crate::catalog::{CatalogTool, View};
use crate::resolve::args;
use crate::tool::built::{MetaKind, ToolHandler};
use crate::tool::result::error_result;
use crate::tool::Context;

pub(super) async fn run_meta(
    view: &View<'_>,
    meta_tool: &CatalogTool,
    arguments: Map<String, Value>,
    ctx: &Context,
) -> CallToolResult {
    let catalog = view.catalog();
    let prepared = match args::prepare(meta_tool, arguments, catalog.config.repair) {
        Ok(p) => p,
        Err(message) => return error_result(message),
    };
    let ToolHandler::Meta(kind) = meta_tool.handler else {
        return error_result("internal error: not a meta-tool".into());
    };
    match kind {
        MetaKind::Search => {
            catalog.config.stats.count(Event::Search);
            let result = run_search(view, &prepared.arguments);
            if result
                .structured_content
                .as_ref()
                .and_then(|s| s.get("tools"))
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                catalog.config.stats.count(Event::SearchEmpty);
            }
            result
        }
        MetaKind::Execute => {
            let name = prepared
                .arguments
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let inner = prepared.arguments.get("arguments").cloned();
            // The same path as tools/call, without recursion into the meta-tools.
            match Box::pin(super::call(view, &name, inner, ctx, false)).await {
                Ok(result) => result,
                Err(err) => error_result(err.to_string()),
            }
        }
    }
}

/// Runs `tool_search` with validated arguments.
fn run_search(view: &View<'_>, args: &Map<String, Value>) -> CallToolResult {
    let options = view.catalog().search_options();
    let query = args
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let k = args
        .get("max_results")
        .and_then(Value::as_u64)
        .map_or(options.default_results, |k| k as usize)
        .clamp(1, options.max_results);
    let compact = args
        .get("compact")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let hits = view.search(query, k);
    let tools: Vec<Value> = hits
        .iter()
        .map(|(tool, score)| {
            let mut entry = Map::new();
            entry.insert("name".into(), Value::String(tool.name.clone()));
            if let Some(title) = &tool.title {
                entry.insert("title".into(), Value::String(title.clone()));
            }
            entry.insert(
                "description".into(),
                Value::String(tool.description.clone()),
            );
            // Rounded in f64: an f32 rounded and then widened prints as 0.6290000081062317.
            let rounded = (f64::from(*score) * 1000.0).round() / 1000.0;
            entry.insert("score".into(), json!(rounded));
            if !compact {
                entry.insert(
                    "inputSchema".into(),
                    Value::Object((*tool.input_schema).clone()),
                );
            }
            Value::Object(entry)
        })
        .collect();
    let mut structured = Map::new();
    if tools.is_empty() {
        let hint = "No tool matches this query well. Describe the task in other words (the \
                    action and the object, e.g. \"send email\", \"list files\"), or search with \
                    an empty query to list tools.";
        structured.insert("hint".into(), Value::String(hint.into()));
    }
    structured.insert("tools".into(), Value::Array(tools));
    // Many clients show the model only the text: it carries the same JSON, schemas included.
    let text = Value::Object(structured.clone()).to_string();
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(Value::Object(structured));
    result
}
