//! A session's `tools/call` over Streamable HTTP, run beside rmcp's session worker and service
//! loop ([`HttpOptions::calls_beside`](super::HttpOptions::calls_beside), off by default).
//!
//! With sessions, rmcp hands a POST's request to the session's worker task, which hands it to
//! the session's service loop, which spawns a task for the handler; the answer goes back the
//! same way, and out as an event stream that [`json_answer`](super::json_answer) reads back
//! into a JSON body: six hand-offs between tasks and a stream framed and read again, for a
//! request that needs none of them. When the session's handler and peer are known (from its
//! `notifications/initialized` on), the guard (guard.rs) gives such a call to the session's
//! handler itself, through rmcp's own `Service::handle_request` (its protocol-version checks,
//! its result shaping for the session's era), with the context rmcp's loop would build: the
//! id, the session's peer, the request's `_meta` and extensions, the HTTP request's parts
//! among them (the caller, the headers), and a cancellation token of its own. The answer is
//! rmcp's `ServerJsonRpcMessage`, sent as the POST's `application/json` body.
//!
//! Everything else goes to rmcp as before, and so does a call
//!
//! - with a progress token: rmcp routes the call's progress onto the POST's own stream by
//!   that token, which only a request its worker saw is registered under;
//! - naming a protocol version in its `_meta`, or sent with any header rmcp validates that is
//!   not read here: an `Origin` (rmcp checks it against its allow-list), an `Accept` that is
//!   not the plain list of both media types, an `MCP-Protocol-Version` that is not a known
//!   version of the initialize era, or another `Mcp-*` header (SEP-2243's, validated against
//!   the body); a `Host` is taken only when it is one of the allowed hosts;
//! - whose id is in use by another call run here in the session.
//!
//! Why it is an option. rmcp routes a request the server sends to the client during a call
//! (elicitation, sampling) onto the call's own stream by a task-local only its loop sets
//! (`ORIGINATING_REQUEST`, SEP-2260). From a call run here such a request goes out on the
//! session's standalone (GET) stream instead, where a client that opened none never reads it.
//! A server whose tools never send the client requests (disco-gateway's) loses nothing; log
//! messages go to the standalone stream either way. And an answer slower than
//! [`JSON_WAIT`](super::json_answer::JSON_WAIT) comes as an event stream of keep-alives and
//! then the answer: rmcp's path, read by [`json_answer`](super::json_answer), sends such an
//! answer with a priming event (an event id), from which a client whose connection breaks can
//! resume; here such a client sends the call again.
//!
//! A `notifications/cancelled` naming a call run here cancels its token (and goes on to rmcp,
//! which knows no such request); the POST then gets an empty event stream, no answer, as
//! rmcp sends none for a cancelled request. When the session ends (a DELETE, its idle time,
//! the server stopping) the calls still running are cancelled the same way. A call whose
//! client goes away runs on to its end, as under rmcp.

use std::sync::{Arc, Mutex};

use std::panic::AssertUnwindSafe;

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures_util::FutureExt as _;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use rmcp::model::{
    ClientJsonRpcMessage, GetExtensions, GetMeta, ProtocolVersion, RequestId, ServerJsonRpcMessage,
};
use rmcp::service::{Peer, RequestContext, Service};
use rmcp::{ErrorData, RoleServer};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::handler::Own;
use super::headers::HeaderRules;
use super::in_flight::{InFlight, Settle};
use super::sessions::{session_id, Sessions, SESSION_ID};
use super::{McpHandler, Tools};
use crate::util::lock;

/// What a session's `notifications/initialized` finds in its HTTP request's extensions when
/// calls run beside rmcp's loop: where [`Tools::on_initialized`] registers the session.
#[derive(Clone)]
pub(crate) struct Registry {
    pub(crate) sessions: Arc<Sessions>,
    pub(crate) own: Own,
}

impl Registry {
    /// The session named in `headers` runs its calls here from now on, with the handler made
    /// of `tools` (the session's own) and `peer`.
    pub(crate) fn register(&self, headers: &HeaderMap, tools: Tools, peer: Peer<RoleServer>) {
        let Some(id) = session_id(headers) else {
            return;
        };
        let handler = McpHandler {
            tools,
            handler: self.own.clone(),
        };
        self.sessions.set_calls(
            id,
            SessionCalls {
                handler: Arc::new(handler),
                peer,
                token: CancellationToken::new(),
                running: Arc::default(),
            },
        );
    }
}

const PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// The calls of one session run here.
pub(crate) struct SessionCalls {
    handler: Arc<McpHandler>,
    peer: Peer<RoleServer>,
    /// The parent of every call's token: cancelled when the session ends.
    token: CancellationToken,
    running: Arc<Mutex<InFlight>>,
}

impl SessionCalls {
    /// The session ended: its calls are cancelled, and none is answered.
    pub(crate) fn close(&self) {
        lock(&self.running).cancel_all();
        self.token.cancel();
    }

    /// A `notifications/cancelled` (`body`) naming a call running here cancels it. Whether
    /// `body` was a cancellation (a call whose text holds the method's name is none).
    pub(crate) fn cancel_named(&self, body: &[u8]) -> bool {
        #[derive(serde::Deserialize)]
        struct Cancelled {
            method: String,
            params: Params,
        }
        #[derive(serde::Deserialize)]
        struct Params {
            #[serde(rename = "requestId")]
            request_id: RequestId,
        }
        match serde_json::from_slice::<Cancelled>(body) {
            Ok(cancelled) if cancelled.method == "notifications/cancelled" => {
                lock(&self.running).cancel(&cancelled.params.request_id);
                true
            }
            _ => false,
        }
    }

    /// Runs the call in `body` here and answers it, if it is one this path takes (see the
    /// module's documentation); `Err` hands the request back, untouched, for rmcp.
    pub(crate) async fn call(
        self: &Arc<Self>,
        parts: http::request::Parts,
        body: &[u8],
        hosts: &HeaderRules,
    ) -> Result<Response, http::request::Parts> {
        if !headers_read_here(&parts.headers, hosts) {
            return Err(parts);
        }
        let Some(ClientJsonRpcMessage::Request(request)) = super::call_parse::tools_call(body)
        else {
            return Err(parts);
        };
        let (id, mut request) = (request.id, request.request);
        let meta = request.get_meta();
        if meta.get_progress_token().is_some() || meta.protocol_version().is_some() {
            return Err(parts);
        }
        let ct = self.token.child_token();
        let serial = {
            let mut running = lock(&self.running);
            // A session closed since it was looked up: rmcp answers (404).
            if running.is_closed() || !running.has_room() || running.contains(&id) {
                return Err(parts);
            }
            running.start(id.clone(), ct.clone())
        };
        // As rmcp's loop builds the context: `_meta` first, then the extensions, moved out of
        // the request, with the HTTP request's parts as rmcp's HTTP service adds them.
        let meta = std::mem::take(request.get_meta_mut());
        let mut extensions = std::mem::take(request.extensions_mut());
        extensions.insert(parts);
        let mut context = RequestContext::new(id.clone(), self.peer.clone());
        context.ct = ct.child_token();
        context.meta = meta;
        context.extensions = extensions;
        let settle = Settle::new(self.running.clone(), id.clone(), serial, ct);
        self.handler
            .handler
            .shared()
            .calls_beside
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let handler = self.handler.clone();
        // A task of its own, as under rmcp: a call whose client goes away runs to its end. A
        // panic in the handler is caught there and answered as an internal error (rmcp's loop
        // sends no answer for it), unless the call was cancelled.
        let span = tracing::debug_span!("tools/call", %id);
        let mut task = tokio::spawn(
            async move {
                let mut settle = settle;
                let run = Service::handle_request(&*handler, request, context);
                let result = match AssertUnwindSafe(run).catch_unwind().await {
                    Ok(result) => result,
                    Err(_) => {
                        tracing::error!("tools/call: the handler panicked");
                        Err(ErrorData::internal_error(
                            "the tool's handler panicked",
                            None,
                        ))
                    }
                };
                settle.settle().then_some(result)
            }
            .instrument(span),
        );
        // A quick answer is the POST's JSON body. A slower one gets the head at once, as an
        // event stream that keeps the connection busy until the answer comes as its one event:
        // clients and proxies that give up on a response without a head (a Node client's 300
        // s, a proxy's 60 s) wait for a call as long as it runs, as they do under rmcp.
        let quick = tokio::select! {
            biased;
            joined = &mut task => Some(joined),
            _ = tokio::time::sleep(super::json_answer::JSON_WAIT) => None,
        };
        Ok(match quick {
            Some(joined) => match joined {
                Ok(Some(result)) => answer(result, id),
                // Cancelled, or the runtime stopping.
                Ok(None) | Err(_) => no_answer(),
            },
            None => streamed(task, id),
        })
    }
}

