//! Limits that hold across requests over HTTP: the memory budget of requests in flight (a
//! request that finds no room waits at most a second holding nothing, then gets 503 with
//! `Retry-After`) and the rate limit per caller (429 with `Retry-After`, per bearer token's
//! caller, anonymous callers as one; requests counted, not notifications or responses; off by
//! default). Servers run in-process on 127.0.0.1:0.

use std::net::SocketAddr;
use std::time::Duration;

use crate::common::http::*;
use crate::common::server_in;
use disco_runtime::{mcp_tool, BearerTokens, Caller, HttpOptions, RateLimit};
use serde_json::json;
use tokio::io::AsyncWriteExt;

/// Repeat a text back.
#[mcp_tool(read_only)]
fn echo(text: String) -> String {
    text
}

/// How long a test waits for what must happen: far longer than it takes on a busy machine.
const LIVENESS: Duration = Duration::from_secs(20);

/// How long a request that finds no room waits before its 503, in the budget's test.
const MEMORY_WAIT: Duration = Duration::from_secs(5);

fn echo_call(id: i64) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": "alive"}}})
    .to_string()
    .into_bytes()
}

fn assert_served(r: &Reply, id: i64) {
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["id"], id, "{v}");
    assert_eq!(v["result"]["content"][0]["text"], "alive", "{v}");
}

