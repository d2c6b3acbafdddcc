//! A session's `tools/call` over Streamable HTTP run beside rmcp's loop
//! (`HttpOptions::calls_beside`), each rule of that path from the client's side:
//!
//! - every call is answered exactly as a server without the option answers it (status,
//!   content type, body), over requests generated from the rule: each header rmcp validates
//!   and each `_meta` key the path checks, varied alone from a call the path takes and in
//!   random combinations; and the call runs beside rmcp's loop exactly when the rule says so;
//! - a cancelled call's POST ends with no answer, and its tool sees its token cancelled; so
//!   does a call whose session is deleted under it;
//! - many calls of one session at once are each answered once, under their own ids;
//! - a call slower than the JSON wait gets its head at once, as an event stream whose one
//!   event is the answer rmcp's path gives;
//! - a call whose id is in use by another call run beside goes through rmcp;
//! - a session answers only to its creator, and the rate limit counts calls run beside;
//! - a session no request names for the idle time is closed (a long call keeps it, an open GET
//!   stream does not), and its calls then get 404.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use crate::common::http::*;
use crate::common::notes::noted;
use crate::common::{server_in, Rng};
use disco_runtime::{
    mcp_tool, BearerTokens, Caller, Context, HttpOptions, RateLimit, Server, ServerHandle,
};
use serde_json::{json, Value};
use tokio::task::JoinHandle;

const WAIT: Duration = Duration::from_secs(20);

/// Repeat a text back.
#[mcp_tool(read_only)]
fn echo(text: String) -> String {
    text
}

/// Add two numbers.
#[mcp_tool(read_only)]
fn add_numbers(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Refuse every input.
#[mcp_tool(read_only)]
fn refuse(reason: String) -> Result<String, String> {
    Err(format!("refused: {reason}"))
}

/// Note `started:TAG` and wait for the call's cancellation; note how the call ended
/// (`common::notes::until_cancelled`).
#[mcp_tool(read_only)]
async fn until_cancelled(ctx: Context, tag: String) -> String {
    crate::common::notes::until_cancelled(ctx, tag).await
}

/// Wait `ms` milliseconds, then answer `tag`.
#[mcp_tool(read_only)]
async fn later(tag: String, ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    tag
}

/// A server over this module's tools, with calls beside rmcp's loop or not.
async fn serve(beside: bool) -> (SocketAddr, ServerHandle, tokio::sync::oneshot::Sender<()>) {
    serve_with(HttpOptions::default().calls_beside(beside)).await
}

async fn serve_with(
    options: HttpOptions,
) -> (SocketAddr, ServerHandle, tokio::sync::oneshot::Sender<()>) {
    let server: Server = server_in(module_path!()).http_options(options);
    let handle = server.handle();
    let (addr, stop) = start(server).await;
    (addr, handle, stop)
}

fn call_body(id: Value, name: &str, arguments: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
    .to_string()
    .into_bytes()
}

fn beside_count(handle: &ServerHandle) -> u64 {
    handle.calls_beside().expect("the server runs")
}

/// The headers of a request of `session`, a session of protocol 2025-06-18.
fn in_session(session: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-06-18"),
    ]
}

/// POSTs `body` in `session` from a task of its own; the task ends with the reply.
fn spawn_post(addr: SocketAddr, session: &str, body: Vec<u8>) -> JoinHandle<Reply> {
    let session = session.to_owned();
    tokio::spawn(async move { post(addr, &in_session(&session), &body).await })
}

/// The reply of a POST whose call was cancelled: it ends, with no answer.
async fn unanswered(pending: JoinHandle<Reply>) -> Reply {
    let r = tokio::time::timeout(WAIT, pending)
        .await
        .expect("the POST ends")
        .expect("the request task");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.body.is_empty(), "no answer: {}", r.text());
    r
}

