//! disco's tools as a service to embed in any rmcp `ServerHandler`: one method per hook the
//! handler forwards. [`Embedded`](super::Embedded) forwards them for a user's handler and for
//! [`McpHandler`](super::McpHandler), the handler `serve_*` runs.

// logging/setLevel is deprecated by SEP-2577 but still sent by clients of every era.
#![allow(deprecated)]

use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, DiscoverResult,
    ErrorCode, InitializeRequestParams, InitializeResult, ListToolsResult, LoggingLevel,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, SubscriptionFilter, Tool,
    ToolsCapability,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};

use super::{caller_of, ServerHandle, Shared};
use crate::call::CallError;
use crate::catalog::{Catalog, NameRule};
use crate::tool::result::error_result;
use crate::tool::{Context, LogLevelFilter};
use crate::util::json_kind;

/// disco's tools inside an rmcp server of your own, beside its prompts and resources: name
/// correction, argument repair, `tool_search`, hidden tools, reload notices and per-session
/// log levels, through the methods your `ServerHandler` forwards to.
///
/// Made by [`Server::into_tools`](super::Server::into_tools). **A clone is a new session's
/// handle**: the same catalog, its own log level. rmcp makes one handler per session (the
/// factory of `StreamableHttpService`, one `serve` per stdio connection), so a handler that
/// holds a `Tools` and derives `Clone` gets per-session log levels as it should. Within one
/// session, share it by reference (or in an `Arc`) rather than clone it: a clone starts at the
/// default level.
///
/// [`Server::wrap`](super::Server::wrap) forwards for you ([`Embedded`](super::Embedded));
/// `Tools` is for a handler that forwards by hand. Then forward every hook below:
/// `initialize` and `discover` (the per-caller instructions, [`Tools::initialize`]),
/// `list_tools`, `call_tool`, `get_tool`,
/// `on_initialized` (without it, [`ServerHandle::reload`] notifies nobody), `listen` and
/// `accepted_subscription_filter` (2026-07-28 clients), `set_level`, and the `tools/call`
/// branch of `on_custom_request` ([`Tools::custom_request`]); merge
/// [`Tools::capabilities`] into your `get_info`. The caller of a request is the
/// [`Caller`](crate::Caller) in the HTTP request's extensions (disco's bearer tokens put it
/// there; your own middleware may too), else anonymous.
///
/// ```no_run
/// use disco_runtime::rmcp::model::*;
/// use disco_runtime::rmcp::service::{NotificationContext, RequestContext};
/// use disco_runtime::rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
/// use disco_runtime::{Server, Tools};
///
/// #[derive(Clone)]
/// struct MyServer {
///     tools: Tools,
/// }
///
/// impl ServerHandler for MyServer {
///     fn get_info(&self) -> ServerInfo {
///         let mut caps = ServerCapabilities::builder().enable_prompts().build();
///         self.tools.capabilities(&mut caps);
///         ServerInfo::new(caps)
///     }
///     async fn initialize(
///         &self,
///         request: InitializeRequestParams,
///         context: RequestContext<RoleServer>,
///     ) -> Result<InitializeResult, ErrorData> {
///         self.tools.initialize(self, request, &context)
///     }
///     async fn discover(
///         &self,
///         context: RequestContext<RoleServer>,
///     ) -> Result<DiscoverResult, ErrorData> {
///         Ok(self.tools.discover(self, &context))
///     }
///     async fn list_tools(
///         &self,
///         request: Option<PaginatedRequestParams>,
///         context: RequestContext<RoleServer>,
///     ) -> Result<ListToolsResult, ErrorData> {
///         self.tools.list_tools(request, &context).await
///     }
///     async fn call_tool(
///         &self,
///         request: CallToolRequestParams,
///         context: RequestContext<RoleServer>,
///     ) -> Result<CallToolResponse, ErrorData> {
///         self.tools.call_tool(request, &context).await
///     }
///     async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
///         self.tools.on_initialized(&context);
///     }
///     // ... get_tool, listen, set_level, on_custom_request, and your prompts and resources
/// }
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let tools = Server::from_inventory().into_tools()?;
/// let running = MyServer { tools }.serve(disco_runtime::rmcp::transport::stdio()).await?;
/// running.waiting().await?;
/// # Ok(())
/// # }
/// ```
pub struct Tools {
    shared: Arc<Shared>,
    log_filter: Arc<LogLevelFilter>,
    /// The catalog each accepted `subscriptions/listen` of this session was acknowledged on,
    /// oldest first, until its `listen` runs (see [`Tools::listen`]).
    acknowledged: Arc<std::sync::Mutex<std::collections::VecDeque<Arc<Catalog>>>>,
    /// This session's number, unique in the process: what a discovery recorder groups calls
    /// by. `None` for a request of stateless HTTP.
    session: Option<u64>,
    /// The catalog this session's `initialize` was answered on, until `on_initialized`
    /// registers the session (see [`Tools::on_initialized`]).
    introduced_on: Arc<std::sync::Mutex<Option<Arc<Catalog>>>>,
}

