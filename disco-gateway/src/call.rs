//! The one call path: what every forwarded call takes, over the upstream's main connection or
//! over a caller's own (forward.rs). The request goes out with its progress routed (relay.rs);
//! the upstream's progress reaches the caller in the order it was sent and all of it before the
//! answer; a call dropped before its answer (the client cancelled it, or the catalog's per-call
//! timeout ended it) is cancelled upstream; the upstream's log messages go to the callers whose
//! calls run on that connection; the answer is read as a tool result.
//!
//! Over a stdio upstream the request skips rmcp's client service loop ([`Direct`]): it is
//! written by the gateway's own framing (wire.rs) from the caller's task, and its answer is
//! handed to the call by the relay as it is read (relay.rs), where rmcp's loop would take two
//! task hand-offs and a task per message written. Everything else on the connection
//! (initialization, listings, pings, notifications, the upstream's requests, cancellations)
//! stays with rmcp's loop. One thing differs: rmcp refuses an upstream's request for sampling,
//! roots or elicitation on a 2026-07-28 connection when no request of its own is in flight
//! (SEP-2260), and it does not see the calls beside it, so while only those run such a request
//! is refused with invalid params (-32602) rather than given the handler's default answer (no
//! sampling, no roots, a declined elicitation; client/tests.rs pins both). The gateway always
//! opens a stdio connection with `initialize`, so a connection is on 2026-07-28 only when the
//! upstream answers `initialize` with that version. The gateway declares none of these
//! capabilities: an upstream that asks is outside the protocol either way.

// Logging notifications are deprecated by SEP-2577 but still sent by servers of every era.
#![allow(deprecated)]

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use disco_runtime::rmcp;
use disco_runtime::util;
use disco_runtime::Context;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ContentBlock, GetMeta, JsonRpcMessage, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken, RequestId,
    RequestMetaObject, ResultType, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestHandle, ServiceError};
use rmcp::{Peer, RoleClient};
use serde_json::{Map, Value};

use crate::relay::{route_progress, Answers, Waiting};
use crate::wire::Writer;

/// The most log messages of one connection waiting for their callers. rmcp hands each
/// notification to a task of its own, and a task that waited on a caller that reads slowly
/// held its message for as long: an upstream that flooded log messages grew the gateway by
/// tens of megabytes a second. Past this many, the oldest waiting message is dropped and
/// counted, and the count is logged.
pub(crate) const MAX_QUEUED_LOGS: usize = 256;

/// The largest log message relayed, in bytes of its JSON `data`: a larger one is relayed as a
/// line saying its size, so that the queue's bound is one of bytes too.
pub(crate) const MAX_LOG_BYTES: usize = 16 * 1024;

/// The most characters of an upstream's error that reach the caller and the log.
pub(crate) const MAX_ERROR_CHARS: usize = 1_000;

/// The calls in flight on one connection, by a number of their own: where its log messages go.
#[derive(Default)]
pub(crate) struct Calls {
    running: Mutex<HashMap<u64, Context>>,
    next: AtomicU64,
    logs: Mutex<LogQueue>,
}

/// The log messages waiting to be relayed, each with the callers it goes to.
#[derive(Default)]
struct LogQueue {
    queued: VecDeque<(Vec<Context>, LoggingLevel, Value)>,
    /// Dropped since the count was last logged.
    dropped: u64,
    /// A task relays the queue.
    draining: bool,
}

impl Calls {
    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Context>> {
        util::lock(&self.running)
    }

    /// How many calls run on this connection now.
    pub(crate) fn len(&self) -> usize {
        self.running().len()
    }