/// Opens a session and waits until its calls run beside rmcp's loop: rmcp's loop hears of
/// `notifications/initialized` after its POST was answered, so the first calls may still go
/// through rmcp.
async fn open_ready(addr: SocketAddr, handle: &ServerHandle) -> String {
    let session = open_session(addr, &[]).await;
    let headers = in_session(&session);
    let ready = async {
        for n in 0.. {
            let before = beside_count(handle);
            let call = call_body(
                json!(format!("ready-{n}")),
                "echo",
                json!({"text": "ready?"}),
            );
            let r = post(addr, &headers, &call).await;
            assert_eq!(r.json()["result"]["content"][0]["text"], "ready?");
            if beside_count(handle) > before {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(WAIT, ready)
        .await
        .expect("the session's calls run beside rmcp's loop");
    session
}

/// One way of sending a call: the headers and the `_meta` the rule reads.
#[derive(Clone, Debug)]
struct Shape {
    origin: Option<&'static str>,
    accept: &'static str,
    content_type: &'static str,
    version: Option<&'static str>,
    extra: Option<(&'static str, &'static str)>,
    /// The `Host` header, `{port}` replaced by the server's.
    host: &'static str,
    meta: Option<Value>,
}

const ORIGINS: [Option<&str>; 3] = [
    None,
    Some("http://localhost:5173"),
    Some("http://evil.example"),
];
const ACCEPTS: [&str; 6] = [
    "application/json, text/event-stream",
    "text/event-stream, application/json",
    "application/json;q=1, text/event-stream",
    "application/json",
    "*/*",
    "APPLICATION/JSON, TEXT/EVENT-STREAM",
];
const CONTENT_TYPES: [&str; 3] = [
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
];
const VERSIONS: [Option<&str>; 7] = [
    None,
    Some("2025-03-26"),
    Some("2025-06-18"),
    Some("2025-11-25"),
    Some("2024-11-05"),
    Some("2026-07-28"),
    Some("1999-01-01"),
];
const EXTRAS: [Option<(&str, &str)>; 3] = [
    None,
    Some(("Mcp-Method", "tools/call")),
    Some(("Mcp-Name", "echo")),
];
const HOSTS: [&str; 6] = [
    "127.0.0.1:{port}",
    "LOCALHOST:{port}",
    "[::1]:{port}",
    "127.0.0.1",
    "localhost.:{port}",
    "evil.example:{port}",
];

fn metas() -> Vec<Option<Value>> {
    vec![
        None,
        Some(json!({"progressToken": "p-1"})),
        Some(json!({"progressToken": 7})),
        Some(json!({"io.modelcontextprotocol/protocolVersion": "2025-11-25"})),
        Some(json!({"other": true})),
    ]
}

impl Shape {
    /// A call the path takes.
    fn taken() -> Shape {
        Shape {
            origin: None,
            accept: ACCEPTS[0],
            content_type: CONTENT_TYPES[0],
            version: Some("2025-06-18"),
            extra: None,
            host: HOSTS[0],
            meta: None,
        }
    }

    /// Whether the path takes a call sent this way: the rule, written from its documentation
    /// (http_calls.rs), not from its code.
    fn runs_beside(&self) -> bool {
        let accept_plain = !self.accept.contains([';', '"'])
            && self
                .accept
                .split(',')
                .any(|m| m.trim().eq_ignore_ascii_case("application/json"))
            && self
                .accept
                .split(',')
                .any(|m| m.trim().eq_ignore_ascii_case("text/event-stream"));
        let version_ok = match self.version {
            None => true,
            Some(v) => ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"].contains(&v),
        };
        let json_body = self.content_type.starts_with("application/json");
        let host_ok = [
            "127.0.0.1:{port}",
            "LOCALHOST:{port}",
            "[::1]:{port}",
            "127.0.0.1",
        ]
        .contains(&self.host);
        let meta_ok = self.meta.as_ref().is_none_or(|m| {
            m.get("progressToken").is_none()
                && m.get("io.modelcontextprotocol/protocolVersion").is_none()
        });
        self.origin.is_none()
            && accept_plain
            && version_ok
            && json_body
            && self.extra.is_none()
            && host_ok
            && meta_ok
    }

    /// Every shape that differs from [`Shape::taken`] in one thing, then `random` shapes
    /// drawn from every value of every thing.
    fn generated(random: usize) -> Vec<Shape> {
        let base = Shape::taken();
        let mut shapes = vec![base.clone()];
        let mut vary = |change: &dyn Fn(&mut Shape)| {
            let mut shape = base.clone();
            change(&mut shape);
            shapes.push(shape);
        };
        for origin in ORIGINS {
            vary(&|s| s.origin = origin);
        }
        for accept in ACCEPTS {
            vary(&|s| s.accept = accept);
        }
        for content_type in CONTENT_TYPES {
            vary(&|s| s.content_type = content_type);
        }
        for version in VERSIONS {
            vary(&|s| s.version = version);
        }
        for extra in EXTRAS {
            vary(&|s| s.extra = extra);
        }
        for host in HOSTS {
            vary(&|s| s.host = host);
        }
        for meta in metas() {
            vary(&|s| s.meta = meta.clone());
        }
        let mut rng = Rng(0x5eed_ca11);
        let all_metas = metas();
        for _ in 0..random {
            shapes.push(Shape {
                origin: *rng.pick(&ORIGINS),
                accept: ACCEPTS[rng.below(ACCEPTS.len())],
                content_type: CONTENT_TYPES[rng.below(CONTENT_TYPES.len())],
                version: *rng.pick(&VERSIONS),
                extra: *rng.pick(&EXTRAS),
                host: HOSTS[rng.below(HOSTS.len())],
                meta: rng.pick(&all_metas).clone(),
            });
        }
        shapes
    }

    fn headers(&self, session: &str, port: u16) -> Vec<(String, String)> {
        let mut headers = vec![
            ("Accept".to_owned(), self.accept.to_owned()),
            ("Content-Type".to_owned(), self.content_type.to_owned()),
            ("Mcp-Session-Id".to_owned(), session.to_owned()),
            (
                "Host".to_owned(),
                self.host.replace("{port}", &port.to_string()),
            ),
        ];
        if let Some(origin) = self.origin {
            headers.push(("Origin".to_owned(), origin.to_owned()));
        }
        if let Some(version) = self.version {
            headers.push(("MCP-Protocol-Version".to_owned(), version.to_owned()));
        }
        if let Some((name, value)) = self.extra {
            headers.push((name.to_owned(), value.to_owned()));
        }
        headers
    }
}

/// The calls sent in each shape: ids of both kinds, answers and errors of every sort.
fn calls(rng: &mut Rng) -> Value {
    let id = match rng.below(3) {
        0 => json!(rng.below(1_000_000)),
        1 => json!(format!("call-{}", rng.below(1_000))),
        _ => json!(-(rng.below(100) as i64)),
    };
    let params = match rng.below(7) {
        0 => json!({"name": "echo", "arguments": {"text": "hi there"}}),
        1 => json!({"name": "add_numbers", "arguments": {"a": 2, "b": 40}}),
        2 => json!({"name": "refuse", "arguments": {"reason": "no"}}),
        3 => json!({"name": "echo", "arguments": {"txt": "a misnamed argument"}}),
        4 => json!({"name": "ecoh", "arguments": {"text": "a misspelled tool"}}),
        5 => json!({"name": "no_such_tool_anywhere", "arguments": {}}),
        _ => json!({"name": "add_numbers", "arguments": {"a": "two", "b": 40}}),
    };
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// A reply as the generated shapes compare it: its status, content type, and message.
struct Compared {
    status: u16,
    content_type: String,
    body: Result<Value, String>,
}

async fn send_as(addr: SocketAddr, headers: &[(String, String)], body: &Value) -> Compared {
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let r = send(addr, "POST", &headers, body.to_string().as_bytes()).await;
    let content_type = r.header("content-type").unwrap_or("").to_owned();
    let body = if content_type.starts_with("text/event-stream") {
        Ok(r.json())
    } else {
        serde_json::from_slice(&r.body).map_err(|_| r.text())
    };
    Compared {
        status: r.status,
        content_type,
        body,
    }
}

#[tokio::test]
async fn calls_are_answered_as_through_rmcp_and_run_beside_it_by_the_rule() {
    let (beside_addr, beside, _stop_beside) = serve(true).await;
    let (plain_addr, plain, _stop_plain) = serve(false).await;
    let beside_session = open_ready(beside_addr, &beside).await;
    let plain_session = open_session(plain_addr, &[]).await;
    let mut rng = Rng(42);
    let shapes = Shape::generated(150);
    let (mut taken, mut left) = (0, 0);
    for shape in &shapes {
        let mut body = calls(&mut rng);
        if let Some(meta) = &shape.meta {
            body["params"]["_meta"] = meta.clone();
        }
        let before = beside_count(&beside);
        let got = send_as(
            beside_addr,
            &shape.headers(&beside_session, beside_addr.port()),
            &body,
        )
        .await;
        let ran_beside = beside_count(&beside) - before;
        let want = send_as(
            plain_addr,
            &shape.headers(&plain_session, plain_addr.port()),
            &body,
        )
        .await;
        let expected = shape.runs_beside();
        assert_eq!(
            ran_beside,
            u64::from(expected),
            "{shape:?} {body}: beside rmcp's loop {ran_beside} times, the rule says {expected}"
        );
        if expected {
            taken += 1;
            // Answered here: JSON, whatever rmcp's stream would have been.
            assert!(
                got.content_type.starts_with("application/json"),
                "{shape:?}"
            );
        } else {
            left += 1;
        }
        assert_eq!(got.status, want.status, "{shape:?} {body}");
        assert_eq!(got.body, want.body, "{shape:?} {body}");
        let essence = |c: &str| c.split(';').next().unwrap_or("").trim().to_owned();
        if got.status == 200 {
            assert_eq!(
                essence(&got.content_type),
                essence(&want.content_type),
                "{shape:?} {body}"
            );
        }
    }
    assert_eq!(beside_count(&plain), 0, "the option is off there");
    assert!(taken >= 10 && left >= 10, "{taken} taken, {left} left");
}

#[tokio::test]
async fn a_cancelled_call_gets_no_answer_and_its_tool_sees_the_cancellation() {
    let (addr, handle, _stop) = serve(true).await;
    let session = open_ready(addr, &handle).await;
    let headers = in_session(&session);
    for (n, id) in [json!(11), json!("eleven"), json!(0)]
        .into_iter()
        .enumerate()
    {
        let tag = format!("http-cancel-{n}");
        let call = call_body(id.clone(), "until_cancelled", json!({"tag": tag}));
        let before = beside_count(&handle);
        let pending = spawn_post(addr, &session, call);
        noted(&format!("started:{tag}")).await;
        assert_eq!(beside_count(&handle), before + 1, "run beside rmcp's loop");
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "no longer needed"}});
        let r = post(addr, &headers, cancel.to_string().as_bytes()).await;
        assert_eq!(r.status, 202, "{}", r.text());
        noted(&format!("cancelled:{tag}")).await;
        let r = unanswered(pending).await;
        assert!(
            r.header("content-type")
                .is_some_and(|c| c.starts_with("text/event-stream")),
            "{r:?}"
        );
    }
    // The session goes on: the next call is answered.
    let still = call_body(json!(99), "echo", json!({"text": "still here"}));
    let r = post(addr, &headers, &still).await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "still here");
}

