//! The `rmcp::ServerHandler`: rmcp handles initialization, both protocol eras and the
//! transports; this handler answers tools/list and tools/call from the catalog.

// logging/setLevel is deprecated by SEP-2577 but still sent by clients of every era.
#![allow(deprecated)]

use std::sync::Arc;

use base64::Engine as _;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerConfig, SetLevelRequestParams,
    Tool,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};

use super::{caller_of, Shared};
use crate::call::CallError;
use crate::tool::result::error_result;
use crate::tool::{Context, LogLevelFilter};
use crate::util::json_kind;

/// The protocol handler over a catalog. Cheap to clone: one per session shares everything
/// but the session's log level.
#[derive(Clone)]
pub struct McpHandler {
    shared: Arc<Shared>,
    log_filter: Arc<LogLevelFilter>,
}

impl McpHandler {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        McpHandler {
            shared,
            log_filter: Arc::new(LogLevelFilter::default()),
        }
    }

    /// A handler for a new session: same catalog, its own log level.
    pub(crate) fn for_session(&self) -> Self {
        McpHandler::new(self.shared.clone())
    }

    /// The catalog this handler serves now.
    pub fn catalog(&self) -> Arc<crate::catalog::Catalog> {
        self.shared.catalog()
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
            .build();
        match self.shared.catalog().call_with(name, arguments, &ctx).await {
            Ok(result) => Ok(result),
            Err(err @ CallError::UnknownTool { .. }) if self.shared.unknown_tool_as_result => {
                Ok(error_result(err.to_string()))
            }
            Err(err) => Err(call_error(err)),
        }
    }
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

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        self.shared.info.clone()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
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

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.map(Value::Object);
        self.call(&request.name, arguments, &context)
            .await
            .map(CallToolResponse::from)
    }

    /// rmcp's HTTP layer checks `Mcp-Param-*` headers against the schema found here, without
    /// passing the request: the HTTP guard runs rmcp with the request's caller in
    /// [`super::REQUEST_CALLER`], and a tool is found only when that caller may call it by
    /// this exact name. A tool hidden from the caller is not found, as a tool that does not
    /// exist; outside an HTTP request nothing is found (the headers go unchecked).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        let caller = super::REQUEST_CALLER.try_with(Clone::clone).ok()?;
        let found = self.shared.catalog().resolve(name, &caller);
        match (found.tool, found.rule) {
            (Some(seen), Some(crate::catalog::NameRule::Exact)) => Some(seen.tool.clone()),
            _ => None,
        }
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.shared
            .add_peer(context.peer, caller_of(&context.extensions));
    }

    /// Protocol 2026-07-28 replaced the session's `notifications/tools/list_changed` with
    /// `subscriptions/listen`: a change of the tool list is the one change this server
    /// announces (the SDK keeps what the client asked for of it).
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    /// Holds the subscription open until the client ends it; `ServerHandle::reload` sends the
    /// tool list changes on it meanwhile.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        if context.accepted().tools_list_changed != Some(true) {
            context.cancelled().await;
            return Ok(());
        }
        // Forgotten however the wait ends, dropped futures included.
        struct Registered<'a>(&'a Shared, u64);
        impl Drop for Registered<'_> {
            fn drop(&mut self) {
                self.0.remove_subscription(self.1);
            }
        }
        let caller = caller_of(&context.request_context().extensions);
        let _registered = Registered(
            &self.shared,
            self.shared.add_subscription(caller, context.sink().clone()),
        );
        context.cancelled().await;
        Ok(())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_filter.set(request.level);
        Ok(())
    }

    /// tools/call params that rmcp could not parse arrive here: `arguments` as a string or an
    /// array, a missing or non-string `name`. A JSON string holding an object is repaired;
    /// everything else is a -32602 that says what to send.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method == "logging/setLevel" {
            // rmcp routes a setLevel whose params it cannot read here; the server declares
            // logging, so the method exists: say which levels there are.
            return Err(ErrorData::invalid_params(
                format!(
                    "logging/setLevel takes {{\"level\": ...}} with one of {}",
                    LOG_LEVELS.join(", ")
                ),
                Some(json!({ "levels": LOG_LEVELS })),
            ));
        }
        if request.method != "tools/call" {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {}", request.method),
                None,
            ));
        }
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
        let mut result = self.call(&name, arguments, &context).await?;
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
