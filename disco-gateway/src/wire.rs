//! An upstream child's stdio, framed by the gateway: newline-delimited JSON-RPC, as rmcp's
//! own child-process transport speaks it, with one difference in how an answer is read.
//!
//! rmcp parses every line into `ServerJsonRpcMessage`, whose result is an untagged enum: an
//! answer to `tools/call` is tried against each result type before `CallToolResult`, and each
//! refusal builds a formatted error that is thrown away, about a quarter of the instructions
//! of a forwarded call (BENCHMARKS.md, "Where the gateway's instructions go"). This transport
//! remembers the ids of the `tools/call` requests it sent; an answer to one of them whose
//! result holds only `CallToolResult`'s keys is read as `CallToolResult` directly, which is
//! the message rmcp's parse builds for it. Every other line goes to rmcp's parse.
//!
//! Written here rather than wrapped around rmcp's `TokioChildProcess`: that type keeps the
//! child's pipes inside its own line transport, where the parse cannot be changed.

use std::collections::HashSet;
use std::io;
use std::process::Stdio;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use disco_runtime::rmcp;
use disco_runtime::util;
use rmcp::model::{
    CallToolResult, ClientNotification, ClientRequest, CustomResult, JsonRpcMessage,
    JsonRpcVersion2_0, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, ServiceError, TxJsonRpcMessage};
use rmcp::transport::{DynamicTransportError, Transport};
use rmcp::RoleClient;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::Mutex;

/// The longest line read from an upstream by default (`disco.maxMessageBytes`): rmcp's own
/// limit for its line transports.
pub(crate) const MAX_LINE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// Past this many unanswered calls (an upstream that never answers) the ids are forgotten
/// rather than kept without bound; their answers then take rmcp's parse.
const MAX_PENDING_CALLS: usize = 65_536;

/// How long `close` waits for the child to exit after its stdin closes, and again after
/// SIGTERM, before killing it (the stdio shutdown of the MCP specification, as rmcp does it).
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// The ids of the `tools/call` requests sent and not answered yet.
type Pending = Arc<StdMutex<HashSet<RequestId>>>;

/// A child process speaking MCP over its stdin and stdout, as the client's transport.
pub(crate) struct ChildStdio {
    child: Option<Child>,
    read: BufReader<ChildStdout>,
    line: Vec<u8>,
    /// The longest line read; a longer one is skipped, its id read on the way (see [`Over`]).
    max_line: usize,
    /// Inside a line longer than the limit: its bytes are dropped up to its newline.
    over: Option<Over>,
    /// Answers made for a line over the limit, given out before anything else is read.
    made: std::collections::VecDeque<ServerJsonRpcMessage>,
    write: Arc<Mutex<Option<ChildStdin>>>,
    calls: Pending,
}

impl ChildStdio {
    /// Spawns `command` with its stdin, stdout and stderr piped; returns the transport and
    /// the child's stderr. The child is killed when the transport is dropped (tokio reaps it).
    pub(crate) fn spawn(
        mut command: Command,
        max_line: usize,
    ) -> io::Result<(Self, Option<ChildStderr>)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other("the child's stdin or stdout is not piped"));
        };
        let stderr = child.stderr.take();
        let transport = ChildStdio {
            child: Some(child),
            read: BufReader::new(stdout),
            line: Vec::new(),
            max_line,
            over: None,
            made: Default::default(),
            write: Arc::new(Mutex::new(Some(stdin))),
            calls: Arc::default(),
        };
        Ok((transport, stderr))
    }

    /// The writing half, for requests written beside rmcp's service loop.
    pub(crate) fn writer(&self) -> Writer {
        Writer {
            write: self.write.clone(),
            calls: self.calls.clone(),
        }
    }

    /// The child's process id, while it runs.
    pub(crate) fn id(&self) -> Option<u32> {
        self.child.as_ref()?.id()
    }

    /// Reads one line into `self.line`, never holding more than the limit; a longer line is
    /// scanned for its id as it is dropped, and comes back as `Some(Some(over))`. Cancel-safe:
    /// a partial line stays in the buffer for the next call. `None` at the end of the stream.
    async fn read_line(&mut self) -> io::Result<Option<Option<Over>>> {
        loop {
            let (consumed, done) = {
                let available = self.read.fill_buf().await?;
                if available.is_empty() {
                    return Ok(None);
                }
                let newline = available.iter().position(|&b| b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                if let Some(over) = self.over.as_mut() {
                    over.scan(&available[..take]);
                    (take, newline.is_some())
                } else if self.line.len() + take > self.max_line {
                    // Over the limit: what was held is scanned and dropped, and so is the rest.
                    let mut over = Over::default();
                    over.scan(&self.line);
                    over.scan(&available[..take]);
                    self.line.clear();
                    self.line.shrink_to(64 * 1024);
                    self.over = Some(over);
                    (take, newline.is_some())
                } else {
                    self.line.extend_from_slice(&available[..take]);
                    (take, newline.is_some())
                }
            };
            self.read.consume(consumed);
            if done {
                return Ok(Some(self.over.take()));
            }
        }
    }
}

