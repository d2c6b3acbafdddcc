//! Streamable HTTP: rmcp's tower service behind axum, with the checks a server on a network
//! needs and rmcp leaves to us (Origin allow-list on by default, bearer tokens, TCP_NODELAY).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, StatusCode};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq;

use super::sessions::Sessions;
use super::{Error, McpHandler, Shared};
use crate::tool::Caller;

/// Decides who a bearer token belongs to. `None` refuses the request (HTTP 401).
pub trait TokenCheck: Send + Sync + 'static {
    /// The caller `token` identifies (the `Authorization` header's text after `Bearer`,
    /// trimmed), or `None` to refuse it.
    /// Called on every request, so it should be quick (a lookup, not a network round trip).
    fn caller_for(&self, token: &str) -> Option<Caller>;
}

impl<F> TokenCheck for F
where
    F: Fn(&str) -> Option<Caller> + Send + Sync + 'static,
{
    fn caller_for(&self, token: &str) -> Option<Caller> {
        self(token)
    }
}

/// A fixed set of bearer tokens, each naming a caller. Tokens are compared in constant time,
/// and every entry is compared, so the time taken does not reveal which one nearly matched.
#[derive(Clone, Default)]
pub struct BearerTokens {
    tokens: Vec<(Vec<u8>, Caller)>,
}

impl BearerTokens {
    /// No tokens yet: every request is refused until some are added.
    pub fn new() -> Self {
        Self::default()
    }
    /// Accepts `token` as `caller` (a token given twice names the last caller).
    pub fn token(mut self, token: impl Into<String>, caller: Caller) -> Self {
        self.tokens.push((token.into().into_bytes(), caller));
        self
    }
    /// Reads `token=caller` pairs separated by commas (e.g. from an environment variable); a
    /// token without `=caller` is its own caller id.
    pub fn parse(spec: &str) -> Self {
        let mut tokens = BearerTokens::new();
        for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (token, caller) = pair.split_once('=').unwrap_or((pair, pair));
            tokens = tokens.token(token.trim(), Caller::new(caller.trim()));
        }
        tokens
    }
}

impl TokenCheck for BearerTokens {
    fn caller_for(&self, token: &str) -> Option<Caller> {
        let mut found = None;
        for (known, caller) in &self.tokens {
            if bool::from(known.as_slice().ct_eq(token.as_bytes())) {
                found = Some(caller.clone());
            }
        }
        found
    }
}