/// What [`Tools::listen`] needs of a subscription: whether it accepted the tool list's
/// changes, where to send them, for whom, and until when.
pub(super) struct Listening {
    tools: bool,
    sink: SubscriptionSink,
    caller: crate::tool::Caller,
    ct: tokio_util::sync::CancellationToken,
}

impl Listening {
    pub(super) fn of(context: &SubscriptionContext) -> Self {
        Listening {
            tools: context.accepted().tools_list_changed == Some(true),
            sink: context.sink().clone(),
            caller: caller_of(&context.request_context().extensions),
            ct: context.request_context().ct.clone(),
        }
    }
}

/// The next session's number.
static NEXT_SESSION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// At most this many acknowledged subscriptions wait for their `listen` in one session (one
/// whose acknowledgment failed never runs it); past it the oldest is dropped.
const MAX_ACKNOWLEDGED: usize = 16;

impl Clone for Tools {
    /// A new session's handle: the same catalog, its own log level (at the default).
    fn clone(&self) -> Self {
        Tools::new(self.shared.clone())
    }
}

impl Tools {
    /// Another handle of this same session (its log level, its number), where a clone is a
    /// new session's.
    pub(crate) fn same_session(&self) -> Self {
        Tools {
            shared: self.shared.clone(),
            log_filter: self.log_filter.clone(),
            acknowledged: self.acknowledged.clone(),
            session: self.session,
            introduced_on: self.introduced_on.clone(),
        }
    }

    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Tools {
            shared,
            log_filter: Arc::new(LogLevelFilter::default()),
            acknowledged: Arc::default(),
            introduced_on: Arc::default(),
            session: Some(NEXT_SESSION.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
        }
    }

    /// This handle without a session (a request of stateless HTTP).
    pub(crate) fn sessionless(mut self) -> Self {
        self.session = None;
        self
    }

    /// `handler` with these tools: see [`Server::wrap`](super::Server::wrap).
    pub fn wrap<H: ServerHandler>(self, handler: H) -> Result<super::Embedded<H>, super::Error> {
        super::Embedded::new(self, handler)
    }

    /// The catalog served now (it changes on [`ServerHandle::reload`]).
    pub fn catalog(&self) -> Arc<Catalog> {
        self.shared.catalog()
    }

    /// Reloads the catalog and reads the counters while the server runs.
    pub fn handle(&self) -> ServerHandle {
        let running = OnceLock::new();
        let _ = running.set(self.shared.clone());
        ServerHandle {
            running: Arc::new(running),
        }
    }

    /// Adds what disco's tools need to a server's capabilities: tools with `listChanged`,
    /// and logging (tools log to the client through their `Context`).
    pub fn capabilities(&self, capabilities: &mut ServerCapabilities) {
        let tools = capabilities
            .tools
            .get_or_insert_with(ToolsCapability::default);
        tools.list_changed = Some(true);
        capabilities.logging.get_or_insert_with(Default::default);
    }

