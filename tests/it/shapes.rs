//! Tools of every supported shape, called through the catalog without a transport.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use disco_runtime::{mcp_tool, Catalog, Content, Context, Json, State, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::common::tools_in;

/// This module's tools and the one of `lib-tools`, a crate this package depends on: what the
/// inventory held when these tests were a binary of their own.
fn tools() -> impl Iterator<Item = &'static disco_runtime::ToolSpec> {
    tools_in(module_path!()).chain(tools_in("lib_tools"))
}

/// Say hello to someone by name.
///
/// Returns a greeting as plain text.
///
/// # Arguments
/// * `name` - who to greet
#[mcp_tool(read_only)]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Return a fixed piece of text. Use it to check that the server answers.
#[mcp_tool(read_only, title = "Static text")]
fn static_text() -> &'static str {
    "static"
}

/// Do nothing and return nothing. Use it to check that empty results work.
#[mcp_tool(idempotent, destructive = false)]
fn nothing() {}

/// Add two numbers asynchronously and return the sum as text.
#[mcp_tool(read_only)]
async fn add_async(a: f64, b: f64) -> String {
    tokio::task::yield_now().await;
    (a + b).to_string()
}

#[derive(Serialize, JsonSchema)]
struct Page {
    items: Vec<String>,
    next: Option<u32>,
}

/// List items with paging; returns structured output.
///
/// # Arguments
/// * `limit` - how many items to return
/// * `prefix` - text every item starts with
#[mcp_tool(read_only)]
fn list_items(#[param(default = 3)] limit: u32, prefix: Option<String>) -> Json<Page> {
    let prefix = prefix.unwrap_or_else(|| "item".into());
    Json(Page {
        items: (0..limit).map(|i| format!("{prefix}-{i}")).collect(),
        next: None,
    })
}

/// Return a list of numbers as structured output (a non-object value).
#[mcp_tool(read_only)]
fn numbers(count: u8) -> Json<Vec<u8>> {
    Json((0..count).collect())
}

/// Return text, an image, audio and an embedded resource in one result.
#[mcp_tool(read_only)]
fn mixed() -> Vec<Content> {
    vec![
        Content::text("text"),
        Content::image("aGVsbG8=", "image/png"),
        Content::audio("aGVsbG8=", "audio/wav"),
        Content::embedded_text("test://doc", "embedded"),
    ]
}

/// Divide two integers. Fails on division by zero.
#[mcp_tool(read_only)]
fn divide(a: i64, b: i64) -> Result<String, ToolError> {
    if b == 0 {
        return Err(ToolError::new("cannot divide by zero"));
    }
    Ok((a / b).to_string())
}

/// Parse an integer from text, failing with the parser's own error.
#[mcp_tool(read_only)]
async fn parse_int(text: String) -> Result<Json<i64>, ToolError> {
    Ok(Json(text.trim().parse::<i64>()?))
}

struct Counter {
    calls: AtomicUsize,
}

/// Count calls: increments a counter held in the server's state and returns its value.
#[mcp_tool(destructive = false)]
fn count(counter: State<Counter>, ctx: Context) -> String {
    let n = counter.calls.fetch_add(1, Ordering::SeqCst) + 1;
    format!("{n} by {}", ctx.caller().id().unwrap_or("anonymous"))
}

/// Search notes with an alias for the query parameter.
#[mcp_tool(
    aliases("find_notes"),
    keywords("notes"),
    read_only,
    params(query(alias = "question", description = "what to look for"))
)]
fn search_notes(query: String, #[param(alias = "max_results")] limit: Option<u32>) -> String {
    format!("{query}:{}", limit.unwrap_or(10))
}

/// Panic on purpose, to show the server keeps serving.
#[mcp_tool(read_only)]
fn explode() -> String {
    panic!("boom")
}

/// Sleep longer than the tool's timeout.
#[mcp_tool(read_only, timeout_ms = 50)]
async fn sleepy() -> String {
    tokio::time::sleep(std::time::Duration::from_secs(10)).await;
    "woke".into()
}

#[derive(Deserialize, JsonSchema, Serialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Km,
    Mi,
}

/// Take a map, an enum and a default from an expression.
#[mcp_tool(read_only)]
fn tally(
    counts: BTreeMap<String, u32>,
    #[param(default = Unit::Km)] unit: Unit,
    #[param(default)] verbose: bool,
) -> Json<Value> {
    let total: u32 = counts.values().sum();
    Json(json!({"total": total, "unit": unit, "verbose": verbose}))
}