impl Transport<RoleClient> for ChildStdio {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let tracked = track(&self.calls, &item);
        let bytes = line_of(&item);
        let write = self.write.clone();
        let calls = self.calls.clone();
        async move {
            let sent = write_line(&write, bytes).await;
            if sent.is_err() {
                // A call that never left gets no answer: its id is not kept waiting for one.
                if let Some(id) = tracked {
                    util::lock(&calls).remove(&id);
                }
            }
            sent
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if let Some(made) = self.made.pop_front() {
                return Some(made);
            }
            match self.read_line().await {
                Ok(Some(None)) => {}
                Ok(Some(Some(over))) => {
                    self.made = over.answers(self.max_line, &self.calls);
                    continue;
                }
                Ok(None) => return None,
                Err(e) => {
                    tracing::error!(error = %e, "upstream: reading its stdout failed");
                    return None;
                }
            }
            let message = {
                let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line[..]);
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.is_empty() {
                    None
                } else {
                    parse(line, &self.calls)
                }
            };
            self.line.clear();
            if self.line.capacity() > 64 * 1024 {
                self.line.shrink_to(64 * 1024);
            }
            if let Some(message) = message {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing stdin asks the server to exit; a server that does not is stopped.
        drop(self.write.lock().await.take());
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        if tokio::time::timeout(EXIT_WAIT, child.wait()).await.is_err() {
            #[cfg(unix)]
            if let Some(pid) = child.id().and_then(|pid| i32::try_from(pid).ok()) {
                // SAFETY: kill(2) with a pid this process spawned and has not reaped yet.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            if tokio::time::timeout(EXIT_WAIT, child.wait()).await.is_err() {
                child.kill().await?;
            }
        }
        self.child = None;
        Ok(())
    }
}

/// What a caller is told of an upstream's answer over `limit` bytes, on every transport: its
/// size when it was counted to its end (`Some`: a stdio line, scanned as it is dropped), or
/// "at least" one byte over the limit when reading stopped there (`None`: an HTTP body or SSE
/// event, which rmcp's HTTP client stops reading at the limit and drops unread, client.rs).
pub(crate) fn over_limit(size: Option<usize>, limit: usize) -> String {
    let size = match size {
        Some(bytes) => format!("{bytes} bytes"),
        None => format!("at least {} bytes", limit.saturating_add(1)),
    };
    format!(
        "the upstream's answer is {size}, over the gateway's limit of {limit} bytes \
         (disco.maxMessageBytes); it was not read"
    )
}

/// A line over the limit, scanned as it is dropped: its length, and the `id` and `method` of
/// its top-level object when they can be read. Nothing of it is kept but a key and an id of a
/// few bytes (a state machine over the bytes, not a parse: the line is never held).
#[derive(Default)]
pub(crate) struct Over {
    bytes: usize,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The last string of the top-level object, up to 8 bytes (a key when a `:` follows).
    token: Vec<u8>,
    token_long: bool,
    /// Inside the value of the top-level `id`: its bytes so far.
    id: Option<Vec<u8>>,
    /// The top-level `id`, whole.
    found: Option<Vec<u8>>,
    /// The top-level object has a `method` (a request or notification, not an answer).
    method: bool,
}

/// The longest id read from a line over the limit.
const MAX_ID_BYTES: usize = 256;