    /// The `instructions` for the request's caller: the groups of the tools this caller may
    /// use, with their counts and a few words each, and how to use `tool_search` when search
    /// is on; at most 4 KiB (see [`View::instructions`](crate::catalog::View::instructions)).
    /// `None` when the [`Server`](super::Server) was given instructions of its own (an empty
    /// text, for none at all, included: disco's own handler sends those as given; an
    /// embedding server answers its own `get_info`'s) or the caller may use no tool. Clients that defer tools (Codex from 100
    /// tools on) show them as the description of the deferred tools. An embedding server
    /// answers them in its own `initialize`.
    pub fn instructions(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        if !self.shared.generate_instructions {
            return None;
        }
        let caller = caller_of(&context.extensions);
        self.shared.catalog().for_caller(&caller).instructions()
    }

    /// `initialize` as rmcp answers it for `handler` (the peer's info kept, the protocol
    /// version negotiated, `handler.get_info()`), with [`Tools::instructions`] for the caller
    /// when `get_info` gives none.
    pub fn initialize<H: ServerHandler>(
        &self,
        handler: &H,
        request: InitializeRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.introduced();
        let mut info = handler.negotiate_initialize(&request)?;
        if info.instructions.is_none() {
            info.instructions = self.instructions(context);
        }
        Ok(info)
    }

    /// `server/discover` (2026-07-28) as rmcp answers it for `handler`, with
    /// [`Tools::instructions`] for the caller when `get_info` gives none.
    pub fn discover<H: ServerHandler>(
        &self,
        handler: &H,
        context: &RequestContext<RoleServer>,
    ) -> DiscoverResult {
        let mut info = handler.get_info();
        if info.instructions.is_none() {
            info.instructions = self.instructions(context);
        }
        DiscoverResult::from_server_info(handler.supported_protocol_versions().into_owned(), info)
    }

