//! Hostile and malformed input over Streamable HTTP: each case gets the HTTP status and the
//! JSON-RPC error it should (with its id whenever one can be read), and the server answers
//! the next request normally. Servers run in-process on 127.0.0.1:0.

mod common;

use std::time::{Duration, Instant};

use common::http::*;
use disco_runtime::{mcp_tool, HttpOptions, Server};
use serde_json::{json, Value};

/// Repeat a text back: the request that shows the server still serves.
#[mcp_tool(read_only)]
fn echo(text: String) -> String {
    text
}

/// Wait a little, then answer.
#[mcp_tool(read_only)]
async fn slow_echo(text: String, ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms.min(5_000))).await;
    text
}

const LIMIT: usize = 64 * 1024;

async fn stateless() -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    start(
        Server::from_inventory()
            .http_options(HttpOptions::default().stateless(true).max_body_bytes(LIMIT)),
    )
    .await
}

fn call(id: i64, name: &str, arguments: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
    .to_string()
    .into_bytes()
}

async fn still_serving(addr: std::net::SocketAddr, id: i64) {
    let r = post(addr, &[], &call(id, "echo", json!({"text": "alive"}))).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["id"], id, "{v}");
    assert_eq!(v["result"]["content"][0]["text"], "alive", "{v}");
}

fn assert_error(v: &Value, code: i64, id: Option<Value>) {
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert_eq!(v["error"]["code"], code, "{v}");
    assert!(v["error"]["message"].is_string(), "{v}");
    assert_eq!(v["id"], id.unwrap_or(Value::Null), "{v}");
}

#[tokio::test]
async fn malformed_bodies_get_json_rpc_errors_with_their_ids() {
    let (addr, _stop) = stateless().await;
    let mut deep = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"#.to_vec();
    deep.extend(std::iter::repeat_n(b'[', 10_000));
    deep.extend(std::iter::repeat_n(b']', 10_000));
    deep.extend_from_slice(b"}}}");
    let cases: Vec<(Vec<u8>, i64, Option<Value>)> = vec![
        (b"{not json".to_vec(), -32700, None),
        (b"".to_vec(), -32700, None),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#.to_vec(),
            -32700,
            Some(json!(1)),
        ),
        (b"\xff\xfe".to_vec(), -32700, None),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"x\":\"\xc3\x28\"}}"
                .to_vec(),
            -32700,
            Some(json!(2)),
        ),
        (b"42".to_vec(), -32600, None),
        (b"\"text\"".to_vec(), -32600, None),
        (b"[]".to_vec(), -32600, None),
        (b"{}".to_vec(), -32600, None),
        (
            br#"{"jsonrpc":"1.0","id":3,"method":"tools/list"}"#.to_vec(),
            -32600,
            Some(json!(3)),
        ),
        (
            br#"{"id":4,"method":"tools/list"}"#.to_vec(),
            -32600,
            Some(json!(4)),
        ),
        (
            br#"{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}"#.to_vec(),
            -32600,
            None,
        ),
        (
            br#"{"jsonrpc":"2.0","id":5,"method":["tools/list"]}"#.to_vec(),
            -32600,
            Some(json!(5)),
        ),
        (
            br#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":"all"}"#.to_vec(),
            -32600,
            Some(json!(6)),
        ),
        (
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":["echo"]}"#.to_vec(),
            -32602,
            Some(json!(7)),
        ),
        (
            br#"{"jsonrpc":"2.0","id":8,"method":"notifications/initialized"}"#.to_vec(),
            -32600,
            Some(json!(8)),
        ),
        (deep, -32600, Some(json!(9))),
    ];
    let count = cases.len();
    for (i, (body, code, id)) in cases.into_iter().enumerate() {
        let r = post(addr, &[], &body).await;
        assert_eq!(r.status, 400, "case {i}: {}", r.text());
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_error(&r.json(), code, id);
        still_serving(addr, 1000 + i as i64).await;
    }
    eprintln!("{count} malformed bodies answered");
}

