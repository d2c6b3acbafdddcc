//! Checks of one incoming JSON-RPC message before rmcp parses it, shared by the stdio
//! transport and the HTTP endpoint: each malformed message gets the JSON-RPC error the
//! specification asks for, with the request's id whenever it can be read.
//!
//! rmcp answers a POST body it cannot deserialize with HTTP 415 and a plain-text body (no
//! JSON-RPC error, no id), and over stdio drops such lines or answers -32600 without the id.

use std::convert::Infallible;
use std::sync::{Arc, OnceLock};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::StreamableHttpService;

use super::sessions::{session_id, Sessions, SESSION_ID};
use super::McpHandler;
use crate::tool::Caller;
use crate::util::clip_quoted;
use http::{header, HeaderValue, Method, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, RequestId};
use serde_json::{json, Map, Value};

/// How much of an oversized message is kept to find its id.
pub(crate) const ID_SCAN_BYTES: usize = 4096;

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// The metadata keys that make a request stand alone (protocol 2026-07-28): such a request
/// starts a session without `initialize`.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// What one message is, once the checks that need no session state are done.
pub(crate) enum Checked {
    Request {
        value: Value,
        id: RequestId,
        /// `initialize`, or a request carrying the stateless protocol's metadata: rmcp
        /// selects a lifecycle on it.
        starts_session: bool,
    },
    Notification {
        value: Value,
        /// The request a `notifications/cancelled` names.
        cancelled: Option<RequestId>,
    },
    /// A response from the client (to a server request such as elicitation).
    Response(Value),
    /// Malformed: send this error (or batch of errors) back.
    Answer(Value),
    /// Nothing to do and nothing to answer.
    Drop(&'static str),
}

/// Checks one message (a stdio line without its newline, or an HTTP body). `oversized`: the
/// message was longer than `max_bytes` and `bytes` holds only its head.
pub(crate) fn check(bytes: &[u8], max_bytes: usize, oversized: bool) -> Checked {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if oversized {
        return Checked::Answer(error(
            scan_id(bytes),
            INVALID_REQUEST,
            format!("Invalid Request: the message is longer than {max_bytes} bytes"),
        ));
    }
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            return Checked::Answer(error(
                scan_id(bytes),
                INVALID_REQUEST,
                "Invalid Request: JSON nested more than 128 levels deep".into(),
            ))
        }
        Err(e) => {
            let what = if std::str::from_utf8(bytes).is_err() {
                "the message is not valid UTF-8".to_string()
            } else {
                format!("the message is not valid JSON ({e})")
            };
            return Checked::Answer(error(
                scan_id(bytes),
                PARSE_ERROR,
                format!("Parse error: {what}"),
            ));
        }
    };
    match value {
        Value::Object(obj) => check_object(obj),
        Value::Array(items) if !items.is_empty() => {
            // Batches were removed from MCP in 2025-06-18 and rmcp cannot take them: answer
            // each request in the batch so that no client waits for an answer.
            let answers: Vec<Value> = items
                .iter()
                .filter_map(|item| {
                    let id = item.as_object()?.get("id")?;
                    Some(error(
                        valid_id(id).then(|| id.clone()),
                        INVALID_REQUEST,
                        "Invalid Request: JSON-RPC batches are not supported; send each \
                         message on its own"
                            .into(),
                    ))
                })
                .collect();
            if answers.is_empty() {
                Checked::Drop("a batch of notifications")
            } else {
                Checked::Answer(Value::Array(answers))
            }
        }
        other => Checked::Answer(error(
            None,
            INVALID_REQUEST,
            format!(
                "Invalid Request: a JSON-RPC message is an object, not {}",
                crate::util::json_kind(&other)
            ),
        )),
    }
}

