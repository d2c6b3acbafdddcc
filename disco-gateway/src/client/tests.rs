use super::*;

fn init_error(inner: Box<dyn std::error::Error + Send + Sync>) -> ClientInitializeError {
    ClientInitializeError::TransportError {
        error: rmcp::transport::DynamicTransportError::from_parts(
            "streamable-http",
            std::any::TypeId::of::<()>(),
            inner,
        ),
        context: "send initialize request".into(),
    }
}

/// A refusal is read from rmcp's typed errors (401 `AuthRequired`, 403
/// `InsufficientScope`), never from the text: an address or message with 401, 403 or
/// "Auth required" in it is not one.
#[test]
fn a_refusal_is_read_from_the_typed_error() {
    use rmcp::transport::streamable_http_client::{
        AuthRequiredError, InsufficientScopeError, StreamableHttpError,
    };
    type E = StreamableHttpError<std::io::Error>;
    let refusals: [Box<dyn std::error::Error + Send + Sync>; 2] = [
        Box::new(E::AuthRequired(AuthRequiredError::new("Bearer".into()))),
        Box::new(E::InsufficientScope(InsufficientScopeError::new(
            "Bearer error=\"insufficient_scope\"".into(),
            None,
        ))),
    ];
    for inner in refusals {
        let failure = InitFailure::of(&init_error(inner));
        assert!(failure.refused, "{}", failure.detail);
    }
    for text in [
        "error sending request for url (http://127.0.0.1:401/mcp/403)",
        "Auth required: HTTP 401 / 403 from a proxy log line",
    ] {
        let inner: [Box<dyn std::error::Error + Send + Sync>; 2] = [
            Box::new(std::io::Error::other(text)),
            Box::new(E::UnexpectedServerResponse(text.to_string().into())),
        ];
        for inner in inner {
            let failure = InitFailure::of(&init_error(inner));
            assert!(!failure.refused, "{}", failure.detail);
            assert!(failure.detail.contains(text), "{}", failure.detail);
        }
    }
}

/// A stdio server is given, of the gateway's environment, only the SDKs' default variables
/// (a shell function's value left out), then its own `env` over them: every other variable
/// of the gateway's (VS Code's inputs, another server's token) stays with the gateway.
#[test]
fn a_child_is_given_only_the_default_environment_and_its_own() {
    use std::collections::BTreeMap;
    use std::ffi::OsString;
    let others = [
        "DISCO_INPUT_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "RUST_LOG",
        "XDG_CONFIG_HOME",
    ];
    let gateway: BTreeMap<&str, String> = super::INHERITED
        .iter()
        .chain(others.iter())
        .map(|k| (*k, format!("value of {k}")))
        .collect();
    let own = BTreeMap::from([
        ("PATH".to_string(), "/own/bin".to_string()),
        ("API_KEY".to_string(), "k".to_string()),
    ]);
    let got = super::child_env(&own, |k| gateway.get(k).map(OsString::from));
    for name in super::INHERITED {
        let want = if *name == "PATH" {
            "/own/bin".to_string()
        } else {
            format!("value of {name}")
        };
        assert_eq!(got.get(&OsString::from(name)), Some(&OsString::from(want)));
    }
    for name in others {
        assert!(
            !got.contains_key(&OsString::from(name)),
            "{name} was passed"
        );
    }
    assert_eq!(
        got.get(&OsString::from("API_KEY")),
        Some(&OsString::from("k"))
    );
    assert_eq!(got.len(), super::INHERITED.len() + 1);
    // A shell function exported under a default name is not passed.
    let function = |k: &str| (k == "TERM").then(|| OsString::from("() { evil; }"));
    assert!(super::child_env(&BTreeMap::new(), function).is_empty());
}