impl Over {
    pub(crate) fn scan(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len();
        for &b in bytes {
            let top = self.depth == 1;
            if let Some(id) = self.id.as_mut() {
                let ends = !self.in_string && top && (b == b',' || b == b'}');
                if ends {
                    self.found = self.id.take();
                } else if id.len() < MAX_ID_BYTES {
                    id.push(b);
                } else {
                    self.id = None;
                }
            }
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    continue;
                }
                if top {
                    if self.token.len() < 8 {
                        self.token.push(b);
                    } else {
                        self.token_long = true;
                    }
                }
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    self.token.clear();
                    self.token_long = false;
                }
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                b':' if top && !self.token_long => match &self.token[..] {
                    b"id" if self.found.is_none() => self.id = Some(Vec::new()),
                    b"method" => self.method = true,
                    _ => {}
                },
                _ => {}
            }
        }
    }

    /// What the gateway answers in place of the line: its call answered with a tool error
    /// naming the size and the limit, another request of its answered with a JSON-RPC error;
    /// when no id can be read, every pending call of the connection fails with the size error.
    /// A request or notification of the upstream's over the limit is dropped.
    pub(crate) fn answers(
        &self,
        limit: usize,
        calls: &Pending,
    ) -> std::collections::VecDeque<ServerJsonRpcMessage> {
        let why = over_limit(Some(self.bytes), limit);
        tracing::error!(
            bytes = self.bytes,
            max = limit,
            "upstream: a message over the limit, dropped"
        );
        let mut out = std::collections::VecDeque::new();
        if self.method {
            return out;
        }
        let id = self
            .found
            .as_deref()
            .and_then(|raw| serde_json::from_slice::<RequestId>(raw).ok());
        let ids: Vec<RequestId> = match id {
            Some(id) if !util::lock(calls).contains(&id) => {
                out.push_back(JsonRpcMessage::error(
                    rmcp::model::ErrorData::internal_error(why, None),
                    Some(id),
                ));
                return out;
            }
            Some(id) => vec![id],
            None => util::lock(calls).iter().cloned().collect(),
        };
        let mut calls = util::lock(calls);
        for id in ids {
            calls.remove(&id);
            let error = CallToolResult::error(vec![rmcp::model::ContentBlock::text(why.clone())]);
            out.push_back(JsonRpcMessage::response(
                ServerResult::CallToolResult(error),
                id,
            ));
        }
        out
    }
}

/// The writing half of a [`ChildStdio`], for requests written beside rmcp's service loop
/// (call.rs): the same framing, and the same note of a `tools/call` sent, for the typed read of
/// its answer and for a line over the limit.
#[derive(Clone)]
pub(crate) struct Writer {
    write: Arc<Mutex<Option<ChildStdin>>>,
    calls: Pending,
}

impl Writer {
    /// Waits for the pipe, then holds it for `item`'s line (see [`Turn::write`]). Until it
    /// returns nothing is written or noted: a caller that goes while it waits leaves no trace
    /// upstream. The error is rmcp's for a message it could not send.
    pub(crate) async fn turn(
        &self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> Result<Turn, ServiceError> {
        let bytes = line_of(&item).map_err(|e| send_error(e.into()))?;
        let guard = self.write.clone().lock_owned().await;
        Ok(Turn {
            guard,
            item,
            bytes,
            calls: self.calls.clone(),
        })
    }
}

/// The pipe, held for one line that is to be written ([`Writer::turn`]).
pub(crate) struct Turn {
    guard: tokio::sync::OwnedMutexGuard<Option<ChildStdin>>,
    item: TxJsonRpcMessage<RoleClient>,
    bytes: Vec<u8>,
    calls: Pending,
}

impl Turn {
    /// Writes the line, whole even when the caller stops waiting for it (cancelled, timed
    /// out): a line cut short would run into the next one. A line the pipe takes at once (most
    /// do) is written here; the rest of one it does not is written by a task of its own. The
    /// error is rmcp's for a message it could not send, worded as its loop words it.
    pub(crate) async fn write(self) -> Result<(), ServiceError> {
        use futures_util::FutureExt as _;
        let Turn {
            guard,
            item,
            bytes,
            calls,
        } = self;
        // Noted before the line leaves: its answer can only come after.
        let tracked = track(&calls, &item);
        drop(item);
        let mut line = Box::pin(async move {
            let sent = write_locked(guard, bytes).await;
            if sent.is_err() {
                // A call that never left gets no answer: its id is not kept waiting for one.
                if let Some(id) = tracked {
                    util::lock(&calls).remove(&id);
                }
            }
            sent
        });
        let sent = match line.as_mut().now_or_never() {
            Some(done) => done,
            None => tokio::spawn(line)
                .await
                .unwrap_or_else(|e| Err(io::Error::other(e))),
        };
        sent.map_err(send_error)
    }
}

/// rmcp's error for a message its loop could not send over this transport. The relay that
/// wraps the transport for rmcp's loop takes its name (relay.rs), so the text is the one a
/// request sent through the loop gets.
fn send_error(e: io::Error) -> ServiceError {
    ServiceError::TransportSend(DynamicTransportError::new::<ChildStdio, RoleClient>(e))
}

/// Writes one line under the writing half's lock, flushed.
async fn write_locked(
    mut guard: tokio::sync::OwnedMutexGuard<Option<ChildStdin>>,
    bytes: Vec<u8>,
) -> io::Result<()> {
    let w = guard
        .as_mut()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "transport closed"))?;
    w.write_all(&bytes).await?;
    w.flush().await
}

