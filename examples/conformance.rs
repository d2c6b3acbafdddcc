//! The reference tools of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`), written with `#[mcp_tool]`, plus a few tools of other
//! shapes that the Python client tests in `tests/interop/` call.
//!
//! ```text
//! cargo run --example conformance -- --port 3901          # Streamable HTTP on 127.0.0.1:3901/mcp
//! cargo run --example conformance -- --port 0             # any free port (printed on stdout)
//! cargo run --example conformance -- --port 0 --stateless # HTTP without sessions
//! cargo run --example conformance -- --stdio              # stdio
//! ```
//!
//! `DISCO_PAGE_SIZE=N` sets the tools/list page size (the client tests use a small one so that
//! they walk several pages). In HTTP mode the first line on stdout is
//! `DISCO_LISTENING http://127.0.0.1:PORT/mcp`, so a test can start the server on port 0.
//!
//! The suite's tools are in the group `conformance` (their module's), the interop tools in
//! `interop`, installed plugins in `plugins`: the server's instructions list the three.
//!
//! `DISCO_SEARCH=all|search-first` turns on `tool_search` and `execute_tool`: `all` lists every
//! tool beside them; `search-first` lists only them and `interop_add` (pinned), so that the rest
//! must be found. With it, `DISCO_SEMANTIC_MODEL=DIR` ranks by the semantic model in DIR as well
//! (built with `--features semantic`; the guide's "Semantic search"), a static model or a
//! transformer, and `DISCO_SEMANTIC_CACHE=DIR` keeps the tools' vectors in DIR between runs;
//! without it, those variables are not read.

// Sampling and logging are deprecated by SEP-2577 but are what the suite's 2025 scenarios test.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use disco_runtime::catalog::{DynamicTool, Exposure, SearchOptions};
use disco_runtime::rmcp::model::{JsonObject, Tool};
use disco_runtime::tool::BoxFuture;
use disco_runtime::{
    mcp_tool, CallToolResult, Content, Context, HttpOptions, Json, LoggingLevel, ServerHandle,
    State, ToolError, ToolProvider,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// A 1x1 red PNG.
const RED_PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV file holding one sample of silence (8 kHz, mono, 16 bit).
const SILENT_WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==";

// ---------------------------------------------------------------------------------------------
// The conformance suite's reference tools.

/// Tests simple text content response.
#[mcp_tool(read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Tests image content response: a 1x1 red PNG.
#[mcp_tool(read_only)]
fn test_image_content() -> Content {
    Content::image(RED_PIXEL_PNG, "image/png")
}

/// Tests audio content response: a tiny silent WAV file.
#[mcp_tool(read_only)]
fn test_audio_content() -> Content {
    Content::audio(SILENT_WAV, "audio/wav")
}

/// Tests embedded resource content response.
#[mcp_tool(read_only)]
fn test_embedded_resource() -> Content {
    Content::embedded_text(
        "test://embedded-resource",
        "This is an embedded resource content.",
    )
}

/// Tests response with multiple content types (text, image, resource).
#[mcp_tool(read_only)]
fn test_multiple_content_types() -> Result<Vec<Content>, ToolError> {
    let resource = json!({
        "type": "resource",
        "resource": {
            "uri": "test://mixed-content-resource",
            "mimeType": "application/json",
            "text": json!({"test": "data", "value": 123}).to_string(),
        }
    });
    Ok(vec![
        Content::text("Multiple content types test:"),
        Content::image(RED_PIXEL_PNG, "image/png"),
        serde_json::from_value(resource)?,
    ])
}

/// Tests tool that emits log messages during execution: three at info level, 50 ms apart.
#[mcp_tool(read_only)]
async fn test_tool_with_logging(ctx: Context) -> String {
    for (i, message) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // A client that went away is no reason to fail the call.
        let _ = ctx.log(LoggingLevel::Info, message).await;
    }
    "Tool with logging executed successfully".into()
}

/// Tests tool that reports progress notifications: 0, 50 and 100 of 100, 50 ms apart.
#[mcp_tool(read_only)]
async fn test_tool_with_progress(ctx: Context) -> String {
    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = ctx
            .progress(step, Some(100.0), Some(format!("step {}", i + 1)))
            .await;
    }
    "Tool with progress executed successfully".into()
}

/// Tests error response handling: always fails.
#[mcp_tool(read_only)]
fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new(
        "This tool intentionally returns an error for testing",
    ))
}

