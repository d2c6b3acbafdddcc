//! A provider whose tools change: `ServerHandle::reload()` swaps the catalog, a connected
//! client receives `notifications/tools/list_changed`, and its next tools/list shows the change.
//! Driven in-process by rmcp's own client over an in-memory duplex pipe.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use disco_runtime::catalog::DynamicTool;
use disco_runtime::rmcp::model::{CallToolResult, Tool};
use disco_runtime::tool::BoxFuture;
use disco_runtime::{Content, Context, Server, ToolProvider};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::sync::Notify;

#[derive(Clone, Default)]
struct Plugins {
    names: Arc<Mutex<Vec<String>>>,
}

impl ToolProvider for Plugins {
    fn tools(&self) -> Vec<DynamicTool> {
        let schema: Map<String, Value> =
            serde_json::from_value(serde_json::json!({"type": "object"})).unwrap();
        let schema = Arc::new(schema);
        self.names
            .lock()
            .unwrap()
            .iter()
            .map(|n| {
                DynamicTool::new(Tool::new(
                    n.clone(),
                    format!("Plugin tool {n}."),
                    schema.clone(),
                ))
            })
            .collect()
    }
    fn call(&self, name: &str, _args: Map<String, Value>, _ctx: Context) -> BoxFuture {
        let text = format!("ran {name}");
        Box::pin(async move { CallToolResult::success(vec![Content::text(text)]) })
    }
}

#[derive(Clone)]
struct Listener {
    changed: Arc<Notify>,
}

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

#[tokio::test]
async fn reload_tells_connected_clients_and_lists_the_new_tools() {
    let plugins = Plugins::default();
    plugins.names.lock().unwrap().push("plugin_alpha".into());
    let server = Server::from_inventory().provider(plugins.clone());
    let handle = server.handle();
    let handler = server.into_handler().unwrap();

    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let changed = Arc::new(Notify::new());
    let client = Listener {
        changed: changed.clone(),
    }
    .serve(client_io)
    .await
    .unwrap();

    let names =
        |tools: Vec<Tool>| -> Vec<String> { tools.iter().map(|t| t.name.to_string()).collect() };
    let before = names(client.list_all_tools().await.unwrap());
    assert!(before.contains(&"plugin_alpha".to_string()));
    assert!(!before.contains(&"plugin_beta".to_string()));

    plugins.names.lock().unwrap().push("plugin_beta".into());
    handle.reload().await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), changed.notified())
        .await
        .expect("tools/list_changed arrives");
    let after = names(client.list_all_tools().await.unwrap());
    assert!(after.contains(&"plugin_beta".to_string()));
    client.cancel().await.unwrap();
}
