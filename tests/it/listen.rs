//! Change notices on the wire. `subscriptions/listen` (protocol 2026-07-28) over stateless
//! HTTP, and sessions of the initialize era over HTTP with sessions: a reload announces a
//! change of the tool list, but only to a caller whose own list changed; and a server shutting
//! down ends open streams instead of waiting for them.
//!
//! Its servers serve this module's tools (`common::server_in`), of which there are none: the
//! provider's tools alone.

use std::time::Duration;

use crate::common::http::*;
use crate::common::named::NamedTools;
use crate::common::server_in;
use disco_runtime::{BearerTokens, Caller, CatalogTool, HttpOptions, ServerHandle};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Tools named `secret_*` only the admin may see.
fn admin_only(caller: &Caller, tool: &CatalogTool) -> bool {
    !tool.name().starts_with("secret_") || caller.id() == Some("admin")
}

/// A stateless server with the changing tools, bearer tokens `admin-token` and `user-token`.
async fn serve() -> (
    std::net::SocketAddr,
    NamedTools,
    ServerHandle,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    serve_with(true).await
}

async fn serve_with(
    stateless: bool,
) -> (
    std::net::SocketAddr,
    NamedTools,
    ServerHandle,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let changing = NamedTools::default();
    changing.add("plain_one");
    let server = server_in(module_path!())
        .provider(changing.clone())
        .visibility(admin_only)
        .http_options(
            HttpOptions::default().stateless(stateless).bearer_auth(
                BearerTokens::new()
                    .token("admin-token", Caller::new("admin"))
                    .token("user-token", Caller::new("user")),
            ),
        );
    let handle = server.handle();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let shutdown = async move {
            let _ = stopped.await;
        };
        server.serve_http_on(listener, shutdown).await.unwrap();
    });
    (addr, changing, handle, stop, task)
}

/// An open `subscriptions/listen` stream, read line by line.
struct Stream {
    lines: tokio::io::Lines<BufReader<TcpStream>>,
}

impl Stream {
    /// A session of the initialize era for the bearer `token`, and its GET stream.
    async fn session(addr: std::net::SocketAddr, token: &str) -> Stream {
        let auth = format!("Bearer {token}");
        let session = open_session(addr, &[("Authorization", &auth)]).await;
        let headers = [
            ("Authorization", auth.as_str()),
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        let mut head = format!(
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\n",
            addr.port()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(head.as_bytes()).await.unwrap();
        let mut lines = BufReader::new(tcp).lines();
        let status = lines.next_line().await.unwrap().unwrap_or_default();
        assert!(status.contains(" 200 "), "{status}");
        Stream { lines }
    }

    async fn open(addr: std::net::SocketAddr, token: &str) -> Stream {
        let body = modern_request(
            1,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        )
        .to_string();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\n{}: {}\r\nMcp-Method: subscriptions/listen\r\n\
             Authorization: Bearer {token}\r\n\
             Content-Length: {}\r\n\r\n",
            addr.port(),
            MODERN_HEADER.0,
            MODERN_HEADER.1,
            body.len()
        );
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(head.as_bytes()).await.unwrap();
        tcp.write_all(body.as_bytes()).await.unwrap();
        let mut stream = Stream {
            lines: BufReader::new(tcp).lines(),
        };
        let ack = stream.next_message(Duration::from_secs(10)).await;
        let ack = ack.expect("an acknowledgment");
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        assert_eq!(
            ack["params"]["notifications"]["toolsListChanged"], true,
            "{ack}"
        );
        stream
    }

    /// The next JSON-RPC message on the stream, if one comes within `wait`.
    async fn next_message(&mut self, wait: Duration) -> Option<Value> {
        tokio::time::timeout(wait, async {
            while let Some(line) = self.lines.next_line().await.ok().flatten() {
                if let Some(data) = line.strip_prefix("data:") {
                    if let Ok(v) = serde_json::from_str::<Value>(data.trim()) {
                        return Some(v);
                    }
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
    }
}

#[tokio::test]
async fn a_reload_is_announced_to_the_callers_whose_list_changed() {
    let (addr, changing, handle, _stop, _task) = serve().await;
    let mut admin = Stream::open(addr, "admin-token").await;
    let mut user = Stream::open(addr, "user-token").await;

    // A tool everybody sees: both hear of it.
    changing.add("plain_two");
    handle.reload().await.unwrap();
    for stream in [&mut admin, &mut user] {
        let m = stream.next_message(Duration::from_secs(10)).await;
        let m = m.expect("a notice");
        assert_eq!(m["method"], "notifications/tools/list_changed", "{m}");
    }

    // A tool only the admin sees: the user hears nothing of it.
    changing.add("secret_one");
    handle.reload().await.unwrap();
    let m = admin.next_message(Duration::from_secs(10)).await;
    assert_eq!(
        m.expect("a notice")["method"],
        "notifications/tools/list_changed"
    );
    assert_eq!(user.next_message(Duration::from_millis(500)).await, None);

    // Nothing changed: nobody hears anything.
    handle.reload().await.unwrap();
    assert_eq!(admin.next_message(Duration::from_millis(500)).await, None);
}

#[tokio::test]
async fn sessions_hear_of_changes_to_their_own_callers_list() {
    let (addr, changing, handle, _stop, _task) = serve_with(false).await;
    let mut admin = Stream::session(addr, "admin-token").await;
    let mut user = Stream::session(addr, "user-token").await;
    let notice = |m: Option<Value>| {
        let m = m.expect("a notice");
        assert_eq!(m["method"], "notifications/tools/list_changed", "{m}");
    };

    changing.add("plain_two");
    handle.reload().await.unwrap();
    notice(admin.next_message(Duration::from_secs(10)).await);
    notice(user.next_message(Duration::from_secs(10)).await);

    changing.add("secret_one");
    handle.reload().await.unwrap();
    notice(admin.next_message(Duration::from_secs(10)).await);
    assert_eq!(user.next_message(Duration::from_millis(500)).await, None);
}

#[tokio::test]
async fn shutting_down_ends_open_streams() {
    let (addr, _changing, _handle, stop, task) = serve().await;
    let mut stream = Stream::open(addr, "user-token").await;
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the server stops with a stream open")
        .unwrap();
    // The stream ended (or says it is ending), nothing more arrives.
    let _ = stream.next_message(Duration::from_secs(2)).await;
}