/// Tests server-initiated sampling (LLM completion request).
///
/// # Arguments
/// * `prompt` - The prompt to send to the LLM
#[mcp_tool(read_only, open_world)]
async fn test_sampling(ctx: Context, prompt: String) -> Result<String, ToolError> {
    let peer = ctx
        .peer()
        .ok_or_else(|| ToolError::new("sampling needs a connected client"))?;
    // A stateless HTTP request carries no initialize: nothing says what the client supports,
    // and there is no session to send a request on.
    let info = peer.peer_info().ok_or_else(|| {
        ToolError::new("Sampling needs a session: this connection has none (stateless HTTP).")
    })?;
    if info.capabilities.sampling.is_none() {
        return Err(ToolError::new(
            "The client does not support sampling (no `sampling` capability).",
        ));
    }
    let params = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": 100,
    }))?;
    let result = peer.create_message(params).await?;
    let reply = serde_json::to_value(&result)?;
    let text = reply["content"]["text"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| reply["content"].to_string());
    Ok(format!("LLM response: {text}"))
}

/// Tests server-initiated elicitation (user input request).
///
/// # Arguments
/// * `message` - The message to show the user
#[mcp_tool(read_only, open_world)]
async fn test_elicitation(ctx: Context, message: String) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    });
    let (action, content) = elicit(&ctx, &message, schema).await?;
    Ok(format!("User response: action={action}, content={content}"))
}

/// Tests elicitation with default values per SEP-1034.
#[mcp_tool(read_only, open_world)]
async fn test_elicitation_sep1034_defaults(ctx: Context) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true},
        },
        "required": [],
    });
    let (action, content) =
        elicit(&ctx, "Please review and update the form fields", schema).await?;
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

/// Tests elicitation with enum schema improvements per SEP-1330.
#[mcp_tool(read_only, open_world)]
async fn test_elicitation_sep1330_enums(ctx: Context) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Untitled single-select",
                "enum": ["option1", "option2", "option3"],
            },
            "titledSingle": {
                "type": "string",
                "description": "Titled single-select",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "description": "Legacy titled enum",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Untitled multi-select",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "description": "Titled multi-select",
                "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]},
            },
        },
        "required": [],
    });
    let (action, content) = elicit(&ctx, "Please choose your options", schema).await?;
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

/// Sends `elicitation/create` with a form schema; returns the action and the content.
async fn elicit(ctx: &Context, message: &str, schema: Value) -> Result<(String, Value), ToolError> {
    let peer = ctx
        .peer()
        .ok_or_else(|| ToolError::new("elicitation needs a connected client"))?;
    let info = peer.peer_info().ok_or_else(|| {
        ToolError::new("Elicitation needs a session: this connection has none (stateless HTTP).")
    })?;
    if info.capabilities.elicitation.is_none() {
        return Err(ToolError::new(
            "The client does not support elicitation (no `elicitation` capability).",
        ));
    }
    let params = serde_json::from_value(json!({
        "mode": "form",
        "message": message,
        "requestedSchema": schema,
    }))?;
    let result = peer.create_elicitation(params).await?;
    let result = serde_json::to_value(&result)?;
    let action = result["action"].as_str().unwrap_or("unknown").to_string();
    Ok((action, result.get("content").cloned().unwrap_or(json!({}))))
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "address")]
#[allow(dead_code)] // the suite checks the schema, never the values
struct Address {
    street: Option<String>,
    city: Option<String>,
}

/// Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613).
///
/// # Arguments
/// * `name` - a name
/// * `address` - a postal address
#[mcp_tool(read_only, full_schema)]
fn json_schema_2020_12_tool(name: Option<String>, address: Option<Address>) -> String {
    let city = address.and_then(|a| a.city).unwrap_or_default();
    format!("name={}, city={city}", name.unwrap_or_default())
}

// ---------------------------------------------------------------------------------------------
// Other shapes, called by the Python client tests (tests/interop).

/// Add two numbers and return the sum as text (a synchronous tool).
///
/// # Arguments
/// * `a` - the first number
/// * `b` - the second number
#[mcp_tool(read_only, idempotent, group = "interop")]
fn interop_add(a: f64, b: f64) -> String {
    (a + b).to_string()
}

#[derive(Serialize, JsonSchema)]
struct Day {
    day: u32,
    high_c: f64,
    /// Rain is unknown for days past the third.
    rain_mm: Option<f64>,
}

