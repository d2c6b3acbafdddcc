//! One call, one direction: the arguments object, the budget, the meta-tools, name resolution
//! for the caller, argument repair and validation, the handler (panics, timeouts and
//! cancellation contained), the output check, and the corrections reported in `_meta`.

mod error;
mod execute;
mod meta;
mod output;

use rmcp::model::CallToolResult;
use serde_json::{json, Map, Value};

pub use error::CallError;

use crate::catalog::stats::Event;
use crate::catalog::{Catalog, Discovery, NameRule as Rule, View};
use crate::resolve::args;
use crate::tool::result::error_result;
use crate::tool::Context;
use crate::util::{clip_quoted, json_kind};

impl Catalog {
    /// Calls a tool without any transport, as an anonymous caller: what tests and benchmarks
    /// use.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, CallError> {
        self.call_with(name, Some(arguments), &Context::default())
            .await
    }

    /// Calls a tool as `ctx`'s caller. `arguments` absent or `null` means `{}`.
    pub async fn call_with(
        &self,
        name: &str,
        arguments: Option<Value>,
        ctx: &Context,
    ) -> Result<CallToolResult, CallError> {
        call(&self.for_caller(ctx.caller()), name, arguments, ctx, true).await
    }
}

pub(crate) async fn call(
    view: &View<'_>,
    name: &str,
    arguments: Option<Value>,
    ctx: &Context,
    allow_meta: bool,
) -> Result<CallToolResult, CallError> {
    let catalog = view.catalog();
    let stats = &catalog.config.stats;
    stats.count(Event::Call);
    let arguments = match arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(CallError::InvalidParams(format!(
                "`arguments` must be a JSON object, not {}",
                json_kind(&other)
            )))
        }
    };
    // Before repair and validation, for every tool and meta-tool alike (execute_tool's
    // inner arguments are among its own).
    if let Some(message) =
        crate::tool::budget::over_budget(&arguments, catalog.config.max_argument_values)
    {
        stats.count(Event::ArgsRejected);
        tracing::info!(requested = %clip_quoted(name), "arguments over the budget");
        return Ok(error_result(message));
    }
    if allow_meta {
        if let Some(m) = catalog.meta.iter().find(|m| m.name == name) {
            stats.count(Event::Exact);
            return Ok(meta::run_meta(view, m, arguments, ctx).await);
        }
    }

    let resolution = view.resolve(name);
    // A name no tool has exactly may be a provider's tool that is out of service: its
    // provider's answer comes before any correction, which could reach another tool.
    if resolution.rule != Some(Rule::Exact) {
        let caller = view.caller();
        if let Some(why) = catalog
            .config
            .providers
            .iter()
            .find_map(|p| p.not_served(name, caller))
        {
            tracing::info!(requested = %clip_quoted(name), "tool not served now");
            return Ok(error_result(why));
        }
    }
    let (tool, rule) = match (resolution.tool, resolution.rule) {
        (Some(tool), Some(rule)) => (tool, rule),
        _ => {
            let suggestions = resolution.suggestions;
            stats.count(if suggestions.is_empty() {
                Event::Unknown
            } else {
                Event::UnknownSuggested
            });
            let requested = clip_quoted(name);
            tracing::info!(requested = %requested, suggestions = ?suggestions, "unknown tool");
            record(view, ctx, || Discovery::Unknown {
                requested: name.to_string(),
                suggested: suggestions.clone(),
            });
            return Err(CallError::UnknownTool {
                requested,
                suggestions,
            });
        }
    };
    stats.count(match rule {
        Rule::Exact => Event::Exact,
        Rule::Alias => Event::Alias,
        r if r.is_fuzzy() => Event::Fuzzy,
        _ => Event::Equivalent,
    });
    if rule != Rule::Exact {
        tracing::info!(requested = %clip_quoted(name), resolved = %tool.name, rule = rule.as_str(), "tool name corrected");
        record(view, ctx, || Discovery::Corrected {
            requested: name.to_string(),
            resolved: tool.name.clone(),
            rule: rule.as_str().to_string(),
        });
    }

    let mut fixed = Map::new();
    if rule != Rule::Exact {
        fixed.insert(
            "tool".into(),
            json!({"requested": clip_quoted(name), "resolved": tool.name, "rule": rule.as_str()}),
        );
    }
    let mut result = match args::prepare(&tool, arguments, catalog.config.repair) {
        Ok(prepared) => {
            if !prepared.fixes.is_empty() {
                stats.count(Event::ArgsRepaired);
                tracing::info!(tool = %tool.name, fixes = prepared.fixes.len(), "arguments repaired");
            }
            let result = execute::execute(catalog, &tool, prepared.arguments, ctx).await;
            if !prepared.fixes.is_empty() {
                let fixes: Vec<Value> = prepared.fixes.iter().map(args::ArgFix::to_json).collect();
                fixed.insert("arguments".into(), Value::Array(fixes));
            }
            result
        }
        Err(message) => {
            stats.count(Event::ArgsRejected);
            tracing::info!(tool = %tool.name, "arguments rejected");
            error_result(message)
        }
    };
    add_corrections(&mut result, fixed);
    record(view, ctx, || Discovery::Call {
        tool: tool.name.clone(),
        ok: result.is_error != Some(true),
    });
    Ok(result)
}

/// Hands a discovery event to the catalog's recorder, if it has one; `event` is made only
/// then, so a catalog without one does no work for it.
pub(crate) fn record(view: &View<'_>, ctx: &Context, event: impl FnOnce() -> Discovery) {
    if let Some(sink) = &view.catalog().config.discovery {
        sink.record(view.caller(), ctx.session(), event());
    }
}

/// Records what was corrected in the result's `_meta`, for the client to see.
fn add_corrections(result: &mut CallToolResult, corrections: Map<String, Value>) {
    if corrections.is_empty() {
        return;
    }
    result
        .meta
        .get_or_insert_with(Default::default)
        .insert("disco/corrections".to_string(), Value::Object(corrections));
}
