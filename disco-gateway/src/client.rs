//! One connection to an upstream as rmcp's client: the handler that hears the upstream's list
//! changes and log messages (its progress is relayed by the transport, relay.rs), the opening
//! of a connection (its child, or its HTTP transport, wrapped in the relay) within a timeout,
//! and why an opening failed, read from rmcp's typed errors. The upstream's main connection
//! (upstream.rs) and the callers' own (forward.rs) are opened here alike, by [`open`]. An HTTP
//! upstream's answers are read up to `disco.maxMessageBytes` alone ([`Http`]).

// Logging notifications are deprecated by SEP-2577 but still sent by servers of every era.
#![allow(deprecated)]

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::sync::Arc;
use std::time::Duration;

use disco_runtime::rmcp;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, LoggingMessageNotificationParam,
};
use rmcp::service::{ClientInitializeError, NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::process::ChildStderr;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::call::{Calls, Direct};
use crate::relay::{Heard, Relay};
use crate::wire::ChildStdio;

/// rmcp's client side of one connection: hears list changes and log messages (progress is
/// relayed by the transport, relay.rs).
pub(crate) struct Client {
    server: String,
    /// The calls running on this connection: its log messages go to them alone.
    calls: Arc<Calls>,
    /// Where a list change is told; `None` on a caller's own connection (the catalog comes
    /// from the main one).
    relist: Option<mpsc::UnboundedSender<()>>,
}

impl Client {
    /// The handler of a connection to `server` whose log messages go to `calls` and whose list
    /// changes are told on `relist`.
    fn new(server: String, calls: Arc<Calls>, relist: Option<mpsc::UnboundedSender<()>>) -> Self {
        Client {
            server,
            calls,
            relist,
        }
    }
}

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(relist) = &self.relist {
            let _ = relist.send(());
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::debug!(server = %self.server, "log message from upstream");
        self.calls.log(&self.server, params);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("disco-gateway", env!("CARGO_PKG_VERSION")),
        )
    }
}

pub(crate) type Running = RunningService<RoleClient, Client>;

/// The HTTP transport's configuration: the upstream's URL, the headers every request carries,
/// and the largest answer read (a JSON body or one SSE event), as for a stdio upstream's line.
fn http_config(
    url: &str,
    headers: HashMap<http::HeaderName, http::HeaderValue>,
    max_message: usize,
) -> StreamableHttpClientTransportConfig {
    #[cfg(feature = "tls")]
    install_tls();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
    config.max_json_response_size = max_message;
    config.max_sse_event_size = max_message;
    config
}

/// Installs ring's cryptography as the process's rustls provider, once, before the first HTTP
/// client is made (reqwest is built without a provider of its own, see Cargo.toml). One
/// installed already (by a program that embeds the gateway) is kept.
#[cfg(feature = "tls")]
pub(crate) fn install_tls() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // An error means a provider is installed already: that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Why a connection could not be initialized.
pub(crate) struct InitFailure {
    /// The upstream refused the credentials: rmcp's typed HTTP 401 (`AuthRequired`) or 403
    /// (`InsufficientScope`), never a guess from the error's text.
    pub(crate) refused: bool,
    /// What went wrong, for the log (it may name the upstream's address).
    pub(crate) detail: String,
}

impl InitFailure {
    fn of(e: &ClientInitializeError) -> Self {
        InitFailure {
            refused: e.auth_challenge().is_some() || e.is_authorization_required(),
            detail: format!("initialization failed: {e}"),
        }
    }
}

/// Initializes a connection within `timeout`; `cancel` ends it (also while it initializes).
async fn serve_within<T>(
    client: Client,
    transport: T,
    timeout: Duration,
    cancel: CancellationToken,
) -> Result<Running, InitFailure>
where
    T: rmcp::transport::Transport<RoleClient> + Send + 'static,
    T::Error: std::error::Error + Send + Sync + 'static,
{
    match tokio::time::timeout(timeout, client.serve_with_ct(transport, cancel)).await {
        Ok(Ok(running)) => Ok(running),
        Ok(Err(e)) => Err(InitFailure::of(&e)),
        Err(_) => Err(InitFailure {
            refused: false,
            detail: format!("did not initialize within {} ms", timeout.as_millis()),
        }),
    }
}

/// Which of a server's connections is opened.
pub(crate) enum Role {
    /// The upstream's main connection: its list changes are told on `relist`, and its opening
    /// counts as hearing from the server.
    Main { relist: mpsc::UnboundedSender<()> },
    /// A caller's own connection (forward.rs), beside the main one: its list changes are not
    /// heard (the catalog comes from the main connection); what it reads counts as heard from
    /// the server, its opening does not (a hung server is not taken for talking because callers
    /// keep trying to reach it).
    Beside,
}

impl Role {
    fn relay<T>(&self, transport: T, heard: Arc<Heard>) -> Relay<T> {
        match self {
            Role::Main { .. } => Relay::new(transport, heard),
            Role::Beside => Relay::beside(transport, heard),
        }
    }
}

