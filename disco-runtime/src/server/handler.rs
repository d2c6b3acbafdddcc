//! The `rmcp::ServerHandler` that `serve_*` runs: rmcp handles initialization, both protocol
//! eras and the transports; every tools hook forwards to [`Tools`].

// logging/setLevel is deprecated by SEP-2577 but still sent by clients of every era.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult,
    DiscoverResult, InitializeRequestParams, InitializeResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerConfig, SetLevelRequestParams, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::tools::{method_not_found, Tools};
use super::{caller_of, Shared};

/// The protocol handler over a catalog: disco's [`Tools`] and the server's `initialize`
/// answer. A clone is a new session's handler: the same catalog, its own log level.
#[derive(Clone)]
pub struct McpHandler {
    tools: Tools,
}

impl McpHandler {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        McpHandler {
            tools: Tools::new(shared),
        }
    }

    /// A handler for a new session: same catalog, its own log level.
    pub(crate) fn for_session(&self) -> Self {
        self.clone()
    }

    /// A handler for one request of stateless HTTP: its calls belong to no session.
    pub(crate) fn without_session(&self) -> Self {
        McpHandler {
            tools: self.tools.clone().sessionless(),
        }
    }

    /// The catalog this handler serves now.
    pub fn catalog(&self) -> Arc<crate::catalog::Catalog> {
        self.tools.catalog()
    }
}

impl ServerHandler for McpHandler {
    /// The answer every caller shares; `initialize` and `server/discover` add the
    /// instructions written for the caller (see [`Tools::instructions`]).
    fn get_info(&self) -> ServerConfig {
        self.tools.shared().info.clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.tools.initialize(self, request, &context)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Ok(self.tools.discover(self, &context))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.tools.list_tools(request, &context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.tools.call_tool(request, &context).await
    }

    /// The server's [`Resources`](super::Resources) for the caller, all on one page (they
    /// are few: what the server says of itself).
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        match &self.tools.shared().resources {
            Some(resources) => Ok(ListResourcesResult::with_all_items(
                resources.list(&caller_of(&context.extensions)),
            )),
            None => Err(method_not_found("resources/list")),
        }
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some(resources) = &self.tools.shared().resources else {
            return Err(method_not_found("resources/read"));
        };
        match resources.read(&request.uri, &caller_of(&context.extensions)) {
            Some(contents) => Ok(ReadResourceResult::new(contents)
                .with_ttl_ms(0)
                .with_cache_scope(CacheScope::Private)
                .into()),
            None => Err(ErrorData::resource_not_found(
                format!("no resource `{}`", crate::util::clip_quoted(&request.uri)),
                None,
            )),
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.get_tool(name)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.tools.on_initialized(&context);
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.tools.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.tools.listen(context).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tools.set_level(request.level);
        Ok(())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        match self.tools.custom_request(request, &context).await {
            Ok(answer) => answer,
            Err(other) => Err(method_not_found(&other.method)),
        }
    }
}
