//! The stdio transport: newline-delimited JSON-RPC, checked line by line before rmcp sees it.
//!
//! rmcp's own line transport has three behaviours a hostile or buggy client can exploit
//! (RMCP-NOTES.md): a notification (or a response) before `initialize` ends the server,
//! malformed JSON-RPC is answered -32600 *without* the request's id, and unparseable lines are
//! dropped silently, so the client waits forever. This transport answers every line that is
//! not a valid message with the JSON-RPC error the specification asks for, carrying the id
//! whenever one can be read, and keeps serving:
//!
//! | input                                         | answer                              |
//! |-----------------------------------------------|-------------------------------------|
//! | not JSON, truncated JSON, invalid UTF-8       | -32700 Parse error (id when legible)|
//! | JSON that is not an object (`42`, `"x"`, `[]`) | -32600 Invalid Request, id null     |
//! | a batch (`[{...}, {...}]`)                    | a batch of -32600, one per request  |
//! | `jsonrpc` missing or not `"2.0"`              | -32600 with the id                  |
//! | `id` not a string or an integer               | -32600 with id null                 |
//! | `method` not a string, no method nor result   | -32600 with the id                  |
//! | `params` a scalar                             | -32600 with the id                  |
//! | `params` an array                             | -32602 with the id                  |
//! | a `notifications/*` method with an id         | -32600 with the id                  |
//! | a request reusing the id of one in flight     | -32600 with the id                  |
//! | a line over [`MAX_LINE_BYTES`]                | -32600 (id when legible), discarded |
//! | JSON nested deeper than serde_json's 128      | -32600 (id when legible)            |
//! | a notification or response before the session started | dropped (no answer is possible) |
//!
//! Requests before `initialize` reach rmcp, which answers them itself (-32602 naming the
//! missing per-request `_meta` of the stateless protocol) and keeps waiting for `initialize`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex as StdMutex};

use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest line (one message) accepted, in bytes: the HTTP transport's default body
/// limit. Longer lines are discarded as they stream in, never buffered whole.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// How much of an oversized line is kept to find its id.
const ID_SCAN_BYTES: usize = 4096;

/// Past this many requests in flight the duplicate-id check forgets the oldest ids rather
/// than grow without bound (a client that never reads its answers).
const MAX_TRACKED_IDS: usize = 65_536;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// The metadata keys that make a request stand alone (protocol 2026-07-28): such a request
/// starts a session without `initialize`.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// A newline-delimited JSON-RPC transport for the server side that answers malformed input
/// instead of dropping it or dying on it. Give it to rmcp like any transport:
/// `handler.serve(GuardedStdio::new(reader, writer))`.
pub struct GuardedStdio<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Inside a line longer than the limit: dropping bytes up to its newline.
    discarding: bool,
    max_line: usize,
    write: Arc<Mutex<Option<W>>>,
    /// A request that can start rmcp's service loop has been passed on: from then on
    /// notifications and responses are safe to forward.
    started: bool,
    in_flight: Arc<StdMutex<HashSet<RequestId>>>,
}

