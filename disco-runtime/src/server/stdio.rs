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

use std::sync::{Arc, Mutex as StdMutex};

use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, JsonRpcRequest, RequestId};

use super::guard::{check, error, typed, Checked, ID_SCAN_BYTES, INVALID_REQUEST};
use super::stdio_calls::{line_of, write_bytes, Calls, InFlight, Served};
use crate::util::lock;
use rmcp::service::{RunningService, RxJsonRpcMessage, Service, ServiceExt, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest line (one message) accepted, in bytes: the HTTP transport's default body
/// limit. Longer lines are discarded as they stream in, never buffered whole.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// A newline-delimited JSON-RPC transport for the server side that answers malformed input
/// instead of dropping it or dying on it. Give it to rmcp like any transport,
/// `handler.serve(GuardedStdio::new(reader, writer))`, or serve through it,
/// `GuardedStdio::new(reader, writer).serve(handler)`, which runs the session's `tools/call`
/// requests beside rmcp's service loop (see [`GuardedStdio::serve`]).
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
    in_flight: Arc<StdMutex<InFlight>>,
    /// The calls this transport runs itself (see [`GuardedStdio::serve`]).
    calls: Arc<Calls>,
}

impl<R, W> GuardedStdio<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Reads messages from `read` (the server's stdin) and writes answers to `write` (its
    /// stdout), with lines up to [`MAX_LINE_BYTES`].
    pub fn new(read: R, write: W) -> Self {
        GuardedStdio {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            max_line: MAX_LINE_BYTES,
            write: Arc::new(Mutex::new(Some(write))),
            started: false,
            in_flight: Arc::default(),
            calls: Arc::default(),
        }
    }

    /// Serves `service` over this transport, as `service.serve(transport)` does, and runs
    /// each well-formed `tools/call` of the running session beside rmcp's service loop:
    /// straight from the line to `service` and from its answer to the output, without the
    /// loop's two hand-offs between tasks (see `stdio_calls.rs`). Its id, `_meta` (progress
    /// token included), cancellation, duplicate-id check and answer are as under rmcp. Calls
    /// before the session's peer exists (during `serve`), calls that name a protocol version
    /// in their `_meta`, and every other message go through rmcp's loop as with `serve`.
    pub async fn serve<S: Service<RoleServer>>(
        self,
        service: S,
    ) -> Result<RunningService<RoleServer, Served<S>>, rmcp::service::ServerInitializeError> {
        let service = Arc::new(service);
        let calls = self.calls.clone();
        // rmcp's loop runs with the calls' parent token: stopping the session (`cancel`, or
        // dropping the `RunningService`) reaches the calls run here at once, as it does
        // rmcp's own; the end of the input does not cancel it.
        let running = Served::new(service.clone())
            .serve_with_ct(self, calls.session())
            .await?;
        calls.set_runner(service, running.peer().clone());
        Ok(running)
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
            let _ = write_bytes(&write, &bytes).await;
        });
    }

    /// What to do with one complete line: the stateless checks, then what depends on the
    /// session (before `initialize`, ids in flight).
    fn classify(&mut self, line: &[u8], oversized: bool) -> Verdict {
        if !oversized {
            if let Some(verdict) = self.fast_path(line) {
                return verdict;
            }
        }
        match check(line, self.max_line, oversized) {
            Checked::Answer(answer) => Verdict::Answer(answer),
            Checked::Drop(what) => Verdict::Drop(what),
            Checked::Response(_) if !self.started => {
                Verdict::Drop("a response before the session started")
            }
            Checked::Response(value) => self.forward(value, None),
            // rmcp ends the session on any notification before `initialize`.
            Checked::Notification { .. } if !self.started => {
                Verdict::Drop("a notification before the session started")
            }
            Checked::Notification { value, cancelled } => {
                self.forward(value, cancelled.map(Track::Cancelled))
            }
            Checked::Request {
                value,
                id,
                starts_session,
            } => {
                if lock(&self.in_flight).contains(&id) {
                    let id = value.get("id").cloned();
                    return Verdict::Answer(error(
                        id,
                        INVALID_REQUEST,
                        "Invalid Request: a request with this `id` is still in progress; use a \
                         new id"
                            .into(),
                    ));
                }
                if starts_session {
                    self.started = true;
                }
                self.forward(value, Some(Track::Request(id)))
            }
        }
    }

    /// The common case, a well-formed message in a running session, in one parse: a
    /// `tools/call` straight into its own request type, anything else into rmcp's message
    /// type. Anything unusual (the session not started yet, a cancellation, a reused id, a
    /// notification method sent with an id, anything rmcp's type refuses) returns `None` and
    /// takes the full checks above.
    fn fast_path(&mut self, line: &[u8]) -> Option<Verdict> {
        if !self.started {
            return None;
        }
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        let message = match super::call_parse::tools_call(line) {
            Some(message) => message,
            None => serde_json::from_slice::<ClientJsonRpcMessage>(line).ok()?,
        };
        match &message {
            JsonRpcMessage::Request(request) => {
                if request.request.method().starts_with("notifications/") {
                    return None;
                }
                let room = {
                    let in_flight = lock(&self.in_flight);
                    if in_flight.contains(&request.id) {
                        return None;
                    }
                    in_flight.has_room()
                };
                if let Some(runner) = self.calls.runner_for(&request.request).filter(|_| room) {
                    if let JsonRpcMessage::Request(JsonRpcRequest { id, request, .. }) = message {
                        self.calls
                            .run(runner, id, request, &self.in_flight, &self.write);
                    }
                    return Some(Verdict::Running);
                }
                lock(&self.in_flight).track(request.id.clone());
            }
            JsonRpcMessage::Notification(notification) => {
                if matches!(
                    notification.notification,
                    rmcp::model::ClientNotification::CancelledNotification(_)
                ) {
                    return None;
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
        Some(Verdict::Forward(Box::new(message)))
    }

    /// Hands a checked message to rmcp, if rmcp's types accept it.
    fn forward(&mut self, value: Value, track: Option<Track>) -> Verdict {
        match typed(value) {
            Ok(message) => {
                match track {
                    Some(Track::Request(id)) => lock(&self.in_flight).track(id),
                    // A call run here: its token is cancelled and its answer will not be
                    // sent. The notification still goes to rmcp, which finds no request of
                    // its own under the id and hands it to the service (`on_cancelled`).
                    Some(Track::Cancelled(id)) => {
                        lock(&self.in_flight).cancel(&id);
                    }
                    None => {}
                }
                Verdict::Forward(Box::new(message))
            }
            Err(Some(answer)) => Verdict::Answer(answer),
            Err(None) => Verdict::Drop("a notification rmcp does not know"),
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
    /// A call this transport runs itself.
    Running,
    Answer(Value),
    Drop(&'static str),
}

enum Track {
    Request(RequestId),
    Cancelled(RequestId),
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
            lock(&self.in_flight).answered(&id);
        }
        let bytes = line_of(&item);
        let write = self.write.clone();
        async move { write_bytes(&write, &bytes?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let line = match self.read_line().await {
                Ok(Line::Eof) => {
                    self.calls.input_ended();
                    return None;
                }
                Ok(line) => line,
                Err(e) => {
                    tracing::error!(error = %e, "stdin: read failed");
                    self.calls.input_ended();
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
                // A burst of calls read from one buffer: rmcp's loop (its answers, progress
                // and logs) gets its turn between them.
                Verdict::Running => tokio::task::consume_budget().await,
                Verdict::Answer(message) => {
                    tracing::debug!(answer = %message, "stdin: malformed message answered");
                    self.answer(message);
                }
                Verdict::Drop(what) => tracing::debug!("stdin: ignored {what}"),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.calls.drain().await;
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
mod tests;
