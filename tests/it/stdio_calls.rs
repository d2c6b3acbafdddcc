//! The `tools/call` requests a stdio session runs beside rmcp's service loop
//! (`GuardedStdio::serve`, what `Server::serve_stdio` runs), each rule of that path from
//! the client's side: a cancelled call gets no answer and its tool sees its token cancelled;
//! its progress notifications and logs reach the client, logs at the session's level; an id
//! in flight is refused and free again once answered; calls before the session's peer exists
//! and a transport served the plain rmcp way are answered through rmcp; a call naming a
//! protocol version runs in that era, as only rmcp's loop can run it (from 2026-07-28 on, a
//! request its tool sends the client is refused); many calls in flight at once are each
//! answered once, under their own ids; a call its timeout stops is answered; what a call
//! leaves running is cancelled once it is answered; the end of the input waits for the calls
//! still running.
//!
//! Every test reads the server's output to its end after closing the input, so that "no
//! answer" is checked on everything the server ever wrote, never on a wait.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::notes::{note, noted};
use crate::common::server_in;
#[allow(deprecated)] // logging: deprecated by SEP-2577, still used by every client era
use disco_runtime::rmcp::model::LoggingLevel;
use disco_runtime::rmcp::model::{ProtocolVersion, ServerRequest};
use disco_runtime::rmcp::ServiceExt;
use disco_runtime::server::GuardedStdio;
use disco_runtime::{mcp_tool, Context};
use serde_json::{json, Value};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::sync::Notify;

/// Repeat a text back.
#[mcp_tool(read_only)]
fn echo(text: String) -> String {
    text
}

/// The gates of `gate`, by tag: each a permit its `open` leaves, whichever comes first.
fn gate_of(tag: &str) -> Arc<Notify> {
    static GATES: Mutex<Option<HashMap<String, Arc<Notify>>>> = Mutex::new(None);
    let mut gates = GATES.lock().unwrap();
    gates
        .get_or_insert_with(HashMap::new)
        .entry(tag.to_owned())
        .or_default()
        .clone()
}

/// Wait until `open` opens the gate `tag`, then answer `tag`.
#[mcp_tool(read_only)]
async fn gate(tag: String) -> String {
    gate_of(&tag).notified().await;
    tag
}

/// Open the gate `tag`.
#[mcp_tool(read_only)]
fn open(tag: String) -> String {
    gate_of(&tag).notify_one();
    "opened".to_owned()
}

/// Note `started:TAG` and wait for the call's cancellation; note how the call ended
/// (`common::notes::until_cancelled`).
#[mcp_tool(read_only)]
async fn until_cancelled(ctx: Context, tag: String) -> String {
    crate::common::notes::until_cancelled(ctx, tag).await
}

/// Send the client a `ping`: `answered` once it answers, `refused: WHY` when rmcp does not
/// let the request out.
#[mcp_tool(read_only)]
async fn pings_client(ctx: Context) -> String {
    let Some(peer) = ctx.peer() else {
        return "no peer".to_owned();
    };
    match peer
        .send_request(ServerRequest::PingRequest(Default::default()))
        .await
    {
        Ok(_) => "answered".to_owned(),
        Err(error) => format!("refused: {error}"),
    }
}

/// Hang until the call's timeout stops it.
#[mcp_tool(read_only, timeout_ms = 1)]
async fn hangs() -> String {
    std::future::pending::<()>().await;
    "never".to_owned()
}

/// Answer at once, leaving work behind that notes `stopped:TAG` when the call's token is
/// cancelled.
#[mcp_tool(read_only)]
async fn leaves_work(ctx: Context, tag: String) -> String {
    tokio::spawn(async move {
        ctx.cancelled().await;
        note(format!("stopped:{tag}"));
    });
    "left".to_owned()
}

/// Report progress `count` times, then finish.
#[mcp_tool(read_only)]
async fn steps(ctx: Context, count: u32) -> String {
    for step in 1..=count {
        let _ = ctx
            .progress(f64::from(step), Some(f64::from(count)), None)
            .await;
    }
    "done".to_owned()
}

/// Log `text` at info and at error.
#[mcp_tool(read_only)]
#[allow(deprecated)] // logging: deprecated by SEP-2577, still used by every client era
async fn log_twice(ctx: Context, text: String) -> String {
    let _ = ctx.log(LoggingLevel::Info, format!("info {text}")).await;
    let _ = ctx.log(LoggingLevel::Error, format!("error {text}")).await;
    "logged".to_owned()
}

