//! Hostile and malformed input over Streamable HTTP: each case gets the HTTP status and the
//! JSON-RPC error it should (with its id whenever one can be read), and the server answers
//! the next request normally. Servers run in-process on 127.0.0.1:0.
//!
//! Its servers serve this module's tools alone (`common::server_in`): the sizes of the error
//! answers (suggestions included) are bounded for these tools.

use std::time::{Duration, Instant};

use crate::common::http::*;
use crate::common::server_in;
use disco_runtime::{mcp_tool, HttpOptions};
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
        server_in(module_path!())
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
        start(server_in(module_path!()).http_options(HttpOptions::default().stateless(true))).await;
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
    let (addr, _stop) = start(server_in(module_path!())).await;
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
            server_in(module_path!()).http_options(HttpOptions::default().stateless(stateless)),
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

/// Return how many limits were given.
#[mcp_tool(read_only)]
fn count_limits(limits: Vec<u32>) -> String {
    limits.len().to_string()
}

fn tokens() -> disco_runtime::BearerTokens {
    disco_runtime::BearerTokens::new()
        .token("tok-alice", disco_runtime::Caller::new("alice"))
        .token("tok-bob", disco_runtime::Caller::new("bob"))
        .token("tok-admin", disco_runtime::Caller::new("admin"))
}

#[tokio::test]
async fn logging_set_level_with_an_unknown_level_is_invalid_params() {
    let (addr, _stop) = start(server_in(module_path!())).await;
    let session = open_session(addr, &[]).await;
    let s = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    for level in [json!("verbose"), json!("DEBUG"), json!(3), json!(null)] {
        let body = json!({"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel",
                          "params": {"level": level}});
        let r = post(addr, &s, body.to_string().as_bytes()).await;
        let v = r.json();
        assert_error(&v, -32602, Some(json!(5)));
        assert!(
            v["error"]["message"].as_str().unwrap().contains("warning"),
            "{level}: {v}"
        );
        assert_eq!(v["error"]["data"]["levels"][0], "debug", "{v}");
    }
    let body = json!({"jsonrpc": "2.0", "id": 6, "method": "logging/setLevel",
                      "params": {"level": "warning"}});
    let r = post(addr, &s, body.to_string().as_bytes()).await;
    assert!(r.json().get("result").is_some(), "{}", r.text());
    // Other unknown methods are still -32601.
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "made/up", "params": {}});
    let r = post(addr, &s, body.to_string().as_bytes()).await;
    assert_error(&r.json(), -32601, Some(json!(7)));
}

/// Every caller x every method on a session: another caller's session answers exactly as a
/// session that does not exist, and is left as it was.
#[tokio::test]
async fn sessions_answer_only_to_the_caller_that_created_them() {
    let (addr, _stop) =
        start(server_in(module_path!()).http_options(HttpOptions::default().bearer_auth(tokens())))
            .await;
    let callers = ["tok-alice", "tok-bob", "tok-admin"];
    let auth: Vec<String> = callers.iter().map(|t| format!("Bearer {t}")).collect();
    let mut sessions = Vec::new();
    for a in &auth {
        sessions.push(open_session(addr, &[("Authorization", a.as_str())]).await);
    }
    let echo_body = call(9, "echo", json!({"text": "mine"}));
    let mut refused = 0;
    for (owner, session) in sessions.iter().enumerate() {
        for (other, a) in auth.iter().enumerate() {
            if other == owner {
                continue;
            }
            for method in ["POST", "GET", "DELETE"] {
                let body: &[u8] = if method == "POST" { &echo_body } else { b"" };
                let mut seen = Vec::new();
                for id in [session.as_str(), "00000000-0000-0000-0000-000000000000"] {
                    let headers = [
                        ACCEPT,
                        JSON,
                        ("Authorization", a.as_str()),
                        ("MCP-Protocol-Version", "2025-06-18"),
                        ("Mcp-Session-Id", id),
                    ];
                    let r = send(addr, method, &headers, body).await;
                    seen.push((r.status, r.text()));
                }
                let (foreign, unknown) = (seen[0].clone(), seen[1].clone());
                assert_eq!(foreign.0, 404, "{method} by {other} on {owner}'s session");
                assert_eq!(foreign, unknown, "{method}: foreign vs unknown session");
                assert!(!foreign.1.contains(session.as_str()));
                refused += 1;
            }
        }
        // The owner's session still works after every attempt.
        let headers = [
            ("Authorization", auth[owner].as_str()),
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        let r = post(addr, &headers, &echo_body).await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["result"]["content"][0]["text"], "mine");
    }
    // The owner can end its own session.
    let r = send(
        addr,
        "DELETE",
        &[
            ("Authorization", auth[0].as_str()),
            ("Mcp-Session-Id", sessions[0].as_str()),
        ],
        b"",
    )
    .await;
    assert_eq!(r.status, 204);
    eprintln!("{refused} requests on another caller's session refused as unknown");
}