/// One message's line: its JSON and a newline.
fn line_of(item: &TxJsonRpcMessage<RoleClient>) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(item).map(|mut b| {
        b.push(b'\n');
        b
    })
}

/// Writes one message's line, flushed.
async fn write_line(
    write: &Mutex<Option<ChildStdin>>,
    bytes: serde_json::Result<Vec<u8>>,
) -> io::Result<()> {
    let bytes = bytes?;
    let mut guard = write.lock().await;
    let w = guard
        .as_mut()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "transport closed"))?;
    w.write_all(&bytes).await?;
    w.flush().await
}

/// Remembers a `tools/call` sent (its id, returned), and forgets one the client cancels (its
/// answer may never come).
fn track(calls: &Pending, item: &TxJsonRpcMessage<RoleClient>) -> Option<RequestId> {
    match item {
        JsonRpcMessage::Request(request) => {
            if let ClientRequest::CallToolRequest(_) = &request.request {
                let mut calls = util::lock(calls);
                if calls.len() >= MAX_PENDING_CALLS {
                    calls.clear();
                }
                calls.insert(request.id.clone());
                return Some(request.id.clone());
            }
        }
        JsonRpcMessage::Notification(notification) => {
            if let ClientNotification::CancelledNotification(cancelled) = &notification.notification
            {
                if let Some(id) = &cancelled.params.request_id {
                    util::lock(calls).remove(id);
                }
            }
        }
        JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
    }
    None
}

/// One line from the upstream (without its newline): the typed read for an answer to a
/// pending call, rmcp's parse for everything else. `None`: nothing to deliver (a line rmcp's
/// type refuses). rmcp's own transport answers valid JSON of the wrong shape with an id-less
/// -32600 to the upstream; the gateway only logs it, on purpose: an upstream that writes
/// noise to stdout would get an error back for every line, and could answer those in turn.
fn parse(line: &[u8], calls: &Pending) -> Option<ServerJsonRpcMessage> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if let Some(message) = call_result(line, calls) {
        return Some(message);
    }
    match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
        Ok(message) => {
            let answered = match &message {
                JsonRpcMessage::Response(response) => Some(&response.id),
                JsonRpcMessage::Error(error) => error.id.as_ref(),
                _ => None,
            };
            if let Some(id) = answered {
                util::lock(calls).remove(id);
            }
            Some(message)
        }
        Err(e) => {
            // A tool's schema nested too deep for serde_json's limit (128 levels) fails the
            // whole answer to tools/list; read here, it costs that tool alone.
            if e.to_string().starts_with("recursion limit exceeded") {
                if let Some(message) = deep_list(line) {
                    return Some(message);
                }
            }
            tracing::debug!(error = %e, "upstream: a line that is no MCP message, skipped");
            None
        }
    }
}

/// A key of `_meta` this reader puts in a tool entry it could not read whole (nested deeper
/// than [`MAX_ENTRY_DEPTH`]); admit.rs leaves such a tool out with the reason the key holds.
/// An upstream that writes the key itself only leaves out its own tool.
pub(crate) const UNREADABLE: &str = "disco-gateway/unreadable";

/// How deep a tool entry of a `tools/list` answer is read: the entry sits 4 levels down the
/// message, and 4 + 100 stays within serde_json's 128. Deeper parts are skipped (serde's
/// skipping keeps no stack), and the entry is marked [`UNREADABLE`].
pub(crate) const MAX_ENTRY_DEPTH: usize = 100;