#[tokio::test]
async fn batches_get_one_error_per_request() {
    let (addr, _stop) = stateless().await;
    let body = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "two", "method": "ping"}
    ]);
    let r = post(addr, &[], body.to_string().as_bytes()).await;
    assert_eq!(r.status, 400);
    let v = r.json();
    assert_eq!(v.as_array().map(Vec::len), Some(2), "{v}");
    assert_error(&v[0], -32600, Some(json!(1)));
    assert_error(&v[1], -32600, Some(json!("two")));
    still_serving(addr, 2).await;
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused_with_413() {
    let (addr, _stop) = stateless().await;
    let big = "x".repeat(LIMIT + 1);
    let r = post(addr, &[], &call(1, "echo", json!({"text": big}))).await;
    assert_eq!(r.status, 413, "{}", r.text());
    assert_error(&r.json(), -32600, None);
    // Just under the limit is served.
    let fits = "y".repeat(LIMIT - 200);
    let r = post(addr, &[], &call(2, "echo", json!({"text": fits}))).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json()["result"]["content"][0]["text"]
            .as_str()
            .map(str::len),
        Some(LIMIT - 200)
    );
    still_serving(addr, 3).await;
}

#[tokio::test]
async fn huge_names_and_many_keys_are_answered_quickly_and_briefly() {
    let (addr, _stop) =
        start(Server::from_inventory().http_options(HttpOptions::default().stateless(true))).await;
    let started = Instant::now();
    let long = "n".repeat(100_000);
    let r = post(addr, &[], &call(1, &long, json!({}))).await;
    assert_eq!(r.status, 200);
    assert_error(&r.json(), -32602, Some(json!(1)));
    assert!(r.body.len() < 2_000, "{} bytes", r.body.len());

    let r = post(addr, &[], &call(2, "echo", json!({long.clone(): "v"}))).await;
    let v = r.json();
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert!(r.body.len() < 4_000, "{} bytes", r.body.len());

    let mut args = serde_json::Map::new();
    for i in 0..10_000 {
        args.insert(format!("k{i}"), json!(i));
    }
    args.insert("text".into(), json!("t"));
    let r = post(addr, &[], &call(3, "echo", Value::Object(args))).await;
    let v = r.json();
    assert_eq!(v["id"], 3);
    assert!(v.get("result").is_some(), "{v}");
    assert!(r.body.len() < 8_000, "{} bytes", r.body.len());
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    still_serving(addr, 4).await;
}

#[tokio::test]
async fn notifications_and_cancels_for_unknown_ids_are_accepted() {
    let (addr, _stop) = stateless().await;
    for body in [
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/made_up"}),
    ] {
        let r = post(addr, &[], body.to_string().as_bytes()).await;
        assert_eq!(r.status, 202, "{body}: {}", r.text());
        assert!(r.body.is_empty());
        still_serving(addr, 1).await;
    }
}

#[tokio::test]
async fn duplicate_ids_on_concurrent_posts_each_get_their_answer() {
    let (addr, _stop) = stateless().await;
    let a = tokio::spawn(async move {
        post(
            addr,
            &[],
            &call(7, "slow_echo", json!({"text": "a", "ms": 200})),
        )
        .await
    });
    let b = tokio::spawn(async move {
        post(
            addr,
            &[],
            &call(7, "slow_echo", json!({"text": "b", "ms": 100})),
        )
        .await
    });
    let (a, b) = (a.await.unwrap().json(), b.await.unwrap().json());
    assert_eq!(a["result"]["content"][0]["text"], "a", "{a}");
    assert_eq!(b["result"]["content"][0]["text"], "b", "{b}");
    still_serving(addr, 8).await;
}