#[tokio::test]
async fn a_deleted_session_cancels_its_calls() {
    let (addr, handle, _stop) = serve(true).await;
    let session = open_ready(addr, &handle).await;
    let before = beside_count(&handle);
    let tags: Vec<String> = (0..3).map(|n| format!("http-deleted-{n}")).collect();
    let mut pending = Vec::new();
    for (n, tag) in tags.iter().enumerate() {
        let call = call_body(json!(n), "until_cancelled", json!({"tag": tag}));
        pending.push(spawn_post(addr, &session, call));
    }
    for tag in &tags {
        noted(&format!("started:{tag}")).await;
    }
    assert_eq!(beside_count(&handle) - before, 3, "run beside rmcp's loop");
    let r = send(addr, "DELETE", &[("Mcp-Session-Id", &session)], b"").await;
    assert_eq!(r.status, 204, "{}", r.text());
    for (tag, pending) in tags.iter().zip(pending) {
        noted(&format!("cancelled:{tag}")).await;
        unanswered(pending).await;
    }
    let gone = call_body(json!(5), "echo", json!({"text": "gone"}));
    let r = post(addr, &in_session(&session), &gone).await;
    assert_eq!(r.status, 404, "{}", r.text());
}

#[tokio::test]
async fn many_calls_at_once_are_each_answered_under_their_own_id() {
    let (addr, handle, _stop) = serve(true).await;
    let session = open_ready(addr, &handle).await;
    let before = beside_count(&handle);
    let mut rng = Rng(7);
    let mut pending = Vec::new();
    for n in 0..48u64 {
        let ms = rng.below(30) as u64;
        let id = if n % 2 == 0 {
            json!(n)
        } else {
            json!(format!("id-{n}"))
        };
        let tag = format!("answer-{n}");
        let call = call_body(id.clone(), "later", json!({"tag": tag, "ms": ms}));
        pending.push((id, tag, spawn_post(addr, &session, call)));
    }
    let mut answered = HashMap::new();
    for (id, tag, pending) in pending {
        let r = tokio::time::timeout(WAIT, pending)
            .await
            .expect("answered in time")
            .expect("the request task");
        let v: Value = serde_json::from_slice(&r.body).expect("a JSON answer");
        assert_eq!(v["id"], id, "{v}");
        assert_eq!(v["result"]["content"][0]["text"], tag.as_str(), "{v}");
        assert!(answered.insert(tag, id).is_none());
    }
    assert_eq!(answered.len(), 48);
    assert_eq!(beside_count(&handle) - before, 48);
}