impl<R, W> GuardedStdio<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(read: R, write: W) -> Self {
        GuardedStdio {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            max_line: MAX_LINE_BYTES,
            write: Arc::new(Mutex::new(Some(write))),
            started: false,
            in_flight: Arc::new(StdMutex::new(HashSet::new())),
        }
    }

    /// Overrides [`MAX_LINE_BYTES`].
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line = bytes.max(1);
        self
    }

    /// Reads one line into `self.line`, never holding more than `max_line` bytes of it.
    /// Cancel-safe: a partial line stays in the buffer for the next call.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        loop {
            let (consumed, done) = {
                let available = self.read.fill_buf().await?;
                if available.is_empty() {
                    return Ok(Line::Eof);
                }
                let newline = available.iter().position(|&b| b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                if self.discarding {
                    (take, newline.map(|_| Line::Oversized))
                } else if self.line.len() + take > self.max_line {
                    // Keep the head of the line to look for its id; drop the rest.
                    let room = ID_SCAN_BYTES.saturating_sub(self.line.len());
                    let keep = room.min(take);
                    self.line.extend_from_slice(&available[..keep]);
                    self.line.truncate(ID_SCAN_BYTES);
                    self.discarding = true;
                    (take, newline.map(|_| Line::Oversized))
                } else {
                    self.line.extend_from_slice(&available[..take]);
                    (take, newline.map(|_| Line::Full))
                }
            };
            self.read.consume(consumed);
            if let Some(line) = done {
                self.discarding = false;
                return Ok(line);
            }
        }
    }

    /// Writes an error response on a task of its own, so that a cancelled `receive` can
    /// never leave half a line on the wire.
    fn answer(&self, message: Value) {
        let write = self.write.clone();
        let mut bytes = message.to_string().into_bytes();
        bytes.push(b'\n');
        tokio::spawn(async move {
            let mut guard = write.lock().await;
            if let Some(w) = guard.as_mut() {
                if w.write_all(&bytes).await.is_ok() {
                    let _ = w.flush().await;
                }
            }
        });
    }

    /// What to do with one complete line.
    fn classify(&mut self, line: &[u8], oversized: bool) -> Verdict {
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if oversized {
            return Verdict::Answer(error(
                scan_id(line),
                INVALID_REQUEST,
                format!(
                    "Invalid Request: the message is longer than {} bytes",
                    self.max_line
                ),
            ));
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
                return Verdict::Answer(error(
                    scan_id(line),
                    INVALID_REQUEST,
                    "Invalid Request: JSON nested more than 128 levels deep".into(),
                ))
            }
            Err(e) => {
                let what = if std::str::from_utf8(line).is_err() {
                    "the message is not valid UTF-8".to_string()
                } else {
                    format!("the message is not valid JSON ({e})")
                };
                return Verdict::Answer(error(
                    scan_id(line),
                    PARSE_ERROR,
                    format!("Parse error: {what}"),
                ));
            }
        };
        match value {
            Value::Object(obj) => self.classify_object(obj),
            Value::Array(items) if !items.is_empty() => {
                // Batches were removed from MCP in 2025-06-18 and rmcp cannot take them:
                // answer each request in the batch so that no client waits for an answer.
                let answers: Vec<Value> = items
                    .iter()
                    .filter_map(|item| {
                        let id = item.as_object()?.get("id")?;
                        Some(error(
                            valid_id(id).then(|| id.clone()),
                            INVALID_REQUEST,
                            "Invalid Request: JSON-RPC batches are not supported; send each \
                             message on its own line"
                                .into(),
                        ))
                    })
                    .collect();
                if answers.is_empty() {
                    Verdict::Drop("a batch of notifications")
                } else {
                    Verdict::Answer(Value::Array(answers))
                }
            }
            other => Verdict::Answer(error(
                None,
                INVALID_REQUEST,
                format!(
                    "Invalid Request: a JSON-RPC message is an object, not {}",
                    crate::catalog::json_kind(&other)
                ),
            )),
        }
    }

    fn classify_object(&mut self, obj: Map<String, Value>) -> Verdict {
        let raw_id = obj.get("id");
        let id = raw_id.filter(|id| valid_id(id)).cloned();
        let answer_id = id.clone();
        let invalid = |message: &str| {
            Verdict::Answer(error(
                answer_id.clone(),
                INVALID_REQUEST,
                format!("Invalid Request: {message}"),
            ))
        };
        if raw_id.is_some() && id.is_none() {
            return invalid("`id` must be a string or an integer");
        }
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return invalid("`jsonrpc` must be \"2.0\"");
        }
        let method = match obj.get("method") {
            Some(Value::String(m)) => Some(m.as_str()),
            Some(_) => return invalid("`method` must be a string"),
            None => None,
        };
        let Some(method) = method else {
            // A response from the client (to a server request such as elicitation).
            if id.is_none() || !(obj.contains_key("result") || obj.contains_key("error")) {
                return invalid("a message needs `method` (a request or notification) or `result`/`error` (a response)");
            }
            if !self.started {
                return Verdict::Drop("a response before the session started");
            }
            return self.forward(Value::Object(obj), None);
        };
        match obj.get("params") {
            None | Some(Value::Object(_)) => {}
            Some(Value::Array(_)) => {
                return Verdict::Answer(error(
                    id,
                    INVALID_PARAMS,
                    format!("Invalid params: `{}` takes its params as an object of named values, not an array", clip(method)),
                ))
            }
            Some(other) => {
                return invalid(&format!(
                    "`params` must be an object, not {}",
                    crate::catalog::json_kind(other)
                ))
            }
        }
        let Some(id) = id.clone() else {
            // A notification.
            if !self.started {
                // rmcp ends the session on any notification before `initialize`.
                return Verdict::Drop("a notification before the session started");
            }
            let cancelled = (method == "notifications/cancelled")
                .then(|| {
                    obj.get("params")
                        .and_then(|p| p.get("requestId"))
                        .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
                })
                .flatten();
            return self.forward(Value::Object(obj), cancelled.map(Track::Cancelled));
        };
        if method.starts_with("notifications/") {
            return invalid(&format!(
                "`{}` is a notification: send it without an `id`",
                clip(method)
            ));
        }
        let Ok(request_id) = serde_json::from_value::<RequestId>(id.clone()) else {
            return invalid("`id` must be a string or an integer");
        };
        if lock(&self.in_flight).contains(&request_id) {
            return invalid("a request with this `id` is still in progress; use a new id");
        }
        if !self.started && starts_session(method, &obj) {
            self.started = true;
        }
        self.forward(Value::Object(obj), Some(Track::Request(request_id)))
    }

    /// Hands a checked message to rmcp, if rmcp's types accept it.
    fn forward(&mut self, value: Value, track: Option<Track>) -> Verdict {
        let id = value.get("id").cloned();
        let is_notification = id.is_none();
        match serde_json::from_value::<ClientJsonRpcMessage>(value) {
            Ok(message) => {
                match track {
                    Some(Track::Request(id)) => {
                        let mut set = lock(&self.in_flight);
                        if set.len() >= MAX_TRACKED_IDS {
                            set.clear();
                        }
                        set.insert(id);
                    }
                    Some(Track::Cancelled(id)) => {
                        // rmcp sends no answer to a cancelled request: forget its id here.
                        lock(&self.in_flight).remove(&id);
                    }
                    None => {}
                }
                Verdict::Forward(Box::new(message))
            }
            // Like rmcp: notifications it has no type for (other protocols' or extensions')
            // are ignored.
            Err(_) if is_notification => Verdict::Drop("a notification rmcp does not know"),
            Err(e) => Verdict::Answer(error(
                id,
                INVALID_REQUEST,
                format!(
                    "Invalid Request: not a valid MCP message ({})",
                    clip(&e.to_string())
                ),
            )),
        }
    }
}