/// An SSE event over the limit ends its answer's stream with the answer the gateway gives in
/// its place, for the request the stream answers: a tool error for a `tools/call` (as a stdio
/// line over the limit gets), a JSON-RPC error for another request; the events before it pass
/// and nothing after it is read. Any other error passes as it is.
#[tokio::test]
async fn an_sse_event_over_the_limit_ends_its_stream_with_the_answer() {
    use futures_util::StreamExt as _;
    let over = || {
        let e: Box<dyn std::error::Error + Send + Sync> =
            "SSE event exceeded the maximum size of 100 bytes".into();
        Err(sse_stream::Error::Body(e))
    };
    let event = |data: &str| Ok(sse_stream::Sse::default().event("message").data(data));
    let why = "the upstream's answer is at least 101 bytes, over the gateway's limit of 100 \
               bytes (disco.maxMessageBytes); it was not read";
    for call in [true, false] {
        let events: Events =
            futures_util::stream::iter(vec![event("before"), over(), event("after")]).boxed();
        let asked = Asked {
            id: rmcp::model::RequestId::Number(7),
            call,
        };
        let out: Vec<_> = over_limit_answered(events, asked, 100).collect().await;
        assert_eq!(out.len(), 2, "call: {call}");
        assert!(matches!(&out[0], Ok(e) if e.data.as_deref() == Some("before")));
        let Ok(answer) = &out[1] else {
            panic!(
                "call: {call}: {:?}",
                out[1].as_ref().err().map(|e| e.to_string())
            )
        };
        let answer: serde_json::Value =
            serde_json::from_str(answer.data.as_deref().unwrap_or_default()).unwrap();
        assert_eq!(answer["id"], 7, "{answer}");
        if call {
            assert_eq!(answer["result"]["isError"], true, "{answer}");
            assert_eq!(answer["result"]["content"][0]["text"], why, "{answer}");
        } else {
            assert_eq!(answer["error"]["code"], -32603, "{answer}");
            assert_eq!(answer["error"]["message"], why, "{answer}");
        }
    }
    // Another error is not taken for one over the limit.
    let broken: Box<dyn std::error::Error + Send + Sync> = "connection reset".into();
    let events: Events =
        futures_util::stream::iter(vec![Err(sse_stream::Error::Body(broken))]).boxed();
    let asked = Asked {
        id: rmcp::model::RequestId::Number(8),
        call: true,
    };
    let out: Vec<_> = over_limit_answered(events, asked, 100).collect().await;
    assert!(matches!(&out[..], [Err(e)] if e.to_string().contains("connection reset")));
}

/// A call beside rmcp's loop against one that goes through it, over a script upstream that
/// answers `initialize` with the protocol version it is given and writes every request's line
/// to a file: the request is the one rmcp's peer writes, in each era, and what differs for an
/// upstream's own requests is pinned.
mod beside {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use disco_runtime::rmcp;
    use disco_runtime::Context;
    use rmcp::model::ProtocolVersion;
    use serde_json::{json, Value};
    use tokio_util::sync::CancellationToken;

    use crate::call::{call_on, Calls, Connection};
    use crate::client::{self, Endpoint, Role, Running};
    use crate::relay::Heard;

    /// The upstream: answers `initialize` with `argv[1]` as its protocol version; writes the line
    /// of every `tools/list`, `tools/call` and `notifications/cancelled` to `argv[2]`; answers `tools/list` with no tools and
    /// a call with its arguments' `ask` (a method) by first sending that request of its own, then
    /// answering the call with the gateway's answer to it as the text; any other call with "ok".
    const UPSTREAM: &str = r#"
import json, sys
era, log = sys.argv[1], open(sys.argv[2], "a")
def send(message):
    print(json.dumps(message), flush=True)
asked = {"sampling/createMessage": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 1},
         "roots/list": {},
         "elicitation/create": {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}}
