//! [`Embedded`]: an rmcp `ServerHandler` of your own with disco's tools, in one line. The tools
//! hooks are disco's; every other hook is your handler's, forwarded as it is.

// logging/setLevel and resources/subscribe are deprecated by SEP-2577 but still sent by
// clients of the older era, and a wrapper must forward them.
#![allow(deprecated)]

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelledNotificationParam,
    CompleteRequestParams, CompleteResult, CustomNotification, CustomRequest, CustomResult,
    DiscoverResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams,
    GetSkillResult, GetTaskParams, GetTaskResult, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::tools::{Listening, Tools};
use super::Error;

/// Your rmcp `ServerHandler` with disco's tools: name correction, argument repair,
/// `tool_search`, hidden tools, reload notices, per-caller instructions and per-session log
/// levels, beside your prompts, resources and everything else your handler answers.
///
/// Made by [`Server::wrap`](super::Server::wrap) (or [`Tools::wrap`]); serve it as you would
/// your handler. The hooks of [`Embedded::SERVED_BY_DISCO`] are disco's, and consult your
/// handler where it has a say (its `get_info`, `initialize` and `discover` answers get the
/// tools' capabilities and, when they have none, the caller's instructions; its
/// `on_initialized`, `set_level`, subscriptions and custom requests run too); those of
/// [`Embedded::LEFT_TO_HANDLER`] are your handler's alone. A test reads rmcp's `ServerHandler`
/// and fails when a hook is in neither list.
///
/// A clone is a new session's handler: your handler cloned, disco's tools with their own log
/// level (rmcp's HTTP service clones its handler once per session).
///
/// The handler `serve_*` runs, [`McpHandler`](super::McpHandler), is an `Embedded` too: the
/// tools hooks are written here alone.
///
/// ```no_run
/// use disco_runtime::rmcp::model::{ServerCapabilities, ServerInfo};
/// use disco_runtime::rmcp::{ServerHandler, ServiceExt};
/// use disco_runtime::Server;
///
/// #[derive(Clone)]
/// struct MyServer;
///
/// impl ServerHandler for MyServer {
///     fn get_info(&self) -> ServerInfo {
///         ServerInfo::new(ServerCapabilities::builder().enable_prompts().build())
///     }
///     // ... list_prompts, get_prompt: yours, as without disco
/// }
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::from_inventory().wrap(MyServer)?;
/// server.serve(disco_runtime::rmcp::transport::stdio()).await?.waiting().await?;
/// # Ok(())
/// # }
/// ```
pub struct Embedded<H> {
    pub(super) tools: Tools,
    pub(super) handler: H,
}

impl<H: Clone> Clone for Embedded<H> {
    /// A new session's handler: your handler cloned, disco's tools with their own log level.
    fn clone(&self) -> Self {
        Embedded {
            tools: self.tools.clone(),
            handler: self.handler.clone(),
        }
    }
}

impl<H: ServerHandler> Embedded<H> {
    /// The hooks of rmcp's `ServerHandler` that disco answers (your handler consulted where
    /// the type's docs say).
    pub const SERVED_BY_DISCO: &'static [&'static str] = &[
        "get_info",
        "initialize",
        "negotiate_initialize",
        "discover",
        "list_tools",
        "call_tool",
        "get_tool",
        "on_initialized",
        "accepted_subscription_filter",
        "listen",
        "set_level",
        "on_custom_request",
    ];

    /// The hooks of rmcp's `ServerHandler` that go to your handler as they are.
    pub const LEFT_TO_HANDLER: &'static [&'static str] = &[
        "ping",
        "supported_protocol_versions",
        "complete",
        "get_prompt",
        "list_prompts",
        "list_resources",
        "list_resource_templates",
        "read_resource",
        "subscribe",
        "unsubscribe",
        "on_cancelled",
        "on_progress",
        "on_roots_list_changed",
        "on_custom_notification",
        "get_task",
        "update_task",
        "cancel_task",
        "list_skills",
        "get_skill",
        "read_resource_directory",
    ];

    /// `handler` with `tools`; refused when `handler` declares tools of its own (the tools
    /// capability in its `get_info`, which rmcp's `#[tool_handler]` sets): one server answers
    /// `tools/list` from one catalog, so that a corrected name can never land on a tool the
    /// catalog does not know.
    pub(super) fn new(tools: Tools, handler: H) -> Result<Self, Error> {
        if handler.get_info().capabilities.tools.is_some() {
            return Err(Error::HandlerHasTools {
                handler: std::any::type_name::<H>(),
            });
        }
        Ok(Embedded { tools, handler })
    }

    /// disco's tools (their catalog, a [`ServerHandle`](super::ServerHandle) to reload it).
    pub fn tools(&self) -> &Tools {
        &self.tools
    }

    /// Your handler.
    pub fn handler(&self) -> &H {
        &self.handler
    }
}

