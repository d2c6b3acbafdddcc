//! The promise: for every line from an upstream, the typed read of an answer to a pending
//! call either declines or builds exactly the message rmcp's own parse builds, and the
//! transport's parse as a whole delivers what rmcp's parse delivers.

use super::{call_result, parse, track, Pending, UNREADABLE};
use disco_runtime::rmcp;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, NumberOrString, ServerJsonRpcMessage,
    ServerResult,
};
use serde_json::Value;

/// fastrand, seeded: the cases must be the same on every run.
struct Rng(fastrand::Rng);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0.usize(..n)
    }
    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options[self.below(options.len())]
    }
}

/// In a choice list: the key is left out.
const ABSENT: &str = "\u{0}";

/// The ids the tests send calls with.
const PENDING: [&str; 2] = ["1", r#""s-1""#];

/// A JSON object from its pairs, in the given or a rotated order.
fn object(rng: &mut Rng, mut pairs: Vec<(&str, String)>) -> String {
    pairs.retain(|(_, v)| v != ABSENT);
    if !pairs.is_empty() && rng.below(3) == 0 {
        let by = rng.below(pairs.len());
        pairs.rotate_left(by);
    }
    let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    format!("{{{}}}", body.join(","))
}

/// A result object: `CallToolResult`'s keys with good and bad values, sometimes a key of
/// another result type. Returns it and whether it has a key twice.
fn result(rng: &mut Rng) -> (String, bool) {
    let content = rng.pick(&[
        ABSENT,
        "[]",
        r#"[{"type":"text","text":"hi"}]"#,
        r#"[{"type":"text","text":"a\"\\\n\u00e9\ud83d\ude00","annotations":{"audience":["user"],"priority":0.5}}]"#,
        r#"[{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"text","text":"x","_meta":{"k":1}}]"#,
        r#"[{"type":"resource","resource":{"uri":"file:///x","text":"t"}}]"#,
        r#"[{"type":"resource_link","uri":"file:///y","name":"y"}]"#,
        r#"[{"type":"nonesuch"}]"#,
        r#"[{"type":"text"}]"#,
        r#""text""#,
        "null",
    ]);
    let structured = rng.pick(&[
        ABSENT,
        ABSENT,
        "null",
        r#"{"sum":3,"list":[1,2.5,-7,18446744073709551615],"s":"\u0041"}"#,
        "[1,2]",
        "5",
    ]);
    let is_error = rng.pick(&[ABSENT, ABSENT, "true", "false", "null", r#""yes""#]);
    let result_type = rng.pick(&[
        ABSENT,
        ABSENT,
        r#""complete""#,
        r#""task""#,
        r#""input_required""#,
        r#""other""#,
        "5",
    ]);
    let meta = rng.pick(&[
        ABSENT,
        ABSENT,
        "{}",
        r#"{"progressToken":1,"x":{"y":[null]}}"#,
        r#"{"io.modelcontextprotocol/subscriptionId":3}"#,
        r#"{"io.modelcontextprotocol/subscriptionId":"sub"}"#,
        "null",
        "5",
    ]);
    // Keys of the result types before `CallToolResult` in rmcp's enum, and unknown keys.
    let other = rng.pick(&[
        ABSENT,
        ABSENT,
        ABSENT,
        ABSENT,
        r#""tools":[]"#,
        r#""messages":[]"#,
        r#""contents":[]"#,
        r#""prompts":[]"#,
        r#""action":"accept""#,
        r#""taskId":"t","status":"working","createdAt":"2025-01-01T00:00:00Z","lastUpdatedAt":"2025-01-01T00:00:00Z""#,
        r#""completion":{"values":[]}"#,
        r#""nextCursor":"c""#,
        r#""unknownKey":{"a":1}"#,
    ]);
    let mut pairs = vec![
        (r#""content""#, content.to_string()),
        (r#""structuredContent""#, structured.to_string()),
        (r#""isError""#, is_error.to_string()),
        (r#""resultType""#, result_type.to_string()),
        (r#""_meta""#, meta.to_string()),
    ];
    let mut twice = false;
    if rng.below(25) == 0 {
        pairs.push((r#""isError""#, "true".into()));
        twice = true;
    }
    let mut text = object(rng, pairs);
    if other != ABSENT {
        // Spliced in as the first key.
        text = if text == "{}" {
            format!("{{{other}}}")
        } else {
            format!("{{{other},{}", &text[1..])
        };
    }
    match rng.below(40) {
        0 => ("null".into(), false),
        1 => ("[]".into(), false),
        2 => (r#""done""#.into(), false),
        _ => (text, twice),
    }
}

/// A well-formed answer to a pending call, of the shapes servers send.
fn plain(rng: &mut Rng) -> String {
    let id = rng.pick(&PENDING);
    let content = rng.pick(&[
        "[]",
        r#"[{"type":"text","text":"hi"}]"#,
        r#"[{"type":"text","text":"a\"\\\n\u00e9\ud83d\ude00","annotations":{"audience":["user"],"priority":0.5}}]"#,
        r#"[{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"text","text":"x","_meta":{"k":1}}]"#,
        r#"[{"type":"resource","resource":{"uri":"file:///x","text":"t"}}]"#,
    ]);
    let rest = rng.pick(&[
        "",
        r#","isError":false"#,
        r#","isError":true"#,
        r#","structuredContent":{"sum":3,"list":[1,2.5,-7]}"#,
        r#","structuredContent":null,"resultType":"complete""#,
        r#","_meta":{"progressToken":1}"#,
        r#","resultType":"complete","_meta":{}"#,
    ]);
    let result = format!(r#"{{"content":{content}{rest}}}"#);
    object(
        rng,
        vec![
            (r#""jsonrpc""#, r#""2.0""#.to_string()),
            (r#""id""#, id.to_string()),
            (r#""result""#, result),
        ],
    )
}

/// A line an upstream might send; whether it has a key twice.
fn line(rng: &mut Rng) -> (String, bool) {
    if rng.below(2) == 0 {
        return (plain(rng), false);
    }
    let jsonrpc = rng.pick(&[r#""2.0""#, r#""2.0""#, r#""2.0""#, r#""1.0""#, ABSENT]);
    let id = rng.pick(&[
        PENDING[0], PENDING[0], PENDING[1], PENDING[1], "2", r#""s-2""#, "1.0", "null", ABSENT,
        // The pending number as a string: another id (JSON-RPC compares values, types too).
        r#""1""#,
    ]);
    let (result, twice) = result(rng);
    let mut pairs = vec![
        (r#""jsonrpc""#, jsonrpc.to_string()),
        (r#""id""#, id.to_string()),
        (r#""result""#, result),
    ];
    let mut twice = twice;
    match rng.below(14) {
        0 => pairs.push((r#""method""#, r#""tools/call""#.into())),
        1 => pairs.push((r#""error""#, r#"{"code":-1,"message":"x"}"#.into())),
        2 => pairs.push((r#""extra""#, "[1]".into())),
        3 => {
            pairs.push((r#""id""#, "1".into()));
            twice = true;
        }
        4 => {
            pairs.push((r#""result""#, r#"{"content":[]}"#.into()));
            twice = true;
        }
        _ => {}
    }
    (object(rng, pairs), twice)
}

/// The calls the tests have in flight, as the transport records them when it sends.
fn pending() -> Pending {
    let calls = Pending::default();
    for id in PENDING {
        let id: NumberOrString = serde_json::from_str(id).unwrap_or(NumberOrString::Number(0));
        let request = CallToolRequest::new(CallToolRequestParams::new("echo"));
        let message: ClientJsonRpcMessage =
            JsonRpcMessage::request(ClientRequest::CallToolRequest(request), id);
        track(&calls, &message);
    }
    calls
}

fn same(a: &ServerJsonRpcMessage, b: &ServerJsonRpcMessage, line: &str) {
    assert_eq!(
        serde_json::to_value(a).ok(),
        serde_json::to_value(b).ok(),
        "{line}"
    );
    assert_eq!(format!("{a:?}"), format!("{b:?}"), "{line}");
}

/// Whether the typed read must take this line: rmcp reads a `CallToolResult` for a pending
/// id, no key is there twice, and the result has only `CallToolResult`'s keys, its `_meta`
/// (if an object) naming no subscription.
fn must_take(line: &str, twice: bool, full: &Option<ServerJsonRpcMessage>) -> bool {
    let Some(JsonRpcMessage::Response(response)) = full else {
        return false;
    };
    if twice || !matches!(response.result, ServerResult::CallToolResult(_)) {
        return false;
    }
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    let pending_id = PENDING
        .iter()
        .any(|id| serde_json::from_str::<Value>(id).ok().as_ref() == value.get("id"));
    let Some(result) = value.get("result").and_then(Value::as_object) else {
        return false;
    };
    let keys_ok = result.keys().all(|k| {
        [
            "content",
            "structuredContent",
            "isError",
            "resultType",
            "_meta",
        ]
        .contains(&k.as_str())
    });
    let meta_ok = result
        .get("_meta")
        .is_none_or(|m| m.get("io.modelcontextprotocol/subscriptionId").is_none());
    pending_id && keys_ok && meta_ok
}

#[test]
fn the_typed_read_builds_what_rmcp_builds_or_declines() {
    let mut rng = Rng(fastrand::Rng::with_seed(0xA11_5EED));
    let (mut taken, mut declined) = (0, 0);
    for _ in 0..30_000 {
        let (line, twice) = line(&mut rng);
        let full = serde_json::from_slice::<ServerJsonRpcMessage>(line.as_bytes()).ok();
        match call_result(line.as_bytes(), &pending()) {
            Some(typed) => {
                let Some(full) = &full else {
                    panic!("the typed read accepted what rmcp refuses: {line}");
                };
                same(&typed, full, &line);
                taken += 1;
            }
            None => {
                assert!(
                    !must_take(&line, twice, &full),
                    "the typed read declined a plain call result: {line}"
                );
                declined += 1;
            }
        }
        // The transport's parse as a whole delivers rmcp's message, or skips the line.
        let delivered = parse(line.as_bytes(), &pending());
        match (&delivered, &full) {
            (Some(d), Some(f)) => same(d, f, &line),
            (None, None) => {}
            _ => panic!("the transport and rmcp disagree on {line}"),
        }
    }
    assert!(
        taken > 1_000 && declined > 1_000,
        "{taken} taken, {declined} declined"
    );
}

#[test]
fn only_pending_calls_take_the_typed_read_and_each_once() {
    let answer = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}"#;
    let calls = pending();
    assert!(call_result(answer, &calls).is_some());
    // Answered: a second answer with that id is rmcp's to parse.
    assert!(call_result(answer, &calls).is_none());
    assert!(parse(answer, &calls).is_some());
    // A cancelled call is forgotten.
    let calls = pending();
    let param: CancelledNotificationParam =
        serde_json::from_str(r#"{"requestId":1}"#).expect("a cancellation's params");
    let cancel: ClientJsonRpcMessage =
        JsonRpcMessage::notification(CancelledNotification::new(param).into());
    track(&calls, &cancel);
    assert!(call_result(answer, &calls).is_none());
    // An error answer ends the call too.
    let calls = pending();
    let error = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no"}}"#;
    assert!(matches!(
        parse(error, &calls),
        Some(JsonRpcMessage::Error(_))
    ));
    assert!(call_result(answer, &calls).is_none());
    // A result of another request type, with the same keys as an empty call result, is not
    // read as a call result when its id is not a call's.
    let calls = pending();
    let ping = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
    assert!(call_result(ping, &calls).is_none());
    // The string "1" does not answer request 1 (JSON-RPC compares the value sent, its type
    // too), here or in rmcp's parse; and the call stays pending for its real answer.
    let string_one = br#"{"jsonrpc":"2.0","id":"1","result":{"content":[]}}"#;
    assert!(call_result(string_one, &calls).is_none());
    assert!(matches!(
        parse(string_one, &calls),
        Some(JsonRpcMessage::Response(r)) if r.id == NumberOrString::String("1".into())
    ));
    assert!(call_result(answer, &calls).is_some());
}

#[tokio::test]
async fn a_call_that_could_not_be_sent_is_not_kept_pending() {
    use super::ChildStdio;
    use disco_runtime::util::lock;
    use rmcp::transport::Transport;

    let call = |id| -> ClientJsonRpcMessage {
        let request = CallToolRequest::new(CallToolRequestParams::new("echo"));
        JsonRpcMessage::request(
            ClientRequest::CallToolRequest(request),
            NumberOrString::Number(id),
        )
    };
    let (mut transport, _stderr) =
        ChildStdio::spawn(tokio::process::Command::new("cat"), super::MAX_LINE_BYTES)
            .expect("cat starts");
    transport
        .send(call(1))
        .await
        .expect("the first call is written");
    transport
        .close()
        .await
        .expect("cat exits when its stdin closes");
    assert!(transport.send(call(2)).await.is_err());
    let calls = lock(&transport.calls);
    // The call that was written still waits for its answer; the one that was not is gone.
    assert!(calls.contains(&NumberOrString::Number(1)));
    assert!(!calls.contains(&NumberOrString::Number(2)));
}

/// A schema `depth` levels deep.
fn nested(depth: usize) -> String {
    let mut schema = String::from("{\"type\":\"object\"}");
    for _ in 0..depth {
        schema = format!("{{\"type\":\"object\",\"properties\":{{\"a\":{schema}}}}}");
    }
    schema
}

#[test]
fn a_schema_too_deep_for_the_parse_costs_its_tool_alone() {
    // 70 nested properties: 141 levels, past serde_json's 128 for the whole message.
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":3,"result":{{"tools":[{{"name":"ok","inputSchema":{{"type":"object"}}}},{{"name":"deep","inputSchema":{}}}],"nextCursor":"c2"}}}}"#,
        nested(70)
    );
    assert!(serde_json::from_str::<ServerJsonRpcMessage>(&line).is_err());
    let Some(JsonRpcMessage::Response(answer)) = parse(line.as_bytes(), &pending()) else {
        panic!("the answer is lost");
    };
    assert_eq!(answer.id, NumberOrString::Number(3));
    let ServerResult::CustomResult(rmcp::model::CustomResult(result)) = answer.result else {
        panic!("not read entry by entry: {:?}", answer.result);
    };
    assert_eq!(result["nextCursor"], "c2");
    let tools = result["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "ok");
    assert!(tools[0].get("_meta").is_none());
    assert_eq!(tools[1]["name"], "deep");
    let why = tools[1]["_meta"][UNREADABLE].as_str().unwrap();
    assert!(why.contains("deeper than 100"), "{why}");
    // A schema within the limit is read whole, by rmcp.
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":4,"result":{{"tools":[{{"name":"ok","inputSchema":{}}}]}}}}"#,
        nested(50)
    );
    assert!(matches!(
        parse(line.as_bytes(), &pending()),
        Some(JsonRpcMessage::Response(r)) if matches!(r.result, ServerResult::ListToolsResult(_))
    ));
    // Any other line that deep stays refused.
    let line = format!(r#"{{"jsonrpc":"2.0","id":5,"result":{}}}"#, nested(70));
    assert!(parse(line.as_bytes(), &pending()).is_none());
}

/// A line over the limit, scanned in pieces as it is dropped.
fn over(line: &str, pieces: usize) -> super::Over {
    let mut over = super::Over::default();
    let step = line.len().div_ceil(pieces).max(1);
    for chunk in line.as_bytes().chunks(step) {
        over.scan(chunk);
    }
    over
}

#[test]
fn a_line_over_the_limit_answers_its_call_by_id_or_fails_every_pending_call() {
    let big = "x".repeat(10_000);
    let text = |s: &ServerJsonRpcMessage| match s {
        JsonRpcMessage::Response(r) => match &r.result {
            ServerResult::CallToolResult(c) => {
                assert_eq!(c.is_error, Some(true));
                serde_json::to_string(&c.content).unwrap()
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    for (line, id) in [
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":"{big}"}}]}}}}"#
            ),
            7,
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","result":{{"content":[{{"type":"text","text":"{big}\"id\":1,"}}],"id":2}},"id":7}}"#
            ),
            7,
        ),
    ] {
        for pieces in [1, 3, 1000] {
            let calls = pending();
            calls.lock().unwrap().insert(NumberOrString::Number(7));
            let answers = over(&line, pieces).answers(100, &calls);
            assert_eq!(answers.len(), 1, "{pieces}");
            let JsonRpcMessage::Response(r) = &answers[0] else {
                panic!()
            };
            assert_eq!(r.id, NumberOrString::Number(id));
            assert!(text(&answers[0]).contains(&format!(
                "is {} bytes, over the gateway's limit of 100",
                line.len()
            )));
            assert!(!calls.lock().unwrap().contains(&NumberOrString::Number(7)));
        }
    }
    // No id to read: every pending call fails with the size error.
    let calls = pending();
    let before = calls.lock().unwrap().len();
    let answers = over(&format!(r#"{{"jsonrpc":"2.0","result":"{big}"#), 2).answers(100, &calls);
    assert_eq!(answers.len(), before);
    assert!(calls.lock().unwrap().is_empty());
    // Another request of the gateway's: a JSON-RPC error with its id.
    let answers = over(
        &format!(r#"{{"id":"list-1","jsonrpc":"2.0","result":{{"tools":["{big}"]}}}}"#),
        5,
    )
    .answers(100, &pending());
    assert!(
        matches!(&answers[0], JsonRpcMessage::Error(e) if e.id == Some(NumberOrString::String("list-1".into())))
    );
    // The upstream's own request or notification over the limit: dropped, nothing made up.
    let answers = over(
        &format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":"{big}"}}"#
        ),
        4,
    )
    .answers(100, &pending());
    assert!(answers.is_empty());
}

/// The ids of calls sent and not answered are at most `MAX_PENDING_CALLS`: past it they are
/// forgotten, and the answer to a forgotten call is still delivered, by rmcp's parse, as the
/// same message; a call remembered after that gets the typed read.
#[test]
fn pending_calls_are_bounded_and_a_forgotten_calls_answer_is_still_delivered() {
    use super::MAX_PENDING_CALLS;
    let calls = Pending::default();
    let send = |id: i64| {
        let request = CallToolRequest::new(CallToolRequestParams::new("echo"));
        let message: ClientJsonRpcMessage = JsonRpcMessage::request(
            ClientRequest::CallToolRequest(request),
            NumberOrString::Number(id),
        );
        track(&calls, &message);
    };
    let held = |calls: &Pending| calls.lock().map(|c| c.len()).unwrap_or(usize::MAX);
    let total = MAX_PENDING_CALLS as i64 + 10;
    for id in 0..total {
        send(id);
        assert!(
            held(&calls) <= MAX_PENDING_CALLS,
            "{} at {id}",
            held(&calls)
        );
    }
    let answer = |id: i64| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hi"}}]}}}}"#
        )
    };
    let rmcp_reads = |line: &str| {
        serde_json::to_value(serde_json::from_slice::<ServerJsonRpcMessage>(line.as_bytes()).ok())
            .ok()
    };
    // Forgotten: not the typed read's, delivered all the same.
    let first = answer(0);
    assert!(call_result(first.as_bytes(), &calls).is_none());
    let delivered = serde_json::to_value(parse(first.as_bytes(), &calls)).ok();
    assert_eq!(delivered, rmcp_reads(&first));
    assert!(delivered.is_some_and(|v| !v.is_null()));
    // Remembered (sent after the ids were forgotten): the typed read, the same message.
    let last = answer(total - 1);
    let typed = serde_json::to_value(call_result(last.as_bytes(), &calls)).ok();
    assert_eq!(typed, rmcp_reads(&last));
    assert!(typed.is_some_and(|v| !v.is_null()));
}

/// A line written beside rmcp's loop arrives whole even when its caller stops waiting after
/// the first try (cancelled, timed out), and the next line after it: here a line many times
/// what a pipe holds, whose caller goes at once.
#[tokio::test]
async fn a_line_written_beside_the_loop_is_whole_when_its_caller_goes() {
    use super::ChildStdio;
    use futures_util::FutureExt as _;
    use rmcp::model::ServerNotification;
    use rmcp::transport::Transport;

    // The child answers each line with a progress notification giving the line's length.
    let mut command = tokio::process::Command::new("python3");
    command.args([
        "-c",
        "import sys, json\n\
         for line in sys.stdin:\n\
         \x20   data = len(line.rstrip('\\n'))\n\
         \x20   print(json.dumps({'jsonrpc': '2.0', 'method': 'notifications/progress',\n\
         \x20                     'params': {'progressToken': 0, 'progress': data}}), flush=True)\n",
    ]);
    let (mut transport, _stderr) =
        ChildStdio::spawn(command, super::MAX_LINE_BYTES).expect("python3 starts");
    let writer = transport.writer();
    let call = |id: i64, size: usize| -> (ClientJsonRpcMessage, usize) {
        let mut arguments = serde_json::Map::new();
        arguments.insert("text".into(), Value::String("x".repeat(size)));
        let params = CallToolRequestParams::new("echo").with_arguments(arguments);
        let message = JsonRpcMessage::request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            NumberOrString::Number(id),
        );
        let size = serde_json::to_vec(&message).map_or(0, |line| line.len());
        (message, size)
    };
    let (big, big_size) = call(1, 4 * 1024 * 1024);
    let turn = writer.turn(big).await.expect("the pipe is free");
    if let Some(sent) = turn.write().now_or_never() {
        sent.expect("the line is written");
    }
    let (small, small_size) = call(2, 10);
    let turn = writer.turn(small).await.expect("the pipe is free again");
    turn.write().await.expect("the next line is written");
    for expected in [big_size, small_size] {
        let read = tokio::time::timeout(std::time::Duration::from_secs(60), transport.receive())
            .await
            .expect("the child answers");
        let Some(JsonRpcMessage::Notification(note)) = read else {
            panic!("not a notification: {read:?}");
        };
        let ServerNotification::ProgressNotification(progress) = note.notification else {
            panic!("not a progress notification");
        };
        assert_eq!(progress.params.progress, expected as f64);
    }
}