const WAIT: Duration = Duration::from_secs(20);

/// How the server under test is served.
#[derive(Clone, Copy)]
enum Serve {
    /// `GuardedStdio::serve`: calls run beside rmcp's loop.
    Beside,
    /// `handler.serve(GuardedStdio)`: everything through rmcp's loop.
    ThroughRmcp,
}

struct Wire {
    write: Option<WriteHalf<DuplexStream>>,
    read: Lines<BufReader<ReadHalf<DuplexStream>>>,
    server: tokio::task::JoinHandle<Result<(), String>>,
    /// Lines read while looking for another.
    seen: Vec<Value>,
    /// Beside: told once `serve` returned, when the calls start to run beside rmcp's loop.
    served: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl Wire {
    fn start(how: Serve) -> Wire {
        let (client, server) = tokio::io::duplex(1 << 20);
        let handler = server_in(module_path!())
            .name("beside")
            .into_handler()
            .expect("catalog builds");
        let (served_tx, served) = tokio::sync::oneshot::channel();
        let server = tokio::spawn(async move {
            let (r, w) = tokio::io::split(server);
            let transport = GuardedStdio::new(r, w);
            let done = match how {
                Serve::Beside => match transport.serve(handler).await {
                    Ok(running) => {
                        let _ = served_tx.send(());
                        running.waiting().await
                    }
                    Err(e) => return Err(e.to_string()),
                },
                Serve::ThroughRmcp => match handler.serve(transport).await {
                    Ok(running) => running.waiting().await,
                    Err(e) => return Err(e.to_string()),
                },
            };
            done.map(|_| ()).map_err(|e| e.to_string())
        });
        let (r, w) = tokio::io::split(client);
        Wire {
            write: Some(w),
            read: BufReader::new(r).lines(),
            server,
            seen: Vec::new(),
            served: matches!(how, Serve::Beside).then_some(served),
        }
    }

    async fn ready(how: Serve) -> Wire {
        let mut wire = Wire::start(how);
        wire.send(
            json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "beside", "version": "0"}}}),
        )
        .await;
        let answer = wire.answer(json!("init")).await;
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        // `serve` returns once the session is initialized: from then on calls run beside.
        if let Some(served) = wire.served.take() {
            tokio::time::timeout(WAIT, served)
                .await
                .expect("serve returns within the time limit")
                .expect("the session is served");
        }
        wire
    }

    async fn send(&mut self, value: Value) {
        self.send_lines(&[value]).await;
    }

    /// Several messages in one write.
    async fn send_lines(&mut self, values: &[Value]) {
        let mut bytes = Vec::new();
        for value in values {
            bytes.extend_from_slice(value.to_string().as_bytes());
            bytes.push(b'\n');
        }
        let write = self.write.as_mut().expect("input open");
        write.write_all(&bytes).await.expect("server reads");
        write.flush().await.expect("server reads");
    }

    async fn call(&mut self, id: Value, name: &str, arguments: Value) {
        self.send(call(id, name, arguments)).await;
    }

    async fn next(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(WAIT, self.read.next_line())
            .await
            .expect("a line or the end within the time limit")
            .expect("readable")?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {e}: {line}")))
    }

    /// The answer to `id`, keeping the lines before it in `seen`.
    async fn answer(&mut self, id: Value) -> Value {
        loop {
            let line = self.next().await.expect("the server is still there");
            if line.get("method").is_none() && line["id"] == id {
                return line;
            }
            self.seen.push(line);
        }
    }

    async fn close_input(&mut self) {
        if let Some(mut write) = self.write.take() {
            write.shutdown().await.expect("close input");
        }
    }

    /// Closes the input and reads the output to its end: every line the server wrote that
    /// was not read yet, once it stopped.
    async fn finish(mut self) -> Vec<Value> {
        self.close_input().await;
        let mut rest = std::mem::take(&mut self.seen);
        while let Some(line) = self.next().await {
            rest.push(line);
        }
        tokio::time::timeout(WAIT, self.server)
            .await
            .expect("the server stops at the end of its input")
            .expect("server task")
            .expect("server");
        rest
    }
}