enum Line {
    Full,
    Oversized,
    Eof,
}

enum Verdict {
    Forward(Box<ClientJsonRpcMessage>),
    Answer(Value),
    Drop(&'static str),
}

enum Track {
    Request(RequestId),
    Cancelled(RequestId),
}

fn lock<T>(m: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// JSON-RPC ids are strings or integers (rmcp takes no others).
fn valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

fn clip(s: &str) -> String {
    crate::catalog::clip(s, 128)
}

fn error(id: Option<Value>, code: i64, message: String) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": {"code": code, "message": message},
    })
}

/// rmcp selects a lifecycle on `initialize`, or on a request that carries the stateless
/// protocol's metadata (other than the `ping` and `server/discover` it answers before).
fn starts_session(method: &str, obj: &Map<String, Value>) -> bool {
    if method == "initialize" {
        return true;
    }
    if method == "ping" || method == "server/discover" {
        return false;
    }
    let meta = obj.get("params").and_then(|p| p.get("_meta"));
    meta.and_then(|m| m.get(META_PROTOCOL_VERSION))
        .is_some_and(Value::is_string)
        && meta
            .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
            .is_some_and(Value::is_object)
}

/// The top-level `"id"` of a JSON object that could not be parsed whole (too long, too
/// deep, broken further on), read without recursion or allocation proportional to the
/// input. `None` when the head of the message does not show a string or integer id.
pub fn scan_id(bytes: &[u8]) -> Option<Value> {
    let mut i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(bytes, i);
        if bytes.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(bytes, i)?;
        let key = &bytes[i + 1..key_end - 1];
        i = skip_ws(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(bytes, i + 1);
        let value_end = value_end(bytes, i)?;
        if key == b"id" {
            let id: Value = serde_json::from_slice(&bytes[i..value_end]).ok()?;
            return valid_id(&id).then_some(id);
        }
        i = skip_ws(bytes, value_end);
        match bytes.get(i) {
            Some(b',') => i += 1,
            _ => return None,
        }
    }
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t' | b'\r' | b'\n')) {
        i += 1;
    }
    i
}

