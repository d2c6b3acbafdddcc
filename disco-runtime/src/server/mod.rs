//! The MCP server: the official SDK (`rmcp`) speaks the protocol and runs the transports;
//! disco owns tools/list and tools/call on top of the [`Catalog`].

mod call_parse;
mod conn;
mod embedded;
mod error;
mod guard;
mod handler;
mod headers;
mod http;
mod http_calls;
mod in_flight;
mod json_answer;
mod memory;
mod rate;
mod sessions;
mod shared;
mod stdio;
mod stdio_calls;
mod tools;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use rmcp::model::{Implementation, InitializeResult, ServerCapabilities};

use crate::catalog::{
    Catalog, CatalogBuilder, CatalogError, NamePolicy, ScopedProvider, SearchOptions,
    StatsSnapshot, ToolProvider, Visibility,
};
use crate::tool::{Caller, SchemaMode};

#[doc(hidden)]
pub use conn::serve_bounded;
pub use embedded::Embedded;
pub use error::Error;
pub use handler::McpHandler;
pub use http::{BearerTokens, HttpOptions, TokenCheck};
pub use rate::RateLimit;
pub(crate) use shared::Shared;
pub use shared::{ServerHandle, NOTIFY_TIMEOUT};
pub use stdio::{GuardedStdio, MAX_LINE_BYTES};
pub use stdio_calls::Served;
pub use tools::Tools;

/// Builds and runs an MCP server over the catalog of `#[mcp_tool]` functions.
///
/// ```no_run
/// # struct Kb;
/// # impl Kb { fn open() -> std::io::Result<Kb> { Ok(Kb) } }
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// disco_runtime::Server::from_inventory()
///     .with_state(Kb::open()?)
///     .serve_stdio()
///     .await?;
/// # Ok(())
/// # }
/// ```
pub struct Server {
    catalog: CatalogBuilder,
    name: Option<String>,
    version: Option<String>,
    title: Option<String>,
    instructions: Option<String>,
    page_size: usize,
    unknown_tool_as_result: bool,
    http: HttpOptions,
    resources: Option<Arc<dyn Resources>>,
    running: Arc<OnceLock<Arc<Shared>>>,
}

/// Documents a server offers beside its tools (`resources/list`, `resources/read`), read-only
/// and each caller's own: what the server says of itself, such as its status. Each answer is
/// sent as fresh only now and for its caller alone (`ttlMs` 0, `cacheScope` private).
pub trait Resources: Send + Sync + 'static {
    /// The resources `caller` may read.
    fn list(&self, caller: &Caller) -> Vec<rmcp::model::Resource>;
    /// The contents of `uri` for `caller`; `None` when `caller` has no such resource (answered
    /// with the protocol's "resource not found", -32002).
    fn read(&self, uri: &str, caller: &Caller) -> Option<Vec<rmcp::model::ResourceContents>>;
}

impl Server {
    /// Every `#[mcp_tool]` in the binary, with the catalog's default options.
    pub fn from_inventory() -> Server {
        Server::new(Catalog::builder())
    }

    /// A server over the catalog `catalog` describes: every option of [`CatalogBuilder`],
    /// and with [`CatalogBuilder::specs`], a chosen set of tools instead of the whole
    /// inventory (or none: providers only). The server sets the catalog's `server_name` to
    /// its own name and requires every `State<T>` to be registered.
    ///
    /// ```no_run
    /// use disco_runtime::{CatalogBuilder, Server};
    /// # async fn run() -> Result<(), disco_runtime::server::Error> {
    /// Server::new(CatalogBuilder::default().specs([]).max_argument_values(10_000))
    ///     .serve_stdio()
    ///     .await
    /// # }
    /// ```
    pub fn new(catalog: CatalogBuilder) -> Server {
        Server {
            catalog,
            name: None,
            version: None,
            title: None,
            instructions: None,
            page_size: 100,
            unknown_tool_as_result: false,
            http: HttpOptions::default(),
            resources: None,
            running: Arc::new(OnceLock::new()),
        }
    }

