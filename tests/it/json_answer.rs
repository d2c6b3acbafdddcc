//! With sessions, a POST's answer goes out as `application/json` when it is the first message
//! of its stream and comes soon, and as the stream rmcp made (`text/event-stream`, the
//! priming event first) when a notification comes first or the answer is slow. A request of
//! protocol 2026-07-28 has no session and nothing to resume: its answer, coming first, goes
//! out as JSON however long it takes. Driven over raw HTTP against an in-process server on
//! 127.0.0.1:0.

use crate::common::http::*;
use crate::common::server_in;
use disco_runtime::{mcp_tool, Context};
use serde_json::{json, Value};

/// Repeat a text back.
#[mcp_tool(read_only)]
fn echo(text: String) -> String {
    text
}

/// Report progress halfway, then finish.
#[mcp_tool(read_only)]
async fn halfway(ctx: Context) -> String {
    let _ = ctx.progress(1.0, Some(2.0), None).await;
    "done".to_owned()
}

/// Finish after a second: far longer than an answer is waited for.
#[mcp_tool(read_only)]
async fn nap() -> String {
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    "rested".to_owned()
}

fn content_type(r: &Reply) -> &str {
    r.header("content-type").unwrap_or("")
}

/// The events of an SSE body, each as its `data` (empty for an event without any).
fn events(r: &Reply) -> Vec<String> {
    r.text()
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            e.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

fn call(id: i64, name: &str, params: Value) -> Vec<u8> {
    let mut params = params;
    params["name"] = json!(name);
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
        .to_string()
        .into_bytes()
}

#[tokio::test]
async fn a_session_gets_json_for_quick_answers_and_the_stream_otherwise() {
    let (addr, _stop) = start(server_in(module_path!())).await;

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    let r = post(addr, &[], init.to_string().as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(content_type(&r).starts_with("application/json"), "{r:?}");
    let v: Value = serde_json::from_slice(&r.body).expect("a JSON body");
    assert_eq!(v["id"], 1, "{v}");
    assert!(v["result"]["protocolVersion"].is_string(), "{v}");
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = post(addr, &headers, initialized.to_string().as_bytes()).await;
    assert_eq!(r.status, 202, "{}", r.text());

    // A quick answer: JSON.
    let r = post(
        addr,
        &headers,
        &call(2, "echo", json!({"arguments": {"text": "hi"}})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(content_type(&r).starts_with("application/json"), "{r:?}");
    let v: Value = serde_json::from_slice(&r.body).expect("a JSON body");
    assert_eq!(v["result"]["content"][0]["text"], "hi", "{v}");

    // Progress first: the stream, from its priming event (no data) on, the answer last.
    let progress = json!({"arguments": {}, "_meta": {"progressToken": "p1"}});
    let r = post(addr, &headers, &call(3, "halfway", progress)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(content_type(&r).starts_with("text/event-stream"), "{r:?}");
    let got = events(&r);
    assert_eq!(got.first().map(String::as_str), Some(""), "{got:?}");
    let messages: Vec<Value> = got
        .iter()
        .filter(|d| !d.is_empty())
        .map(|d| serde_json::from_str(d).expect("JSON data"))
        .collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(
        messages[0]["method"], "notifications/progress",
        "{messages:?}"
    );
    assert_eq!(messages[0]["params"]["progressToken"], "p1", "{messages:?}");
    assert_eq!(messages[1]["id"], 3, "{messages:?}");
    assert_eq!(messages[1]["result"]["content"][0]["text"], "done");

    // A slow answer: the stream, from its priming event on.
    let r = post(addr, &headers, &call(4, "nap", json!({"arguments": {}}))).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(content_type(&r).starts_with("text/event-stream"), "{r:?}");
    let got = events(&r);
    assert_eq!(got.first().map(String::as_str), Some(""), "{got:?}");
    let v = r.json();
    assert_eq!(v["id"], 4, "{v}");
    assert_eq!(v["result"]["content"][0]["text"], "rested", "{v}");

    // A request of protocol 2026-07-28, which has no session and nothing to resume: rmcp's
    // own JSON answer, however long it takes.
    let named = [("Mcp-Method", "tools/call"), ("Mcp-Name", "nap")];
    let r = post_modern(addr, &named, &modern_call(5, "nap", json!({}))).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(content_type(&r).starts_with("application/json"), "{r:?}");
    let v: Value = serde_json::from_slice(&r.body).expect("a JSON body");
    assert_eq!(v["result"]["content"][0]["text"], "rested", "{v}");
}