#[derive(Serialize, JsonSchema)]
struct Forecast {
    city: String,
    days: Vec<Day>,
    note: Option<String>,
}

/// Forecast the weather for a city, as structured output.
///
/// # Arguments
/// * `city` - the city to forecast
/// * `days` - how many days (default 3)
#[mcp_tool(read_only, group = "interop")]
async fn interop_forecast(city: String, #[param(default = 3)] days: u32) -> Json<Forecast> {
    tokio::task::yield_now().await;
    Json(Forecast {
        days: (1..=days.min(14))
            .map(|day| Day {
                day,
                high_c: 20.0 + f64::from(day) / 2.0,
                rain_mm: (day <= 3).then(|| f64::from(day) * 1.5),
            })
            .collect(),
        note: (city.is_empty()).then(|| "no city given".to_string()),
        city,
    })
}

/// List the prime numbers below a limit (structured output that is not an object).
///
/// # Arguments
/// * `below` - the exclusive upper limit
#[mcp_tool(read_only, group = "interop")]
fn interop_primes(below: u32) -> Json<Vec<u32>> {
    Json(
        (2..below.min(10_000))
            .filter(|n| (2..*n).take_while(|d| d * d <= *n).all(|d| n % d != 0))
            .collect(),
    )
}

/// Do nothing and return nothing.
#[mcp_tool(idempotent, destructive = false, group = "interop")]
fn interop_nothing() {}

/// Fail with an internal error on purpose: the server must keep serving.
#[mcp_tool(read_only, group = "interop")]
fn interop_panic() -> String {
    panic!("interop_panic was called")
}

/// Counters of `interop_sleep` calls, to tell from outside that a cancelled call stopped.
#[derive(Default)]
struct SleepStats {
    started: AtomicU64,
    finished: AtomicU64,
    stopped: AtomicU64,
}

/// Counts a call as stopped when its future is dropped before it finished.
struct StopGuard<'a> {
    stats: &'a SleepStats,
    done: bool,
}

impl Drop for StopGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.stats.stopped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Sleep for a while, reporting progress every 100 ms. Used to test cancellation.
///
/// # Arguments
/// * `seconds` - how long to sleep (at most 60)
#[mcp_tool(read_only, group = "interop")]
async fn interop_sleep(ctx: Context, stats: State<SleepStats>, seconds: f64) -> String {
    stats.started.fetch_add(1, Ordering::SeqCst);
    let mut guard = StopGuard {
        stats: &stats,
        done: false,
    };
    let total = (seconds.clamp(0.0, 60.0) * 10.0).round() as u64;
    for tick in 1..=total {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let _ = ctx.progress(tick as f64, Some(total as f64), None).await;
    }
    guard.done = true;
    stats.finished.fetch_add(1, Ordering::SeqCst);
    format!("slept {seconds} s")
}

#[derive(Serialize, JsonSchema)]
struct SleepCounts {
    started: u64,
    finished: u64,
    stopped: u64,
}

/// Report how many `interop_sleep` calls started, finished, and were stopped before finishing.
#[mcp_tool(read_only, group = "interop")]
fn interop_sleep_stats(stats: State<SleepStats>) -> Json<SleepCounts> {
    Json(SleepCounts {
        started: stats.started.load(Ordering::SeqCst),
        finished: stats.finished.load(Ordering::SeqCst),
        stopped: stats.stopped.load(Ordering::SeqCst),
    })
}

/// Plugin tools installed while the server runs (`interop_install_plugin`).
#[derive(Clone, Default)]
struct Plugins {
    names: Arc<Mutex<Vec<String>>>,
}

impl ToolProvider for Plugins {
    /// The group of the installed tools.
    fn name(&self) -> Option<String> {
        Some("plugins".into())
    }

    fn tools(&self) -> Vec<DynamicTool> {
        let schema: JsonObject = serde_json::from_value(json!({"type": "object"}))
            .expect("an empty object schema is a JSON object");
        let schema = Arc::new(schema);
        self.names
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|n| DynamicTool::new(Tool::new(n.clone(), "An installed plugin.", schema.clone())))
            .collect()
    }

    fn call(&self, name: &str, _arguments: Map<String, Value>, _ctx: Context) -> BoxFuture {
        let text = format!("ran {name}");
        Box::pin(async move { CallToolResult::success(vec![Content::text(text)]) })
    }
}

