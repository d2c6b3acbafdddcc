//! `Server::wrap`: an rmcp handler of one's own with disco's tools. The handler's own hooks
//! (prompts, resources, `on_initialized`) stay its own, the tools hooks are disco's (a
//! misspelled name is corrected, `logging/setLevel` is accepted though the handler has none),
//! and a handler with tools of its own is refused before it serves. Driven in-process by
//! rmcp's own client over an in-memory duplex pipe.

#![allow(deprecated)] // logging/setLevel: deprecated by SEP-2577, still sent by clients

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::server_in;
use disco_runtime::rmcp::model::*;
use disco_runtime::rmcp::service::{NotificationContext, RequestContext};
use disco_runtime::rmcp::{ErrorData, RoleServer, ServerHandler};
use disco_runtime::{mcp_tool, server::Error};
use rmcp::{tool, tool_handler, tool_router, ServiceExt};

/// Current weather for a city.
///
/// # Arguments
/// * `city` - The city, e.g. "Lisbon".
#[mcp_tool(read_only)]
fn get_weather(city: String) -> String {
    format!("Sunny in {city}")
}

/// A handler with a prompt and a resource of its own, that counts its `on_initialized`.
#[derive(Clone, Default)]
struct Notes {
    initialized: Arc<AtomicUsize>,
}

impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
        .with_instructions("Notes and the weather.")
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "plan_trip",
            Some("Plans a day out."),
            None,
        )]))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            "notes://readme",
            "readme",
        )]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            "the notes' own text",
            request.uri,
        )])
        .into())
    }

    async fn on_initialized(&self, _context: NotificationContext<RoleServer>) {
        self.initialized.fetch_add(1, Ordering::SeqCst);
    }
}

/// A handler with tools of its own, made by rmcp's own macros.
#[derive(Clone)]
struct OwnTools;

#[tool_router]
impl OwnTools {
    #[tool(description = "Say hello and return the greeting.")]
    fn hello(&self) -> String {
        "hello".to_string()
    }
}

#[tool_handler]
impl ServerHandler for OwnTools {}

#[tokio::test]
async fn the_handlers_hooks_stay_its_own_beside_discos_tools() {
    let notes = Notes::default();
    let wrapped = server_in(module_path!()).wrap(notes.clone()).unwrap();
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = wrapped.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.unwrap();

    let info = client.peer_info().expect("initialized").clone();
    assert!(info.capabilities.prompts.is_some(), "the handler's prompts");
    assert!(
        info.capabilities.resources.is_some(),
        "the handler's resources"
    );
    let tools = info.capabilities.tools.clone().expect("disco's tools");
    assert_eq!(tools.list_changed, Some(true));
    assert!(info.capabilities.logging.is_some(), "tools log");
    assert_eq!(
        info.instructions.as_deref(),
        Some("Notes and the weather."),
        "the handler's own instructions are kept"
    );

    let prompts = client.list_prompts(None).await.unwrap();
    assert_eq!(prompts.prompts[0].name, "plan_trip");
    let resources = client.list_resources(None).await.unwrap();
    assert_eq!(resources.resources[0].uri, "notes://readme");
    let read = client
        .read_resource(ReadResourceRequestParams::new("notes://readme"))
        .await
        .unwrap();
    let text = serde_json::to_value(&read).unwrap().to_string();
    assert!(text.contains("the notes' own text"), "{text}");

    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["get_weather"]);
    let mut args = serde_json::Map::new();
    args.insert("city".into(), "Lisbon".into());
    let called = client
        .call_tool(CallToolRequestParams::new("get_wether").with_arguments(args))
        .await
        .unwrap();
    let called = serde_json::to_value(&called).unwrap();
    assert!(
        called.to_string().contains("Sunny in Lisbon"),
        "a misspelled name is corrected by disco: {called}"
    );

    // The handler has no `set_level`; disco's tools take the level.
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
        .await
        .unwrap();

    // The handler heard of the session (disco's `on_initialized` ran as well: its reload
    // notices are tests/it/reload.rs's subject).
    tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while notes.initialized.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the handler's on_initialized runs");
    client.cancel().await.unwrap();
}

#[test]
fn a_handler_with_tools_of_its_own_is_refused_before_it_serves() {
    let own = OwnTools;
    assert!(own.get_tool("hello").is_some(), "the handler serves a tool");
    let refused = server_in(module_path!()).wrap(own);
    let Err(err) = refused else {
        panic!("a handler with tools of its own was wrapped");
    };
    assert!(
        matches!(err, Error::HandlerHasTools { handler } if handler.ends_with("OwnTools")),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("OwnTools") && text.contains("#[mcp_tool]"),
        "{text}"
    );
    // The same handler without the capability is taken.
    assert!(server_in(module_path!()).wrap(Notes::default()).is_ok());
}