#[tokio::test]
async fn sessions_beyond_the_cap_are_refused_with_503() {
    let (addr, _stop) =
        start(server_in(module_path!()).http_options(HttpOptions::default().max_sessions(3))).await;
    let mut sessions = Vec::new();
    for _ in 0..3 {
        sessions.push(open_session(addr, &[]).await);
    }
    let init = json!({"jsonrpc": "2.0", "id": 41, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let r = post(addr, &[], init.to_string().as_bytes()).await;
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.header("retry-after").is_some());
    assert!(r.header("mcp-session-id").is_none());
    assert_error(&r.json(), -32000, Some(json!(41)));
    // Open sessions go on; stateless requests are not sessions and are served.
    let s = [
        ("Mcp-Session-Id", sessions[1].as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let r = post(addr, &s, &call(2, "echo", json!({"text": "on"}))).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "on");
    let r = post_modern(
        addr,
        &[("Mcp-Method", "tools/call"), ("Mcp-Name", "echo")],
        &modern_call(3, "echo", json!({"text": "modern"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    // A closed session makes room.
    let r = send(
        addr,
        "DELETE",
        &[("Mcp-Session-Id", sessions[0].as_str())],
        b"",
    )
    .await;
    assert_eq!(r.status, 204);
    open_session(addr, &[]).await;
    let r = post(addr, &[], init.to_string().as_bytes()).await;
    assert_eq!(r.status, 503, "{}", r.text());
}

/// Repeated headers, userinfo, bad ports and absolute-form targets, in both modes.
#[tokio::test]
async fn ambiguous_or_malformed_authority_headers_are_refused() {
    for stateless in [false, true] {
        let (addr, _stop) = start(
            server_in(module_path!()).http_options(HttpOptions::default().stateless(stateless)),
        )
        .await;
        let port = addr.port().to_string();
        let here = format!("127.0.0.1:{port}");
        let local = format!("http://localhost:{port}");
        let body = initialize_or_call(stateless);
        type Headers<'a> = Vec<(&'a str, &'a str)>;
        let mut cases: Vec<(Headers, &str, u16)> = vec![
            (
                vec![("Host", &here), ("Host", "evil.example.com")],
                "/mcp",
                400,
            ),
            (
                vec![("Host", "evil.example.com"), ("Host", &here)],
                "/mcp",
                400,
            ),
            (
                vec![("Origin", &local), ("Origin", "http://evil.example.com")],
                "/mcp",
                400,
            ),
            (vec![("Content-Type", "text/plain")], "/mcp", 400),
            (
                vec![
                    ("MCP-Protocol-Version", "2025-06-18"),
                    ("MCP-Protocol-Version", "2025-03-26"),
                ],
                "/mcp",
                400,
            ),
            (
                vec![("Mcp-Session-Id", "a"), ("Mcp-Session-Id", "b")],
                "/mcp",
                400,
            ),
            (vec![("Host", "evil.com:80@localhost")], "/mcp", 400),
            (vec![("Host", "localhost:99999")], "/mcp", 400),
            (vec![("Host", "localhost:8o")], "/mcp", 400),
            (vec![("Origin", "http://evil.com@localhost:1")], "/mcp", 403),
            (vec![], "http://evil.example.com/mcp", 403),
            (vec![], "http://evil.example.com:80/mcp", 403),
            (
                vec![("Host", "evil.example.com")],
                "http://localhost/mcp",
                403,
            ),
        ];
        // The usual Content-Type is sent too, so one more makes two.
        cases[3].0.push(JSON);
        let count = cases.len();
        for (i, (extra, target, status)) in cases.into_iter().enumerate() {
            let mut headers = vec![ACCEPT];
            if i != 3 {
                headers.push(JSON);
            }
            headers.extend(extra.iter().copied());
            let mut conn = Conn::open(addr).await;
            let r = tokio::time::timeout(
                Duration::from_secs(10),
                conn.request("POST", target, &headers, &body),
            )
            .await
            .expect("an answer in time")
            .expect("a readable answer");
            assert_eq!(
                r.status,
                status,
                "stateless={stateless} case {i} {target} {extra:?}: {}",
                r.text()
            );
            assert!(r.header("mcp-session-id").is_none(), "case {i}");
        }
        // An absolute-form target naming an allowed host is served.
        let target = format!("http://127.0.0.1:{port}/mcp");
        let mut conn = Conn::open(addr).await;
        let r = conn
            .request("POST", &target, &[ACCEPT, JSON], &body)
            .await
            .expect("answer");
        assert_eq!(r.status, 200, "{}", r.text());
        eprintln!("stateless={stateless}: {count} header cases refused");
    }
}

/// A head sent halfway, or a body a byte at a time: answered 408 (or closed) once the
/// timeouts pass, where the connection would otherwise stay open for as long as the client
/// likes. 20 connections of each kind, 1 s timeouts, 20 s at most.
#[tokio::test]
async fn slow_heads_and_slow_bodies_are_cut_off() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let options = HttpOptions::default()
        .stateless(true)
        .header_read_timeout(Duration::from_secs(1))
        .body_read_timeout(Duration::from_secs(1));
    let (addr, _stop) = start(server_in(module_path!()).http_options(options)).await;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..40 {
        tasks.push(tokio::spawn(async move {
            let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n",
                addr.port()
            );
            tcp.write_all(head.as_bytes()).await.expect("write");
            let slow_body = i % 2 == 1;
            if slow_body {
                tcp.write_all(b"Content-Length: 4000000\r\n\r\n{").await.expect("write");
            }
            // Keep sending slowly (a byte per 200 ms) until the server gives up.
            let mut answer = Vec::new();
            let mut buf = [0u8; 1024];
            loop {
                tokio::select! {
                    n = tcp.read(&mut buf) => match n {
                        Ok(0) | Err(_) => break,
                        Ok(n) => answer.extend_from_slice(&buf[..n]),
                    },
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {
                        let byte: &[u8] = if slow_body { b" " } else { b"X" };
                        if tcp.write_all(byte).await.is_err() {
                            break;
                        }
                    }
                }
            }
            (slow_body, String::from_utf8_lossy(&answer).into_owned())
        }));
    }
    let mut timed_out = 0;
    for task in tasks {
        let (slow_body, answer) = tokio::time::timeout(Duration::from_secs(20), task)
            .await
            .expect("the server closed the connection in time")
            .expect("task");
        if slow_body {
            // A slow body holds its room in the memory budget while it comes: the bodies
            // beyond the budget's room are refused after waiting for it, unread.
            if answer.starts_with("HTTP/1.1 503") {
                assert!(answer.contains("retry-after: 1"), "{answer}");
                continue;
            }
            assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
            assert!(answer.contains("-32600"), "{answer}");
            timed_out += 1;
        } else {
            assert!(
                answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
                "{answer}"
            );
        }
    }
    assert!(timed_out >= 1, "no slow body was timed out");
    eprintln!(
        "40 slow clients cut off after {:?} ({timed_out} slow bodies timed out)",
        started.elapsed()
    );
    still_serving(addr, 1).await;
}

#[tokio::test]
async fn arguments_over_the_value_budget_get_a_tool_error_on_every_path() {
    let options = HttpOptions::default().stateless(true);
    let search = disco_runtime::SearchOptions::default().enabled(true);
    let (addr, _stop) = start(
        server_in(module_path!())
            .search(search)
            .max_argument_values(50)
            .http_options(options),
    )
    .await;
    let within: Vec<u32> = (0..49).collect();
    let over: Vec<u32> = (0..50).collect();
    let r = post(
        addr,
        &[],
        &call(1, "count_limits", json!({"limits": within})),
    )
    .await;
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "49",
        "{}",
        r.text()
    );
    for (id, name, arguments) in [
        (2, "count_limits", json!({"limits": over})),
        (3, "count_limits", json!({"limits": vec!["1"; 60]})),
        (4, "count_lmits", json!({"limits": over})),
        (
            5,
            "execute_tool",
            json!({"name": "count_limits", "arguments": {"limits": over}}),
        ),
        (6, "tool_search", json!({"query": vec!["x"; 60]})),
    ] {
        let r = post(addr, &[], &call(id, name, arguments)).await;
        let v = r.json();
        assert_eq!(v["result"]["isError"], true, "{name}: {v}");
        let text = v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains("more than 50 values"), "{name}: {text}");
        assert!(r.body.len() < 2_000, "{name}: {} bytes", r.body.len());
    }
    still_serving(addr, 7).await;
}

/// The default budget, against the shape that costs most: a million strings where integers
/// are expected, in one body under the default 4 MiB limit, refused before it is parsed (413
/// with the id, as a body over the size limit); 100,000 values, the budget, are served; and
/// 2,000 wrong ones are reported by their first error alone.
#[tokio::test]
async fn a_million_wrong_values_are_refused_before_they_are_parsed() {
    let (addr, _stop) =
        start(server_in(module_path!()).http_options(HttpOptions::default().stateless(true))).await;
    for values in [vec![json!("1"); 1_000_000], vec![json!(1); 200_000]] {
        let body = call(1, "count_limits", json!({ "limits": values }));
        assert!(body.len() < 4 * 1024 * 1024);
        let r = post(addr, &[], &body).await;
        assert_eq!(r.status, 413, "{}", r.text());
        let v = r.json();
        assert_error(&v, -32600, Some(json!(1)));
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("more than 100064 JSON values"),
            "{v}"
        );
    }
    let r = post(
        addr,
        &[],
        &call(4, "count_limits", json!({"limits": vec![7; 99_999]})),
    )
    .await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "99999");
    let r = post(
        addr,
        &[],
        &call(2, "count_limits", json!({"limits": vec!["1"; 2_000]})),
    )
    .await;
    let v = r.json();
    assert_eq!(v["result"]["isError"], true, "{v}");
    let text = v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("/limits/"), "{text}");
    assert!(r.body.len() < 4_000, "{} bytes", r.body.len());
    still_serving(addr, 3).await;
}