/// Options of the Streamable HTTP transport.
///
/// The limits on connections, sessions and slow clients hold before any bearer token is
/// checked: a client without a token can open connections and send bytes, nothing more.
///
/// Build it from [`HttpOptions::default`] with the setters; fields may be added in any
/// release.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The URL path of the MCP endpoint, taken literally (default `/mcp`; a missing leading
    /// `/` is added).
    pub path: String,
    /// Accepted `Host` values (DNS-rebinding protection). Default: loopback names. An entry
    /// without a port accepts any port. An absolute-form request target (`POST http://h/mcp`)
    /// must name an accepted host too: its authority is the one that counts.
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` values; requests without `Origin` (non-browser clients) pass.
    /// Default: loopback origins on any port.
    pub allowed_origins: Vec<String>,
    /// Sessions for clients of the initialize-based protocol versions (default), or
    /// stateless: every request stands alone, so any number of processes can serve one client.
    pub stateless: bool,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// When set, every request needs `Authorization: Bearer <token>`, and the token decides
    /// the caller.
    pub auth: Option<Arc<dyn TokenCheck>>,
    /// How long a client has to send a request's whole head (request line and headers),
    /// counted from when the server starts waiting for it, which includes the idle time of a
    /// keep-alive connection between requests. A client that takes longer gets 408 and its
    /// connection is closed. Default 10 s.
    pub header_read_timeout: Duration,
    /// How long a client has to send a request's whole body once its head arrived. A client
    /// that takes longer gets 408 with a JSON-RPC error and its connection is closed.
    /// Default 30 s (4 MiB at about 140 KB/s).
    pub body_read_timeout: Duration,
    /// Connections open at once. When all are taken, a new connection closes the oldest one
    /// that is waiting for a request (idle, or still sending its head); if every connection
    /// is in the middle of a request, the new one is closed at once. Default: three quarters
    /// of the process's open-file limit (`ulimit -n`) above 64 kept for everything else,
    /// between 16 and 16,384 (1,024 where the limit cannot be read).
    pub max_connections: usize,
    /// Sessions open at once (sessions mode). An `initialize` beyond it gets 503 with a
    /// JSON-RPC error and `Retry-After`, until a session is deleted or idles out. Default:
    /// enough for 1/64 of the machine's memory at 64 KiB per session (BENCHMARKS.md measures
    /// about that), between 256 and 16,384 (1,024 where the memory size cannot be read).
    pub max_sessions: usize,
    /// The memory, in bytes, that requests in flight may take together, as charged from their
    /// bodies. Before a byte of its body is read, a POST reserves the most its body can cost
    /// (its `Content-Length`, or the body limit when it declares none, at about 133 bytes per
    /// byte of body, capped by the value budget: 46.6 MB for a body at the default limits)
    /// and holds it until its answer has been sent. A request that finds no room waits at
    /// most 1 s, reading nothing, then gets 503 with a JSON-RPC error and `Retry-After: 1`.
    /// Bodies over 64 KiB may take three quarters of the budget, so that a flood of them
    /// cannot hold up small requests. `None` (the default): room for four requests at the most one can
    /// cost, 186.5 MB at the default limits (fewer when `max_connections` is below four).
    /// See SECURITY.md ("HTTP") for the memory ceiling this gives.
    pub request_memory: Option<usize>,
    /// A rate limit per caller (per bearer token's caller; anonymous requests share one):
    /// a POST whose requests are over it gets 429 with a JSON-RPC error and `Retry-After`,
    /// before rmcp parses it; notifications and responses cost nothing (see [`RateLimit`]
    /// for what counts). Off by default.
    ///
    /// [`RateLimit`]: super::RateLimit
    pub rate_limit: Option<super::RateLimit>,
    /// Runs a session's `tools/call` beside rmcp's session worker and service loop, answered
    /// as the POST's JSON body: six hand-offs between tasks fewer a call. Off by default: a
    /// request a tool sends the client during such a call (elicitation, sampling) goes out on
    /// the session's standalone GET stream rather than on the call's own, where a client that
    /// opened no such stream never reads it. And an answer slower than 250 ms comes as an event
    /// stream of keep-alives and then the answer, where rmcp's path sends one a client can
    /// resume: a client whose connection breaks during a long call sends it again. For servers
    /// whose tools send the client no requests (disco-gateway turns it on). Calls with a
    /// progress token, and requests of protocol 2026-07-28, go through rmcp either way.
    pub calls_beside: bool,
    /// How long a request that finds no room in [`request_memory`](Self::request_memory)
    /// waits before its 503: 1 s.
    memory_wait: Duration,
    /// With [`calls_beside`](Self::calls_beside): how long a session no request names stays
    /// open (rmcp's five minutes).
    session_idle: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            path: "/mcp".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: vec![
                "http://localhost:*".into(),
                "http://127.0.0.1:*".into(),
                "http://[::1]:*".into(),
                "https://localhost:*".into(),
                "https://127.0.0.1:*".into(),
                "https://[::1]:*".into(),
            ],
            stateless: false,
            max_body_bytes: 4 * 1024 * 1024,
            auth: None,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            max_connections: default_max_connections(),
            max_sessions: default_max_sessions(),
            request_memory: None,
            rate_limit: None,
            calls_beside: false,
            memory_wait: super::memory::WAIT,
            session_idle: super::sessions::IDLE,
        }
    }
}

/// Three quarters of the open-file limit above a reserve of 64.
fn default_max_connections() -> usize {
    #[cfg(unix)]
    {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        if let Some(soft) = limit.current {
            let usable = usize::try_from(soft)
                .unwrap_or(usize::MAX)
                .saturating_sub(64);
            return (usable / 4 * 3).clamp(16, 16_384);
        }
    }
    1_024
}

/// 1/64 of the machine's memory at 64 KiB per session.
fn default_max_sessions() -> usize {
    #[cfg(target_os = "linux")]
    {
        let info = rustix::system::sysinfo();
        // `totalram` is a C `unsigned long`: 32 bits on 32-bit targets.
        #[allow(clippy::useless_conversion)]
        let bytes = u64::from(info.totalram).saturating_mul(u64::from(info.mem_unit.max(1)));
        if bytes > 0 {
            let sessions = bytes / 64 / (64 * 1024);
            return usize::try_from(sessions)
                .unwrap_or(usize::MAX)
                .clamp(256, 16_384);
        }
    }
    1_024
}

impl HttpOptions {
    /// Sets [`path`](Self::path).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }
    /// Sets [`stateless`](Self::stateless).
    pub fn stateless(mut self, yes: bool) -> Self {
        self.stateless = yes;
        self
    }
    /// Requires a bearer token on every request, checked by `check` ([`auth`](Self::auth)).
    pub fn bearer_auth(mut self, check: impl TokenCheck) -> Self {
        self.auth = Some(Arc::new(check));
        self
    }
    /// Replaces [`allowed_hosts`](Self::allowed_hosts); an empty list accepts every host.
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }
    /// Replaces [`allowed_origins`](Self::allowed_origins) (`http://app.example.com:*` for
    /// any port); an empty list accepts every origin.
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }
    /// Sets [`max_body_bytes`](Self::max_body_bytes) (default 4 MiB); a larger body gets 413.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }
    /// Sets [`header_read_timeout`](Self::header_read_timeout).
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }
    /// Sets [`body_read_timeout`](Self::body_read_timeout).
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }
    /// Sets [`max_connections`](Self::max_connections) (at least 1).
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.max(1);
        self
    }
    /// Sets [`max_sessions`](Self::max_sessions) (at least 1).
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions.max(1);
        self
    }
    /// Sets [`request_memory`](Self::request_memory), in bytes (at least 1; a request that
    /// costs more than the whole budget runs alone).
    pub fn request_memory(mut self, bytes: usize) -> Self {
        self.request_memory = Some(bytes.max(1));
        self
    }
    /// The memory requests in flight may take together, in bytes:
    /// [`request_memory`](Self::request_memory), or its default for these options and a
    /// catalog whose calls may hold `max_argument_values` values
    /// ([`crate::CatalogBuilder::max_argument_values`]).
    pub fn request_memory_budget(&self, max_argument_values: usize) -> usize {
        self.request_memory.unwrap_or_else(|| {
            self.body_cost(max_argument_values)
                .default_budget(self.max_connections)
        })
    }
    /// What a request whose body declares `len` bytes is charged in
    /// [`request_memory`](Self::request_memory), for a catalog whose calls may hold
    /// `max_argument_values` values.
    #[doc(hidden)]
    pub fn request_cost(&self, max_argument_values: usize, len: usize) -> usize {
        self.body_cost(max_argument_values).of(len)
    }
    /// How long a request that finds no room in [`request_memory`](Self::request_memory)
    /// waits before its 503 (default 1 s): longer for a test that must see a request wait,
    /// on a machine too busy to keep within a second.
    #[doc(hidden)]
    pub fn request_memory_wait(mut self, wait: Duration) -> Self {
        self.memory_wait = wait;
        self
    }
    /// With [`calls_beside`](Self::calls_beside), how long a session no request names stays
    /// open (default five minutes, rmcp's): shorter for a test that must see a session end.
    #[doc(hidden)]
    pub fn session_idle(mut self, idle: Duration) -> Self {
        self.session_idle = idle.max(Duration::from_millis(1));
        self
    }
    fn body_cost(&self, max_argument_values: usize) -> super::memory::BodyCost {
        super::memory::BodyCost::new(
            self.max_body_bytes,
            super::guard::message_values(max_argument_values),
        )
    }
    /// Sets [`calls_beside`](Self::calls_beside).
    pub fn calls_beside(mut self, yes: bool) -> Self {
        self.calls_beside = yes;
        self
    }
    /// Sets [`rate_limit`](Self::rate_limit): `limit` per caller, or `None` for no limit.
    pub fn rate_limit(mut self, limit: Option<super::RateLimit>) -> Self {
        self.rate_limit = limit;
        self
    }
}