/// Every category either filter accepts.
fn union(mut a: SubscriptionFilter, b: SubscriptionFilter) -> SubscriptionFilter {
    fn either(x: Option<bool>, y: Option<bool>) -> Option<bool> {
        match (x, y) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (None, None) => None,
            _ => Some(false),
        }
    }
    a.tools_list_changed = either(a.tools_list_changed, b.tools_list_changed);
    a.prompts_list_changed = either(a.prompts_list_changed, b.prompts_list_changed);
    a.resources_list_changed = either(a.resources_list_changed, b.resources_list_changed);
    if let Some(uris) = b.resource_subscriptions {
        let mine = a.resource_subscriptions.get_or_insert_with(Vec::new);
        for uri in uris {
            if !mine.contains(&uri) {
                mine.push(uri);
            }
        }
    }
    a
}

/// Whether an accepted filter holds anything but the tool list's changes (which only the
/// handler can have accepted).
fn beyond_tools(accepted: &SubscriptionFilter) -> bool {
    accepted.prompts_list_changed == Some(true)
        || accepted.resources_list_changed == Some(true)
        || accepted
            .resource_subscriptions
            .as_ref()
            .is_some_and(|uris| !uris.is_empty())
}

impl<H: ServerHandler> ServerHandler for Embedded<H> {
    // ---- disco's

    /// Your handler's, with the tools' capabilities.
    fn get_info(&self) -> ServerConfig {
        let mut info = self.handler.get_info();
        self.tools.capabilities(&mut info.capabilities);
        info
    }