#[tokio::test]
async fn a_slow_call_gets_its_head_at_once_and_the_answer_as_its_event() {
    let (beside_addr, beside, _stop_beside) = serve(true).await;
    let (plain_addr, _plain, _stop_plain) = serve(false).await;
    let beside_session = open_ready(beside_addr, &beside).await;
    let plain_session = open_session(plain_addr, &[]).await;
    let before = beside_count(&beside);
    for (n, id) in [json!(3), json!("slow")].into_iter().enumerate() {
        let tag = format!("slow-{n}");
        let body = call_body(id, "later", json!({"tag": tag, "ms": 600}));
        let got = post(beside_addr, &in_session(&beside_session), &body).await;
        let want = post(plain_addr, &in_session(&plain_session), &body).await;
        assert_eq!(got.status, 200, "{}", got.text());
        assert!(
            got.header("content-type")
                .is_some_and(|c| c.starts_with("text/event-stream")),
            "{got:?}"
        );
        assert_eq!(got.json(), want.json(), "the answer rmcp's path gives");
        assert_eq!(got.json()["result"]["content"][0]["text"], tag.as_str());
    }
    assert_eq!(beside_count(&beside) - before, 2, "run beside rmcp's loop");
}

#[tokio::test]
async fn a_call_whose_id_is_in_use_goes_through_rmcp() {
    let (addr, handle, _stop) = serve(true).await;
    let session = open_ready(addr, &handle).await;
    let headers = in_session(&session);
    for id in [json!(8), json!("eight")] {
        let tag = format!("http-in-use-{id}");
        let before = beside_count(&handle);
        let body = call_body(id.clone(), "until_cancelled", json!({"tag": tag}));
        let first = spawn_post(addr, &session, body);
        noted(&format!("started:{tag}")).await;
        assert_eq!(beside_count(&handle) - before, 1);
        let twin = call_body(id.clone(), "echo", json!({"text": "twin"}));
        let r = post(addr, &headers, &twin).await;
        assert_eq!(
            r.json()["result"]["content"][0]["text"],
            "twin",
            "{}",
            r.text()
        );
        assert_eq!(
            beside_count(&handle) - before,
            1,
            "the twin went through rmcp"
        );
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id}});
        let r = post(addr, &headers, cancel.to_string().as_bytes()).await;
        assert_eq!(r.status, 202, "{}", r.text());
        noted(&format!("cancelled:{tag}")).await;
        unanswered(first).await;
    }
}