waiting = {}
n = 0
for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": era,
              "capabilities": {"tools": {}}, "serverInfo": {"name": "script", "version": "1"}}})
    elif method == "notifications/cancelled":
        log.write(line)
        log.flush()
    elif method in ("tools/list", "tools/call"):
        log.write(line)
        log.flush()
        if method == "tools/list":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}})
            continue
        ask = message["params"].get("arguments", {}).get("ask")
        if ask:
            n += 1
            waiting["up-%d" % n] = message["id"]
            send({"jsonrpc": "2.0", "id": "up-%d" % n, "method": ask, "params": asked[ask]})
        else:
            send({"jsonrpc": "2.0", "id": message["id"],
                  "result": {"content": [{"type": "text", "text": "ok"}]}})
    elif method is None and message.get("id") in waiting:
        call = waiting.pop(message["id"])
        send({"jsonrpc": "2.0", "id": call,
              "result": {"content": [{"type": "text", "text": json.dumps(message)}]}})
"#;

    const LIMIT: Duration = Duration::from_secs(30);

    struct Upstream {
        running: Running,
        direct: Connection,
        through_loop: Connection,
        calls: Calls,
        log: std::path::PathBuf,
    }

    impl Drop for Upstream {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.log);
        }
    }

    async fn upstream(era: &str) -> Upstream {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let log = std::env::temp_dir().join(format!(
            "disco-gateway-call-{}-{n}.jsonl",
            std::process::id()
        ));
        let args = [
            "-c".to_string(),
            UPSTREAM.to_string(),
            era.to_string(),
            log.display().to_string(),
        ];
        let (child, _stderr) = client::spawn(
            "python3",
            &args,
            &Default::default(),
            None,
            crate::wire::MAX_LINE_BYTES,
        )
        .expect("python3 starts");
        let (running, direct) = client::open(
            "script",
            Endpoint::Child(Box::new(child)),
            Role::Beside,
            Arc::default(),
            Heard::new(),
            LIMIT,
            CancellationToken::new(),
        )
        .await
        .unwrap_or_else(|e| panic!("{era}: the upstream initializes: {}", e.detail));
        let version = running
            .peer()
            .peer_info()
            .map(|i| i.protocol_version.to_string());
        assert_eq!(
            version.as_deref(),
            Some(era),
            "the connection is on the upstream's version"
        );
        let peer = running.peer().clone();
        Upstream {
            direct: Connection {
                peer: peer.clone(),
                direct: Some(direct.expect("a child's connection has the way beside the loop")),
            },
            through_loop: Connection { peer, direct: None },
            running,
            calls: Calls::default(),
            log,
        }
    }

    impl Upstream {
        /// Calls the upstream's tool with `arguments` over `conn`; the answer's text.
        async fn call(&self, conn: &Connection, arguments: Value) -> String {
            let Value::Object(arguments) = arguments else {
                panic!("arguments are an object");
            };
            let ctx = Context::builder().build();
            let call = call_on("script", conn, &self.calls, "tool", arguments, ctx, None);
            let result = tokio::time::timeout(LIMIT, call)
                .await
                .expect("the call is answered");
            assert_ne!(result.is_error, Some(true), "{result:?}");
            result
                .content
                .first()
                .and_then(|block| block.as_text())
                .map(|text| text.text.clone())
                .unwrap_or_default()
        }

        /// The lines the upstream was sent, as JSON.
        fn requests(&self) -> Vec<Value> {
            std::fs::read_to_string(&self.log)
                .unwrap_or_default()
                .lines()
                .map(|line| serde_json::from_str(line).expect("a JSON line"))
                .collect()
        }
    }

    /// A message without what differs from one request to the next: its id and its progress
    /// token (each the request's own).
    fn without_ids(mut message: Value) -> Value {
        if let Some(object) = message.as_object_mut() {
            object.remove("id");
        }
        if let Some(meta) = message
            .pointer_mut("/params/_meta")
            .and_then(Value::as_object_mut)
        {
            meta.remove("progressToken");
        }
        message
    }

    /// In both eras a call beside rmcp's loop is written as rmcp's peer writes one: the same
    /// line as a call through the loop apart from its id and progress token (its progress token
    /// being its id, as rmcp's is), and the same `_meta` as the peer's `tools/list`; on
    /// 2026-07-28 that `_meta` carries the version, the client and its capabilities.
    #[tokio::test]
    async fn a_call_beside_the_loop_is_the_request_rmcps_peer_writes_in_either_era() {
        for era in [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28] {
            let modern = era == ProtocolVersion::V_2026_07_28;
            let era = era.to_string();
            let upstream = upstream(&era).await;
            tokio::time::timeout(LIMIT, upstream.running.peer().list_tools(None))
                .await
                .expect("tools/list is answered")
                .expect("tools/list succeeds");
            let arguments = json!({"text": "hello"});
            let through_loop = upstream.call(&upstream.through_loop, arguments.clone());
            assert_eq!(through_loop.await, "ok");
            assert_eq!(upstream.call(&upstream.direct, arguments).await, "ok");
            let requests = upstream.requests();
            let [list, through_loop, direct] = &requests[..] else {
                panic!("{era}: three requests, not {requests:?}");
            };
            assert!(
                direct.get("id").is_some_and(Value::is_string),
                "{era}: {direct}"
            );
            assert_eq!(
                direct.pointer("/params/_meta/progressToken"),
                direct.get("id"),
                "{era}: the progress token is the request's id"
            );
            assert_eq!(
                without_ids(direct.clone()),
                without_ids(through_loop.clone()),
                "{era}: as through rmcp's loop"
            );
            let meta = |request: &Value| {
                without_ids(request.clone())
                    .pointer("/params/_meta")
                    .cloned()
            };
            assert_eq!(meta(direct), meta(list), "{era}: the peer's own `_meta`");
            let carries_version = meta(direct).is_some_and(|meta| {
                meta.as_object()
                    .is_some_and(|m| m.keys().any(|k| k.ends_with("protocolVersion")))
            });
            assert_eq!(carries_version, modern, "{era}: {direct}");
            upstream.running.cancellation_token().cancel();
        }
    }

    /// What differs beside rmcp's loop: on a 2026-07-28 connection rmcp refuses an upstream's
    /// request for sampling, roots or elicitation when no request of its own is in flight
    /// (SEP-2260), and it does not see a call beside it. So while only such calls run, the
    /// request is refused with invalid params where, during a call through the loop, the client's
    /// handler answered it (its defaults: no sampling, no roots, a declined elicitation). On an
    /// older connection the handler answers it either way.
    #[tokio::test]
    async fn an_upstreams_request_during_a_call_beside_the_loop_on_2026_07_28_is_refused() {
        let asks = ["sampling/createMessage", "roots/list", "elicitation/create"];
        for era in [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28] {
            let modern = era == ProtocolVersion::V_2026_07_28;
            let era = era.to_string();
            let upstream = upstream(&era).await;
            for ask in asks {
                let answer = |text: String| -> Value {
                    serde_json::from_str(&text).unwrap_or_else(|_| panic!("{era} {ask}: {text}"))
                };
                let arguments = json!({"ask": ask});
                let through_loop = upstream.call(&upstream.through_loop, arguments.clone());
                let through_loop = answer(through_loop.await);
                let direct = answer(upstream.call(&upstream.direct, arguments).await);
                let refused = |answer: &Value| {
                    answer.pointer("/error/code") == Some(&json!(-32602))
                        && answer
                            .pointer("/error/message")
                            .and_then(Value::as_str)
                            .is_some_and(|m| m.contains("SEP-2260"))
                };
                assert!(!refused(&through_loop), "{era} {ask}: {through_loop}");
                if modern {
                    assert!(refused(&direct), "{era} {ask}: {direct}");
                } else {
                    assert_eq!(
                        without_ids(direct),
                        without_ids(through_loop),
                        "{era} {ask}: the handler answers as during a call through the loop"
                    );
                }
            }
            upstream.running.cancellation_token().cancel();
        }
    }

    /// A call dropped while it waits for the pipe (another line is being written) never reached
    /// the upstream: nothing is cancelled there, and the next call is the only one it sees.
    #[tokio::test]
    async fn a_call_dropped_while_waiting_for_the_pipe_is_not_cancelled_upstream() {
        use futures_util::FutureExt as _;
        let era = ProtocolVersion::V_2025_11_25.to_string();
        let upstream = upstream(&era).await;
        let Some(direct) = upstream.direct.direct.as_deref() else {
            panic!("a child's connection has the way beside the loop");
        };
        let ping: rmcp::service::TxJsonRpcMessage<rmcp::RoleClient> = serde_json::from_value(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .expect("a client notification");
        let held = direct.writer().turn(ping).await.expect("the pipe is free");
        let Value::Object(arguments) = json!({"text": "dropped"}) else {
            unreachable!()
        };
        let ctx = Context::builder().build();
        let call = call_on(
            "script",
            &upstream.direct,
            &upstream.calls,
            "tool",
            arguments,
            ctx,
            None,
        );
        assert!(call.now_or_never().is_none(), "the call waits for the pipe");
        drop(held);
        // A cancellation would be sent by a task of its own, through rmcp's loop, before the call
        // below that goes the same way.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        let after = upstream.call(&upstream.through_loop, json!({"text": "after"}));
        assert_eq!(after.await, "ok");
        let requests = upstream.requests();
        let methods: Vec<&str> = requests
            .iter()
            .filter_map(|r| r.get("method").and_then(Value::as_str))
            .collect();
        assert_eq!(methods, ["tools/call"], "{requests:?}");
        assert_eq!(
            requests[0].pointer("/params/arguments/text"),
            Some(&json!("after"))
        );
        upstream.running.cancellation_token().cancel();
    }

    /// A line that could not be written (the child's stdin is closed) fails its call with the
    /// error rmcp's loop gives a request it could not send over the same connection: the
    /// transport it names is the relay over the child's stdio, as rmcp's loop names it.
    #[tokio::test]
    async fn a_line_that_could_not_be_written_fails_as_through_rmcps_loop() {
        use crate::relay::Relay;
        use crate::wire::ChildStdio;
        use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, JsonRpcMessage};
        use rmcp::service::{ServiceError, TxJsonRpcMessage};
        use rmcp::transport::{DynamicTransportError, Transport};
        use rmcp::RoleClient;

        let call = |id: &str| -> TxJsonRpcMessage<RoleClient> {
            let request = CallToolRequest::new(CallToolRequestParams::new("echo"));
            JsonRpcMessage::request(
                ClientRequest::CallToolRequest(request),
                rmcp::model::NumberOrString::String(id.into()),
            )
        };
        let (child, _stderr) = ChildStdio::spawn(
            tokio::process::Command::new("cat"),
            crate::wire::MAX_LINE_BYTES,
        )
        .expect("cat starts");
        let writer = child.writer();
        let mut relay = Relay::beside(child, Heard::new());
        relay
            .close()
            .await
            .expect("cat exits when its stdin closes");
        let through_loop = relay.send(call("g-0")).await.expect_err("stdin is closed");
        // What rmcp's loop makes of its transport's error (service.rs, its send tasks).
        let through_loop = ServiceError::TransportSend(DynamicTransportError::new::<
            Relay<ChildStdio>,
            RoleClient,
        >(through_loop));
        let turn = writer.turn(call("g-1")).await.expect("the pipe is free");
        let beside = turn.write().await.expect_err("stdin is closed");
        assert!(matches!(beside, ServiceError::TransportSend(_)), "{beside}");
        assert_eq!(beside.to_string(), through_loop.to_string());
    }
}