fn catalog() -> Catalog {
    Catalog::builder()
        .with_state(Counter {
            calls: AtomicUsize::new(0),
        })
        .from_specs(tools())
        .expect("catalog builds")
}

fn text(result: &disco_runtime::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn text_results() {
    let c = catalog();
    let r = c.call("greet", json!({"name": "Ada"})).await.unwrap();
    assert_eq!(text(&r), "Hello, Ada!");
    assert_eq!(r.is_error, Some(false));
    let r = c.call("static_text", json!({})).await.unwrap();
    assert_eq!(text(&r), "static");
    let r = c.call("nothing", Value::Null).await.unwrap();
    assert!(r.content.is_empty());
    assert_eq!(r.is_error, Some(false));
}

#[tokio::test]
async fn async_tool() {
    let r = catalog()
        .call("add_async", json!({"a": 1.5, "b": 2}))
        .await
        .unwrap();
    assert_eq!(text(&r), "3.5");
}

#[tokio::test]
async fn structured_output_with_default_and_optional() {
    let c = catalog();
    let r = c.call("list_items", json!({})).await.unwrap();
    assert_eq!(
        r.structured_content,
        Some(json!({"items": ["item-0", "item-1", "item-2"], "next": null}))
    );
    // The text copy is the same JSON.
    let copy: Value = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(Some(copy), r.structured_content);
    let r = c
        .call("list_items", json!({"limit": 1, "prefix": "x"}))
        .await
        .unwrap();
    assert_eq!(r.structured_content.unwrap()["items"], json!(["x-0"]));
}

#[tokio::test]
async fn non_object_output_is_wrapped() {
    let c = catalog();
    let r = c.call("numbers", json!({"count": 3})).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": [0, 1, 2]})));
    let schema = c.get("numbers").unwrap().output_schema().cloned().unwrap();
    assert_eq!(schema["required"], json!(["result"]));
}

#[tokio::test]
async fn content_blocks() {
    let r = catalog().call("mixed", json!({})).await.unwrap();
    let kinds: Vec<String> = r
        .content
        .iter()
        .map(|c| {
            serde_json::to_value(c).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(kinds, ["text", "image", "audio", "resource"]);
}

#[tokio::test]
async fn errors_become_error_results() {
    let c = catalog();
    let r = c.call("divide", json!({"a": 1, "b": 0})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(text(&r), "cannot divide by zero");
    let r = c.call("parse_int", json!({"text": "x"})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(text(&r), "invalid digit found in string");
    let r = c.call("parse_int", json!({"text": " 42 "})).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": 42})));
}

#[tokio::test]
async fn state_and_context_extractors() {
    let c = catalog();
    let ctx = Context::for_caller(disco_runtime::Caller::new("alice"));
    let r = c.call_with("count", None, &ctx).await.unwrap();
    assert_eq!(text(&r), "1 by alice");
    let r = c.call("count", json!({})).await.unwrap();
    assert_eq!(text(&r), "2 by anonymous");
    // Extractors are not part of the schema.
    let schema = &c.get("count").unwrap().input_schema();
    assert_eq!(schema["properties"], json!({}));
}

#[tokio::test]
async fn missing_state_is_a_clear_error() {
    let c = Catalog::builder().from_specs(tools()).unwrap();
    let r = c.call("count", json!({})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("no state of type"), "{}", text(&r));
}

#[tokio::test]
async fn declared_aliases_for_tools_and_parameters() {
    let c = catalog();
    let r = c
        .call("find_notes", json!({"question": "rust", "max_results": 2}))
        .await
        .unwrap();
    assert_eq!(text(&r), "rust:2");
    let fixes = &r.meta.as_ref().unwrap()["disco/corrections"]["arguments"];
    assert_eq!(fixes.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn bad_arguments_name_the_expected_parameters() {
    let c = catalog();
    let r = c.call("greet", json!({"colour": "red"})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(t.contains("unknown parameter(s) `colour`"), "{t}");
    assert!(t.contains("missing required parameter(s) `name`"), "{t}");
    assert!(t.contains("`name` (string, required): who to greet"), "{t}");
    let r = c
        .call("greet", json!({"name": {"first": "Ada"}}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("`/name`"), "{}", text(&r));
    let err = c.call("greet", json!([1])).await.unwrap_err();
    assert!(err.to_string().contains("must be a JSON object"));
}

#[tokio::test]
async fn near_misses_and_wrong_types_are_repaired_and_reported() {
    let c = catalog();
    let r = c.call("greet", json!({"nme": "Ada"})).await.unwrap();
    assert_eq!(text(&r), "Hello, Ada!");
    let fixes = &r.meta.as_ref().unwrap()["disco/corrections"]["arguments"];
    assert_eq!(fixes[0]["rule"], "near_miss");
    let r = c
        .call("list_items", json!({"Limit": "2", "prefix": null}))
        .await
        .unwrap();
    assert_eq!(
        r.structured_content.unwrap()["items"],
        json!(["item-0", "item-1"])
    );
    let r = c
        .call("add_async", json!({"a": "1", "b": 2}))
        .await
        .unwrap();
    assert_eq!(text(&r), "3");
}

#[tokio::test]
async fn unknown_tool_is_a_call_error() {
    let err = catalog().call("nope", json!({})).await.unwrap_err();
    assert!(err.to_string().starts_with("Unknown tool: nope"));
}

#[tokio::test]
async fn panics_and_timeouts_are_contained() {
    let c = catalog();
    let r = c.call("explode", json!({})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(text(&r), "Tool `explode` failed with an internal error.");
    let r = c.call("sleepy", json!({})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("within 50 ms"));
    // The catalog goes on serving.
    let r = c.call("greet", json!({"name": "again"})).await.unwrap();
    assert_eq!(text(&r), "Hello, again!");
}

#[tokio::test]
async fn cancellation_stops_the_tool() {
    let c = catalog();
    let token = tokio_util_token();
    let ctx = Context::builder().cancellation(token.clone()).build();
    let call = c.call_with("sleepy", None, &ctx);
    token.cancel();
    let r = call.await.unwrap();
    assert_eq!(text(&r), "Tool `sleepy` was cancelled.");
}

fn tokio_util_token() -> disco_runtime::tool::CancellationToken {
    disco_runtime::tool::CancellationToken::new()
}

#[tokio::test]
async fn maps_enums_and_expression_defaults() {
    let c = catalog();
    let r = c
        .call("tally", json!({"counts": {"a": 1, "b": 2}}))
        .await
        .unwrap();
    // `Json<Value>` may hold anything, so it is always sent as `{"result": ...}`.
    assert_eq!(
        r.structured_content,
        Some(json!({"result": {"total": 3, "unit": "km", "verbose": false}}))
    );
    let p = c.get("tally").unwrap();
    assert_eq!(p.param("unit").unwrap().default, Some(json!("km")));
    assert_eq!(p.param("verbose").unwrap().default, Some(json!(false)));
}

#[test]
fn library_crate_tools_are_collected() {
    // `lib-tools` is a dependency of this package; its tool arrives through inventory.
    let _ = lib_tools::reverse_text;
    let c = Catalog::builder().from_specs(tools()).unwrap();
    assert!(c.get("reverse_text").is_some());
}

#[test]
fn the_tools_pass_the_check() {
    // What `disco_runtime::check()` does over the whole inventory, over these tools: this
    // binary's inventory also holds tools that must fail it (catalog_errors' defaults) and
    // names that clash across modules (the example servers of catalog_docs and readme).
    Catalog::builder().from_specs(tools()).map(|_| ()).unwrap();
}

/// A server built from chosen tools is named after the package of those tools (the binary's
/// name matches no package here), not after the package with the most tools in the inventory:
/// this binary's own package has many, `lib-tools` one.
#[test]
fn a_server_of_chosen_tools_is_named_after_their_package() {
    use disco_runtime::rmcp::ServerHandler;
    let only_lib = tools_in("lib_tools");
    let handler = disco_runtime::Server::new(Catalog::builder().specs(only_lib))
        .into_handler()
        .unwrap();
    assert_eq!(handler.get_info().server_info.name, "lib-tools");
    let greet = tools_in(module_path!()).filter(|s| s.name == "greet");
    let handler = disco_runtime::Server::new(Catalog::builder().specs(greet))
        .into_handler()
        .unwrap();
    assert_eq!(handler.get_info().server_info.name, "disco");
}
