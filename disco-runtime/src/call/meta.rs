//! The meta-tools at call time: `tool_search` runs a search for the caller, `execute_tool` runs
//! the named tool through the same pipeline as tools/call (without the meta-tools themselves).
//! Their definitions are made by `search::meta`.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{json, Map, Value};

use crate::catalog::discovery::MAX_EVENT_NAMES;
use crate::catalog::stats::Event;
use crate::catalog::{CatalogTool, Discovery, View};
use crate::resolve::args;
use crate::search::index::EmbeddedQueries;
use crate::search::steps::{Step, StepRoom};
use crate::search::MAX_QUERY_STEPS;
use crate::tool::built::MetaKind;
use crate::tool::result::error_result;
use crate::tool::Context;
use crate::util::json_kind;

pub(super) async fn run_meta(
    view: &View<'_>,
    meta_tool: &CatalogTool<MetaKind>,
    arguments: Map<String, Value>,
    ctx: &Context,
) -> CallToolResult {
    let catalog = view.catalog();
    let prepared = match args::prepare(meta_tool, arguments, catalog.config.repair) {
        Ok(p) => p,
        Err(message) => return error_result(message),
    };
    match meta_tool.handler {
        MetaKind::Search => {
            catalog.config.stats.count(Event::Search);
            let embedded = embed_queries(view, &prepared.arguments).await;
            let result = run_search(view, &prepared.arguments, embedded.as_ref(), ctx);
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

/// The vectors of a `tool_search` call's queries, made on tokio's blocking threads: a
/// transformer takes milliseconds of CPU per query, which would hold up every other task of
/// a runtime worker. At most [`queries_at_once`](crate::search::semantic::queries_at_once)
/// embeddings of a model run at once; a call beyond them waits for its turn as a task, not
/// on a thread. When no model ranks now, none: the search ranks by keywords alone even if
/// the vectors become ready before it runs (it would embed on this worker otherwise).
/// `None` (each search embeds its own query, where it runs) when every query of the call
/// loads tools by name or there is no tokio runtime to hand the work to.
#[cfg(feature = "semantic")]
async fn embed_queries(view: &View<'_>, args: &Map<String, Value>) -> Option<EmbeddedQueries> {
    // The steps that load tools by name rank nothing: only the others are embedded.
    let queries: Vec<String> = match SearchRequest::read(args).ok()? {
        SearchRequest::Query(q) => vec![q],
        SearchRequest::Steps(steps) => steps.into_iter().take(MAX_QUERY_STEPS).collect(),
    }
    .into_iter()
    .filter(|q| !is_select(q))
    .collect();
    if queries.is_empty() {
        return None;
    }
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let Some(model) = view.query_model() else {
        return Some(EmbeddedQueries::default());
    };
    let turn = model.query_turn().await;
    match runtime
        .spawn_blocking(move || {
            let _turn = turn;
            EmbeddedQueries::embed(&model, &queries)
        })
        .await
    {
        Ok(embedded) => Some(embedded),
        Err(e) => {
            // The encoder panicked: this search ranks by keywords alone.
            tracing::error!(error = %e, "embedding a query failed; ranked by keywords alone");
            Some(EmbeddedQueries::default())
        }
    }
}

#[cfg(all(test, feature = "semantic"))]
mod tests_race;

/// Without the feature `semantic`, nothing is embedded.
#[cfg(not(feature = "semantic"))]
async fn embed_queries(_: &View<'_>, _: &Map<String, Value>) -> Option<EmbeddedQueries> {
    None
}

/// Runs `tool_search` with validated arguments (`embedded`: its queries' vectors, if made).
fn run_search(
    view: &View<'_>,
    args: &Map<String, Value>,
    embedded: Option<&EmbeddedQueries>,
    ctx: &Context,
) -> CallToolResult {
    let options = view.catalog().search_options();
    let k = args
        .get("max_results")
        .and_then(Value::as_u64)
        .map_or(options.default_results, |k| k as usize)
        .clamp(1, options.max_results);
    let compact = args
        .get("compact")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let request = match SearchRequest::read(args) {
        Ok(r) => r,
        Err(message) => return error_result(message),
    };
    let mut structured = Map::new();
    let given = args.contains_key("max_results").then_some(k);
    let found: Vec<(Arc<CatalogTool>, f32, Option<usize>)> = match &request {
        SearchRequest::Query(query) => match Step::of(query) {
            // All the names asked for, unless the caller said how many.
            Step::Names(names) => view
                .select(&names, given.unwrap_or(options.max_results))
                .into_iter()
                .map(|t| (t, 1.0, None))
                .collect(),
            Step::Words(query) => view
                .search_embedded(query, k, embedded)
                .into_iter()
                .map(|(t, s)| (t, s, None))
                .collect(),
        },
        SearchRequest::Steps(steps) => {
            let steps: Vec<Step<'_>> = steps.iter().map(|s| Step::of(s)).collect();
            let room = StepRoom {
                given,
                default: k,
                most: options.max_results,
            };
            let found = view.by_steps(&steps, room, embedded);
            if !found.unanswered.is_empty() {
                structured.insert("unanswered_steps".into(), json!(found.unanswered));
            }
            found
                .tools
                .into_iter()
                .map(|(t, s, step)| (t, s, Some(step)))
                .collect()
        }
    };
    record_searches(view, ctx, &request, &found);
    let tools: Vec<Value> = found
        .iter()
        .map(|(tool, score, step)| {
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
            if let Some(step) = step {
                entry.insert("step".into(), json!(step));
            }
            if !compact {
                entry.insert(
                    "inputSchema".into(),
                    Value::Object((*tool.input_schema).clone()),
                );
            }
            Value::Object(entry)
        })
        .collect();
    if tools.is_empty() {
        let names_only = match &request {
            SearchRequest::Query(q) => is_select(q),
            SearchRequest::Steps(steps) => steps.iter().all(|s| is_select(s)),
        };
        let hint = if names_only {
            "No tool has these names, nor a name they safely correct to \
             (`select:read_file,write_file`); search with words to find a tool by what it \
             does."
        } else {
            "No tool matches this query well. Describe the task in other words (the action \
             and the object, e.g. \"send email\", \"list files\"), or search with an empty \
             query to list tools."
        };
        structured.insert("hint".into(), Value::String(hint.into()));
    }
    structured.insert("tools".into(), Value::Array(tools));
    // Many clients show the model only the text: it carries the same JSON, schemas included.
    let text = Value::Object(structured.clone()).to_string();
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(Value::Object(structured));
    result
}

/// The discovery events of a search: each query that searched by words, with the tools shown
/// for it, best first (steps that load tools by name show what was asked for and prove
/// nothing).
fn record_searches(
    view: &View<'_>,
    ctx: &Context,
    request: &SearchRequest,
    found: &[(Arc<CatalogTool>, f32, Option<usize>)],
) {
    if view.catalog().config.discovery.is_none() {
        return;
    }
    let steps: Vec<&str> = match request {
        SearchRequest::Query(q) => vec![q.as_str()],
        SearchRequest::Steps(steps) => steps.iter().map(String::as_str).collect(),
    };
    for (i, query) in steps.iter().enumerate() {
        if is_select(query) {
            continue;
        }
        let shown: Vec<String> = found
            .iter()
            .filter(|(_, _, step)| step.is_none_or(|s| s == i))
            .take(MAX_EVENT_NAMES)
            .map(|(t, _, _)| t.name.clone())
            .collect();
        super::record(view, ctx, || Discovery::Search {
            query: query.to_string(),
            shown,
        });
    }
}

/// Whether `query` loads tools by name (`select:name_a,name_b`).
fn is_select(query: &str) -> bool {
    matches!(Step::of(query), Step::Names(_))
}

/// What a `tool_search` call asks: one query, or one query per step.
enum SearchRequest {
    Query(String),
    Steps(Vec<String>),
}

impl SearchRequest {
    /// `query` or `queries`, exactly one of them; each step a non-empty string, at most
    /// [`MAX_QUERY_STEPS`] of them (the schema says so too, but a catalog may run without
    /// its validator). Errors say what to send.
    fn read(args: &Map<String, Value>) -> Result<SearchRequest, String> {
        match (args.get("query"), args.get("queries")) {
            (Some(_), Some(_)) => Err("tool_search takes `query` (one request) or `queries` \
                 (one query per step), not both"
                .into()),
            (None, None) => Err("tool_search needs `query`: what you want to do, in plain \
                 words (or `queries`: one query per step of a task)"
                .into()),
            (Some(Value::String(q)), None) => Ok(SearchRequest::Query(q.clone())),
            (Some(other), None) => Err(format!(
                "tool_search `query` must be a string, not {}",
                json_kind(other)
            )),
            (None, Some(Value::Array(steps))) => {
                if steps.is_empty() {
                    return Err("tool_search `queries` is empty: give one query per step, \
                         or use `query`"
                        .into());
                }
                if steps.len() > MAX_QUERY_STEPS {
                    return Err(format!(
                        "tool_search `queries` has {} steps; at most {MAX_QUERY_STEPS} (search \
                         for the first ones, then for the rest)",
                        steps.len()
                    ));
                }
                steps
                    .iter()
                    .enumerate()
                    .map(|(i, s)| match s {
                        Value::String(q) if !q.trim().is_empty() => Ok(q.clone()),
                        Value::String(_) => Err(format!(
                            "tool_search `queries[{i}]` is empty: each step needs a query"
                        )),
                        other => Err(format!(
                            "tool_search `queries[{i}]` must be a string, not {}",
                            json_kind(other)
                        )),
                    })
                    .collect::<Result<_, _>>()
                    .map(SearchRequest::Steps)
            }
            (None, Some(other)) => Err(format!(
                "tool_search `queries` must be an array of strings (one query per step), not {}",
                json_kind(other)
            )),
        }
    }
}
