//! Hostile and malformed input over stdio: every case gets the JSON-RPC answer the
//! specification asks for (with its id whenever one can be read), and the server goes on
//! serving the next request. The server runs in-process on the same transport as
//! `Server::serve_stdio` (`GuardedStdio`), over an in-memory pipe.
//!
//! Its server serves this module's tools alone (`common::server_in`): the sizes of the error
//! answers (suggestions included) are bounded for these tools.

use std::time::{Duration, Instant};

use crate::common::server_in;
use disco_runtime::mcp_tool;
use disco_runtime::rmcp::ServiceExt;
use disco_runtime::server::{GuardedStdio, MAX_LINE_BYTES};
use serde_json::{json, Value};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

/// Repeat a text back: the request that shows the server still serves.
#[mcp_tool(read_only)]
fn echo(text: String) -> String {
    text
}

/// Wait a little, then answer: keeps a request in flight.
#[mcp_tool(read_only)]
async fn slow_echo(text: String, ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms.min(5_000))).await;
    text
}

const WAIT: Duration = Duration::from_secs(20);

struct Wire {
    write: WriteHalf<DuplexStream>,
    read: Lines<BufReader<ReadHalf<DuplexStream>>>,
    server: tokio::task::JoinHandle<Result<(), String>>,
}

impl Wire {
    fn start() -> Wire {
        let (client, server) = tokio::io::duplex(1 << 20);
        let handler = server_in(module_path!())
            .name("hostile")
            .into_handler()
            .expect("catalog builds");
        let server = tokio::spawn(async move {
            let (r, w) = tokio::io::split(server);
            let running = handler
                .serve(GuardedStdio::new(r, w))
                .await
                .map_err(|e| format!("initialization failed: {e}"))?;
            running
                .waiting()
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        let (r, w) = tokio::io::split(client);
        Wire {
            write: w,
            read: BufReader::new(r).lines(),
            server,
        }
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        self.write.write_all(bytes).await.expect("server reads");
        self.write.write_all(b"\n").await.expect("server reads");
        self.write.flush().await.expect("server reads");
    }

    async fn send(&mut self, value: Value) {
        self.send_raw(value.to_string().as_bytes()).await;
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.read.next_line())
            .await
            .expect("an answer within the time limit")
            .expect("readable")
            .expect("the server is still there");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON from server: {e}: {line}"))
    }

    /// Nothing arrives for a while (the input was dropped, as it must be).
    async fn silent(&mut self) {
        if let Ok(line) =
            tokio::time::timeout(Duration::from_millis(150), self.read.next_line()).await
        {
            panic!("expected no answer, got {line:?}");
        }
    }

    /// Sends one hostile line and checks the error answer: code, and id (None = null).
    async fn expect_error(&mut self, bytes: &[u8], code: i64, id: Option<Value>) -> Value {
        self.send_raw(bytes).await;
        let answer = self.recv().await;
        assert_error(&answer, code, id);
        answer
    }

    async fn ping(&mut self, id: i64) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        let answer = self.recv().await;
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["result"], json!({}), "{answer}");
    }

    /// A full tools/call: the server still does real work.
    async fn still_serving(&mut self, id: i64) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": "echo", "arguments": {"text": "alive"}}}))
            .await;
        let answer = self.recv().await;
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["result"]["content"][0]["text"], "alive", "{answer}");
        assert!(!self.server.is_finished(), "the server stopped");
    }

    async fn initialize(&mut self, id: i64) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "0"}}}),
        )
        .await;
        let answer = self.recv().await;
        assert_eq!(answer["id"], id, "{answer}");
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    async fn ready() -> Wire {
        let mut wire = Wire::start();
        wire.initialize(0).await;
        wire.still_serving(1).await;
        wire
    }
}

fn assert_error(answer: &Value, code: i64, id: Option<Value>) {
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    assert_eq!(answer["error"]["code"], code, "{answer}");
    assert!(answer["error"]["message"].is_string(), "{answer}");
    assert_eq!(answer["id"], id.unwrap_or(Value::Null), "{answer}");
    assert!(answer.get("result").is_none(), "{answer}");
}