#[tokio::test]
async fn the_endpoint_path_is_served_as_written() {
    // Paths that look like axum's capture syntax, old and new, or lack their leading `/`.
    let cases = [
        ("/mcp/v1", "/mcp/v1"),
        ("/:tenant/{id}", "/:tenant/{id}"),
        ("/*all", "/*all"),
        ("rpc", "/rpc"),
    ];
    for (path, served) in cases {
        let (addr, _stop) = start(
            server_in(module_path!())
                .http_options(HttpOptions::default().stateless(true).path(path)),
        )
        .await;
        let body = call(1, "echo", json!({"text": "here"}));
        let mut conn = Conn::open(addr).await;
        let r = conn
            .request("POST", served, &[ACCEPT, JSON], &body)
            .await
            .expect("an answer");
        assert_eq!(r.status, 200, "{path:?} at {served:?}: {}", r.text());
        assert_eq!(r.json()["result"]["content"][0]["text"], "here", "{path:?}");
        // A capture it would have been matches nothing else.
        let mut conn = Conn::open(addr).await;
        let other = if served.contains(':') || served.contains('{') || served.contains('*') {
            "/x/y"
        } else {
            "/mcp"
        };
        let r = conn
            .request("POST", other, &[ACCEPT, JSON], &body)
            .await
            .expect("an answer");
        assert_eq!(r.status, 404, "{path:?} answered at {other:?}");
    }
}