fn call(id: Value, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text answer: {answer}"))
}

fn answers_to<'a>(lines: &'a [Value], id: &Value) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l.get("method").is_none() && &l["id"] == id)
        .collect()
}

fn cancel(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id, "reason": "test"}})
}

#[tokio::test]
async fn a_cancelled_call_gets_no_answer_and_its_tool_sees_the_cancellation() {
    for how in [Serve::Beside, Serve::ThroughRmcp] {
        let tag = match how {
            Serve::Beside => "cancel-beside",
            Serve::ThroughRmcp => "cancel-rmcp",
        };
        let mut wire = Wire::ready(how).await;
        wire.call(json!(5), "until_cancelled", json!({"tag": tag}))
            .await;
        noted(&format!("started:{tag}")).await;
        wire.send(cancel(json!(5))).await;
        noted(&format!("cancelled:{tag}")).await;
        // The id is free again once cancelled, and the session goes on.
        wire.call(json!(5), "echo", json!({"text": "after"})).await;
        let answer = wire.answer(json!(5)).await;
        assert_eq!(text(&answer), "after", "{answer}");
        let rest = wire.finish().await;
        assert!(answers_to(&rest, &json!(5)).is_empty(), "{rest:?}");
    }
}

#[tokio::test]
async fn a_cancellation_of_a_call_already_answered_changes_nothing() {
    let mut wire = Wire::ready(Serve::Beside).await;
    wire.call(json!(1), "echo", json!({"text": "one"})).await;
    assert_eq!(text(&wire.answer(json!(1)).await), "one");
    wire.send(cancel(json!(1))).await;
    wire.send(cancel(json!("never sent"))).await;
    wire.call(json!(1), "echo", json!({"text": "again"})).await;
    assert_eq!(text(&wire.answer(json!(1)).await), "again");
    let rest = wire.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
}

#[tokio::test]
async fn progress_of_a_call_reaches_the_client_before_its_answer() {
    for how in [Serve::Beside, Serve::ThroughRmcp] {
        let mut wire = Wire::ready(how).await;
        wire.send(
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
            "name": "steps", "arguments": {"count": 3}, "_meta": {"progressToken": "p9"}}}),
        )
        .await;
        let answer = wire.answer(json!(9)).await;
        assert_eq!(text(&answer), "done", "{answer}");
        let progress: Vec<&Value> = wire
            .seen
            .iter()
            .filter(|l| l["method"] == "notifications/progress")
            .collect();
        assert_eq!(progress.len(), 3, "{:?}", wire.seen);
        for (step, note) in progress.iter().enumerate() {
            assert_eq!(note["params"]["progressToken"], "p9", "{note}");
            assert_eq!(
                note["params"]["progress"],
                json!(step as f64 + 1.0),
                "{note}"
            );
            assert_eq!(note["params"]["total"], json!(3.0), "{note}");
        }
        // Without a progress token, no progress.
        wire.call(json!(10), "steps", json!({"count": 2})).await;
        wire.seen.clear();
        let answer = wire.answer(json!(10)).await;
        assert_eq!(text(&answer), "done", "{answer}");
        let rest = wire.finish().await;
        assert!(rest.is_empty(), "{rest:?}");
    }
}