/// A request whose head declares a body of `len` bytes, of which it sends only the first
/// few: it holds its room in the budget while the server waits for the rest.
async fn hold_room(addr: SocketAddr, len: usize) -> tokio::net::TcpStream {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n{{\"jsonrpc\"",
        addr.port()
    );
    tcp.write_all(head.as_bytes()).await.expect("write");
    tcp
}

/// The answer to a request sent while another holds the budget: requests sent before the
/// server took the room for the holder are served; the first one after is refused (503).
async fn refused_while_held(addr: SocketAddr, headers: &[(&str, &str)]) -> Reply {
    let deadline = std::time::Instant::now() + LIVENESS;
    loop {
        let r = post(addr, headers, &echo_call(2)).await;
        if r.status == 503 {
            return r;
        }
        assert_served(&r, 2);
        assert!(std::time::Instant::now() < deadline, "never refused");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn beyond_the_memory_budget_a_request_waits_then_gets_503_with_retry_after() {
    let _alone = crate::common::HEAVY.lock().await;
    for stateless in [true, false] {
        // A request that finds no room waits 5 s: long enough that the one below, sent before
        // the room frees, still waits when it does, however busy the machine.
        let options = HttpOptions::default()
            .stateless(stateless)
            .request_memory_wait(MEMORY_WAIT);
        // Room for one small request: each of these costs more than half of it.
        let budget = options.request_cost(100_000, 1_000);
        let (addr, _stop) =
            start(server_in(module_path!()).http_options(options.request_memory(budget))).await;
        let headers: &[(&str, &str)] = if stateless {
            &[]
        } else {
            &[("MCP-Protocol-Version", "2025-06-18")]
        };
        let session = if stateless {
            None
        } else {
            Some(open_session(addr, &[]).await)
        };
        let mut with_session = headers.to_vec();
        if let Some(id) = &session {
            with_session.push(("Mcp-Session-Id", id.as_str()));
        }
        assert_served(&post(addr, &with_session, &echo_call(1)).await, 1);

        let held = hold_room(addr, 900).await;
        let refused = refused_while_held(addr, &with_session).await;
        assert_eq!(refused.header("retry-after"), Some("1"));
        let v = refused.json();
        assert_eq!(v["error"]["code"], -32000, "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("busy")),
            "{v}"
        );
        // The room comes back when the holder goes: the next request is served.
        // The room comes back when the holder goes: a request is served again, within the
        // liveness bound.
        drop(held);
        let deadline = std::time::Instant::now() + LIVENESS;
        let served = loop {
            let r = post(addr, &with_session, &echo_call(3)).await;
            if r.status != 503 || std::time::Instant::now() >= deadline {
                break r;
            }
        };
        assert_served(&served, 3);

        // A request waiting when the room frees within the second is served, not refused.
        let held = hold_room(addr, 900).await;
        refused_while_held(addr, &with_session).await;
        let waiting = tokio::spawn({
            let with_session: Vec<(String, String)> = with_session
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            async move {
                let h: Vec<(&str, &str)> = with_session
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                post(addr, &h, &echo_call(4)).await
            }
        });
        // Time for the request to reach the server and start waiting; far within its wait.
        tokio::time::sleep(Duration::from_millis(300)).await;
        drop(held);
        let waited = waiting.await.expect("the waiting request");
        assert_served(&waited, 4);
    }
}

#[tokio::test]
async fn a_body_declared_over_the_limit_gets_413_before_it_is_read() {
    let options = HttpOptions::default().stateless(true).max_body_bytes(1_000);
    let (addr, _stop) = start(server_in(module_path!()).http_options(options)).await;
    // Declared over the limit, nothing of it sent: answered at once.
    let tcp = hold_room(addr, 1_001).await;
    let mut reader = tokio::io::BufReader::new(tcp);
    let mut line = String::new();
    tokio::time::timeout(
        Duration::from_secs(10),
        tokio::io::AsyncBufReadExt::read_line(&mut reader, &mut line),
    )
    .await
    .expect("an answer before the body")
    .expect("readable");
    assert!(line.contains(" 413 "), "{line}");
}

fn rate_limited(limit: Option<RateLimit>, auth: bool) -> disco_runtime::Server {
    let mut options = HttpOptions::default().stateless(true).rate_limit(limit);
    if auth {
        options = options.bearer_auth(
            BearerTokens::new()
                .token("tok-alice", Caller::new("alice"))
                .token("tok-bob", Caller::new("bob")),
        );
    }
    server_in(module_path!()).http_options(options)
}

#[tokio::test]
async fn a_caller_over_its_rate_gets_429_and_the_others_are_served() {
    // One request every 100 s on average, three at once.
    let (addr, _stop) = start(rate_limited(Some(RateLimit::new(0.01, 3)), true)).await;
    let alice = [("Authorization", "Bearer tok-alice")];
    let bob = [("Authorization", "Bearer tok-bob")];
    for id in 0..3 {
        assert_served(&post(addr, &alice, &echo_call(id)).await, id);
    }
    for id in 3..6 {
        let r = post(addr, &alice, &echo_call(id)).await;
        assert_eq!(r.status, 429, "{}", r.text());
        let wait: u64 = r
            .header("retry-after")
            .and_then(|v| v.parse().ok())
            .expect("a Retry-After in seconds");
        assert!((1..=100).contains(&wait), "{wait}");
        let v = r.json();
        assert_eq!(v["error"]["code"], -32000, "{v}");
    }
    // Bob has a bucket of his own.
    for id in 10..13 {
        assert_served(&post(addr, &bob, &echo_call(id)).await, id);
    }
    assert_eq!(post(addr, &bob, &echo_call(13)).await.status, 429);
    // A refused token is refused before the rate counts (401), not counted for anyone.
    let wrong = [("Authorization", "Bearer nope")];
    assert_eq!(post(addr, &wrong, &echo_call(20)).await.status, 401);

    // Without tokens, every anonymous request shares one bucket.
    let (addr, _stop) = start(rate_limited(Some(RateLimit::new(0.01, 2)), false)).await;
    assert_served(&post(addr, &[], &echo_call(1)).await, 1);
    assert_served(&post(addr, &[], &echo_call(2)).await, 2);
    assert_eq!(post(addr, &[], &echo_call(3)).await.status, 429);
}

/// The messages a client POSTs that are no request, one of each kind (`RateLimit`'s rule):
/// notifications, and responses (results and errors) to the server's requests.
fn free_messages() -> Vec<serde_json::Value> {
    vec![
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 1, "reason": "the user pressed stop"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": "p", "progress": 1}}),
        json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
        json!({"jsonrpc": "2.0", "id": 41, "result": {"action": "accept", "content": {}}}),
        json!({"jsonrpc": "2.0", "id": "s-2", "error": {"code": -1, "message": "declined"}}),
    ]
}

/// Notifications and responses cost nothing: however many a caller sends, its requests are
/// served up to the burst; the request over it is refused with its own id. The same with a
/// session: `notifications/initialized` does not cost the first call.
#[tokio::test]
async fn notifications_and_responses_cost_no_request() {
    let (addr, _stop) = start(rate_limited(Some(RateLimit::new(0.01, 2)), false)).await;
    for round in 0..3 {
        for message in free_messages() {
            let r = post(addr, &[], message.to_string().as_bytes()).await;
            assert_ne!(r.status, 429, "round {round}: {message}: {}", r.text());
        }
    }
    assert_served(&post(addr, &[], &echo_call(1)).await, 1);
    for message in free_messages() {
        let r = post(addr, &[], message.to_string().as_bytes()).await;
        assert_ne!(r.status, 429, "{message}: {}", r.text());
    }
    assert_served(&post(addr, &[], &echo_call(2)).await, 2);
    let r = post(addr, &[], &echo_call(3)).await;
    assert_eq!(r.status, 429, "{}", r.text());
    assert_eq!(r.json()["id"], 3, "{}", r.text());
    // Over the rate, a notification is still taken.
    for message in free_messages() {
        let r = post(addr, &[], message.to_string().as_bytes()).await;
        assert_ne!(r.status, 429, "{message}: {}", r.text());
    }

    // Sessions: `initialize` costs one, `notifications/initialized` nothing.
    let options = HttpOptions::default().rate_limit(Some(RateLimit::new(0.01, 2)));
    let (addr, _stop) = start(server_in(module_path!()).http_options(options)).await;
    let session = open_session(addr, &[]).await;
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    assert_served(&post(addr, &in_session, &echo_call(2)).await, 2);
    assert_eq!(post(addr, &in_session, &echo_call(3)).await.status, 429);
}

/// A client that cancels a call (`notifications/cancelled`) is not refused its next call: the
/// cancellation is no request.
#[tokio::test]
async fn a_cancelled_call_does_not_cost_the_next_one() {
    let (addr, _stop) = start(rate_limited(Some(RateLimit::new(0.01, 2)), true)).await;
    let alice = [("Authorization", "Bearer tok-alice")];
    assert_served(&post(addr, &alice, &echo_call(1)).await, 1);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1, "reason": "no longer needed"}});
    let r = post(addr, &alice, cancel.to_string().as_bytes()).await;
    assert_ne!(r.status, 429, "{}", r.text());
    assert_served(&post(addr, &alice, &echo_call(2)).await, 2);
}

#[tokio::test]
async fn without_a_rate_limit_nothing_is_refused() {
    for auth in [true, false] {
        let (addr, _stop) = start(rate_limited(None, auth)).await;
        let alice = [("Authorization", "Bearer tok-alice")];
        let headers: &[(&str, &str)] = if auth { &alice } else { &[] };
        for id in 0..50 {
            assert_served(&post(addr, headers, &echo_call(id)).await, id);
        }
    }
}