#[tokio::test]
async fn sessions_refuse_requests_before_initialize_and_unknown_sessions() {
    let (addr, _stop) = start(Server::from_inventory()).await;
    // No session yet: 400.
    let r = post(addr, &[], &call(1, "echo", json!({"text": "x"}))).await;
    assert_eq!(r.status, 400, "{}", r.text());
    let r = post(
        addr,
        &[],
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text());
    // A session that does not exist: 404 (the client must start over).
    let r = post(
        addr,
        &[("Mcp-Session-Id", "no-such-session")],
        &call(2, "echo", json!({"text": "x"})),
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.text());
    // Garbage is answered before any session logic.
    let r = post(addr, &[], b"{oops").await;
    assert_eq!(r.status, 400);
    assert_error(&r.json(), -32700, None);
    // And a proper session works.
    let session = open_session(addr, &[]).await;
    let s = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let r = post(addr, &s, &call(4, "echo", json!({"text": "in session"}))).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "in session");
    // Cancel for an id that is not in flight, within the session.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}});
    let r = post(addr, &s, cancel.to_string().as_bytes()).await;
    assert_eq!(r.status, 202);
    let r = post(addr, &s, &call(5, "echo", json!({"text": "still"}))).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "still");
    // Closing the session, then using it: 404.
    let r = send(addr, "DELETE", &[("Mcp-Session-Id", session.as_str())], b"").await;
    assert_eq!(r.status, 204);
    let r = post(addr, &s, &call(6, "echo", json!({"text": "gone"}))).await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn wrong_headers_are_refused() {
    let (addr, _stop) = stateless().await;
    let body = call(1, "echo", json!({"text": "x"}));
    let r = send(
        addr,
        "POST",
        &[ACCEPT, ("Content-Type", "text/plain")],
        &body,
    )
    .await;
    assert_eq!(r.status, 415, "{}", r.text());
    let r = send(addr, "POST", &[("Accept", "text/html"), JSON], &body).await;
    assert_eq!(r.status, 406, "{}", r.text());
    let r = send(addr, "PUT", &[ACCEPT, JSON], &body).await;
    assert!((400..500).contains(&r.status), "{}", r.status);
    still_serving(addr, 2).await;
}

#[tokio::test]
async fn dns_rebinding_host_and_origin_are_refused() {
    for stateless in [false, true] {
        let (addr, _stop) = start(
            Server::from_inventory().http_options(HttpOptions::default().stateless(stateless)),
        )
        .await;
        let body = call(1, "echo", json!({"text": "x"}));
        for headers in [
            vec![("Host", "evil.example.com")],
            vec![("Host", "evil.example.com:80")],
            vec![("Host", "127.0.0.1.evil.example.com")],
            vec![("Origin", "http://evil.example.com")],
            vec![("Origin", "http://localhost.evil.example.com:3000")],
            vec![("Origin", "null")],
        ] {
            let r = post(addr, &headers, &body).await;
            assert!(
                (400..500).contains(&r.status),
                "stateless={stateless} {headers:?}: {} {}",
                r.status,
                r.text()
            );
            assert!(!r.text().contains("alive") && !r.text().contains("echo"));
        }
        // Loopback names and origins pass.
        let port = addr.port().to_string();
        for (host, origin) in [
            (
                format!("localhost:{port}"),
                format!("http://localhost:{port}"),
            ),
            (
                format!("127.0.0.1:{port}"),
                "http://127.0.0.1:5173".to_string(),
            ),
        ] {
            let r = post(
                addr,
                &[("Host", host.as_str()), ("Origin", origin.as_str())],
                &initialize_or_call(stateless),
            )
            .await;
            assert_eq!(r.status, 200, "{host} {origin}: {}", r.text());
        }
    }
}

fn initialize_or_call(stateless: bool) -> Vec<u8> {
    if stateless {
        call(2, "echo", json!({"text": "ok"}))
    } else {
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
        .to_string()
        .into_bytes()
    }
}

#[tokio::test]
async fn the_stateless_protocol_works_with_its_headers() {
    let (addr, _stop) = stateless().await;
    let body = modern_call(1, "echo", json!({"text": "modern"}));
    let r = post_modern(
        addr,
        &[("Mcp-Method", "tools/call"), ("Mcp-Name", "echo")],
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["content"][0]["text"], "modern");
    // Without the headers the protocol requires: a JSON-RPC error with the id.
    let r = post_modern(addr, &[], &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["id"], 1);
}