    /// The counters of resolution, repair and failures since the server started (`None`
    /// before it runs). Also available from [`Server::handle`] once `serve_*` owns the server.
    pub fn stats(&self) -> Option<StatsSnapshot> {
        self.handle().stats()
    }

    /// Records discovery events (names that resolved to no tool or were corrected,
    /// `tool_search` queries, the calls that followed) into `sink`, usually a
    /// [`Recorder`](crate::learn) (feature `learning`). Off by default.
    pub fn discovery(mut self, sink: std::sync::Arc<dyn crate::catalog::DiscoverySink>) -> Self {
        self.catalog = self.catalog.discovery(sink);
        self
    }

    /// A handle to reload the catalog and read counters once the server runs.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            running: self.running.clone(),
        }
    }
    /// How far tool-name correction goes (default `Safe`).
    pub fn name_policy(mut self, policy: NamePolicy) -> Self {
        self.catalog = self.catalog.name_policy(policy);
        self
    }
    /// Which tools each caller may see.
    pub fn visibility(mut self, policy: impl Visibility) -> Self {
        self.catalog = self.catalog.visibility(policy);
        self
    }
    /// Tools from a provider, merged with the inventory's.
    pub fn provider(mut self, provider: impl ToolProvider) -> Self {
        self.catalog = self.catalog.provider(provider);
        self
    }
    /// Resources beside the tools, each caller's own: see [`Resources`].
    pub fn resources(mut self, resources: impl Resources) -> Self {
        self.resources = Some(Arc::new(resources));
        self
    }
    /// Tools that exist only for some callers.
    pub fn scoped_provider(mut self, provider: impl ScopedProvider) -> Self {
        self.catalog = self.catalog.scoped_provider(provider);
        self
    }
    /// The search meta-tools (`tool_search`, `execute_tool`) and what tools/list shows.
    pub fn search(mut self, options: SearchOptions) -> Self {
        self.catalog = self.catalog.search(options);
        self
    }

    /// The server's name in `serverInfo` (default: the Cargo package that declares its tools).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// The server's version in `serverInfo` (default: that package's version).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }
    /// A human-readable title in `serverInfo`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Instructions sent to clients at initialization: how the tools fit together. Without
    /// them, disco writes its own for each caller (the groups of the tools it may use, and how
    /// to search them; see [`Tools::instructions`]); an empty text sends none at all.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }
    /// Application state for `State<T>` parameters.
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.catalog = self.catalog.with_state(value);
        self
    }
    /// How many tools one tools/list page holds (default 100).
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size.max(1);
        self
    }
    /// The schema form for every tool (a tool's `full_schema` overrides it).
    pub fn schema_mode(mut self, mode: SchemaMode) -> Self {
        self.catalog = self.catalog.schema_mode(mode);
        self
    }
    /// How far argument repair goes (default: every safe repair).
    pub fn arg_repair(mut self, repair: crate::resolve::args::Repair) -> Self {
        self.catalog = self.catalog.arg_repair(repair);
        self
    }
    /// A timeout for tools that do not set `timeout_ms`.
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.catalog = self.catalog.default_timeout(timeout);
        self
    }
    /// The most JSON values one call's arguments may hold (default 100,000); see
    /// [`CatalogBuilder::max_argument_values`].
    pub fn max_argument_values(mut self, values: usize) -> Self {
        self.catalog = self.catalog.max_argument_values(values);
        self
    }
    /// Answer a call to an unknown tool with a tool result (`isError: true`) instead of the
    /// JSON-RPC error (-32602), for clients that do not show protocol errors to the model.
    pub fn unknown_tool_as_result(mut self, yes: bool) -> Self {
        self.unknown_tool_as_result = yes;
        self
    }
    /// Options of the Streamable HTTP transport.
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.http = options;
        self
    }

    /// Builds the catalog as `serve_*` would and reports its problems, without serving: every
    /// check of [`crate::check`], and besides that every `State<T>` a tool takes has been
    /// registered with [`Server::with_state`]. Call it from a test on the server your `main`
    /// builds:
    ///
    /// ```
    /// # use disco_runtime::Server;
    /// # struct Db;
    /// fn server() -> Server {
    ///     Server::from_inventory().with_state(Db)
    /// }
    ///
    /// // in a `#[test] fn server_is_complete()`
    /// server().check().unwrap();
    /// ```
    pub fn check(self) -> Result<(), CatalogError> {
        self.build_shared().map(|_| ())
    }

    /// Builds the catalog and the protocol handler without serving: for tests and for
    /// embedding in another transport.
    pub fn into_handler(self) -> Result<McpHandler, CatalogError> {
        Ok(McpHandler::of(self.build_shared()?))
    }

    /// Builds the catalog and gives disco's tools as a service to embed in an rmcp server of
    /// your own (with prompts and resources, say): see [`Tools`]. The server's name, version,
    /// title and instructions are yours to answer in that server's `get_info`; the rest of
    /// this builder (catalog options, page size, unknown tools as results) applies.
    /// [`Server::handle`] reloads it as it would a served one.
    pub fn into_tools(self) -> Result<Tools, CatalogError> {
        Ok(Tools::new(self.build_shared()?))
    }

    /// Your rmcp `ServerHandler` with disco's tools, in one line: the tools hooks are
    /// disco's, every other hook is `handler`'s (see [`Embedded`]). The rest of this builder
    /// applies as in [`Server::into_tools`]. Refused when `handler` declares tools of its own
    /// ([`Error::HandlerHasTools`]).
    pub fn wrap<H: rmcp::ServerHandler>(self, handler: H) -> Result<Embedded<H>, Error> {
        self.into_tools()?.wrap(handler)
    }

    fn build_shared(self) -> Result<Arc<Shared>, CatalogError> {
        let (pkg_name, pkg_version) = default_package(&self.catalog.chosen_specs());
        let server_name = self.name.clone().unwrap_or(pkg_name);
        let catalog = self
            .catalog
            .server_name(server_name.clone())
            .require_state(true)
            .build()?;
        let mut implementation =
            Implementation::new(server_name, self.version.unwrap_or(pkg_version));
        implementation.title = self.title;
        // The tools capability is `Embedded`'s to add (see `handler.rs`).
        #[allow(deprecated)] // logging: deprecated by SEP-2577, still used by every client era
        let mut capabilities = ServerCapabilities::builder().enable_logging().build();
        if self.resources.is_some() {
            capabilities.resources = ServerCapabilities::builder()
                .enable_resources()
                .build()
                .resources;
        }
        let mut info = InitializeResult::new(capabilities).with_server_info(implementation);
        // `Some("")`: the author wants no instructions, neither theirs nor disco's.
        let generate_instructions = self.instructions.is_none();
        if let Some(text) = self.instructions.filter(|t| !t.is_empty()) {
            info = info.with_instructions(text);
        }
        tracing::info!(
            tools = catalog.tools().len(),
            server = %info.server_info.name,
            "catalog ready"
        );
        if let Some(warning) = no_tools_warning(&catalog) {
            tracing::warn!("{warning}");
        }
        let shared = Arc::new(Shared {
            catalog: RwLock::new(Arc::new(catalog)),
            info,
            page_size: self.page_size,
            unknown_tool_as_result: self.unknown_tool_as_result,
            generate_instructions,
            peers: Mutex::new(Vec::new()),
            subscriptions: Mutex::new(Vec::new()),
            next_subscription: std::sync::atomic::AtomicU64::new(0),
            calls_beside: std::sync::atomic::AtomicU64::new(0),
            reloading: tokio::sync::Mutex::new(()),
            resources: self.resources,
        });
        // A second serve of the same builder keeps the first handle's target.
        let _ = self.running.set(shared.clone());
        Ok(shared)
    }

    /// Serves one client over stdin/stdout until it disconnects or Ctrl-C. Logs go to stderr:
    /// stdout belongs to the protocol.
    pub async fn serve_stdio(self) -> Result<(), Error> {
        init_tracing();
        let handler = self.into_handler()?;
        // Checked line by line: rmcp alone dies on a notification before `initialize` and
        // leaves malformed lines unanswered (see stdio.rs). The session's calls run beside
        // rmcp's service loop (see stdio_calls.rs).
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        tracing::info!(
            "serving MCP on stdio: waiting for a client to send `initialize` on stdin \
             (JSON-RPC, one message per line; an MCP client starts this program itself)"
        );
        let running = match GuardedStdio::new(stdin, stdout).serve(handler).await {
            Ok(running) => running,
            // stdin closed before any client spoke (run from a shell, Ctrl-D, `< /dev/null`):
            // nobody to serve, which is no failure.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                tracing::info!("stdin closed before a client initialized: stopping");
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        let cancel = running.cancellation_token();
        tokio::select! {
            done = running.waiting() => { done?; }
            _ = tokio::signal::ctrl_c() => {
                tracing::info!("Ctrl-C: stopping");
                cancel.cancel();
            }
        }
        Ok(())
    }

    /// Serves Streamable HTTP at `addr` (path `/mcp`) until Ctrl-C.
    pub async fn serve_http(self, addr: impl Into<SocketAddr>) -> Result<(), Error> {
        let listener = tokio::net::TcpListener::bind(addr.into()).await?;
        self.serve_http_on(listener, shutdown_signal()).await
    }

    /// Serves Streamable HTTP on a bound listener until `shutdown` resolves.
    pub async fn serve_http_on(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        init_tracing();
        let options = self.http.clone();
        let shared = self.build_shared()?;
        http::serve(shared, options, listener, shutdown).await
    }
}

