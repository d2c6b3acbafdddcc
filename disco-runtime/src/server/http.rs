//! Streamable HTTP: rmcp's tower service behind axum, with the checks a server on a network
//! needs and rmcp leaves to us (Origin allow-list on by default, bearer tokens, TCP_NODELAY).

use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use http::{header, HeaderValue, StatusCode};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq;

use super::{Error, McpHandler, Shared};
use crate::tool::Caller;

/// Decides who a bearer token belongs to. `None` refuses the request (HTTP 401).
pub trait TokenCheck: Send + Sync + 'static {
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
    pub fn new() -> Self {
        Self::default()
    }
    pub fn token(mut self, token: impl Into<String>, caller: Caller) -> Self {
        self.tokens.push((token.into().into_bytes(), caller));
        self
    }
    /// Reads `token=caller` pairs separated by commas (e.g. from an environment variable).
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
#[derive(Clone)]
pub struct HttpOptions {
    /// The URL path of the MCP endpoint.
    pub path: String,
    /// Accepted `Host` values (DNS-rebinding protection). Default: loopback names.
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
        }
    }
}

impl HttpOptions {
    pub fn stateless(mut self, yes: bool) -> Self {
        self.stateless = yes;
        self
    }
    pub fn bearer_auth(mut self, check: impl TokenCheck) -> Self {
        self.auth = Some(Arc::new(check));
        self
    }
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }
}

/// The axum router serving MCP at `options.path`; cancelling `stop` ends every session and
/// open stream.
pub(crate) fn router(
    shared: Arc<Shared>,
    options: &HttpOptions,
    stop: tokio_util::sync::CancellationToken,
) -> axum::Router {
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop)
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone())
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_legacy_session_mode(!options.stateless);
    if options.stateless {
        config = config.with_json_response(true);
    }
    let base = McpHandler::new(shared);
    let service = StreamableHttpService::new(
        move || Ok(base.for_session()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    // Malformed bodies get a JSON-RPC error with their id, not rmcp's plain-text 415; a
    // session DELETE gets 204.
    let guarded = super::guard::Guarded {
        inner: Arc::new(service),
        max_body_bytes: options.max_body_bytes,
    };
    let mut router = axum::Router::new().route_service(&options.path, guarded);
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
        options.path,
        if options.stateless {
            "stateless"
        } else {
            "sessions"
        }
    );
    // rmcp writes an SSE event and the end of the body separately: with Nagle on, every
    // call would stall ~40 ms waiting for the peer's delayed ACK.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await?;
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
