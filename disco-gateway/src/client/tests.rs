use super::*;

mod beside;

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
