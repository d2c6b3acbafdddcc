//! disco's tools inside an rmcp server of your own: the server below has its own prompts and
//! resources, and `Server::wrap` gives it disco's tools in one line, so name correction,
//! argument repair, `tool_search`, reload notices and per-session log levels all work in it.
//!
//! ```sh
//! cargo run --example embedded -- --stdio      # stdio
//! cargo run --example embedded -- --port 0     # Streamable HTTP on 127.0.0.1, any free port
//! ```
//!
//! Over HTTP the first stdout line is `DISCO_LISTENING http://127.0.0.1:PORT/mcp`. The server
//! is served by rmcp's own `StreamableHttpService` (not disco's HTTP server), as an existing
//! rmcp server would be.

#![allow(deprecated)] // logging/setLevel: deprecated by SEP-2577, still sent by clients

use std::sync::{Arc, Mutex};

use disco_runtime::catalog::{DynamicTool, SearchOptions, ToolProvider};
use disco_runtime::rmcp::model::*;
use disco_runtime::rmcp::service::RequestContext;
use disco_runtime::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use disco_runtime::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use disco_runtime::rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use disco_runtime::tool::BoxFuture;
use disco_runtime::{mcp_tool, Context, LoggingLevel, Server, ServerHandle, State};
use serde_json::{Map, Value};

/// Current weather for a city.
///
/// # Arguments
/// * `city` - The city, e.g. "Lisbon".
#[mcp_tool(read_only, keywords("forecast", "temperature"))]
fn get_weather(city: String) -> String {
    format!("Sunny in {city}, 21 °C")
}

/// Runs a short job and reports its steps to the client's log, at info and debug.
#[mcp_tool(read_only)]
async fn run_job(ctx: Context) -> String {
    let _ = ctx.log(LoggingLevel::Info, "job started").await;
    let _ = ctx.log(LoggingLevel::Debug, "job details").await;
    let _ = ctx.log(LoggingLevel::Info, "job done").await;
    "done".to_string()
}

/// Installs a plugin: a new tool named `plugin_<name>` appears, and connected clients are told
/// that the tool list changed.
///
/// # Arguments
/// * `name` - The plugin's name: lowercase letters, e.g. "sketch".
#[mcp_tool(idempotent)]
async fn install_plugin(name: String, plugins: State<Plugins>) -> Result<String, String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase()) {
        return Err(format!("`{name}`: a plugin name is lowercase letters"));
    }
    plugins.add(&name);
    let handle = plugins
        .handle
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    match handle {
        Some(handle) => handle
            .reload()
            .await
            .map(|()| format!("installed plugin_{name}"))
            .map_err(|e| e.to_string()),
        None => Err("the server is not running".to_string()),
    }
}

/// The installed plugins, as a tool provider.
#[derive(Clone, Default)]
struct Plugins {
    names: Arc<Mutex<Vec<String>>>,
    handle: Arc<Mutex<Option<ServerHandle>>>,
}

impl Plugins {
    fn add(&self, name: &str) {
        let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
}

impl ToolProvider for Plugins {
    fn tools(&self) -> Vec<DynamicTool> {
        let names = self.names.lock().unwrap_or_else(|e| e.into_inner());
        names
            .iter()
            .map(|name| {
                let schema: Map<String, Value> =
                    serde_json::from_value(serde_json::json!({"type": "object"}))
                        .unwrap_or_default();
                DynamicTool::new(Tool::new(
                    format!("plugin_{name}"),
                    format!("Runs the {name} plugin."),
                    Arc::new(schema),
                ))
            })
            .collect()
    }

    fn call(
        &self,
        name: &str,
        _arguments: Map<String, Value>,
        _ctx: disco_runtime::Context,
    ) -> BoxFuture {
        let text = format!("{name} ran");
        Box::pin(async move { CallToolResult::success(vec![ContentBlock::text(text)]) })
    }
}

// ANCHOR: server
/// An rmcp server with prompts and resources of its own; `Server::wrap` adds disco's tools.
#[derive(Clone)]
struct MyServer;
// ANCHOR_END: server

const README_URI: &str = "notes://readme";

impl ServerHandler for MyServer {
    // ANCHOR: get_info
    fn get_info(&self) -> ServerInfo {
        let capabilities = ServerCapabilities::builder()
            .enable_prompts()
            .enable_resources()
            .build();
        ServerInfo::new(capabilities)
            .with_server_info(Implementation::new("embedded", env!("CARGO_PKG_VERSION")))
    }
    // ANCHOR_END: get_info

    // ---- this server's own prompts and resources

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "plan_trip",
            Some("Plans a day out, with the weather."),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "plan_trip" {
            return Err(ErrorData::invalid_params(
                format!("no prompt `{}`", request.name),
                None,
            ));
        }
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            "Check the weather with get_weather, then plan a day out.",
        )])
        .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            README_URI, "readme",
        )]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != README_URI {
            return Err(ErrorData::invalid_params(
                format!("no resource `{}`", request.uri),
                None,
            ));
        }
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            "Plugins add tools at run time.",
            README_URI,
        )])
        .into())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut stdio = false;
    let mut port: Option<u16> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stdio" => stdio = true,
            "--port" => port = Some(args.next().ok_or("--port needs a number")?.parse()?),
            other => return Err(format!("unknown argument `{other}`: --stdio | --port N").into()),
        }
    }
    let plugins = Plugins::default();
    // tools/list pages (tests make them small to see the cursors work through `Tools`).
    let page_size = match std::env::var("DISCO_PAGE_SIZE") {
        Ok(size) => size.parse().map_err(|e| format!("DISCO_PAGE_SIZE: {e}"))?,
        Err(_) => 100,
    };
    // ANCHOR: wrap
    let server = Server::from_inventory()
        .page_size(page_size)
        .provider(plugins.clone())
        .with_state(plugins.clone())
        .search(SearchOptions::default().enabled(true));
    *plugins.handle.lock().unwrap_or_else(|e| e.into_inner()) = Some(server.handle());
    let server = server.wrap(MyServer)?;
    // ANCHOR_END: wrap

    match (stdio, port) {
        (true, None) => {
            let running = server
                .serve(disco_runtime::rmcp::transport::stdio())
                .await?;
            running.waiting().await?;
        }
        (false, Some(port)) => {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
            println!("DISCO_LISTENING http://{}/mcp", listener.local_addr()?);
            let service = StreamableHttpService::new(
                // A clone per session: its own log level for disco's tools.
                move || Ok(server.clone()),
                Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default(),
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            axum::serve(listener, router).await?;
        }
        _ => return Err("choose one of --stdio and --port N".into()),
    }
    Ok(())
}