/// An answer to `tools/list` too deep for rmcp's parse, read entry by entry: a CustomResult
/// that admit.rs reads like any page rmcp could not type. `None` for any other line.
fn deep_list(line: &[u8]) -> Option<ServerJsonRpcMessage> {
    let answer: DeepAnswer = serde_json::from_slice(line).ok()?;
    let mut result = serde_json::Map::new();
    result.insert(
        "tools".into(),
        Value::Array(answer.result.tools.into_iter().map(|e| e.0).collect()),
    );
    if let Some(cursor) = answer.result.next_cursor {
        result.insert("nextCursor".into(), cursor);
    }
    Some(JsonRpcMessage::response(
        ServerResult::CustomResult(CustomResult(Value::Object(result))),
        answer.id,
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeepAnswer {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    result: DeepResult,
}

#[derive(Deserialize)]
struct DeepResult {
    tools: Vec<DeepEntry>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<Value>,
}

/// One tool entry, read down to [`MAX_ENTRY_DEPTH`] levels.
struct DeepEntry(Value);

impl<'de> Deserialize<'de> for DeepEntry {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::DeserializeSeed;
        let cut = std::cell::Cell::new(false);
        let mut value = Bounded {
            depth: MAX_ENTRY_DEPTH,
            cut: &cut,
        }
        .deserialize(deserializer)?;
        if cut.get() {
            if let Value::Object(entry) = &mut value {
                let why = format!("its entry is nested deeper than {MAX_ENTRY_DEPTH} levels");
                let mut meta = serde_json::Map::new();
                meta.insert(UNREADABLE.into(), Value::String(why));
                entry.insert("_meta".into(), Value::Object(meta));
            }
        }
        Ok(DeepEntry(value))
    }
}

/// A JSON value read down to `depth` more levels; below, arrays and objects are skipped and
/// `cut` is set.
struct Bounded<'a> {
    depth: usize,
    cut: &'a std::cell::Cell<bool>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Bounded<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        if self.depth == 0 {
            self.cut.set(true);
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            return Ok(Value::Array(out));
        }
        while let Some(v) = seq.next_element_seed(Bounded {
            depth: self.depth - 1,
            cut: self.cut,
        })? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        if self.depth == 0 {
            self.cut.set(true);
            while map
                .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                .is_some()
            {}
            return Ok(Value::Object(out));
        }
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Bounded {
                depth: self.depth - 1,
                cut: self.cut,
            })?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// The answer to a pending `tools/call`, read as `CallToolResult` without trying the result
/// types before it; `None` when the line is anything else or when the typed read cannot
/// promise rmcp's message (then rmcp's parse decides).
///
/// rmcp's result enum takes the first type that accepts the object. Every type before
/// `CallToolResult` requires a key `CallToolResult` does not have (`tools`, `messages`,
/// `contents`, `taskId`, ...), except `SubscriptionsListenResult`, which requires
/// `resultType` and a `_meta` holding a subscription id. So a result whose keys are all
/// `CallToolResult`'s and whose `_meta` names no subscription is one that only
/// `CallToolResult` (or nothing) accepts; anything else is left to rmcp.
fn call_result(line: &[u8], calls: &Pending) -> Option<ServerJsonRpcMessage> {
    if util::lock(calls).is_empty() {
        return None;
    }
    // A first pass reads the id and the shape without building anything.
    let shape: Shape = serde_json::from_slice(line).ok()?;
    // rmcp's message is a response only without `method` and `error`.
    if shape.method.0 || shape.error.0 || !util::lock(calls).contains(&shape.id) {
        return None;
    }
    let answer: CallAnswer = serde_json::from_slice(line).ok()?;
    util::lock(calls).remove(&answer.id);
    Some(JsonRpcMessage::response(
        ServerResult::CallToolResult(answer.result),
        answer.id,
    ))
}

#[derive(Deserialize)]
struct Shape {
    id: RequestId,
    #[serde(rename = "result")]
    _result: CallKeys,
    #[serde(default)]
    method: Present,
    #[serde(default)]
    error: Present,
}

#[derive(Deserialize)]
struct CallAnswer {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    result: CallToolResult,
}

/// Whether a key was present, whatever its value (`null` included).
#[derive(Default)]
struct Present(bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer)?;
        Ok(Present(true))
    }
}

/// An object whose keys are all `CallToolResult`'s, its `_meta` naming no subscription; an
/// error for anything else. Values are skipped, not built.
struct CallKeys;

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum CallKey {
    ResultType,
    Content,
    StructuredContent,
    IsError,
    #[serde(rename = "_meta")]
    Meta,
}

#[derive(Deserialize)]
#[serde(field_identifier)]
enum MetaKey {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    SubscriptionId,
    #[serde(other)]
    Other,
}

/// A `_meta` object without a subscription id, or `null`.
struct NoSubscription;

impl<'de> Deserialize<'de> for CallKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = CallKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a CallToolResult object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<CallKeys, A::Error> {
                while let Some(key) = map.next_key::<CallKey>()? {
                    match key {
                        CallKey::Meta => {
                            map.next_value::<NoSubscription>()?;
                        }
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(CallKeys)
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

impl<'de> Deserialize<'de> for NoSubscription {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = NoSubscription;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a _meta object or null")
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<NoSubscription, E> {
                Ok(NoSubscription)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<NoSubscription, A::Error> {
                while let Some(key) = map.next_key::<MetaKey>()? {
                    if let MetaKey::SubscriptionId = key {
                        return Err(serde::de::Error::custom("a subscription's result"));
                    }
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                Ok(NoSubscription)
            }
        }
        deserializer.deserialize_any(Keys)
    }
}

#[cfg(test)]
mod tests;
