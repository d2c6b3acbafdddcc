//! A minimal HTTP/1.1 client for the MCP endpoint, over raw TCP so that tests can send bytes
//! no real client would (invalid UTF-8, wrong headers) and need no client dependency.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

pub const MODERN: &str = "2026-07-28";

#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    /// The JSON-RPC message in the body: plain JSON, or the last `data:` of an SSE stream.
    pub fn json(&self) -> Value {
        let text = self.text();
        if let Ok(v) = serde_json::from_str(&text) {
            return v;
        }
        text.lines()
            .rev()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .filter_map(|d| serde_json::from_str(d).ok())
            .next()
            .unwrap_or_else(|| panic!("no JSON in the reply: {} {text}", self.status))
    }
}

/// A keep-alive connection.
pub struct Conn {
    addr: SocketAddr,
    stream: BufReader<TcpStream>,
}

impl Conn {
    pub async fn open(addr: SocketAddr) -> Conn {
        let tcp = TcpStream::connect(addr).await.expect("connect");
        tcp.set_nodelay(true).ok();
        Conn {
            addr,
            stream: BufReader::new(tcp),
        }
    }

    pub async fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> std::io::Result<Reply> {
        let mut head = format!("{method} {path} HTTP/1.1\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: 127.0.0.1:{}\r\n", self.addr.port()));
        }
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let s = self.stream.get_mut();
        s.write_all(head.as_bytes()).await?;
        s.write_all(body).await?;
        s.flush().await?;
        self.read_reply().await
    }

    async fn read_reply(&mut self) -> std::io::Result<Reply> {
        let mut line = String::new();
        self.stream.read_line(&mut line).await?;
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.stream.read_line(&mut line).await?;
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        let get = |name: &str| {
            headers
                .iter()
                .find(|(k, _): &&(String, String)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let mut body = Vec::new();
        if let Some(len) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
            body.resize(len, 0);
            self.stream.read_exact(&mut body).await?;
        } else if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            loop {
                line.clear();
                self.stream.read_line(&mut line).await?;
                let size = usize::from_str_radix(line.trim(), 16)
                    .map_err(|_| std::io::Error::other(format!("bad chunk {line:?}")))?;
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk).await?;
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else if status != 204 && status != 304 {
            self.stream.read_to_end(&mut body).await?;
        }
        Ok(Reply {
            status,
            headers,
            body,
        })
    }
}

/// One request on a fresh connection.
pub async fn send(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut conn = Conn::open(addr).await;
    tokio::time::timeout(
        Duration::from_secs(30),
        conn.request(method, "/mcp", headers, body),
    )
    .await
    .expect("an answer in time")
    .expect("a readable answer")
}

pub const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
pub const JSON: (&str, &str) = ("Content-Type", "application/json");

/// POST a JSON-RPC body with the usual headers plus `extra`.
pub async fn post(addr: SocketAddr, extra: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut headers = vec![ACCEPT, JSON];
    headers.extend_from_slice(extra);
    send(addr, "POST", &headers, body).await
}

/// The `_meta` a request of the stateless protocol (2026-07-28) carries.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "disco-tests", "version": "0"}
    })
}

/// A stateless tools/call body.
pub fn modern_call(id: i64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments, "_meta": modern_meta()}})
}

pub fn modern_request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = modern_meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub const MODERN_HEADER: (&str, &str) = ("MCP-Protocol-Version", MODERN);

/// POST a stateless request.
pub async fn post_modern(addr: SocketAddr, extra: &[(&str, &str)], body: &Value) -> Reply {
    let mut headers = vec![MODERN_HEADER];
    headers.extend_from_slice(extra);
    post(addr, &headers, body.to_string().as_bytes()).await
}

/// Opens a session of the initialize era (protocol 2025-06-18) with the headers `extra` on
/// every request: initialize, then `notifications/initialized`. Returns the session id.
pub async fn open_session(addr: SocketAddr, extra: &[(&str, &str)]) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let r = post(addr, extra, init.to_string().as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let session = r
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let mut headers = vec![
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    headers.extend_from_slice(extra);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = post(addr, &headers, initialized.to_string().as_bytes()).await;
    assert_eq!(r.status, 202, "{}", r.text());
    session
}

/// Starts a server on 127.0.0.1:0; it stops when the returned sender is dropped.
pub async fn start(
    server: disco_runtime::Server,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let shutdown = async move {
            let _ = stopped.await;
        };
        if let Err(e) = server.serve_http_on(listener, shutdown).await {
            eprintln!("server ended: {e}");
        }
    });
    (addr, stop)
}