fn check_object(obj: Map<String, Value>) -> Checked {
    let raw_id = obj.get("id");
    let id = raw_id.filter(|id| valid_id(id)).cloned();
    let invalid = |message: &str| {
        Checked::Answer(error(
            id.clone(),
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
        Some(Value::String(m)) => m.as_str(),
        Some(_) => return invalid("`method` must be a string"),
        None => {
            if id.is_none() || !(obj.contains_key("result") || obj.contains_key("error")) {
                return invalid(
                    "a message needs `method` (a request or notification) or `result` or \
                     `error` (a response)",
                );
            }
            return Checked::Response(Value::Object(obj));
        }
    };
    match obj.get("params") {
        None | Some(Value::Object(_)) => {}
        Some(Value::Array(_)) => {
            return Checked::Answer(error(
                id,
                INVALID_PARAMS,
                format!(
                    "Invalid params: `{}` takes its params as an object of named values, not \
                     an array",
                    clip_quoted(method)
                ),
            ))
        }
        Some(other) => {
            return invalid(&format!(
                "`params` must be an object, not {}",
                crate::util::json_kind(other)
            ))
        }
    }
    let Some(id_value) = id.clone() else {
        let cancelled = (method == "notifications/cancelled")
            .then(|| {
                obj.get("params")
                    .and_then(|p| p.get("requestId"))
                    .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
            })
            .flatten();
        return Checked::Notification {
            value: Value::Object(obj),
            cancelled,
        };
    };
    if method.starts_with("notifications/") {
        return invalid(&format!(
            "`{}` is a notification: send it without an `id`",
            clip_quoted(method)
        ));
    }
    let Ok(request_id) = serde_json::from_value::<RequestId>(id_value) else {
        return invalid("`id` must be a string or an integer");
    };
    let starts_session = starts_session(method, &obj);
    Checked::Request {
        value: Value::Object(obj),
        id: request_id,
        starts_session,
    }
}

/// The message as rmcp's type, or what to answer when rmcp has no type for it: `Err(None)`
/// for a notification (ignored, as rmcp does), `Err(Some(error))` for a request.
pub(crate) fn typed(value: Value) -> Result<ClientJsonRpcMessage, Option<Value>> {
    let id = value.get("id").cloned();
    serde_json::from_value::<ClientJsonRpcMessage>(value).map_err(|e| {
        id.map(|id| {
            error(
                Some(id),
                INVALID_REQUEST,
                format!(
                    "Invalid Request: not a valid MCP message ({})",
                    clip_quoted(&e.to_string())
                ),
            )
        })
    })
}

/// JSON-RPC ids are strings or integers (rmcp takes no others).
fn valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

pub(crate) fn error(id: Option<Value>, code: i64, message: String) -> Value {
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
/// deep, broken further on), read without recursion and without allocating. `None` when
/// the head of the message does not show a string or integer id.
#[doc(hidden)]
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
                        depth = depth.saturating_sub(1);
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

/// rmcp's Streamable HTTP service behind the checks of one HTTP request: a POST body that is
/// not a valid message gets HTTP 400 with the JSON-RPC error (rmcp alone answers 415 with
/// plain text); a body over the limit gets 413 with a JSON-RPC error; a session DELETE gets
/// 204. Everything else goes on to rmcp unchanged. A service of its own rather than an axum
/// middleware: it calls rmcp directly, without a boxed `Next` and a second boxed future per
/// request.
///
/// rmcp's service is shared behind an `Arc`: axum clones the routed service for every
/// request, and a clone of rmcp's service copies its configuration (host and origin lists).
#[derive(Clone)]
pub(crate) struct Guarded {
    pub(crate) inner: Arc<StreamableHttpService<McpHandler, Sessions>>,
    pub(crate) max_body_bytes: usize,
    pub(crate) body_read_timeout: std::time::Duration,
    /// Bodies holding more JSON values than this are refused before rmcp parses them: see
    /// [`message_values`].
    pub(crate) max_message_values: usize,
    /// The sessions (sessions mode): each answers only to the caller that created it.
    pub(crate) sessions: Option<Arc<Sessions>>,
    /// When a session's calls run beside rmcp's loop (http_calls.rs).
    pub(crate) beside: Option<Beside>,
    /// The memory all requests in flight may take together, and what one body may cost.
    pub(crate) budget: Arc<super::memory::Budget>,
    pub(crate) cost: super::memory::BodyCost,
    /// How long a request that finds no room waits before its 503.
    pub(crate) memory_wait: std::time::Duration,
    /// The rate limit per caller, when one is set.
    pub(crate) rate: Option<Arc<super::rate::Limiter>>,
}

/// What running a session's calls beside rmcp's loop takes.
#[derive(Clone)]
pub(crate) struct Beside {
    /// Where a session registers its calls when it is initialized.
    pub(crate) registry: super::http_calls::Registry,
    /// The allowed hosts, as rmcp checks them: a call whose `Host` is not one goes to rmcp.
    pub(crate) hosts: super::headers::HeaderRules,
}

impl tower_service::Service<Request> for Guarded {
    type Response = Response;
    type Error = Infallible;
    type Future = futures_util::future::BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let this = self.clone();
        // rmcp calls back into the handler without the request (the `Mcp-Param-*` check's
        // `get_tool`, session creation): they read the caller from here.
        let caller = req
            .extensions()
            .get::<Caller>()
            .cloned()
            .unwrap_or_default();
        Box::pin(super::REQUEST_CALLER.scope(caller, async move { Ok(this.guard(req).await) }))
    }
}

impl Guarded {
    async fn guard(self, req: Request) -> Response {
        let sessions = self.sessions.clone();
        if let Some(sessions) = &sessions {
            if let Some(refused) = foreign_session(sessions, &req) {
                return refused;
            }
        }
        // A session whose idleness is told here is busy while a request naming it is.
        let activity = match (&self.beside, &sessions, session_id(req.headers())) {
            (Some(_), Some(sessions), Some(id)) if req.method() == Method::GET => {
                sessions.touch(id);
                None
            }
            (Some(_), Some(sessions), Some(id)) => sessions.active(id),
            _ => None,
        };
        let response = self.guard_request(req, sessions).await;
        match activity {
            Some(activity) => response.map(|body| {
                Body::new(super::memory::Held {
                    body,
                    _held: activity,
                })
            }),
            None => response,
        }
    }

    async fn guard_request(self, req: Request, sessions: Option<Arc<Sessions>>) -> Response {
        let max_body_bytes = self.max_body_bytes;
        let inner = self.inner.clone();
        let forward = |req: Request| async move { inner.handle(req).await.map(Body::new) };
        if req.method() == Method::DELETE {
            // rmcp closes the session and answers 202 Accepted with an empty body; the
            // official Python SDK accepts only 200 or 204 and logs a failed termination at
            // every disconnect, although the session is gone: say what happened, 204.
            let mut response = forward(req).await;
            if response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            return response;
        }
        if req.method() != Method::POST {
            return forward(req).await;
        }
        let (parts, body) = req.into_parts();
        // Room in the memory budget is taken before a byte of the body is read: by its
        // declared length, or as a body at the limit when it declares none.
        let declared = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|len| len > max_body_bytes as u64) {
            return too_long(max_body_bytes);
        }
        let len = declared.map_or(max_body_bytes, |len| len as usize);
        let small = len <= super::memory::SMALL_BODY;
        let Some(reservation) = self
            .budget
            .take(self.cost.of(len), small, self.memory_wait)
            .await
        else {
            return busy();
        };
        let response = self.guard_post(parts, body, sessions).await;
        response.map(|body| {
            Body::new(super::memory::Held {
                body,
                _held: reservation,
            })
        })
    }

    /// A POST whose room in the memory budget is taken.
    async fn guard_post(
        self,
        parts: http::request::Parts,
        body: Body,
        sessions: Option<Arc<Sessions>>,
    ) -> Response {
        let max_body_bytes = self.max_body_bytes;
        let body_read_timeout = self.body_read_timeout;
        let inner = self.inner.clone();
        let forward = |req: Request| async move { inner.handle(req).await.map(Body::new) };
        // A body that is there already is read without arming a timer.
        let mut reading = std::pin::pin!(read_body(body, max_body_bytes));
        let first = std::future::poll_fn(|cx| {
            std::task::Poll::Ready(std::future::Future::poll(reading.as_mut(), cx))
        })
        .await;
        let read = match first {
            std::task::Poll::Ready(read) => Ok(read),
            std::task::Poll::Pending => tokio::time::timeout(body_read_timeout, reading).await,
        };
        let Ok(read) = read else {
            let answer = error(
                None,
                INVALID_REQUEST,
                format!(
                    "Invalid Request: the request body did not arrive within {} s",
                    body_read_timeout.as_secs_f64()
                ),
            );
            let mut response = json_response(StatusCode::REQUEST_TIMEOUT, answer);
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        };
        let bytes = match read {
            Ok(bytes) => bytes,
            Err(BodyError::TooLong) => return too_long(max_body_bytes),
            Err(BodyError::Broken(e)) => {
                let answer = error(
                    None,
                    INVALID_REQUEST,
                    format!("Invalid Request: the request body could not be read ({e})"),
                );
                return json_response(StatusCode::BAD_REQUEST, answer);
            }
        };
        if let Some(refused) = too_many_values(&bytes, self.max_message_values) {
            return refused;
        }
        // The rate counts the requests of the body (a notification or a response costs
        // nothing): read here, before rmcp parses the body or a tool runs.
        if let Some(rate) = &self.rate {
            let anonymous = Caller::default();
            let caller = parts.extensions.get::<Caller>().unwrap_or(&anonymous);
            if let Err(wait) = rate.admit(caller, super::rate::requests_in(&bytes)) {
                return too_many_requests(wait, scan_id(&bytes));
            }
        }
        // rmcp would run a `notifications/*` method sent with an id as a request: the only
        // well-formed message it misreads, and the only one checked before it (a byte search
        // finds the rare candidates without parsing every body).
        let suspicious = finder(&NOTIFICATIONS, b"notifications/")
            .find(&bytes)
            .is_some();
        if suspicious && !well_formed(&bytes) {
            if let Some(answer) = malformed_answer(&bytes, max_body_bytes) {
                return json_response(StatusCode::BAD_REQUEST, answer);
            }
        }
        if let Some(sessions) = &sessions {
            if sessions.full() && !parts.headers.contains_key(SESSION_ID) && initialize(&bytes) {
                return sessions_full(&bytes);
            }
        }
        let (parts, bytes) = match self.beside_session(parts, bytes, &sessions).await {
            Ok(answered) => return answered,
            Err(request) => request,
        };
        let json_body = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.get(..16))
            .is_some_and(|v| v.eq_ignore_ascii_case("application/json"));
        let accepts_json = super::json_answer::accepts_json(&parts.headers);
        let response = forward(Request::from_parts(parts, Body::from(bytes.clone()))).await;
        if accepts_json && response.status() == StatusCode::OK {
            return super::json_answer::first_answer_as_json(response).await;
        }
        // rmcp answers a JSON body it cannot parse with a plain-text 415: say what is wrong,
        // as JSON-RPC, with the request's id. Everything else (Host, Origin, sessions) is
        // rmcp's.
        if json_body && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
            if let Some(answer) = malformed_answer(&bytes, max_body_bytes) {
                return json_response(StatusCode::BAD_REQUEST, answer);
            }
        }
        response
    }
}

