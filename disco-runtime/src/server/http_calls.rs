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
//! messages go to the standalone stream either way. And the answer is JSON however long the
//! call takes: rmcp's path, read by [`json_answer`](super::json_answer), sends an answer slower
//! than its wait as an event stream with a priming event, from which a client whose connection
//! breaks can resume; here such a client sends the call again.
//!
//! A `notifications/cancelled` naming a call run here cancels its token (and goes on to rmcp,
//! which knows no such request); the POST then gets an empty event stream, no answer, as
//! rmcp sends none for a cancelled request. When the session ends (a DELETE, its idle time,
//! the server stopping) the calls still running are cancelled the same way. A call whose
//! client goes away runs on to its end, as under rmcp.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::response::Response;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use rmcp::model::{
    ClientJsonRpcMessage, GetExtensions, GetMeta, ProtocolVersion, RequestId, ServerJsonRpcMessage,
};
use rmcp::service::{Peer, RequestContext, Service};
use rmcp::{ErrorData, RoleServer};
use tokio_util::sync::CancellationToken;

use super::handler::Own;
use super::headers::HeaderRules;
use super::in_flight::{InFlight, Settle};
use super::sessions::Sessions;
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
        let Some(id) = headers.get(SESSION_ID).and_then(|v| v.to_str().ok()) else {
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

const SESSION_ID: &str = "mcp-session-id";
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

    /// A `notifications/cancelled` (`body`) naming a call running here cancels it.
    pub(crate) fn cancel_named(&self, body: &[u8]) {
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
        let Ok(cancelled) = serde_json::from_slice::<Cancelled>(body) else {
            return;
        };
        if cancelled.method == "notifications/cancelled" {
            lock(&self.running).cancel(&cancelled.params.request_id);
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
            if !running.has_room() || running.contains(&id) {
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
        // A task of its own, as under rmcp: a call whose client goes away runs to its end, and
        // a panic in it is the task's alone.
        let task = tokio::spawn(async move {
            let mut settle = settle;
            let result = handler.handle_request(request, context).await;
            (settle.settle(), result)
        });
        Ok(match task.await {
            Ok((true, result)) => answer(result, id),
            Ok((false, _)) => no_answer(),
            Err(_) => answer(
                Err(ErrorData::internal_error(
                    "the tool's task ended without an answer",
                    None,
                )),
                id,
            ),
        })
    }
}

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

/// The answer as the POST's JSON body.
fn answer(result: Result<rmcp::model::ServerResult, ErrorData>, id: RequestId) -> Response {
    let message = match result {
        Ok(result) => ServerJsonRpcMessage::response(result, id),
        Err(error) => {
            tracing::warn!(%id, ?error, "tools/call answered with an error");
            ServerJsonRpcMessage::error(error, Some(id))
        }
    };
    match serde_json::to_vec(&message) {
        Ok(bytes) => {
            let mut response = Response::new(Body::from(bytes));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(error) => {
            tracing::error!(%error, "tools/call: its answer could not be written as JSON");
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
