//! The MCP server: the official SDK (`rmcp`) speaks the protocol and runs the transports;
//! disco owns tools/list and tools/call on top of the [`Catalog`].

mod conn;
mod guard;
mod handler;
mod headers;
mod http;
mod sessions;
mod stdio;
mod tools;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use rmcp::model::{Implementation, InitializeResult, ServerCapabilities};
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer, ServiceExt};

use crate::catalog::{
    Catalog, CatalogBuilder, CatalogError, NamePolicy, ScopedProvider, SearchOptions,
    StatsSnapshot, ToolProvider, Visibility,
};
use crate::tool::{Caller, SchemaMode};

pub use handler::McpHandler;
pub use http::{BearerTokens, HttpOptions, TokenCheck};
pub use stdio::{GuardedStdio, MAX_LINE_BYTES};
pub use tools::Tools;

/// Why a server could not start, or stopped with an error. A plain error type: `?` turns it
/// into `Box<dyn std::error::Error>` (or `anyhow::Error`), and [`Error::catalog`] gives the
/// catalog's problems when that is what stopped the start.
///
/// ```
/// # use disco_runtime::server::Error;
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     # fn serve() -> Result<(), Error> { Ok(()) }
///     serve()?; // disco_runtime::server::Error into Box<dyn Error>
///     Ok(())
/// }
/// ```
///
/// Its `Debug` form is its `Display` form followed by its causes, so that a `main` returning
/// it prints a message to read.
#[non_exhaustive]
pub enum Error {
    /// The catalog could not be built: conflicting names, defaults that do not fit, state
    /// that was not registered (see [`CatalogError`]).
    Catalog(CatalogError),
    /// Binding or serving a socket, or reading and writing stdio.
    Io(std::io::Error),
    /// The MCP session failed: the client's initialization or the transport.
    Protocol(Box<dyn std::error::Error + Send + Sync + 'static>),
    /// [`ServerHandle::reload`] before a `serve_*` call built the server.
    NotRunning,
}

impl Error {
    /// The catalog's problems, when the catalog is what failed.
    pub fn catalog(&self) -> Option<&CatalogError> {
        match self {
            Error::Catalog(e) => Some(e),
            _ => None,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The catalog's own text starts with "the tool catalog has N problem(s):".
            Error::Catalog(e) => write!(f, "{e}"),
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::Protocol(e) => write!(f, "MCP session failed: {e}"),
            Error::NotRunning => f.write_str("the server is not running yet"),
        }
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")?;
        if let Error::Protocol(e) = self {
            let mut source = e.source();
            while let Some(s) = source {
                write!(f, ": {s}")?;
                source = s.source();
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Catalog(e) => Some(e),
            Error::Io(e) => Some(e),
            Error::Protocol(e) => Some(&**e),
            Error::NotRunning => None,
        }
    }
}

impl From<CatalogError> for Error {
    fn from(e: CatalogError) -> Self {
        Error::Catalog(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<rmcp::service::ServerInitializeError> for Error {
    fn from(e: rmcp::service::ServerInitializeError) -> Self {
        Error::Protocol(Box::new(e))
    }
}

impl From<tokio::task::JoinError> for Error {
    fn from(e: tokio::task::JoinError) -> Self {
        Error::Protocol(Box::new(e))
    }
}

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
    running: Arc<OnceLock<Arc<Shared>>>,
}

/// Shared by every session and request: built once, never per request.
pub(crate) struct Shared {
    /// Swapped whole when the catalog is reloaded; each request reads one consistent version.
    catalog: RwLock<Arc<Catalog>>,
    pub info: InitializeResult,
    pub page_size: usize,
    pub unknown_tool_as_result: bool,
    /// Connected sessions, told when their caller's tool list changes, with the caller that
    /// initialized them.
    peers: Mutex<Vec<(Peer<RoleServer>, Caller)>>,
    /// Open `subscriptions/listen` requests (protocol 2026-07-28) that asked to be told when
    /// the tool list changes, by a number of their own, with their caller.
    subscriptions: Mutex<Vec<(u64, Caller, SubscriptionSink)>>,
    next_subscription: std::sync::atomic::AtomicU64,
    /// Held by a reload from its rebuild to its swap, so that an older rebuild never replaces
    /// a newer one.
    reloading: tokio::sync::Mutex<()>,
}

impl Shared {
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn add_peer(&self, peer: Peer<RoleServer>, caller: Caller) {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        peers.retain(|(p, _)| !p.is_transport_closed());
        peers.push((peer, caller));
    }

    /// Remembers an open subscription until [`Shared::remove_subscription`] with the number
    /// returned.
    pub(crate) fn add_subscription(&self, caller: Caller, sink: SubscriptionSink) -> u64 {
        let id = self
            .next_subscription
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((id, caller, sink));
        id
    }

    pub(crate) fn remove_subscription(&self, id: u64) {
        self.subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(i, _, _)| *i != id);
    }
}

/// Sends one notice of a change, waiting [`NOTIFY_TIMEOUT`] at most; a failure is only
/// logged (`who`: the kind of client).
async fn notify<E: std::fmt::Display>(
    who: &str,
    notice: impl std::future::Future<Output = Result<(), E>>,
) {
    match tokio::time::timeout(NOTIFY_TIMEOUT, notice).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::debug!(error = %e, "could not send tools/list_changed to a {who}"),
        Err(_) => tracing::debug!("a {who} did not take tools/list_changed in time"),
    }
}

/// How long a reload waits for one client to take its notice of the change.
pub const NOTIFY_TIMEOUT: Duration = Duration::from_secs(5);

/// Controls a server while it runs: reload the catalog after providers changed, read the
/// counters.
#[derive(Clone)]
pub struct ServerHandle {
    running: Arc<OnceLock<Arc<Shared>>>,
}

impl ServerHandle {
    /// Rebuilds the catalog (inventory plus the providers' current tools), swaps it in and
    /// sends `notifications/tools/list_changed` to every connected session and every
    /// `subscriptions/listen` stream (protocol 2026-07-28) whose caller's tool list changed (a
    /// session's caller is the one that initialized it).
    /// Calls in flight finish on the catalog they started with. Reloads run one at a time;
    /// each notice is given [`NOTIFY_TIMEOUT`] to be written, all at once, so a client that
    /// stops reading delays a reload by that much at most.
    ///
    /// A stream is told of the changes after its acknowledgment was sent: a client should list
    /// the tools once it holds the acknowledgment.
    pub async fn reload(&self) -> Result<(), Error> {
        use futures_util::future::join_all;
        let shared = self.running.get().ok_or(Error::NotRunning)?;
        let (before, fresh) = {
            let _one_at_a_time = shared.reloading.lock().await;
            let before = shared.catalog();
            let fresh = Arc::new(before.rebuild()?);
            *shared.catalog.write().unwrap_or_else(|e| e.into_inner()) = fresh.clone();
            (before, fresh)
        };
        let peers: Vec<(Peer<RoleServer>, Caller)> = {
            let mut peers = shared.peers.lock().unwrap_or_else(|e| e.into_inner());
            peers.retain(|(p, _)| !p.is_transport_closed());
            peers.clone()
        };
        let streams: Vec<(SubscriptionSink, Caller)> = shared
            .subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(_, caller, sink)| (sink.clone(), caller.clone()))
            .collect();
        // A client hears of a change only when its caller's own list changed: a change to
        // tools it cannot see tells it nothing.
        let mut changed_for: HashMap<Option<String>, bool> = HashMap::new();
        let mut changed = |caller: &Caller| {
            *changed_for
                .entry(caller.id().map(str::to_owned))
                .or_insert_with(|| before.list(caller) != fresh.list(caller))
        };
        let peers: Vec<Peer<RoleServer>> = peers
            .into_iter()
            .filter(|(_, caller)| changed(caller))
            .map(|(peer, _)| peer)
            .collect();
        let streams: Vec<SubscriptionSink> = streams
            .into_iter()
            .filter(|(_, caller)| changed(caller))
            .map(|(sink, _)| sink)
            .collect();
        let to_sessions = join_all(
            peers
                .iter()
                .map(|peer| notify("session", peer.notify_tool_list_changed())),
        );
        let to_streams = join_all(
            streams
                .iter()
                .map(|sink| notify("listener", sink.notify_tool_list_changed())),
        );
        futures_util::future::join(to_sessions, to_streams).await;
        Ok(())
    }