impl Guarded {
    /// With calls beside rmcp's loop: a session's call answered here, a cancellation of one
    /// noted, a session's `notifications/initialized` given the registry to register in.
    /// `Err` hands the request on to rmcp.
    async fn beside_session(
        &self,
        mut parts: http::request::Parts,
        bytes: Bytes,
        sessions: &Option<Arc<Sessions>>,
    ) -> Result<Response, (http::request::Parts, Bytes)> {
        let (Some(beside), Some(sessions)) = (&self.beside, sessions) else {
            return Err((parts, bytes));
        };
        let Some(id) = session_id(&parts.headers) else {
            return Err((parts, bytes));
        };
        let Some(calls) = sessions.calls(id) else {
            if super::http_calls::may_initialize(&bytes) {
                parts.extensions.insert(beside.registry.clone());
            }
            return Err((parts, bytes));
        };
        // A cancellation goes on to rmcp too, which knows no such request (or runs it).
        if super::http_calls::may_cancel(&bytes) && calls.cancel_named(&bytes) {
            return Err((parts, bytes));
        }
        match calls.call(parts, &bytes, &beside.hosts).await {
            Ok(answered) => Ok(answered),
            Err(parts) => Err((parts, bytes)),
        }
    }
}

/// The most JSON values a request body may hold: a call's argument budget
/// ([`crate::CatalogBuilder::max_argument_values`]) and room for the message around them.
///
/// rmcp parses a body into a tree of values, and untagged enums buffer it once more on the
/// way: for a body of tiny values (`["1","1",...]`) that is about 50 times the body before a
/// handler sees it. A body over the budget is refused before that parse, for the price of
/// one pass over bodies long enough to hold that many values (every value takes two bytes
/// or more with its separator); other bodies are not scanned.
pub(crate) fn message_values(max_argument_values: usize) -> usize {
    max_argument_values.saturating_add(64)
}

