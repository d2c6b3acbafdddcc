//! Which path a running session's `tools/call` takes through [`GuardedStdio::serve`]: beside
//! rmcp's loop, unless its `_meta` names a protocol version. Both paths answer alike, so the
//! count of the calls run beside is what tells them apart.

use std::collections::HashMap;
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};

use rmcp::model::{CallToolResult, ContentBlock as Content};

use super::GuardedStdio;
use crate::catalog::{CatalogBuilder, DynamicTool, JsonCatalogProvider, ToolProvider};
use crate::server::Server;
use crate::tool::{BoxFuture, Context};

/// Two tools whose answers follow from their arguments.
struct Arithmetic;

impl ToolProvider for Arithmetic {
    fn tools(&self) -> Vec<DynamicTool> {
        let integer = json!({"type": "integer"});
        JsonCatalogProvider::from_value(&json!([
            {"name": "echo", "description": "Repeat a text back.",
             "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                             "required": ["text"]}},
            {"name": "add", "description": "Add two integers.",
             "inputSchema": {"type": "object", "properties": {"a": integer, "b": integer},
                             "required": ["a", "b"]}},
        ]))
        .expect("valid tools")
        .tools()
    }

    fn call(&self, name: &str, arguments: Map<String, Value>, _: Context) -> BoxFuture {
        let answer = expected(name, &Value::Object(arguments));
        Box::pin(async move { CallToolResult::success(vec![Content::text(answer)]) })
    }
}

/// What `name` answers to `arguments`.
fn expected(name: &str, arguments: &Value) -> String {
    match name {
        "echo" => arguments["text"].as_str().unwrap_or_default().to_owned(),
        "add" => {
            let term = |k: &str| arguments[k].as_i64().unwrap_or_default();
            (term("a") + term("b")).to_string()
        }
        other => format!("no tool {other}"),
    }
}

/// The `n`th call: its id (numbers and strings, `7` and `"7"` apart), tool and arguments.
fn case(n: i64) -> (Value, &'static str, Value) {
    let id = if n % 2 == 0 {
        json!(n / 2 - 3)
    } else {
        json!((n / 2 - 3).to_string())
    };
    match n % 3 {
        0 => (id, "echo", json!({"text": format!("call {n} ünïcode")})),
        1 => (id, "add", json!({"a": n * 1_000, "b": -7 * n})),
        _ => (id, "echo", json!({"text": ""})),
    }
}

fn call(id: &Value, name: &str, arguments: &Value, meta: Option<Value>) -> String {
    let mut params = json!({"name": name, "arguments": arguments});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    format!("{line}\n")
}

/// The `_meta` of a call naming `version`, with what protocol 2026-07-28 requires beside it.
fn naming(version: &ProtocolVersion) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version.as_str(),
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "path", "version": "0"},
    })
}

const WAIT: Duration = Duration::from_secs(20);

/// The server's next line.
async fn next<R: AsyncBufRead + Unpin>(lines: &mut Lines<R>) -> Value {
    let line = tokio::time::timeout(WAIT, lines.next_line())
        .await
        .expect("a line within the time limit")
        .expect("readable")
        .expect("the server is still there");
    serde_json::from_str(&line).expect("JSON")
}

/// Every call of the running session runs beside rmcp's loop and is answered; a call naming
/// a protocol version, whichever, goes through rmcp's loop and is answered too.
#[tokio::test]
async fn calls_run_beside_unless_they_name_a_protocol_version() {
    const CALLS: i64 = 24;
    let (client, server) = tokio::io::duplex(1 << 20);
    let (r, w) = tokio::io::split(server);
    let transport = GuardedStdio::new(r, w);
    let calls = transport.calls.clone();
    let handler = Server::new(CatalogBuilder::default().specs([]))
        .provider(Arithmetic)
        .into_handler()
        .expect("catalog builds");
    let (served_tx, served) = tokio::sync::oneshot::channel();
    let session = tokio::spawn(async move {
        let running = transport.serve(handler).await.expect("the session starts");
        let _ = served_tx.send(());
        let _ = running.waiting().await;
    });
    let (r, mut w) = tokio::io::split(client);
    let mut lines = BufReader::new(r).lines();

    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "path", "version": "0"}}});
    w.write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    assert!(next(&mut lines).await["result"]["serverInfo"].is_object());
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    w.write_all(format!("{initialized}\n").as_bytes())
        .await
        .unwrap();
    tokio::time::timeout(WAIT, served)
        .await
        .expect("serve returns within the time limit")
        .expect("the session is served");
    assert_eq!(calls.beside(), 0);

    let cases: Vec<_> = (0..CALLS).map(case).collect();
    let burst: String = cases
        .iter()
        .map(|(id, name, arguments)| call(id, name, arguments, None))
        .collect();
    w.write_all(burst.as_bytes()).await.unwrap();
    let mut answers = HashMap::new();
    for _ in 0..CALLS {
        let answer = next(&mut lines).await;
        assert!(
            answers.insert(answer["id"].to_string(), answer).is_none(),
            "answered twice"
        );
    }
    for (id, name, arguments) in &cases {
        let answer = &answers[&id.to_string()];
        assert_eq!(
            answer["result"]["content"][0]["text"],
            expected(name, arguments),
            "{answer}"
        );
    }
    assert_eq!(calls.beside(), CALLS as u64, "every call ran beside");

    for (n, version) in ProtocolVersion::KNOWN_VERSIONS.iter().enumerate() {
        let (_, name, arguments) = case(n as i64);
        let id = json!(format!("versioned-{n}"));
        let line = call(&id, name, &arguments, Some(naming(version)));
        w.write_all(line.as_bytes()).await.unwrap();
        let answer = next(&mut lines).await;
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"],
            expected(name, &arguments),
            "{version}: {answer}"
        );
        assert_eq!(calls.beside(), CALLS as u64, "{version} went through rmcp");
    }

    w.shutdown().await.unwrap();
    tokio::time::timeout(WAIT, session)
        .await
        .expect("the session ends with its input")
        .expect("session task");
}