/// Where a connection goes.
pub(crate) enum Endpoint<'a> {
    /// A child started by [`spawn`], over its stdio (boxed: the transport is many times the
    /// size of the other variant).
    Child(Box<ChildStdio>),
    /// A Streamable HTTP server, every request with `headers`; no answer over `max` bytes is
    /// read.
    Http {
        url: &'a str,
        headers: HashMap<http::HeaderName, http::HeaderValue>,
        max: usize,
        /// An OAuth server's sign-in (oauth.rs): its token on every request, refreshed before
        /// it expires and once after a 401, by rmcp's `AuthClient`.
        /// (Boxed: the manager is many times the size of the rest.)
        auth: Option<Box<rmcp::transport::auth::AuthorizationManager>>,
    },
}

/// The variables of the gateway's environment every stdio server is given: the official MCP
/// SDKs' default environment (Python's `get_default_environment`, TypeScript's
/// `getDefaultEnvironment`: HOME, LOGNAME, PATH, SHELL, TERM, USER; on Windows, the union of
/// their lists), with the locale and the temporary directory. Nothing else of the gateway's
/// environment reaches a server: not the `DISCO_INPUT_*` answers, not the variables named by
/// another server's `bearer_token_env_var` or `env_http_headers`, not the caller's secrets.
/// A server needs more: its `env` (or Codex's `env_vars`) names it.
#[cfg(not(windows))]
pub(crate) const INHERITED: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR",
];
#[cfg(windows)]
pub(crate) const INHERITED: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
];

/// The environment a stdio server starts with: of the gateway's, the [`INHERITED`] variables
/// that are set (a value that is a shell function's, `() {...`, left out, as the SDKs do),
/// then its own `env` over them.
pub(crate) fn child_env(
    own: &BTreeMap<String, String>,
    gateway: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> BTreeMap<std::ffi::OsString, std::ffi::OsString> {
    let mut out = BTreeMap::new();
    for name in INHERITED {
        if let Some(value) = gateway(name) {
            if !value.as_encoded_bytes().starts_with(b"()") {
                out.insert(name.into(), value);
            }
        }
    }
    for (k, v) in own {
        out.insert(k.into(), v.into());
    }
    out
}

/// Starts an upstream's child in a process group of its own (`npx` and shell wrappers start the
/// server as a grandchild, which must end with it), killed when its transport is dropped;
/// returns the transport, which reads no message over `max_line` bytes, and the child's stderr.
pub(crate) fn spawn(
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&str>,
    max_line: usize,
) -> io::Result<(ChildStdio, Option<ChildStderr>)> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args)
        .env_clear()
        .envs(child_env(env, |k| std::env::var_os(k)));
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    cmd.kill_on_drop(true);
    ChildStdio::spawn(cmd, max_line)
}

/// Opens a connection to `server` at `endpoint` as `role` says: its transport wrapped in the
/// relay (`heard` is the server's), initialized within `timeout`, served until `close` is
/// cancelled or the upstream ends it (the caller keeps the service running). Its log messages
/// go to `calls`. A child's connection comes with the way its `tools/call` takes beside
/// rmcp's loop (call.rs's [`Direct`]).
pub(crate) async fn open(
    server: &str,
    endpoint: Endpoint<'_>,
    role: Role,
    calls: Arc<Calls>,
    heard: Arc<Heard>,
    timeout: Duration,
    close: CancellationToken,
) -> Result<(Running, Option<Arc<Direct>>), InitFailure> {
    let relist = match &role {
        Role::Main { relist } => Some(relist.clone()),
        Role::Beside => None,
    };
    let client = Client::new(server.to_string(), calls, relist);
    match endpoint {
        Endpoint::Child(child) => {
            let writer = child.writer();
            let relay = role.relay(*child, heard);
            let answers = relay.answers();
            let info = client.get_info();
            let running = serve_within(client, relay, timeout, close).await?;
            let meta = request_meta(&running, info);
            Ok((running, Some(Arc::new(Direct::new(writer, answers, meta)))))
        }
        Endpoint::Http {
            url,
            headers,
            max,
            auth,
        } => {
            // The configuration first: whatever it sets up for HTTP comes before the client.
            let config = http_config(url, headers, max);
            match auth {
                None => {
                    let transport = StreamableHttpClientTransport::with_client(Http::new(), config);
                    serve_within(client, role.relay(transport, heard), timeout, close).await
                }
                Some(manager) => {
                    let signed = rmcp::transport::auth::AuthClient::new(Http::new(), *manager);
                    let transport = StreamableHttpClientTransport::with_client(signed, config);
                    serve_within(client, role.relay(transport, heard), timeout, close).await
                }
            }
            .map(|running| (running, None))
        }
    }
}

/// What rmcp's peer puts in the `_meta` of every request on `running`: on a protocol without
/// `initialize` (2026-07-28 on), the version the server answered with and the client's name
/// and capabilities (rmcp's `ClientRequestMetadata`, set when the server answers `initialize`
/// with such a version); nothing on an initialized connection.
fn request_meta(running: &Running, info: ClientConfig) -> Option<rmcp::model::RequestMetaObject> {
    let server = running.peer().peer_info()?;
    if server.protocol_version.has_initialize() {
        return None;
    }
    let mut meta = rmcp::model::RequestMetaObject::new();
    meta.set_protocol_version(server.protocol_version.clone());
    meta.set_client_info(info.client_info);
    meta.set_client_capabilities(info.capabilities);
    Some(meta)
}