/// `path` as an axum route that matches it literally: with a leading `/`, and braces doubled
/// so that `{id}` is not taken for a parameter (axum refuses a malformed route by panicking).
fn route_path(path: &str) -> String {
    served_path(path).replace('{', "{{").replace('}', "}}")
}

/// A router whose routes are taken as written: a segment starting with `:` or `*` is literal
/// too, not refused (by a panic) as the capture syntax of axum 0.7.
fn literal_router() -> axum::Router {
    axum::Router::new().without_v07_checks()
}

/// The path served for `path`: with a leading `/`.
fn served_path(path: &str) -> std::borrow::Cow<'_, str> {
    if path.starts_with('/') {
        path.into()
    } else {
        format!("/{path}").into()
    }
}

/// The axum router serving MCP at `options.path`; cancelling `stop` ends every session and
/// open stream.
pub(crate) fn router(
    shared: Arc<Shared>,
    options: &HttpOptions,
    stop: tokio_util::sync::CancellationToken,
) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop)
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone())
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_legacy_session_mode(!options.stateless)
        // rmcp reads this only where it serves a request without a session: every request
        // when stateless, and with sessions the requests of protocol 2026-07-28 (which has
        // none). A session's own requests are answered as JSON by `json_answer`.
        .with_json_response(true);
    let max_argument_values = shared.catalog().max_argument_values();
    let max_message_values = super::guard::message_values(max_argument_values);
    let cost = options.body_cost(max_argument_values);
    let budget = super::memory::Budget::new(options.request_memory_budget(max_argument_values));
    let base = McpHandler::of(shared);
    // With calls beside rmcp's loop, the idle sessions are ended by a task of the runtime
    // serving them (sessions.rs): rmcp's worker no longer sees every request.
    let runtime = (options.calls_beside && !options.stateless)
        .then(|| tokio::runtime::Handle::try_current().ok())
        .flatten();
    let sessions = Arc::new(Sessions::new(options.max_sessions, runtime.is_some()));
    let beside = runtime.map(|runtime| {
        runtime.spawn(Sessions::end_idle(
            Arc::downgrade(&sessions),
            options.session_idle,
            options.session_idle / 8,
        ));
        super::guard::Beside {
            registry: super::http_calls::Registry {
                sessions: sessions.clone(),
                own: base.handler.clone(),
            },
            hosts: super::headers::HeaderRules::new(&options.allowed_hosts),
        }
    });
    let stateless = options.stateless;
    // Stateless HTTP has no sessions: its calls are recorded without one (no sequence).
    let service = StreamableHttpService::new(
        move || {
            Ok(if stateless {
                base.without_session()
            } else {
                base.for_session()
            })
        },
        sessions.clone(),
        config,
    );
    // Malformed bodies get a JSON-RPC error with their id, not rmcp's plain-text 415; a
    // session DELETE gets 204; a session answers only to its creator.
    let guarded = super::guard::Guarded {
        inner: Arc::new(service),
        max_body_bytes: options.max_body_bytes,
        body_read_timeout: options.body_read_timeout,
        max_message_values,
        sessions: (!options.stateless).then_some(sessions),
        beside,
        budget,
        cost,
        memory_wait: options.memory_wait,
        rate: options
            .rate_limit
            .map(|limit| Arc::new(super::rate::Limiter::new(limit))),
    };
    let mut router = literal_router().route_service(&route_path(&options.path), guarded);
    if let Some(auth) = options.auth.clone() {
        router = router.layer(axum::middleware::from_fn(move |req, next| {
            authenticate(auth.clone(), req, next)
        }));
    }
    router
}