    /// tools/list for the request's caller, in pages of the server's page size.
    pub async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let offset = match &cursor {
            None => 0,
            Some(sent) => decode_cursor(sent).ok_or_else(|| invalid_cursor(sent))?,
        };
        let caller = caller_of(&context.extensions);
        let (tools, total) =
            self.shared
                .catalog()
                .list_page(&caller, offset, self.shared.page_size);
        if let (Some(sent), true) = (&cursor, offset > total) {
            return Err(invalid_cursor(sent));
        }
        let end = offset + tools.len();
        let mut result = ListToolsResult::with_all_items(tools);
        if end < total {
            result.next_cursor = Some(encode_cursor(end));
        }
        Ok(result)
    }

    /// tools/call for the request's caller: name correction, argument repair, the meta-tools.
    pub async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.map(Value::Object);
        self.call(&request.name, arguments, context)
            .await
            .map(CallToolResponse::from)
    }

    async fn call(
        &self,
        name: &str,
        arguments: Option<Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResult, ErrorData> {
        let ctx = Context::builder()
            .caller(caller_of(&context.extensions))
            .cancellation(context.ct.clone())
            .peer(context.peer.clone())
            .progress_token(context.meta.get_progress_token())
            .log_filter(self.log_filter.clone())
            .session(self.session)
            .build();
        match self.shared.catalog().call_with(name, arguments, &ctx).await {
            Ok(result) => Ok(result),
            Err(err @ CallError::UnknownTool { .. }) if self.shared.unknown_tool_as_result => {
                Ok(error_result(err.to_string()))
            }
            Err(err) => Err(call_error(err)),
        }
    }

    /// rmcp's HTTP layer checks `Mcp-Param-*` headers against the schema found here, without
    /// passing the request: disco's HTTP guard runs rmcp with the request's caller in a
    /// task-local, and a tool is found only when that caller may call it by this exact
    /// name. A tool hidden from the caller is not found, as a tool that does not
    /// exist; outside disco's HTTP server nothing is found (the headers go unchecked). The
    /// tool found is its tools/list entry ([`CatalogTool::entry`](crate::CatalogTool::entry)),
    /// hints included, as tools/list shows it.
    pub fn get_tool(&self, name: &str) -> Option<Tool> {
        let caller = super::REQUEST_CALLER.try_with(Clone::clone).ok()?;
        let found = self.shared.catalog().resolve(name, &caller);
        match (found.tool, found.rule) {
            (Some(seen), Some(NameRule::Exact)) => Some(seen.entry()),
            _ => None,
        }
    }

    /// Notes the catalog this session's `initialize` is answered on, for `on_initialized`.
    pub(crate) fn introduced(&self) {
        *crate::util::lock(&self.introduced_on) = Some(self.shared.catalog());
    }

    /// Remembers the session, so that [`ServerHandle::reload`] tells it when its caller's
    /// tool list changed.
    pub fn on_initialized(&self, context: &NotificationContext<RoleServer>) {
        let caller = caller_of(&context.extensions);
        self.shared.add_peer(context.peer.clone(), caller.clone());
        // Served over HTTP with calls beside rmcp's loop: the session's calls run with this
        // session's handle and peer from now on (http_calls.rs).
        if let Some(parts) = context.extensions.get::<::http::request::Parts>() {
            if let Some(registry) = parts.extensions.get::<super::http_calls::Registry>() {
                registry.register(&parts.headers, self.same_session(), context.peer.clone());
            }
        }
        // rmcp runs a notification beside the requests that follow it: a reload that a call
        // made after `initialize` (a plugin installed) may have collected the sessions before
        // this one was added, and told it nothing. Tell it now, under the reload's own rule
        // (only when this caller's list changed); a reload that came later tells it itself,
        // and one notice too many only makes a client list again.
        let Some(before) = crate::util::lock(&self.introduced_on).take() else {
            return;
        };
        let now = self.shared.catalog();
        if !Arc::ptr_eq(&before, &now) && before.list(&caller) != now.list(&caller) {
            let peer = context.peer.clone();
            tokio::spawn(async move {
                super::shared::notify("session", peer.notify_tool_list_changed()).await;
            });
        }
    }

    /// Protocol 2026-07-28 replaced the session's `notifications/tools/list_changed` with
    /// `subscriptions/listen`: of what a client asks, disco's tools accept the tool list's
    /// changes. A server that announces other changes merges its own into the result.
    pub fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // rmcp acknowledges next and only then runs `listen`, which registers the stream: a
        // reload in between would find no stream to tell. The catalog of now is what the
        // acknowledgment stands for; `listen` compares it with the one it registers on.
        let mut acknowledged = crate::util::lock(&self.acknowledged);
        if acknowledged.len() >= MAX_ACKNOWLEDGED {
            acknowledged.pop_front();
        }
        acknowledged.push_back(self.shared.catalog());
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    /// Holds the subscription open until the client ends it; [`ServerHandle::reload`] sends
    /// the tool list changes on it meanwhile.
    pub async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.listen_on(Listening::of(&context)).await;
        Ok(())
    }

    /// [`Tools::listen`] on what it needs of the subscription, so that a handler that also
    /// listens for changes of its own can hand the context itself to that handler.
    pub(super) async fn listen_on(&self, listening: Listening) {
        // The oldest acknowledged catalog: when two listens of one session overlap, the one
        // that runs first compares with the earlier catalog, which can only add a notice.
        let acknowledged_on = crate::util::lock(&self.acknowledged).pop_front();
        if !listening.tools {
            listening.ct.cancelled().await;
            return;
        }
        // Forgotten however the wait ends, dropped futures included.
        struct Registered<'a>(&'a Shared, u64);
        impl Drop for Registered<'_> {
            fn drop(&mut self) {
                self.0.remove_subscription(self.1);
            }
        }
        let caller = listening.caller;
        let _registered = Registered(
            &self.shared,
            self.shared
                .add_subscription(caller.clone(), listening.sink.clone()),
        );
        // A reload that swapped the catalog after the acknowledgment and collected the streams
        // before this one was registered told it nothing: tell it now, under the reload's own
        // rule (only when this caller's list changed). A reload that came later tells it
        // itself; one notice too many only makes a client list again.
        if let Some(before) = acknowledged_on {
            let now = self.shared.catalog();
            if !Arc::ptr_eq(&before, &now) && before.list(&caller) != now.list(&caller) {
                super::shared::notify("listener", listening.sink.notify_tool_list_changed()).await;
            }
        }
        listening.ct.cancelled().await;
    }

    /// `logging/setLevel`: this session's level, for what its tools log.
    pub fn set_level(&self, level: LoggingLevel) {
        self.log_filter.set(level);
    }

    /// A request rmcp could not parse. `Ok` when it is disco's: a `tools/call` whose params
    /// rmcp refused (`arguments` as a JSON string is repaired; anything else gets a -32602
    /// that says what to send) or a malformed `logging/setLevel`. `Err(request)` gives back
    /// any other request, for your handler to answer.
    pub async fn custom_request(
        &self,
        request: CustomRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<Result<CustomResult, ErrorData>, CustomRequest> {
        match request.method.as_str() {
            "logging/setLevel" => Ok(Err(set_level_error())),
            "tools/call" => Ok(self.repaired_call(request, context).await),
            _ => Err(request),
        }
    }

    async fn repaired_call(
        &self,
        request: CustomRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let params = request.params.unwrap_or(Value::Null);
        let Some(obj) = params.as_object() else {
            return Err(ErrorData::invalid_params(
                format!(
                    "tools/call params must be an object {{\"name\": ..., \"arguments\": {{...}}}}, not {}",
                    json_kind(&params)
                ),
                None,
            ));
        };
        let name = match obj.get("name") {
            Some(Value::String(name)) => name.clone(),
            Some(other) => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "tools/call `name` must be a string, not {}",
                        json_kind(other)
                    ),
                    None,
                ))
            }
            None => {
                return Err(ErrorData::invalid_params(
                    "tools/call needs `name`: the tool to call",
                    None,
                ))
            }
        };
        let arguments = match obj.get("arguments") {
            // Some clients send the arguments JSON-encoded.
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(map)) => Some(Value::Object(map)),
                _ => {
                    return Err(ErrorData::invalid_params(
                        "tools/call `arguments` must be a JSON object, not a string",
                        None,
                    ))
                }
            },
            other => other.cloned(),
        };
        let mut result = self.call(&name, arguments, context).await?;
        // rmcp drops `resultType` for older protocol versions on the typed path; this path
        // bypasses it, so do the same here.
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        if !modern {
            result.result_type = None;
        }
        let value = serde_json::to_value(&result)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(CustomResult::new(value))
    }
}