#[tokio::test]
async fn logs_of_a_call_follow_the_level_the_session_set() {
    let mut wire = Wire::ready(Serve::Beside).await;
    wire.send(
        json!({"jsonrpc": "2.0", "id": "lvl", "method": "logging/setLevel",
                     "params": {"level": "error"}}),
    )
    .await;
    wire.answer(json!("lvl")).await;
    wire.call(json!(1), "log_twice", json!({"text": "x"})).await;
    assert_eq!(text(&wire.answer(json!(1)).await), "logged");
    let logs: Vec<&Value> = wire
        .seen
        .iter()
        .filter(|l| l["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 1, "{:?}", wire.seen);
    assert_eq!(logs[0]["params"]["level"], "error", "{}", logs[0]);
    assert_eq!(logs[0]["params"]["data"], "error x", "{}", logs[0]);
    wire.finish().await;
}

#[tokio::test]
async fn an_id_in_flight_is_refused_and_free_once_answered() {
    for (how, tag) in [
        (Serve::Beside, "dup-beside"),
        (Serve::ThroughRmcp, "dup-rmcp"),
    ] {
        let mut wire = Wire::ready(how).await;
        wire.call(json!(7), "gate", json!({"tag": tag})).await;
        // The same id again, as a call and as another request, while the first is running.
        wire.call(json!(7), "echo", json!({"text": "dup"})).await;
        let refused = wire.answer(json!(7)).await;
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        wire.send(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
            .await;
        let refused = wire.answer(json!(7)).await;
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        // A string id equal in text is another id.
        wire.call(json!("7"), "echo", json!({"text": "string"}))
            .await;
        assert_eq!(text(&wire.answer(json!("7")).await), "string");
        wire.call(json!(8), "open", json!({"tag": tag})).await;
        let mut answered = HashMap::new();
        for _ in 0..2 {
            let line = wire.next().await.expect("answers");
            answered.insert(line["id"].to_string(), line);
        }
        assert_eq!(text(&answered["7"]), tag, "{answered:?}");
        assert_eq!(text(&answered["8"]), "opened", "{answered:?}");
        // Answered: the id is free.
        wire.call(json!(7), "echo", json!({"text": "reused"})).await;
        assert_eq!(text(&wire.answer(json!(7)).await), "reused");
        let rest = wire.finish().await;
        assert!(rest.is_empty(), "{rest:?}");
    }
}

#[tokio::test]
async fn calls_sent_with_initialize_and_through_rmcp_are_answered() {
    for how in [Serve::Beside, Serve::ThroughRmcp] {
        let mut wire = Wire::start(how);
        // Calls in the same write as `initialize`: the first ones may arrive before the
        // session's peer exists, and then go through rmcp.
        let mut lines = vec![json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "beside", "version": "0"}}})];
        lines.extend((1..=20).map(|i| call(json!(i), "echo", json!({"text": format!("t{i}")}))));
        wire.send_lines(&lines).await;
        let rest = wire.finish().await;
        assert_eq!(rest.len(), 21, "{rest:?}");
        for i in 1..=20 {
            let answers = answers_to(&rest, &json!(i));
            assert_eq!(answers.len(), 1, "{rest:?}");
            assert_eq!(text(answers[0]), format!("t{i}"));
        }
    }
}

#[tokio::test]
async fn many_calls_in_flight_are_each_answered_once_under_their_own_id() {
    const GATED: usize = 40;
    const QUICK: usize = 200;
    let mut wire = Wire::ready(Serve::Beside).await;
    let mut lines = Vec::new();
    for i in 0..GATED {
        lines.push(call(
            json!(format!("g{i}")),
            "gate",
            json!({"tag": format!("many-{i}")}),
        ));
    }
    for i in 0..QUICK {
        lines.push(call(json!(i), "echo", json!({"text": format!("q{i}")})));
    }
    // The gates open in reverse order, between the quick calls.
    for i in (0..GATED).rev() {
        lines.insert(
            GATED + i * QUICK / GATED,
            call(
                json!(format!("o{i}")),
                "open",
                json!({"tag": format!("many-{i}")}),
            ),
        );
    }
    wire.send_lines(&lines).await;
    let mut answers = Vec::new();
    while answers.len() < lines.len() {
        answers.push(wire.next().await.expect("every call answered"));
    }
    let rest = wire.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
    let mut ids = HashSet::new();
    for answer in &answers {
        assert!(
            ids.insert(answer["id"].to_string()),
            "answered twice: {answer}"
        );
        let expected = match &answer["id"] {
            Value::Number(n) => format!("q{n}"),
            Value::String(s) if s.starts_with('g') => format!("many-{}", &s[1..]),
            Value::String(s) if s.starts_with('o') => "opened".to_owned(),
            other => panic!("unknown id {other}"),
        };
        assert_eq!(text(answer), expected, "{answer}");
    }
    assert_eq!(ids.len(), GATED * 2 + QUICK);
}

/// The `_meta` of a call naming `version`, with what protocol 2026-07-28 requires beside it.
fn naming(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "beside", "version": "0"}
    })
}