/// `bytes[start]` is `"`: the index just past the closing quote.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        match bytes.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The index just past the JSON value starting at `start` (nesting counted, not recursed).
fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    match bytes.get(start)? {
        b'"' => string_end(bytes, start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            loop {
                match bytes.get(i)? {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = start;
            while let Some(b) = bytes.get(i) {
                if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                    break;
                }
                i += 1;
            }
            (i > start).then_some(i)
        }
    }
}

impl<R, W> Transport<RoleServer> for GuardedStdio<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = match &item {
            JsonRpcMessage::Response(r) => Some(r.id.clone()),
            JsonRpcMessage::Error(e) => e.id.clone(),
            _ => None,
        };
        if let Some(id) = answered {
            lock(&self.in_flight).remove(&id);
        }
        let bytes = serde_json::to_vec(&item).map(|mut b| {
            b.push(b'\n');
            b
        });
        let write = self.write.clone();
        async move {
            let bytes = bytes?;
            let mut guard = write.lock().await;
            let w = guard.as_mut().ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotConnected, "transport closed")
            })?;
            w.write_all(&bytes).await?;
            w.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let line = match self.read_line().await {
                Ok(Line::Eof) => return None,
                Ok(line) => line,
                Err(e) => {
                    tracing::error!(error = %e, "stdin: read failed");
                    return None;
                }
            };
            let bytes = std::mem::take(&mut self.line);
            let trimmed = trim(&bytes);
            let verdict = if trimmed.is_empty() {
                Verdict::Drop("an empty line")
            } else {
                self.classify(trimmed, matches!(line, Line::Oversized))
            };
            // Keep the buffer's capacity unless a large line inflated it.
            self.line = bytes;
            self.line.clear();
            if self.line.capacity() > 64 * 1024 {
                self.line.shrink_to(64 * 1024);
            }
            match verdict {
                Verdict::Forward(message) => return Some(*message),
                Verdict::Answer(message) => {
                    tracing::debug!(answer = %message, "stdin: malformed message answered");
                    self.answer(message);
                }
                Verdict::Drop(what) => tracing::debug!("stdin: ignored {what}"),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut guard = self.write.lock().await;
        if let Some(mut w) = guard.take() {
            let _ = w.shutdown().await;
        }
        Ok(())
    }
}

fn trim(line: &[u8]) -> &[u8] {
    let mut line = line;
    while let [first, rest @ ..] = line {
        if first.is_ascii_whitespace() {
            line = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = line {
        if last.is_ascii_whitespace() {
            line = rest;
        } else {
            break;
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_in_broken_heads() {
        assert_eq!(
            scan_id(br#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"#),
            Some(json!(7))
        );
        assert_eq!(
            scan_id(br#" { "a" : [1,{"id":2}], "id" : "k\"1" , "#),
            Some(json!("k\"1"))
        );
        assert_eq!(scan_id(br#"{"params":[[[[["#), None);
        assert_eq!(scan_id(br#"{"id":1.5}"#), None);
        assert_eq!(scan_id(br#"{"id":null}"#), None);
        assert_eq!(scan_id(b"[1]"), None);
        assert_eq!(scan_id(b""), None);
        assert_eq!(scan_id(b"{\"id\":\xff}"), None);
    }
}