fn too_many_values(bytes: &[u8], limit: usize) -> Option<Response> {
    if bytes.len() / 2 <= limit || crate::tool::budget::count_values_in_text(bytes, limit) <= limit
    {
        return None;
    }
    let answer = error(
        scan_id(bytes),
        INVALID_REQUEST,
        format!("Invalid Request: the message holds more than {limit} JSON values"),
    );
    Some(json_response(StatusCode::PAYLOAD_TOO_LARGE, answer))
}

/// The answer to a request naming a session its caller did not create: the one rmcp gives
/// for a session that does not exist (404, the same text), so it says nothing of the session.
/// `None` when the session is the caller's, or unknown (rmcp answers that).
///
/// rmcp answers the DELETE of a session that does not exist as if it had closed one: that
/// gets the 404 too (MCP: a request naming a terminated or unknown session gets 404).
fn foreign_session(sessions: &Sessions, req: &Request) -> Option<Response> {
    let not_found = || (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
    let id = req.headers().get(SESSION_ID)?;
    let anonymous = Caller::default();
    let caller = req.extensions().get::<Caller>().unwrap_or(&anonymous);
    let Some(own) = id
        .to_str()
        .ok()
        .and_then(|id| sessions.owned_by(id, caller))
    else {
        return (req.method() == Method::DELETE).then(not_found);
    };
    if own {
        return None;
    }
    tracing::info!(
        caller = caller.id().unwrap_or("anonymous"),
        "refused a session created by another caller"
    );
    Some(not_found())
}

static NOTIFICATIONS: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
static INITIALIZE: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();

/// A byte searcher built once: `memmem::find` builds one per call, which costs more than the
/// search itself on a short body.
fn finder(
    cell: &'static OnceLock<memchr::memmem::Finder<'static>>,
    needle: &'static [u8],
) -> &'static memchr::memmem::Finder<'static> {
    cell.get_or_init(|| memchr::memmem::Finder::new(needle))
}

/// Whether a body is an `initialize` request (read only when the sessions are full).
fn initialize(bytes: &[u8]) -> bool {
    finder(&INITIALIZE, b"initialize").find(bytes).is_some()
        && serde_json::from_slice::<Value>(bytes)
            .is_ok_and(|v| v.get("method").and_then(Value::as_str) == Some("initialize"))
}

fn too_long(max_body_bytes: usize) -> Response {
    let answer = error(
        None,
        INVALID_REQUEST,
        format!("Invalid Request: the request body is longer than {max_body_bytes} bytes"),
    );
    json_response(StatusCode::PAYLOAD_TOO_LARGE, answer)
}

/// The answer when the requests in flight hold the whole memory budget: nothing of the body
/// was read, so the connection is closed after it.
fn busy() -> Response {
    let answer = error(
        None,
        -32000,
        "The server is busy with other requests: try again in a moment".into(),
    );
    let mut response = json_response(StatusCode::SERVICE_UNAVAILABLE, answer);
    let headers = response.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The answer to a caller over its rate, with the request's id when its body shows one.
/// `Retry-After` is in whole seconds, rounded up.
fn too_many_requests(wait: std::time::Duration, id: Option<Value>) -> Response {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let seconds = seconds.max(1);
    let answer = error(
        id,
        -32000,
        format!("Too many requests from this caller: try again in {seconds} s"),
    );
    let mut response = json_response(StatusCode::TOO_MANY_REQUESTS, answer);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

fn sessions_full(bytes: &[u8]) -> Response {
    let answer = error(
        scan_id(bytes),
        -32000,
        "The server has as many sessions open as it allows: try again later".into(),
    );
    let mut response = json_response(StatusCode::SERVICE_UNAVAILABLE, answer);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("10"));
    response
}

enum BodyError {
    TooLong,
    Broken(axum::Error),
}

/// The whole request body, up to `limit` bytes. A body that arrives in one piece (as an
/// HTTP/1 client's JSON-RPC message does) is kept as it came, without a copy.
async fn read_body(body: Body, limit: usize) -> Result<Bytes, BodyError> {
    use futures_util::StreamExt as _;
    let mut chunks = body.into_data_stream();
    let mut first = Bytes::new();
    let mut joined: Option<Vec<u8>> = None;
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(BodyError::Broken)?;
        let so_far = joined.as_ref().map_or(first.len(), Vec::len);
        if so_far + chunk.len() > limit {
            return Err(BodyError::TooLong);
        }
        if first.is_empty() && joined.is_none() {
            first = chunk;
        } else {
            joined
                .get_or_insert_with(|| std::mem::take(&mut first).to_vec())
                .extend_from_slice(&chunk);
        }
    }
    Ok(joined.map_or(first, Bytes::from))
}

/// The JSON-RPC error for a body the checks refuse, if they do.
fn malformed_answer(bytes: &[u8], max_body_bytes: usize) -> Option<Value> {
    match check(bytes, max_body_bytes, false) {
        Checked::Answer(answer) => Some(answer),
        Checked::Request { value, .. } => typed(value).err().flatten(),
        // Notifications, responses and empty batches: rmcp answers 202 or its own error.
        _ => None,
    }
}

/// A single message rmcp's type accepts, and not a notification method sent with an id
/// (rmcp would run that as a request).
fn well_formed(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if super::call_parse::tools_call(bytes).is_some() {
        return true;
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        Ok(rmcp::model::JsonRpcMessage::Request(request)) => {
            !request.request.method().starts_with("notifications/")
        }
        Ok(_) => true,
        Err(_) => false,
    }
}

fn json_response(status: StatusCode, body: Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunked(chunks: &[&'static [u8]]) -> Body {
        let items: Vec<Result<Bytes, std::io::Error>> =
            chunks.iter().map(|c| Ok(Bytes::from_static(c))).collect();
        Body::from_stream(futures_util::stream::iter(items))
    }

    #[tokio::test]
    async fn bodies_are_read_whole_up_to_the_limit() {
        let one = read_body(Body::from("{\"a\":1}"), 16).await;
        assert_eq!(one.ok().as_deref(), Some(&b"{\"a\":1}"[..]));
        let three = read_body(chunked(&[b"{\"a\"", b"", b":1}"]), 16).await;
        assert_eq!(three.ok().as_deref(), Some(&b"{\"a\":1}"[..]));
        let late = read_body(chunked(&[b"", b"{}"]), 16).await;
        assert_eq!(late.ok().as_deref(), Some(&b"{}"[..]));
        let empty = read_body(Body::empty(), 16).await;
        assert_eq!(empty.ok().as_deref(), Some(&b""[..]));
        assert!(matches!(
            read_body(Body::from("x".repeat(17)), 16).await,
            Err(BodyError::TooLong)
        ));
        assert!(matches!(
            read_body(chunked(&[b"0123456789", b"0123456"]), 16).await,
            Err(BodyError::TooLong)
        ));
        assert!(read_body(chunked(&[b"0123456789", b"012345"]), 16)
            .await
            .is_ok_and(|b| b.len() == 16));
        let broken: Vec<Result<Bytes, std::io::Error>> = vec![
            Ok(Bytes::from_static(b"{")),
            Err(std::io::Error::other("connection reset")),
        ];
        let broken = Body::from_stream(futures_util::stream::iter(broken));
        assert!(matches!(
            read_body(broken, 16).await,
            Err(BodyError::Broken(_))
        ));
    }

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
        assert_eq!(scan_id(b"{\"a\":]]]]}"), None);
    }
}
