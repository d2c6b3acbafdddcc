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

/// Serves `server` in a task of its own over an in-memory pipe; returns the client's end.
fn serve_in_memory(server: disco_runtime::Server) -> tokio::io::DuplexStream {
    let handler = server.into_handler().unwrap();
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client_io
}

#[tokio::test]
async fn reload_tells_connected_clients_and_lists_the_new_tools() {
    let plugins = NamedTools::default();
    plugins.add("plugin_alpha");
    let server = server_in(module_path!()).provider(plugins.clone());
    let handle = server.handle();
    let client_io = serve_in_memory(server);
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

/// A provider whose listing, once armed, waits until the test lets it go (10 s at most), and
/// records whether it was let go: the test lets it go only after the server answered a call
/// in the meantime.
#[derive(Clone)]
struct GatedTools {
    tools: NamedTools,
    armed: Arc<std::sync::atomic::AtomicBool>,
    entered: Arc<Notify>,
    gate: Arc<std::sync::Mutex<Option<std::sync::mpsc::Receiver<()>>>>,
    let_go: Arc<std::sync::atomic::AtomicBool>,
}

impl disco_runtime::ToolProvider for GatedTools {
    fn tools(&self) -> Vec<disco_runtime::catalog::DynamicTool> {
        use std::sync::atomic::Ordering;
        if self.armed.swap(false, Ordering::SeqCst) {
            self.entered.notify_one();
            let gate = self.gate.lock().unwrap().take();
            if let Some(gate) = gate {
                let opened = gate.recv_timeout(Duration::from_secs(10)).is_ok();
                self.let_go.store(opened, Ordering::SeqCst);
            }
        }
        self.tools.tools()
    }
    fn call(
        &self,
        name: &str,
        args: serde_json::Map<String, serde_json::Value>,
        ctx: disco_runtime::Context,
    ) -> disco_runtime::tool::BoxFuture {
        self.tools.call(name, args, ctx)
    }
}

/// A rebuild runs off the runtime's workers: on a runtime of one thread (this test's), a call
/// is answered while a reload of a few thousand tools is in the middle of listing them.
#[tokio::test]
async fn a_reload_leaves_the_runtime_free_to_answer_calls() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let named = NamedTools::default();
    for i in 0..3000 {
        named.add(&format!("plugin_{i}"));
    }
    let (open, gate) = std::sync::mpsc::channel();
    let gated = GatedTools {
        tools: named,
        armed: Arc::new(AtomicBool::new(false)),
        entered: Arc::new(Notify::new()),
        gate: Arc::new(std::sync::Mutex::new(Some(gate))),
        let_go: Arc::new(AtomicBool::new(false)),
    };
    let server = server_in(module_path!()).provider(gated.clone());
    let handle = server.handle();
    let client = ().serve(serve_in_memory(server)).await.unwrap();

    gated.armed.store(true, Ordering::SeqCst);
    let reload = tokio::spawn(async move { handle.reload().await });
    tokio::time::timeout(Duration::from_secs(10), gated.entered.notified())
        .await
        .expect("the reload lists the provider's tools");
    let listed = tokio::time::timeout(Duration::from_secs(10), client.list_all_tools())
        .await
        .expect("a call is answered during a reload")
        .unwrap();
    assert_eq!(listed.len(), 3000);
    // Refused when the listing already gave up waiting: the assertion below says so.
    let _ = open.send(());
    reload.await.unwrap().unwrap();
    assert!(
        gated.let_go.load(Ordering::SeqCst),
        "the call was answered while the rebuild was running"
    );
    client.cancel().await.unwrap();
}