/// rmcp routes a setLevel whose params it cannot read to the custom request hook; the server
/// declares logging, so the method exists: say which levels there are.
fn set_level_error() -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "logging/setLevel takes {{\"level\": ...}} with one of {}",
            LOG_LEVELS.join(", ")
        ),
        Some(json!({ "levels": LOG_LEVELS })),
    )
}

/// An unknown method, as rmcp answers it.
pub(crate) fn method_not_found(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("Method not found: {method}"),
        None,
    )
}

/// Unknown tools and malformed params are -32602 (never -32601: on the stateless HTTP path
/// rmcp turns that into HTTP 404), with what was asked for in `data`.
fn call_error(err: CallError) -> ErrorData {
    let data = match &err {
        CallError::UnknownTool {
            requested,
            suggestions,
        } => json!({ "requested": requested, "suggestions": suggestions }),
        CallError::InvalidParams(_) => Value::Null,
    };
    let data = if data.is_null() { None } else { Some(data) };
    ErrorData::invalid_params(err.to_string(), data)
}

/// The levels of `logging/setLevel` (RFC 5424 severities, as MCP names them).
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

fn invalid_cursor(cursor: &str) -> ErrorData {
    ErrorData::invalid_params(
        "Invalid cursor: pass the `nextCursor` of the previous tools/list page, or no cursor \
         for the first page",
        Some(json!({ "cursor": cursor })),
    )
}

const CURSOR_PREFIX: &str = "disco:v1:";

fn encode_cursor(offset: usize) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{offset}"))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor.as_bytes())
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    text.strip_prefix(CURSOR_PREFIX)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        assert_eq!(decode_cursor(&encode_cursor(0)), Some(0));
        assert_eq!(decode_cursor(&encode_cursor(12345)), Some(12345));
        assert_eq!(decode_cursor("nope"), None);
        assert_eq!(decode_cursor(""), None);
        let other = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("other:5");
        assert_eq!(decode_cursor(&other), None);
    }
}