    /// The counters of resolution, repair and failures, or `None` before the server runs.
    pub fn stats(&self) -> Option<StatsSnapshot> {
        self.running.get().map(|s| s.catalog().stats())
    }
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
            running: Arc::new(OnceLock::new()),
        }
    }

    /// The counters of resolution, repair and failures since the server started (`None`
    /// before it runs). Also available from [`Server::handle`] once `serve_*` owns the server.
    pub fn stats(&self) -> Option<StatsSnapshot> {
        self.handle().stats()
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
    /// Instructions sent to clients at initialization: how the tools fit together.
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
        Ok(McpHandler::new(self.build_shared()?))
    }

    /// Builds the catalog and gives disco's tools as a service to embed in an rmcp server of
    /// your own (with prompts and resources, say): see [`Tools`]. The server's name, version,
    /// title and instructions are yours to answer in that server's `get_info`; the rest of
    /// this builder (catalog options, page size, unknown tools as results) applies.
    /// [`Server::handle`] reloads it as it would a served one.
    pub fn into_tools(self) -> Result<Tools, CatalogError> {
        Ok(Tools::new(self.build_shared()?))
    }

    fn build_shared(self) -> Result<Arc<Shared>, CatalogError> {
        let (pkg_name, pkg_version) = default_package();
        let server_name = self.name.clone().unwrap_or(pkg_name);
        let catalog = self
            .catalog
            .server_name(server_name.clone())
            .require_state(true)
            .build()?;
        let mut implementation =
            Implementation::new(server_name, self.version.unwrap_or(pkg_version));
        implementation.title = self.title;
        #[allow(deprecated)] // logging: deprecated by SEP-2577, still used by every client era
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .build();
        let mut info = InitializeResult::new(capabilities).with_server_info(implementation);
        if let Some(text) = self.instructions {
            info = info.with_instructions(text);
        }
        tracing::info!(
            tools = catalog.tools().len(),
            server = %info.server_info.name,
            "catalog ready"
        );
        let shared = Arc::new(Shared {
            catalog: RwLock::new(Arc::new(catalog)),
            info,
            page_size: self.page_size,
            unknown_tool_as_result: self.unknown_tool_as_result,
            peers: Mutex::new(Vec::new()),
            subscriptions: Mutex::new(Vec::new()),
            next_subscription: std::sync::atomic::AtomicU64::new(0),
            reloading: tokio::sync::Mutex::new(()),
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
        // leaves malformed lines unanswered (see stdio.rs).
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        tracing::info!(
            "serving MCP on stdio: waiting for a client to send `initialize` on stdin \
             (JSON-RPC, one message per line; an MCP client starts this program itself)"
        );
        let running = match handler.serve(GuardedStdio::new(stdin, stdout)).await {
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

/// The package that declares the tools: the one named like the executable if there is one,
/// else the one with the most tools.
fn default_package() -> (String, String) {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()));
    let mut counts: Vec<((&str, &str), usize)> = Vec::new();
    for spec in crate::tool::registered() {
        let key = spec.origin.package;
        match counts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => counts.push((key, 1)),
        }
    }
    if let Some(exe) = &exe {
        if let Some(((name, version), _)) = counts.iter().find(|((n, _), _)| n == exe) {
            return (name.to_string(), version.to_string());
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    match counts.first() {
        Some(((name, version), _)) => (name.to_string(), version.to_string()),
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