async fn authenticate(auth: Arc<dyn TokenCheck>, mut req: Request, next: Next) -> Response {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
    match token.and_then(|t| auth.caller_for(t)) {
        Some(caller) => {
            req.extensions_mut().insert(caller);
            next.run(req).await
        }
        None => {
            let mut response =
                (StatusCode::UNAUTHORIZED, "missing or invalid bearer token").into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            response
        }
    }
}

pub(crate) async fn serve(
    shared: Arc<Shared>,
    options: HttpOptions,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let addr = listener.local_addr()?;
    // Streams that never end on their own (a session's GET stream, `subscriptions/listen`)
    // would keep the graceful shutdown waiting: they are ended when it starts.
    let stop = tokio_util::sync::CancellationToken::new();
    let app = router(shared, &options, stop.clone());
    let shutdown = async move {
        shutdown.await;
        stop.cancel();
    };
    tracing::info!(
        "serving MCP over Streamable HTTP at http://{addr}{} ({})",
        served_path(&options.path),
        if options.stateless {
            "stateless"
        } else {
            "sessions"
        }
    );
    let limits = super::conn::Limits {
        header_read_timeout: options.header_read_timeout,
        max_connections: options.max_connections,
        headers: super::headers::HeaderRules::new(&options.allowed_hosts),
        write_stall: None,
    };
    super::conn::serve(listener, app, limits, shutdown).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_name_their_caller() {
        let tokens = BearerTokens::parse("s3cret=alice, other=bob");
        assert_eq!(tokens.caller_for("s3cret"), Some(Caller::new("alice")));
        assert_eq!(tokens.caller_for("other"), Some(Caller::new("bob")));
        assert_eq!(tokens.caller_for("s3cre"), None);
        assert_eq!(tokens.caller_for(""), None);
    }
}

#[cfg(test)]
mod route_tests {
    use super::{literal_router, route_path};

    #[test]
    fn any_path_is_a_literal_route() {
        let paths = [
            "", "mcp", "/mcp", "/a/{b}", "/{*rest}", "/a}", "{", "/:x", "/*x", "/a/:b/*c", "/a//b",
            "/é", "/a b", "/%7B", "/a?b", "/a#b",
        ];
        for p in paths {
            let route = route_path(p);
            let built = std::panic::catch_unwind(|| {
                literal_router().route(&route, axum::routing::get(|| async {}))
            });
            assert!(built.is_ok(), "{p:?} as {route:?}");
            assert!(route.starts_with('/'), "{route:?}");
        }
        assert_eq!(route_path("mcp"), "/mcp");
        assert_eq!(route_path("/a/{b}"), "/a/{{b}}");
    }
}
