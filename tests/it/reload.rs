//! A provider whose tools change: `ServerHandle::reload()` swaps the catalog, a connected
//! client receives `notifications/tools/list_changed`, and its next tools/list shows the change.
//! Driven in-process by rmcp's own client over an in-memory duplex pipe.
//!
//! Its server serves this module's tools (`common::server_in`), of which there are none: the
//! provider's tools alone.

use std::sync::Arc;
use std::time::Duration;

use crate::common::named::NamedTools;
use crate::common::server_in;
use disco_runtime::rmcp::model::Tool;
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::Notify;

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
    let plugins = NamedTools::default();
    plugins.add("plugin_alpha");
    let server = server_in(module_path!()).provider(plugins.clone());
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

    plugins.add("plugin_beta");
    handle.reload().await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), changed.notified())
        .await
        .expect("tools/list_changed arrives");
    let after = names(client.list_all_tools().await.unwrap());
    assert!(after.contains(&"plugin_beta".to_string()));
    client.cancel().await.unwrap();
}