    fn logs(&self) -> std::sync::MutexGuard<'_, LogQueue> {
        util::lock(&self.logs)
    }

    /// An upstream's log message. It belongs to no request: it goes to the clients whose calls
    /// are running on this connection now (each client's own logging level applies), through
    /// a queue of at most [`MAX_QUEUED_LOGS`] (the oldest dropped and counted past it) that one
    /// task relays; this returns at once.
    pub(crate) fn log(self: &Arc<Self>, server: &str, params: LoggingMessageNotificationParam) {
        let contexts: Vec<Context> = self.running().values().cloned().collect();
        if contexts.is_empty() {
            return;
        }
        let size = serde_json::to_vec(&params.data).map_or(0, |b| b.len());
        let payload = if size > MAX_LOG_BYTES {
            Value::String(format!(
                "(a log message of {size} bytes, over the gateway's limit of {MAX_LOG_BYTES}: \
                 not relayed)"
            ))
        } else {
            params.data
        };
        let data = match params.logger {
            Some(logger) => serde_json::json!({
                "server": server,
                "logger": crate::text::clip(&logger, 200),
                "data": payload,
            }),
            None => serde_json::json!({"server": server, "data": payload}),
        };
        let start = {
            let mut logs = self.logs();
            if logs.queued.len() >= MAX_QUEUED_LOGS {
                logs.queued.pop_front();
                logs.dropped += 1;
            }
            logs.queued.push_back((contexts, params.level, data));
            !std::mem::replace(&mut logs.draining, true)
        };
        if start {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(self.clone().drain(server.to_string()));
            } else {
                self.logs().draining = false;
            }
        }
    }

    /// Relays the queued log messages, one at a time, each waiting for its callers.
    async fn drain(self: Arc<Self>, server: String) {
        loop {
            let (next, dropped) = {
                let mut logs = self.logs();
                let next = logs.queued.pop_front();
                if next.is_none() {
                    logs.draining = false;
                }
                (next, std::mem::take(&mut logs.dropped))
            };
            if dropped > 0 {
                tracing::warn!(
                    server = %server,
                    dropped,
                    max = MAX_QUEUED_LOGS,
                    "log messages of the upstream dropped, oldest first: its callers read them \
                     more slowly than it wrote them"
                );
            }
            let Some((contexts, level, data)) = next else {
                return;
            };
            for ctx in contexts {
                let _ = ctx.log(level, data.clone()).await;
            }
        }
    }
}

/// What the ids of the requests written beside rmcp's loop begin with. rmcp numbers its own
/// requests (and progress tokens) with JSON numbers from 0; these ids are JSON strings, never
/// equal to a number, and never a string of digits, which rmcp also takes for its number
/// (it matches an answer's id `"5"` to its request 5). So neither side can take the other's
/// answer or progress, whatever the upstream echoes.
const DIRECT_ID_PREFIX: &str = "g-";

/// A stdio upstream's connection as `tools/call` takes it beside rmcp's client service loop:
/// the request is built as rmcp's peer builds it (its id, its progress token, the 2026-07-28
/// lifecycle's `_meta`), serialised as rmcp's message by the gateway's framing, and its answer
/// comes from the relay (relay.rs's [`Answers`]).
pub(crate) struct Direct {
    writer: Writer,
    answers: Answers,
    /// What rmcp's peer puts in every request's `_meta` on a connection whose protocol has
    /// no `initialize` (2026-07-28 on): the version, the client's name and capabilities.
    /// `None` for a connection that was initialized.
    meta: Option<RequestMetaObject>,
    next: AtomicU64,
}

impl Direct {
    pub(crate) fn new(writer: Writer, answers: Answers, meta: Option<RequestMetaObject>) -> Self {
        Direct {
            writer,
            answers,
            meta,
            next: AtomicU64::new(0),
        }
    }

    /// The writing half it writes with.
    #[cfg(test)]
    pub(crate) fn writer(&self) -> &Writer {
        &self.writer
    }