async fn shutdown_signal() {
    if tokio::signal::ctrl_c().await.is_ok() {
        tracing::info!("Ctrl-C: stopping");
    }
}

/// Logs to stderr, filtered by `RUST_LOG` (default: disco's own events from `info`, the SDK's
/// from `warn`: rmcp logs every stateless request and session start at `info`, which buries
/// the corrections an operator looks for and costs a formatted line per call). Does nothing
/// when the application installed its own subscriber.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Why a server that serves nothing is most likely wrong: no `#[mcp_tool]` reached the catalog
/// and no provider can add one. A tool in a library is linked into a binary only when the binary
/// names the library; `None` when there is a tool or a provider.
fn no_tools_warning(catalog: &Catalog) -> Option<String> {
    if !catalog.tools().is_empty() || !catalog.config.providers.is_empty() {
        return None;
    }
    Some(
        "this server has no tools: no `#[mcp_tool]` is linked into this binary and no provider \
         is registered. Tools declared in a library crate are linked only when the binary uses \
         that crate: add `use my_crate as _;` (your library's name) to `main.rs`, or build the \
         server in the library (the guide, \"Where tools must live\")"
            .to_string(),
    )
}

/// The package that declares the tools served (the chosen ones, or the whole inventory): the
/// one named like the executable if there is one, else the one with the most tools.
fn default_package(specs: &[&crate::tool::ToolSpec]) -> (String, String) {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()));
    let mut counts: Vec<(crate::tool::Package, usize)> = Vec::new();
    for spec in specs {
        let key = spec.origin.package;
        match counts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => counts.push((key, 1)),
        }
    }
    if let Some(exe) = &exe {
        if let Some((package, _)) = counts.iter().find(|(p, _)| p.name == exe) {
            return (package.name.to_string(), package.version.to_string());
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    match counts.first() {
        Some((package, _)) => (package.name.to_string(), package.version.to_string()),
        None => (
            exe.unwrap_or_else(|| "disco-server".to_string()),
            env!("CARGO_PKG_VERSION").to_string(),
        ),
    }
}

tokio::task_local! {
    /// The caller of the HTTP request rmcp is handling, for the parts of rmcp's HTTP layer
    /// that call into the handler without the request (`get_tool`, session creation).
    pub(crate) static REQUEST_CALLER: Caller;
}

/// The caller an HTTP request was authenticated as, or anonymous.
pub(crate) fn caller_of(extensions: &rmcp::model::Extensions) -> Caller {
    extensions
        .get::<::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .cloned()
        .unwrap_or_default()
}