#[tokio::test]
async fn before_initialize_nothing_ends_the_session() {
    let mut wire = Wire::start();
    // Notifications before initialize: rmcp alone would end the session here.
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    wire.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    )
    .await;
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}))
        .await;
    // A response to nothing, before initialize.
    wire.send(json!({"jsonrpc": "2.0", "id": 77, "result": {}}))
        .await;
    wire.silent().await;
    // Garbage before initialize is answered too.
    wire.expect_error(b"{oops", -32700, None).await;
    wire.expect_error(
        br#"{"jsonrpc":"1.0","id":3,"method":"initialize"}"#,
        -32600,
        Some(json!(3)),
    )
    .await;
    // A request before initialize, without the stateless protocol's `_meta`: rmcp refuses it
    // (-32602, with its id) and keeps waiting for initialize.
    wire.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
        .await;
    let answer = wire.recv().await;
    assert_error(&answer, -32602, Some(json!(4)));
    // ping is allowed before initialize.
    wire.ping(5).await;
    wire.initialize(6).await;
    wire.still_serving(7).await;
}

#[tokio::test]
async fn malformed_json_and_json_that_is_not_json_rpc() {
    let mut wire = Wire::ready().await;
    let mut next = 100;
    let cases: Vec<(&[u8], i64, Option<Value>)> = vec![
        (b"{not json", -32700, None),
        (b"}", -32700, None),
        (b"\"unterminated", -32700, None),
        // Truncated, but the id is legible: the client can match the answer.
        (br#"{"jsonrpc":"2.0","id":11,"method":"tools/list""#, -32700, Some(json!(11))),
        (b"42", -32600, None),
        (b"\"hello\"", -32600, None),
        (b"null", -32600, None),
        (b"true", -32600, None),
        (b"{}", -32600, None),
        (b"[]", -32600, None),
        (br#"{"id":12,"method":"ping"}"#, -32600, Some(json!(12))),
        (br#"{"foo":"bar","id":"s-13"}"#, -32600, Some(json!("s-13"))),
        (br#"{"jsonrpc":"1.0","id":14,"method":"ping"}"#, -32600, Some(json!(14))),
        (br#"{"jsonrpc":2.0,"id":15,"method":"ping"}"#, -32600, Some(json!(15))),
        (br#"{"jsonrpc":"2.0","id":16,"method":42}"#, -32600, Some(json!(16))),
        (br#"{"jsonrpc":"2.0","id":17}"#, -32600, Some(json!(17))),
        (br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, -32600, None),
        (br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, -32600, None),
        (br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, -32600, None),
        (br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, -32600, None),
        // params of the wrong type
        (br#"{"jsonrpc":"2.0","id":18,"method":"tools/list","params":"all"}"#, -32600, Some(json!(18))),
        (br#"{"jsonrpc":"2.0","id":19,"method":"tools/call","params":42}"#, -32600, Some(json!(19))),
        (br#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":["echo",{"text":"x"}]}"#, -32602, Some(json!(20))),
        // tools/call params an object but wrong inside: our handler's -32602.
        (br#"{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":7}}"#, -32602, Some(json!(21))),
        (br#"{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"arguments":{}}}"#, -32602, Some(json!(22))),
        (br#"{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"echo","arguments":[1]}}"#, -32602, Some(json!(23))),
        // A notification method sent with an id.
        (br#"{"jsonrpc":"2.0","id":24,"method":"notifications/initialized"}"#, -32600, Some(json!(24))),
        (br#"{"jsonrpc":"2.0","id":25,"method":"notifications/cancelled","params":{"requestId":1}}"#, -32600, Some(json!(25))),
        // An unknown method.
        (br#"{"jsonrpc":"2.0","id":26,"method":"no/such/method"}"#, -32601, Some(json!(26))),
        // Invalid UTF-8: alone, and inside a message whose id is legible.
        (b"\xff\xfe\xfd", -32700, None),
        (b"{\"jsonrpc\":\"2.0\",\"id\":27,\"method\":\"ping\",\"params\":{\"x\":\"\xc3\x28\"}}", -32700, Some(json!(27))),
    ];
    let count = cases.len();
    for (line, code, id) in cases {
        wire.expect_error(line, code, id).await;
        // And the very next request is served.
        wire.ping(next).await;
        next += 1;
    }
    wire.still_serving(next).await;
    eprintln!("{count} malformed lines answered");
}

#[tokio::test]
async fn blank_lines_crlf_and_a_byte_order_mark_are_tolerated() {
    let mut wire = Wire::ready().await;
    wire.send_raw(b"").await;
    wire.send_raw(b"   \t ").await;
    wire.silent().await;
    wire.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r")
        .await;
    assert_eq!(wire.recv().await["id"], 2);
    wire.send_raw(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}")
        .await;
    assert_eq!(wire.recv().await["id"], 3);
}

#[tokio::test]
async fn batches_get_one_error_per_request() {
    let mut wire = Wire::ready().await;
    wire.send(json!([
        {"jsonrpc": "2.0", "id": 30, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/list"},
    ]))
    .await;
    let answer = wire.recv().await;
    let answers = answer.as_array().expect("a batch answer");
    assert_eq!(answers.len(), 2, "{answer}");
    assert_error(&answers[0], -32600, Some(json!(30)));
    assert_error(&answers[1], -32600, Some(json!("b")));
    // A batch of notifications only: nothing to answer.
    wire.send(json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]))
        .await;
    wire.silent().await;
    // A batch of garbage: each element with an id gets its answer, the rest nothing.
    wire.send(json!([1, "x", {"id": 31}])).await;
    let answer = wire.recv().await;
    assert_error(&answer[0], -32600, Some(json!(31)));
    wire.still_serving(32).await;
}

#[tokio::test]
async fn duplicate_ids_in_flight_are_refused_and_the_first_call_completes() {
    let mut wire = Wire::ready().await;
    wire.send(json!({"jsonrpc": "2.0", "id": 40, "method": "tools/call",
                     "params": {"name": "slow_echo", "arguments": {"text": "first", "ms": 400}}}))
        .await;
    wire.send(json!({"jsonrpc": "2.0", "id": 40, "method": "ping"}))
        .await;
    let refused = wire.recv().await;
    assert_error(&refused, -32600, Some(json!(40)));
    let done = wire.recv().await;
    assert_eq!(done["id"], 40);
    assert_eq!(done["result"]["content"][0]["text"], "first", "{done}");
    // Once answered, the id may be used again.
    wire.ping(40).await;
    // String and number ids are different ids.
    wire.send(json!({"jsonrpc": "2.0", "id": "41", "method": "tools/call",
                     "params": {"name": "slow_echo", "arguments": {"text": "s", "ms": 200}}}))
        .await;
    wire.ping(41).await;
    assert_eq!(wire.recv().await["id"], "41");
}

#[tokio::test]
async fn cancelling_an_unknown_request_is_ignored() {
    let mut wire = Wire::ready().await;
    for id in [json!(9999), json!("nope"), json!(null)] {
        wire.send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": id, "reason": "hostile"}}),
        )
        .await;
    }
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}))
        .await;
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/unknown_thing"}))
        .await;
    wire.silent().await;
    wire.still_serving(50).await;
}

#[tokio::test]
async fn cancelling_a_request_in_flight_frees_its_id() {
    let mut wire = Wire::ready().await;
    wire.send(json!({"jsonrpc": "2.0", "id": 60, "method": "tools/call",
                     "params": {"name": "slow_echo", "arguments": {"text": "never", "ms": 3000}}}))
        .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    wire.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 60, "reason": "changed my mind"}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    // The id is free again at once, and the cancelled call sends nothing (MCP).
    wire.ping(60).await;
    wire.still_serving(61).await;
}

#[tokio::test]
async fn a_line_over_the_limit_is_refused_without_buffering_it() {
    let mut wire = Wire::ready().await;
    let head = br#"{"jsonrpc":"2.0","id":70,"method":"tools/call","params":{"name":"echo","arguments":{"text":""#;
    let mut line = head.to_vec();
    line.resize(MAX_LINE_BYTES + 10, b'x');
    line.extend_from_slice(br#""}}}"#);
    let answer = wire.expect_error(&line, -32600, Some(json!(70))).await;
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("longer than"));
    // Just under the limit is still served.
    let mut text = String::new();
    text.extend(std::iter::repeat_n('y', MAX_LINE_BYTES - 200));
    wire.send(json!({"jsonrpc": "2.0", "id": 71, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"text": text}}}))
        .await;
    let answer = wire.recv().await;
    assert_eq!(answer["id"], 71);
    assert_eq!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .map(str::len),
        Some(MAX_LINE_BYTES - 200)
    );
    // Oversized without a legible id: id null.
    let line = vec![b'['; MAX_LINE_BYTES + 1];
    wire.expect_error(&line, -32600, None).await;
    wire.still_serving(72).await;
}

#[tokio::test]
async fn deeply_nested_json_is_refused_with_its_id() {
    let mut wire = Wire::ready().await;
    let depth = 100_000;
    let mut line = br#"{"jsonrpc":"2.0","id":80,"method":"tools/call","params":{"name":"echo","arguments":{"text":"#.to_vec();
    line.extend(std::iter::repeat_n(b'[', depth));
    line.extend(std::iter::repeat_n(b']', depth));
    line.extend_from_slice(b"}}}");
    let answer = wire.expect_error(&line, -32600, Some(json!(80))).await;
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("nested"));
    // Deep but unbalanced and without an id.
    wire.expect_error(&vec![b'{'; 50_000], -32700, None).await;
    wire.expect_error(&vec![b'['; 50_000], -32600, None).await;
    // 100 levels is fine: it reaches the tool, whose argument check answers.
    let mut nested = json!("leaf");
    for _ in 0..100 {
        nested = json!([nested]);
    }
    wire.send(json!({"jsonrpc": "2.0", "id": 81, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"text": nested}}}))
        .await;
    let answer = wire.recv().await;
    assert_eq!(answer["id"], 81);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    wire.still_serving(82).await;
}

#[tokio::test]
async fn huge_names_and_keys_are_answered_quickly_and_briefly() {
    let _alone = crate::common::HEAVY.lock().await;
    let mut wire = Wire::ready().await;
    let long = "a".repeat(100_000);

    // A 100,000-character tool name: unknown tool, -32602, the name clipped in the answer.
    let started = Instant::now();
    wire.send(json!({"jsonrpc": "2.0", "id": 90, "method": "tools/call",
                     "params": {"name": long, "arguments": {}}}))
        .await;
    let answer = wire.recv().await;
    assert_error(&answer, -32602, Some(json!(90)));
    assert!(
        answer.to_string().len() < 2_000,
        "answer echoes the name: {} bytes",
        answer.to_string().len()
    );

    // A near-miss of a real name, padded to 100,000 characters: still unknown.
    let padded = format!("echo{}", "_".repeat(100_000));
    wire.send(json!({"jsonrpc": "2.0", "id": 91, "method": "tools/call",
                     "params": {"name": padded, "arguments": {"text": "x"}}}))
        .await;
    let answer = wire.recv().await;
    assert_eq!(answer["id"], 91);
    assert!(answer.to_string().len() < 2_000);

    // A 100,000-character argument key beside the real one.
    wire.send(json!({"jsonrpc": "2.0", "id": 92, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {long.clone(): 1, "text": "k"}}}))
        .await;
    let answer = wire.recv().await;
    assert_eq!(answer["id"], 92);
    assert!(answer.get("result").is_some(), "{answer}");
    assert!(
        answer.to_string().len() < 4_000,
        "answer echoes the key: {} bytes",
        answer.to_string().len()
    );

    // The long key alone: the tool's error names the expected parameter.
    wire.send(json!({"jsonrpc": "2.0", "id": 93, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {long.clone(): "k"}}}))
        .await;
    let answer = wire.recv().await;
    assert_eq!(answer["id"], 93);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(answer.to_string().contains("text"));
    assert!(answer.to_string().len() < 4_000);

    // Thousands of keys.
    let mut args = serde_json::Map::new();
    for i in 0..5_000 {
        args.insert(format!("key_{i}"), json!(i));
    }
    args.insert("text".into(), json!("many"));
    wire.send(json!({"jsonrpc": "2.0", "id": 94, "method": "tools/call",
                     "params": {"name": "echo", "arguments": args}}))
        .await;
    let answer = wire.recv().await;
    assert_eq!(answer["id"], 94);
    assert!(answer.get("result").is_some(), "{answer}");
    assert!(
        answer.to_string().len() < 8_000,
        "{} bytes: {}",
        answer.to_string().len(),
        &answer.to_string()[..3000]
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    wire.still_serving(95).await;
}

#[tokio::test]
async fn end_of_input_ends_the_session_cleanly() {
    let mut wire = Wire::ready().await;
    wire.write
        .write_all(br#"{"jsonrpc":"2.0","id":1,"#)
        .await
        .unwrap();
    wire.write.shutdown().await.unwrap();
    let ended = tokio::time::timeout(WAIT, &mut wire.server)
        .await
        .expect("the server ends when its input ends");
    assert!(ended.is_ok(), "{ended:?}");
}