/// The HTTP client of the upstream connections: rmcp's own over reqwest, built as rmcp builds
/// its default one, with one change. rmcp ends the whole connection when an SSE event of an
/// answer is over the size limit (it takes the stream for broken); here the answer stream of
/// a request ends instead with a JSON-RPC error for that request naming the limit, and the
/// connection serves on, as for an answer over the limit in a JSON body.
#[derive(Clone)]
struct Http(reqwest::Client);

type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;
type Headers = HashMap<http::HeaderName, http::HeaderValue>;
type Events = futures_util::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;

impl Http {
    /// rmcp's default client (its `default_http_client`, private): no idle connections kept (a
    /// reused one stalls on delayed ACKs), and only same-origin 307 and 308 redirects followed,
    /// at most 10 (others would drop the body or send the headers elsewhere).
    fn new() -> Self {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > 10 {
                attempt.error("more than 10 redirects")
            } else {
                attempt.follow()
            }
        });
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(redirects)
            .build()
            // Fails only where no TLS backend or resolver can start; rmcp's own panics there.
            .unwrap_or_default();
        Http(client)
    }
}

impl rmcp::transport::streamable_http_client::StreamableHttpClient for Http {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Result<rmcp::transport::streamable_http_client::StreamableHttpPostResponse, HttpError>
    {
        self.0
            .post_message(uri, message, session_id, auth_header, headers)
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        headers: Headers,
        limits: rmcp::transport::streamable_http_client::StreamableHttpResponseLimits,
    ) -> Result<rmcp::transport::streamable_http_client::StreamableHttpPostResponse, HttpError>
    {
        use rmcp::transport::streamable_http_client::StreamableHttpPostResponse as Post;
        let request = match &message {
            rmcp::model::JsonRpcMessage::Request(request) => Some(Asked {
                id: request.id.clone(),
                call: matches!(
                    request.request,
                    rmcp::model::ClientRequest::CallToolRequest(_)
                ),
            }),
            _ => None,
        };
        let max = limits.max_sse_event_size;
        let response = self
            .0
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                headers,
                limits,
            )
            .await?;
        Ok(match (response, request) {
            (Post::Sse(events, session), Some(asked)) => {
                Post::Sse(over_limit_answered(events, asked, max), session)
            }
            (response, _) => response,
        })
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Result<(), HttpError> {
        self.0
            .delete_session(uri, session_id, auth_header, headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Result<Events, HttpError> {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        headers: Headers,
        max: usize,
    ) -> Result<Events, HttpError> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                headers,
                max,
            )
            .await
    }
}

/// The request whose answer an SSE stream carries.
struct Asked {
    id: rmcp::model::RequestId,
    /// A `tools/call`: its answer over the limit is a tool error, as over stdio (wire.rs).
    call: bool,
}

/// The events of the answer to request `asked`, ending with its answer when an event is over
/// the limit (`max` bytes): a tool error naming the size and the limit for a `tools/call`, as
/// a stdio upstream's line over the limit gets (wire.rs), a JSON-RPC error for another request.
///
/// The size is "at least" one byte over the limit: rmcp's client stops reading the event there
/// and ends the stream, so the rest is never seen (counting it would take a POST of the
/// gateway's own, beside rmcp's). rmcp's error for it is private: it is known by its text,
/// which the hostile suite holds to (`a_result_over_the_limit_from_an_http_upstream_...`).
fn over_limit_answered(events: Events, asked: Asked, max: usize) -> Events {
    use futures_util::StreamExt as _;
    events
        .scan(false, move |ended, event| {
            if *ended {
                return std::future::ready(None);
            }
            let over = matches!(&event, Err(sse_stream::Error::Body(e))
                if e.to_string().starts_with("SSE event exceeded the maximum size"));
            if !over {
                return std::future::ready(Some(event));
            }
            *ended = true;
            tracing::error!(max, "upstream: an SSE event over the limit, not read");
            let answer = over_limit_answer(&asked, max);
            let data = serde_json::to_string(&answer).unwrap_or_default();
            std::future::ready(Some(Ok(sse_stream::Sse::default()
                .event("message")
                .data(data))))
        })
        .boxed()
}

/// The answer the gateway gives in place of one over the limit (`max` bytes) to `asked`.
fn over_limit_answer(asked: &Asked, max: usize) -> rmcp::model::ServerJsonRpcMessage {
    use rmcp::model::{CallToolResult, ContentBlock, ServerJsonRpcMessage, ServerResult};
    let why = crate::wire::over_limit(None, max);
    if asked.call {
        let error = CallToolResult::error(vec![ContentBlock::text(why)]);
        ServerJsonRpcMessage::response(ServerResult::CallToolResult(error), asked.id.clone())
    } else {
        ServerJsonRpcMessage::error(
            rmcp::model::ErrorData::internal_error(why, None),
            Some(asked.id.clone()),
        )
    }
}

#[cfg(test)]
mod tests;