    /// Writes `request`; the call then waits for its answer. Fails only when the connection
    /// has ended (as rmcp's peer refuses a request then); a line that could not be written is
    /// the call's answer, as rmcp answers a request whose sending failed. `abandoned` knows the
    /// request once it holds the pipe, before its line is written: a call dropped while it is
    /// written (a pipe the upstream does not read) is cancelled too, since the line is
    /// finished without it; one dropped while it waits for the pipe sent nothing to cancel.
    async fn send(
        &self,
        mut request: ClientRequest,
        abandoned: &mut Abandoned,
    ) -> Result<Waiting, ServiceError> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::String(format!("{DIRECT_ID_PREFIX}{n}").into());
        let meta = request.get_meta_mut();
        if let Some(era) = &self.meta {
            meta.extend(era.clone());
        }
        // As rmcp does, every request carries a progress token: here its id.
        meta.set_progress_token(ProgressToken(id.clone()));
        let mut message = JsonRpcMessage::request(request, id);
        let mut waiting = self
            .answers
            .expect(&mut message)
            .ok_or(ServiceError::TransportClosed)?;
        // Waiting for the pipe, the request is not upstream yet: a call dropped here has
        // nothing to cancel.
        let turn = match self.writer.turn(message).await {
            Ok(turn) => turn,
            Err(e) => {
                waiting.failed(e);
                return Ok(waiting);
            }
        };
        // From here the line is written whole, with or without the caller.
        abandoned.id = Some(waiting.id().clone());
        if let Err(e) = turn.write().await {
            waiting.failed(e);
        }
        Ok(waiting)
    }
}

/// A request on its way: through rmcp's loop, or beside it.
enum Sent {
    Loop(RequestHandle<RoleClient>),
    Direct(Waiting),
}

impl Sent {
    fn id(&self) -> RequestId {
        match self {
            Sent::Loop(handle) => handle.id.clone(),
            Sent::Direct(waiting) => waiting.id().clone(),
        }
    }

    async fn answer(self) -> Result<ServerResult, ServiceError> {
        match self {
            Sent::Loop(handle) => handle.await_response().await,
            Sent::Direct(waiting) => waiting.answer().await,
        }
    }
}

/// A connection as a call takes it: rmcp's peer, and over a stdio upstream the way for
/// `tools/call` beside rmcp's loop on the same connection.
#[derive(Clone)]
pub(crate) struct Connection {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) direct: Option<Arc<Direct>>,
}