/// What a call's task gives: its result, or `None` when no answer is to be sent.
type Outcome = Option<Result<rmcp::model::ServerResult, ErrorData>>;

/// A slow call's answer as an event stream: a comment every [`KEEP_ALIVE`] until the answer
/// comes as one `message` event, or the stream ends without one (the call cancelled).
///
/// Written here rather than with an SSE crate: the stream is comments and at most one event,
/// whose data is one line (serde_json writes no raw newline).
fn streamed(task: tokio::task::JoinHandle<Outcome>, id: RequestId) -> Response {
    let beat = tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
    let frames = futures_util::stream::unfold(Some((task, beat, id)), |state| async move {
        let (mut task, mut beat, id) = state?;
        tokio::select! {
            joined = &mut task => {
                let Ok(Some(result)) = joined else {
                    return None;
                };
                let json = message(result, id)?;
                let mut event = Vec::with_capacity(json.len() + 22);
                event.extend_from_slice(b"event: message\ndata: ");
                event.extend_from_slice(&json);
                event.extend_from_slice(b"\n\n");
                Some((Ok::<_, std::convert::Infallible>(Bytes::from(event)), None))
            }
            _ = beat.tick() => Some((Ok(Bytes::from_static(b":\n\n")), Some((task, beat, id)))),
        }
    });
    let mut response = Response::new(Body::from_stream(frames));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// How often a slow call's stream says it is alive: rmcp's own interval.
const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// Whether every header rmcp validates on a session's POST is one read here (see the
/// module's documentation); anything else is left to rmcp, which answers it as it would.
fn headers_read_here(headers: &HeaderMap, hosts: &HeaderRules) -> bool {
    if headers.contains_key(header::ORIGIN) || !hosts.host_allowed(headers) {
        return false;
    }
    let plain_accept = {
        let mut values = headers.get_all(header::ACCEPT).iter();
        match (values.next().and_then(|v| v.to_str().ok()), values.next()) {
            (Some(accept), None) if !accept.contains([';', '"']) => {
                let mut json = false;
                let mut sse = false;
                for media in accept.split(',').map(str::trim) {
                    json |= media.eq_ignore_ascii_case("application/json");
                    sse |= media.eq_ignore_ascii_case("text/event-stream");
                }
                json && sse
            }
            _ => false,
        }
    };
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        });
    let version = match headers.get(PROTOCOL_VERSION) {
        None => true,
        Some(v) => v.to_str().is_ok_and(|v| {
            ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .any(|known| known.as_str() == v && known.has_initialize())
        }),
    };
    let other_mcp_header = headers.keys().any(|name| {
        let name = name.as_str();
        name.starts_with("mcp-") && name != SESSION_ID && name != PROTOCOL_VERSION
    });
    plain_accept && json_body && version && !other_mcp_header
}

/// The answer's JSON, or `None` (logged) when it cannot be written.
fn message(result: Result<rmcp::model::ServerResult, ErrorData>, id: RequestId) -> Option<Vec<u8>> {
    let message = match result {
        Ok(result) => ServerJsonRpcMessage::response(result, id),
        Err(error) => {
            tracing::warn!(%id, ?error, "tools/call answered with an error");
            ServerJsonRpcMessage::error(error, Some(id))
        }
    };
    serde_json::to_vec(&message)
        .inspect_err(|error| {
            tracing::error!(%error, "tools/call: its answer could not be written as JSON");
        })
        .ok()
}

/// The answer as the POST's JSON body.
fn answer(result: Result<rmcp::model::ServerResult, ErrorData>, id: RequestId) -> Response {
    match message(result, id) {
        Some(bytes) => {
            let mut response = Response::new(Body::from(bytes));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        None => {
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            response
        }
    }
}

/// A cancelled call's POST: an event stream that ends without an event.
fn no_answer() -> Response {
    let mut response = Response::new(Body::empty());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
}

/// Whether `body` may be a `notifications/cancelled` (a byte search; the caller parses it).
pub(crate) fn may_cancel(body: &[u8]) -> bool {
    memchr::memmem::find(body, b"notifications/cancelled").is_some()
}

/// Whether `body` may be a `notifications/initialized`.
pub(crate) fn may_initialize(body: &[u8]) -> bool {
    memchr::memmem::find(body, b"notifications/initialized").is_some()
}