    /// Your handler's `initialize`, with the tools' capabilities and, when it gives none, the
    /// instructions for the caller (see [`Tools::instructions`]).
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.tools.introduced();
        let mut result = self.handler.initialize(request, context.clone()).await?;
        self.tools.capabilities(&mut result.capabilities);
        if result.instructions.is_none() {
            result.instructions = self.tools.instructions(&context);
        }
        Ok(result)
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        let mut result = self.handler.negotiate_initialize(request)?;
        self.tools.capabilities(&mut result.capabilities);
        Ok(result)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let mut result = self.handler.discover(context.clone()).await?;
        self.tools.capabilities(&mut result.capabilities);
        if result.instructions.is_none() {
            result.instructions = self.tools.instructions(&context);
        }
        Ok(result)
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

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.get_tool(name)
    }

    /// The session is remembered for reload notices, then your handler hears of it.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.tools.on_initialized(&context);
        self.handler.on_initialized(context).await;
    }

    /// The tool list's changes, and whatever your handler accepts.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let tools = self.tools.accepted_subscription_filter(requested);
        match (tools, self.handler.accepted_subscription_filter(requested)) {
            (Some(tools), Some(theirs)) => Some(union(tools, theirs)),
            (tools, theirs) => tools.or(theirs),
        }
    }

    /// disco's listener, and your handler's `listen` beside it when the subscription holds
    /// something your handler accepted; your handler's answer ends the subscription.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let listening = Listening::of(&context);
        if !beyond_tools(context.accepted()) {
            self.tools.listen_on(listening).await;
            return Ok(());
        }
        tokio::select! {
            biased;
            answer = self.handler.listen(context) => answer,
            () = self.tools.listen_on(listening) => Ok(()),
        }
    }

    /// The tools' log level for this session, then your handler's `set_level` (one that has
    /// none is not an error: the server logs).
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tools.set_level(request.level);
        match self.handler.set_level(request, context).await {
            Err(e) if e.code == ErrorCode::METHOD_NOT_FOUND => Ok(()),
            answer => answer,
        }
    }

    /// disco's (a `tools/call` rmcp could not parse, a malformed `logging/setLevel`), else
    /// your handler's.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        match self.tools.custom_request(request, &context).await {
            Ok(answer) => answer,
            Err(other) => self.handler.on_custom_request(other, context).await,
        }
    }

    // ---- your handler's

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.handler.ping(context).await
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.handler.supported_protocol_versions()
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.handler.complete(request, context).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.handler.get_prompt(request, context).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.handler.list_prompts(request, context).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.handler.list_resources(request, context).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.handler.list_resource_templates(request, context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.handler.read_resource(request, context).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.handler.subscribe(request, context).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.handler.unsubscribe(request, context).await
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        self.handler.on_cancelled(notification, context).await
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        self.handler.on_progress(notification, context).await
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.handler.on_roots_list_changed(context).await
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) {
        self.handler
            .on_custom_notification(notification, context)
            .await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.handler.get_task(request, context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.handler.update_task(request, context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.handler.cancel_task(request, context).await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        self.handler.list_skills(request, context).await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.handler.get_skill(request, context).await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.handler.read_resource_directory(request, context).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hooks of rmcp's `ServerHandler`, read from the rmcp source this crate builds with:
    /// the `fn`s of the macro that declares the trait's methods.
    fn trait_hooks() -> Vec<String> {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let out = std::process::Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--offline"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo metadata runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata");
        let manifest = meta["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .find(|p| p["name"] == "rmcp")
            .and_then(|p| p["manifest_path"].as_str())
            .expect("rmcp in the dependency graph")
            .to_string();
        let source = std::path::Path::new(&manifest)
            .with_file_name("src")
            .join("handler")
            .join("server.rs");
        let text = std::fs::read_to_string(&source)
            .unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        let start = text
            .find("macro_rules! server_handler_methods")
            .expect("rmcp declares the trait's methods in `server_handler_methods!`");
        let end = start
            + text[start..]
                .find("pub trait ServerHandler")
                .expect("the trait after its macro");
        fn_names(&text[start..end])
    }

    /// The names of the `fn`s that start a line of `text`.
    fn fn_names(text: &str) -> Vec<String> {
        text.lines()
            .filter_map(|line| {
                let line = line.trim_start();
                let rest = line
                    .strip_prefix("async fn ")
                    .or_else(|| line.strip_prefix("fn "))?;
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                Some(name)
            })
            .collect()
    }

    /// The hooks `impl ServerHandler for Embedded` defines, read from this file.
    fn wrapper_hooks() -> Vec<String> {
        let text = include_str!("embedded.rs");
        let start = text
            .find("impl<H: ServerHandler> ServerHandler for Embedded<H> {")
            .expect("the impl");
        let end = start + text[start..].find("\n}\n").expect("the impl's end");
        fn_names(&text[start..end])
    }

    fn sorted(mut names: Vec<String>) -> Vec<String> {
        names.sort();
        names
    }

    #[test]
    fn every_hook_of_rmcp_is_served_by_disco_or_left_to_the_handler() {
        let trait_hooks = sorted(trait_hooks());
        assert!(
            trait_hooks.len() > 20,
            "read too few hooks: {trait_hooks:?}"
        );
        type E = Embedded<crate::server::handler::Own>;
        for name in E::SERVED_BY_DISCO {
            assert!(
                !E::LEFT_TO_HANDLER.contains(name),
                "`{name}` is in both lists of Embedded"
            );
        }
        let listed = sorted(
            E::SERVED_BY_DISCO
                .iter()
                .chain(E::LEFT_TO_HANDLER)
                .map(|s| s.to_string())
                .collect(),
        );
        let missing: Vec<_> = trait_hooks.iter().filter(|n| !listed.contains(n)).collect();
        assert!(
            missing.is_empty(),
            "rmcp's ServerHandler has hooks that Embedded neither serves nor leaves to the \
             handler: {missing:?}; add them to `impl ServerHandler for Embedded` and to \
             SERVED_BY_DISCO or LEFT_TO_HANDLER"
        );
        let gone: Vec<_> = listed.iter().filter(|n| !trait_hooks.contains(n)).collect();
        assert!(gone.is_empty(), "listed, but not hooks of rmcp: {gone:?}");
        // Listed is not enough: a hook the impl does not define runs rmcp's default, which
        // never reaches the handler.
        assert_eq!(
            sorted(wrapper_hooks()),
            trait_hooks,
            "`impl ServerHandler for Embedded` must define every hook of rmcp's trait"
        );
    }

    #[test]
    fn a_filter_union_holds_every_category_of_either() {
        let tools = SubscriptionFilter::builder().tools_list_changed().build();
        let mut theirs = SubscriptionFilter::builder().prompts_list_changed().build();
        theirs.resource_subscriptions = Some(vec!["a://x".into()]);
        let both = union(tools, theirs);
        assert_eq!(both.tools_list_changed, Some(true));
        assert_eq!(both.prompts_list_changed, Some(true));
        assert_eq!(both.resources_list_changed, None);
        assert_eq!(both.resource_subscriptions, Some(vec!["a://x".to_string()]));
        assert!(beyond_tools(&both));
        assert!(!beyond_tools(
            &SubscriptionFilter::builder().tools_list_changed().build()
        ));
    }
}
