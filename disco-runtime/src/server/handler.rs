//! The `rmcp::ServerHandler` that `serve_*` runs: [`Embedded`] over [`Own`], the little a
//! served [`Server`](super::Server) answers beyond its tools. Every tools hook is
//! [`Embedded`]'s, written once for a served server and for a user's own handler alike.

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CustomRequest, CustomResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::tools::{method_not_found, Tools};
use super::{caller_of, Embedded, Shared};

/// The protocol handler over a catalog: disco's [`Tools`] around the server's own
/// `initialize` answer and [`Resources`](super::Resources). A clone is a new session's
/// handler: the same catalog, its own log level.
pub type McpHandler = Embedded<Own>;

/// What a served [`Server`](super::Server) answers beyond its tools: its name, version and
/// instructions (without the tools capability, which [`Embedded`] adds) and its
/// [`Resources`](super::Resources). Every other hook is rmcp's default: `set_level`'s
/// "method not found" is an `Ok` once [`Embedded`] has set the tools' level.
#[derive(Clone)]
pub struct Own {
    shared: Arc<Shared>,
}

impl McpHandler {
    /// The handler of a served server over `shared`.
    pub(crate) fn of(shared: Arc<Shared>) -> Self {
        Embedded {
            tools: Tools::new(shared.clone()),
            handler: Own { shared },
        }
    }

    /// A handler for a new session: same catalog, its own log level.
    pub(crate) fn for_session(&self) -> Self {
        self.clone()
    }

    /// A handler for one request of stateless HTTP: its calls belong to no session.
    pub(crate) fn without_session(&self) -> Self {
        Embedded {
            tools: self.tools.clone().sessionless(),
            handler: self.handler.clone(),
        }
    }

    /// The catalog this handler serves now.
    pub fn catalog(&self) -> Arc<crate::catalog::Catalog> {
        self.tools.catalog()
    }
}

impl Own {
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl ServerHandler for Own {
    /// The answer every caller shares; [`Embedded`] adds the tools' capabilities, and to
    /// `initialize` and `server/discover` the instructions written for the caller (see
    /// [`Tools::instructions`]).
    fn get_info(&self) -> ServerConfig {
        self.shared.info.clone()
    }

    /// The server's [`Resources`](super::Resources) for the caller, all on one page (they
    /// are few: what the server says of itself).
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        match &self.shared.resources {
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
        let Some(resources) = &self.shared.resources else {
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

    /// Nothing beyond what [`Embedded`] does with the session (rmcp's default logs a line).
    async fn on_initialized(&self, _context: NotificationContext<RoleServer>) {}

    /// A request that is not disco's: unknown, as rmcp answers one (its default hook gives
    /// the bare method as the message).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(method_not_found(&request.method))
    }
}