#[tokio::test]
async fn a_session_answers_its_creator_alone_and_calls_beside_count_against_the_rate() {
    let tokens = BearerTokens::new()
        .token("token-a", Caller::new("alice"))
        .token("token-b", Caller::new("bob"));
    let options = HttpOptions::default()
        .calls_beside(true)
        .bearer_auth(tokens)
        .rate_limit(Some(RateLimit::new(0.001, 40)));
    let (addr, handle, _stop) = serve_with(options).await;
    let alice = ("Authorization", "Bearer token-a");
    let session = open_session(addr, &[alice]).await;
    let [named, version] = in_session(&session);
    let as_alice = [alice, named, version];
    // Alice's calls run beside rmcp's loop (once the session is registered).
    let mut ran = false;
    for n in 0..20 {
        let before = beside_count(&handle);
        let body = call_body(json!(n), "echo", json!({"text": "alice"}));
        let r = post(addr, &as_alice, &body).await;
        assert_eq!(r.json()["result"]["content"][0]["text"], "alice");
        if beside_count(&handle) > before {
            ran = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(ran, "alice's calls run beside rmcp's loop");
    // Bob, with alice's session: as for a session that does not exist, and nothing runs.
    let as_bob = [("Authorization", "Bearer token-b"), named, version];
    for id in [json!(100), json!("bob")] {
        let before = beside_count(&handle);
        let r = post(
            addr,
            &as_bob,
            &call_body(id, "echo", json!({"text": "bob"})),
        )
        .await;
        assert_eq!(r.status, 404, "{}", r.text());
        assert_eq!(beside_count(&handle), before);
    }
    // Alice's burst runs out, beside rmcp's loop as through it: 429, and no call runs.
    let mut refused = false;
    for n in 0..60 {
        let before = beside_count(&handle);
        let body = call_body(json!(1000 + n), "echo", json!({"text": "again"}));
        let r = post(addr, &as_alice, &body).await;
        if r.status == 429 {
            assert_eq!(beside_count(&handle), before, "a refused call does not run");
            refused = true;
            break;
        }
        assert_eq!(r.status, 200, "{}", r.text());
    }
    assert!(refused, "the rate limit refused a call run beside");
}

#[tokio::test]
async fn an_idle_session_is_closed_unless_a_call_keeps_it() {
    let idle = Duration::from_millis(400);
    let options = HttpOptions::default().calls_beside(true).session_idle(idle);
    let (addr, handle, _stop) = serve_with(options).await;

    // A call three times as long as the idle time is answered: the session stays while it runs.
    let session = open_ready(addr, &handle).await;
    let long = call_body(json!(1), "later", json!({"tag": "long", "ms": 1200}));
    let r = post(addr, &in_session(&session), &long).await;
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "long",
        "{}",
        r.text()
    );
    // Then nothing names it: it is closed, and a call gets 404.
    gone(addr, &session).await;

    // An open GET stream does not keep its session.
    let session = open_ready(addr, &handle).await;
    let listening = {
        let session = session.clone();
        tokio::spawn(async move {
            let mut stream = Conn::open(addr).await;
            let [named, version] = in_session(&session);
            let headers = [("Accept", "text/event-stream"), named, version];
            stream.request("GET", "/mcp", &headers, b"").await
        })
    };
    gone(addr, &session).await;
    let _ = tokio::time::timeout(WAIT, listening).await;
}

/// Waits until a call naming `session` gets 404, asking every second (each call names the
/// session, so the asking leaves it idle long enough between calls).
async fn gone(addr: SocketAddr, session: &str) {
    let headers = in_session(session);
    let closed = async {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let body = call_body(json!("idle?"), "echo", json!({"text": "idle?"}));
            let r = post(addr, &headers, &body).await;
            if r.status == 404 {
                return;
            }
            assert_eq!(r.status, 200, "{}", r.text());
        }
    };
    tokio::time::timeout(Duration::from_secs(30), closed)
        .await
        .expect("the idle session is closed");
}