/// A call runs in the era its `_meta` names, not in the session's: on 2026-07-28 and later a
/// server may send the client no request, and rmcp refuses the one the call's tool sends,
/// although the session was initialized on 2025-06-18, which allows it. rmcp knows the
/// call's era from a task-local only its loop sets: were such a call run beside the loop, the
/// request would go out under the session's era.
#[tokio::test]
async fn a_call_naming_a_protocol_version_runs_in_that_era_through_rmcp() {
    let mut wire = Wire::ready(Serve::Beside).await;
    let named = ProtocolVersion::KNOWN_VERSIONS.iter().map(Some);
    for (n, version) in [None].into_iter().chain(named).enumerate() {
        let id = json!(n);
        let mut params = json!({"name": "pings_client", "arguments": {}});
        if let Some(version) = version {
            params["_meta"] = naming(version.as_str());
        }
        wire.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        // The client answers every request the server sends it, until the call's answer.
        let mut pings = 0;
        let answer = loop {
            let line = wire.next().await.expect("the server is still there");
            match (line.get("method"), line.get("id")) {
                (Some(method), Some(ping)) => {
                    assert_eq!(method, "ping", "{line}");
                    pings += 1;
                    wire.send(json!({"jsonrpc": "2.0", "id": ping, "result": {}}))
                        .await;
                }
                (None, Some(answered)) if *answered == id => break line,
                _ => wire.seen.push(line),
            }
        };
        let era = version.unwrap_or(&ProtocolVersion::V_2025_06_18);
        if *era >= ProtocolVersion::V_2026_07_28 {
            assert!(text(&answer).starts_with("refused: "), "{era}: {answer}");
            assert!(
                text(&answer).contains("2026-07-28"),
                "{era}: refused for its era: {answer}"
            );
            assert_eq!(pings, 0, "{era}: no request reached the client");
        } else {
            assert_eq!(text(&answer), "answered", "{era}: {answer}");
            assert_eq!(pings, 1, "{era}");
        }
    }
    let rest = wire.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
}

/// A session the first call opens (2026-07-28, no `initialize`): its calls, which name their
/// protocol version, are answered through rmcp in that era; one without its metadata is
/// refused as rmcp refuses it, though it runs beside rmcp's loop.
#[tokio::test]
async fn a_session_opened_by_a_call_is_answered_in_its_era() {
    let mut wire = Wire::start(Serve::Beside);
    for id in 1..=3 {
        wire.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": "modern"}, "_meta": naming("2026-07-28")}}),
        )
        .await;
        let answer = wire.answer(json!(id)).await;
        assert_eq!(text(&answer), "modern", "{answer}");
        assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    }
    wire.call(json!(4), "echo", json!({"text": "bare"})).await;
    let answer = wire.answer(json!(4)).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    wire.finish().await;
}

#[tokio::test]
async fn the_end_of_the_input_waits_for_the_calls_still_running() {
    let mut wire = Wire::ready(Serve::Beside).await;
    wire.call(json!(1), "gate", json!({"tag": "drain"})).await;
    wire.call(json!(2), "echo", json!({"text": "two"})).await;
    assert_eq!(text(&wire.answer(json!(2)).await), "two");
    // The gate opens from outside the session, after its input closed.
    wire.close_input().await;
    gate_of("drain").notify_one();
    let rest = wire.finish().await;
    let answers = answers_to(&rest, &json!(1));
    assert_eq!(answers.len(), 1, "{rest:?}");
    assert_eq!(text(answers[0]), "drain");
}

#[tokio::test]
async fn a_call_stopped_by_its_timeout_is_still_answered() {
    for how in [Serve::Beside, Serve::ThroughRmcp] {
        let mut wire = Wire::ready(how).await;
        wire.call(json!(3), "hangs", json!({})).await;
        let answer = wire.answer(json!(3)).await;
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert!(
            text(&answer).contains("did not finish within 1 ms"),
            "{answer}"
        );
        let rest = wire.finish().await;
        assert!(rest.is_empty(), "{rest:?}");
    }
}

#[tokio::test]
async fn the_work_a_call_leaves_behind_is_cancelled_once_it_is_answered() {
    for (how, tag) in [
        (Serve::Beside, "left-beside"),
        (Serve::ThroughRmcp, "left-rmcp"),
    ] {
        let mut wire = Wire::ready(how).await;
        wire.call(json!(4), "leaves_work", json!({"tag": tag}))
            .await;
        assert_eq!(text(&wire.answer(json!(4)).await), "left");
        noted(&format!("stopped:{tag}")).await;
        wire.finish().await;
    }
}