/// One call over one connection: the main one, or a caller's own; beside rmcp's loop when
/// the connection has a [`Direct`] way (a stdio upstream's). Progress, log messages, cancellation and the
/// result's reading are the same for all. `refused`: what the caller is told when the upstream
/// refuses the gateway's credentials (an OAuth server's "sign in again"); `None`: the error
/// as it is.
pub(crate) async fn call_on(
    name: &str,
    conn: &Connection,
    calls: &Calls,
    tool: &str,
    arguments: Map<String, Value>,
    ctx: Context,
    refused: Option<&str>,
) -> CallToolResult {
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
    let mut request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    // Every request gets a progress token of its own; the transport relays the upstream's
    // progress on it into this queue, in the order it was sent (relay.rs).
    let mut progress = ctx.wants_progress().then(|| route_progress(&mut request));
    let mut abandoned = Abandoned {
        peer: conn.peer.clone(),
        id: None,
    };
    let sent = match &conn.direct {
        Some(direct) => direct.send(request, &mut abandoned).await.map(Sent::Direct),
        None => conn
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map(Sent::Loop),
    };
    let sent = match sent {
        Ok(sent) => sent,
        Err(e) => return error(format!("Server `{name}` could not be sent `{tool}`: {e}")),
    };
    abandoned.id = Some(sent.id());
    let _logs = CallGuard::new(calls, ctx.clone());
    let answer = sent.answer();
    tokio::pin!(answer);
    let response = loop {
        let next = async {
            match progress.as_mut() {
                Some(queue) => Some(queue.recv().await),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            Some(update) = next => relay_progress(&ctx, update).await,
            response = &mut answer => break response,
        }
    };
    // The transport queued every notification read before the answer: the caller gets
    // them all, and before the answer.
    if let Some(queue) = progress.as_mut() {
        while let Some(update) = queue.try_recv() {
            relay_progress(&ctx, update).await;
        }
    }
    abandoned.id = None;
    match response {
        Ok(ServerResult::CallToolResult(mut result)) => {
            // An upstream of an older protocol era sends no `resultType`, which means
            // "complete" (SEP-2322); a 2026-07-28 client needs it said. rmcp strips it again
            // for clients of the older eras.
            result.result_type.get_or_insert(ResultType::COMPLETE);
            result
        }
        Ok(_) => error(format!(
            "Server `{name}` answered `{tool}` with something other than a tool result."
        )),
        // The HTTP upstream refused the credentials (401 or 403, after rmcp's one refresh):
        // what the caller can do about it, when the upstream says (an OAuth server: sign in).
        Err(e) if refused.is_some() && credentials_refused(&e) => {
            // What to do about it, as the caller is told (the server's name and fixed words).
            let fix = refused.unwrap_or_default();
            tracing::warn!(server = %name, tool = %tool, fix = %fix, "upstream refused the gateway's credentials");
            error(format!("Server `{name}` could not run `{tool}`: {fix}"))
        }
        Err(e) if answer_over_limit(&e).is_some() => {
            let limit = answer_over_limit(&e).unwrap_or_default();
            tracing::error!(server = %name, tool = %tool, max = limit, "upstream: an answer over the limit, not read");
            // The same answer as for an SSE event or a stdio line over the limit; rmcp stops
            // reading the body at the limit (or refuses it by its `Content-Length`), so its
            // size is known only to be past it.
            error(crate::wire::over_limit(None, limit))
        }
        Err(e) => {
            // The error's message is the upstream's text: bounded in the answer and the log.
            let e = crate::text::clip(&e.to_string(), MAX_ERROR_CHARS);
            tracing::warn!(server = %name, tool = %tool, error = %e, "upstream call failed");
            error(format!("Server `{name}` could not run `{tool}`: {e}"))
        }
    }
}

/// Whether a request failed because the HTTP upstream refused the credentials: rmcp's typed
/// 401 (`AuthRequired`) or 403 (`InsufficientScope`), read from the error, never its text.
fn credentials_refused(e: &rmcp::ServiceError) -> bool {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let rmcp::ServiceError::TransportSend(error) = e else {
        return false;
    };
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
    while let Some(current) = source {
        if let Some(
            StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_),
        ) = current.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return true;
        }
        source = current.source();
    }
    false
}

/// The limit an HTTP upstream's answer went over, when that is why a request failed: rmcp's
/// HTTP client stops reading a JSON body at the limit, or reads none of one whose
/// `Content-Length` is over it (client.rs, `http_config`).
pub(crate) fn answer_over_limit(e: &rmcp::ServiceError) -> Option<usize> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let rmcp::ServiceError::TransportSend(error) = e else {
        return None;
    };
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
    while let Some(current) = source {
        if let Some(StreamableHttpError::ResponseBodyTooLarge { max_size }) =
            current.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return Some(*max_size);
        }
        source = current.source();
    }
    None
}

async fn relay_progress(ctx: &Context, update: ProgressNotificationParam) {
    let _ = ctx
        .progress(update.progress, update.total, update.message)
        .await;
}

/// Sends `notifications/cancelled` upstream when a call is dropped before its answer (the
/// client cancelled, or the call timed out), through rmcp's loop for a request sent beside it
/// too: the relay and the framing see it go and forget the request.
struct Abandoned {
    peer: Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let reason = Some("the gateway's caller abandoned the call".to_string());
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                    .await;
            });
        }
    }
}

/// Keeps a call's context where the upstream's log messages can reach it, for
/// as long as the call runs (also when it is dropped: cancelled or timed out).
struct CallGuard<'a> {
    calls: &'a Calls,
    key: u64,
}

impl<'a> CallGuard<'a> {
    fn new(calls: &'a Calls, ctx: Context) -> Self {
        let key = calls.next.fetch_add(1, Ordering::Relaxed);
        calls.running().insert(key, ctx);
        CallGuard { calls, key }
    }
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.calls.running().remove(&self.key);
    }
}

/// A tool error the caller reads.
pub(crate) fn error(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}