/// Install a plugin tool named `plugin_<name>`: the tool list changes, and every connected
/// client is told (`notifications/tools/list_changed`, or its `subscriptions/listen` stream).
///
/// # Arguments
/// * `name` - letters, digits and underscores, at most 32
#[mcp_tool(group = "interop")]
async fn interop_install_plugin(
    plugins: State<Plugins>,
    server: State<ServerHandle>,
    name: String,
) -> Result<String, ToolError> {
    let valid = !name.is_empty()
        && name.len() <= 32
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(ToolError::new(format!(
            "`{name}` is not a plugin name: use letters, digits and underscores, at most 32"
        )));
    }
    let tool = format!("plugin_{name}");
    {
        let mut names = plugins.names.lock().unwrap_or_else(|e| e.into_inner());
        if names.contains(&tool) {
            return Err(ToolError::new(format!("`{tool}` is installed already")));
        }
        names.push(tool.clone());
    }
    server
        .reload()
        .await
        .map_err(|e| ToolError::new(format!("could not reload the tools: {e}")))?;
    Ok(format!("installed {tool}"))
}

// ---------------------------------------------------------------------------------------------

/// The search meta-tools as `DISCO_SEARCH` and `DISCO_SEMANTIC_MODEL` ask (the latter read only
/// with the former); a value this build cannot honour ends the process with a message rather
/// than serving something else.
fn search_options() -> Option<SearchOptions> {
    let exit = |message: String| -> ! {
        eprintln!("conformance: {message}");
        std::process::exit(2)
    };
    let exposure = match std::env::var("DISCO_SEARCH") {
        Err(std::env::VarError::NotPresent) => return None,
        Ok(v) if v == "all" => Exposure::All,
        Ok(v) if v == "search-first" => Exposure::SearchFirst {
            pinned: vec!["interop_add".into()],
        },
        Ok(v) => exit(format!("DISCO_SEARCH={v}: want all or search-first")),
        Err(e) => exit(format!("DISCO_SEARCH: {e}")),
    };
    #[allow(unused_mut)]
    let mut options = SearchOptions::default().enabled(true).exposure(exposure);
    if let Some(dir) = std::env::var_os("DISCO_SEMANTIC_MODEL") {
        #[cfg(feature = "semantic")]
        match disco_runtime::search::SemanticModel::load(&dir) {
            Ok(model) => {
                options.semantic = Some(std::sync::Arc::new(model));
                // Where the tools' vectors are kept between runs (default: the user's cache
                // directory).
                if let Some(cache) = std::env::var_os("DISCO_SEMANTIC_CACHE") {
                    options.semantic_cache = disco_runtime::search::VectorCache::Dir(cache.into());
                }
            }
            Err(e) => exit(format!("DISCO_SEMANTIC_MODEL: {e}")),
        }
        #[cfg(not(feature = "semantic"))]
        exit(format!(
            "DISCO_SEMANTIC_MODEL={} needs a build with `--features semantic`",
            std::path::Path::new(&dir).display()
        ));
    }
    Some(options)
}

fn usage() -> ! {
    eprintln!("usage: conformance (--stdio | --port N [--stateless])");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> Result<(), disco_runtime::server::Error> {
    let mut port: Option<u16> = None;
    let mut stdio = false;
    let mut stateless = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stdio" => stdio = true,
            "--stateless" => stateless = true,
            "--port" => {
                port = Some(
                    args.next()
                        .and_then(|p| p.parse().ok())
                        .unwrap_or_else(|| usage()),
                )
            }
            _ => usage(),
        }
    }
    let plugins = Plugins::default();
    let mut server = disco_runtime::Server::from_inventory()
        .name("disco-conformance")
        .with_state(SleepStats::default())
        .provider(plugins.clone())
        .with_state(plugins);
    // The handle in the server's own state: a reference cycle, harmless in a process that
    // serves until it exits.
    let handle = server.handle();
    server = server.with_state(handle);
    if let Some(size) = std::env::var("DISCO_PAGE_SIZE")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
    {
        server = server.page_size(size);
    }
    if let Some(search) = search_options() {
        server = server.search(search);
    }
    match (stdio, port) {
        (true, None) => server.serve_stdio().await,
        (false, Some(port)) => {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
            let addr = listener.local_addr()?;
            println!("DISCO_LISTENING http://{addr}/mcp");
            server
                .http_options(HttpOptions::default().stateless(stateless))
                .serve_http_on(listener, async {
                    let _ = tokio::signal::ctrl_c().await;
                })
                .await
        }
        _ => usage(),
    }
}
