//! OAuth sign-in to an upstream (`"oauth"` on a URL server), on rmcp's `auth` support: the
//! protocol is rmcp's (protected-resource metadata, RFC 9728; authorization server metadata,
//! RFC 8414; dynamic client registration, RFC 7591; the authorization code with PKCE; refresh
//! before expiry and after a 401), and this module is the glue around it:
//!
//! - the tokens of each server in one file of the state directory (`oauth/<server>.json`,
//!   the directory 0700, the file 0600, written whole), as rmcp's [`CredentialStore`];
//! - `disco-gateway login <server>` ([`login`]): the browser step, the redirect heard on a
//!   loopback port;
//! - the manager a connection is opened with ([`manager`]), from the stored tokens, and the
//!   answer a caller gets when there are none or they are refused: sign in again.
//!
//! No token, code or secret is ever in a log line or an error's text: rmcp's own debug lines
//! of the code exchange are turned off where the gateway sets up its log (main.rs).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use disco_runtime::rmcp;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    CredentialRefreshGuard, CredentialStore, OAuthClientConfig, StoredCredentials,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::config::OAuthConfig;

/// The file of `server`'s tokens in the state directory `state`.
pub fn token_file(state: &Path, server: &str) -> PathBuf {
    state
        .join("oauth")
        .join(format!("{}.json", crate::pins::file_name(server)))
}

/// What a caller is told when `server` has no usable sign-in.
pub fn sign_in_again(server: &str, why: &str) -> String {
    format!("{why}: sign in again with `disco-gateway login {server}`")
}

/// What a caller is told when `server`, signed in to only when it asks, asks: to sign in.
pub fn sign_in_first(server: &str) -> String {
    format!(
        "the server asks for credentials: sign in with `disco-gateway login {server}` (OAuth), \
         or give its entry the `headers` it takes"
    )
}

/// Whether the token file at `path` is one `login` wrote for the server at `url`: there, and
/// not another URL's. A file that cannot be read counts (the connection then says why).
pub fn kept_for(path: &Path, url: &str) -> bool {
    !matches!(TokenFile::new(path.to_path_buf(), url).read(), Ok(None))
}

/// One server's tokens in their file, as rmcp's credential store: read on every use, so that
/// what `login` writes is what the next request sends.
pub struct TokenFile {
    path: PathBuf,
    /// The server's URL the tokens are for: tokens kept for another URL (the server's `url`
    /// changed since `login`) are not sent to this one.
    resource: String,
    /// The grant its saves record: `None` keeps the file's own (a refresh), `Some` is a new
    /// one (`login`'s code exchange).
    grant: Option<String>,
}

/// The file's content: rmcp's credentials, and the grant they belong to. A grant is one
/// `login`: its refreshes keep it, so that a running connection, which refreshes by itself,
/// tells a refresh (nothing to do) from a new sign-in (start again with it).
#[derive(serde::Serialize, serde::Deserialize)]
struct Kept {
    #[serde(default)]
    resource: String,
    #[serde(default)]
    grant: String,
    #[serde(flatten)]
    credentials: StoredCredentials,
}

impl TokenFile {
    /// The store a connection refreshes through: its saves keep the file's grant.
    pub fn new(path: PathBuf, resource: &str) -> Self {
        TokenFile {
            path,
            resource: resource.to_string(),
            grant: None,
        }
    }

    /// The store of a `login`: what it saves is a new grant.
    pub fn new_grant(path: PathBuf, resource: &str) -> Self {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let grant = format!("{:x}-{:x}", now.as_nanos(), std::process::id());
        TokenFile {
            path,
            resource: resource.to_string(),
            grant: Some(grant),
        }
    }

    /// The file's content; `None` when there is no file, or its tokens are another URL's.
    fn read(&self) -> Result<Option<Kept>, AuthError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.failed("cannot be read", e)),
        };
        // serde_json's error names a line and column, never the text there (a token).
        let kept: Kept = serde_json::from_slice(&bytes)
            .map_err(|e| self.failed("is not a token file", e.classify_text()))?;
        Ok((kept.resource == self.resource).then_some(kept))
    }

    fn failed(&self, what: &str, e: impl std::fmt::Display) -> AuthError {
        AuthError::CredentialStoreError(format!("{} {what}: {e}", self.path.display()))
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.read()?.map(|kept| kept.credentials))
    }

    /// Called with the refresh guard held (rmcp's refresh, `login`), so the grant read here
    /// is not changed before the file is replaced.
    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let grant = match &self.grant {
            Some(grant) => grant.clone(),
            None => self
                .read()
                .ok()
                .flatten()
                .map(|k| k.grant)
                .unwrap_or_default(),
        };
        let kept = Kept {
            resource: self.resource.clone(),
            grant,
            credentials,
        };
        let bytes = serde_json::to_vec_pretty(&kept)
            .map_err(|e| self.failed("cannot be written", e.classify_text()))?;
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            if let Some(dir) = path.parent() {
                disco_runtime::util::private_dir(dir)?;
            }
            crate::pins::write_whole(&path, &bytes, None)
        })
        .await
        .map_err(|e| self.failed("cannot be written", e))?
        .map_err(|e| self.failed("cannot be written", e))
    }

    /// One refresh at a time across processes (two gateways of one user, or a gateway and
    /// `login`): a refresh token the server rotates is used once. rmcp loads the tokens
    /// again once this is held, so the second refresh starts from the first one's tokens.
    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let path = self.path.clone();
        let held = tokio::task::spawn_blocking(move || {
            if let Some(dir) = path.parent() {
                disco_runtime::util::private_dir(dir)?;
            }
            crate::pins::lock_file(&path.with_extension("lock"))
        })
        .await
        .map_err(|e| self.failed("cannot be locked", e))?
        .map_err(|e| self.failed("cannot be locked", e))?;
        Ok(Some(CredentialRefreshGuard::new(held)))
    }

    /// The server refused the refresh token for good (`invalid_grant`): its tokens are
    /// dropped, so that no request tries it again; the client stays (a `login` reuses it).
    /// Called with the refresh guard held; tokens a `login` saved since are left alone.
    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        let Some(now) = self.read()? else {
            return Ok(());
        };
        let same = |c: &StoredCredentials| serde_json::to_value(&c.token_response).ok();
        if same(&now.credentials) != same(credentials) {
            return Ok(());
        }
        let mut dropped = now.credentials;
        dropped.token_response = None;
        dropped.granted_scopes.clear();
        dropped.token_received_at = None;
        self.save(dropped).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match tokio::fs::remove_file(&self.path).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(self.failed("cannot be removed", e)),
        }
    }
}

/// What of a serde_json error may be said: its kind and place, never the text it read.
trait Classified {
    fn classify_text(&self) -> String;
}

impl Classified for serde_json::Error {
    fn classify_text(&self) -> String {
        format!(
            "{:?} error at line {} column {}",
            self.classify(),
            self.line(),
            self.column()
        )
    }
}

/// The token file as a running connection depends on it: the grant (one `login`), the
/// client and the authorization server. A refresh changes none of these.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Signed {
    grant: String,
    client_id: String,
    issuer: Option<String>,
}

/// What the token file at `path` is now: the stamp of the file (time, length, inode: a write
/// ends in a rename) and, when it can be read, what a connection depends on.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Seen {
    resource: String,
    stamp: Option<(SystemTime, u64, u64)>,
    signed: Option<Signed>,
}

impl Seen {
    /// The file at `path` of the tokens for `resource`.
    pub fn now(path: &Path, resource: &str) -> Self {
        let stamp = Seen::now_stamp(path);
        let signed = stamp.and_then(|_| {
            let kept = TokenFile::new(path.to_path_buf(), resource).read().ok()??;
            Some(Signed {
                grant: kept.grant,
                client_id: kept.credentials.client_id,
                issuer: kept.credentials.issuer,
            })
        });
        Seen {
            resource: resource.to_string(),
            stamp,
            signed,
        }
    }

    /// Whether the file now holds another sign-in than `self` saw (a `login`, another client,
    /// another authorization server, or no tokens); `self` takes the new stamp either way.
    pub fn signed_in_again(&mut self, path: &Path) -> bool {
        if Seen::now_stamp(path) == self.stamp {
            return false;
        }
        let now = Seen::now(path, &self.resource);
        let again = now.signed != self.signed;
        *self = now;
        again
    }

    fn now_stamp(path: &Path) -> Option<(SystemTime, u64, u64)> {
        let meta = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Some((meta.modified().ok()?, meta.len(), inode))
    }
}

/// Waits until the token file at `path` holds another sign-in than `seen` (polled every
/// 500 ms): a refresh, this process's or another's, is not one.
pub async fn signed_in_again(path: &Path, mut seen: Seen) {
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        if seen.signed_in_again(path) {
            return;
        }
    }
}

/// The redirect URI of a loopback listener on `port` (RFC 8252, section 7.3).
fn redirect_uri(port: u16) -> String {
    format!("http://127.0.0.1:{port}/callback")
}

/// The manager a connection to `server` at `url` is opened with: the tokens of `file`, the
/// authorization server found from the server's metadata, the configured client's secret.
/// An error is the text a caller is shown: no tokens (sign in), or why the gateway could not
/// use them.
pub async fn manager(
    server: &str,
    url: &str,
    file: PathBuf,
    oauth: &OAuthConfig,
) -> Result<AuthorizationManager, String> {
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| format!("OAuth: {e}"))?;
    manager.set_credential_store(TokenFile::new(file, url));
    match manager.initialize_from_store().await {
        Ok(true) => {}
        Ok(false) => return Err(sign_in_again(server, "not signed in")),
        Err(e) => return Err(format!("OAuth: {e}")),
    }
    if let (Some(id), Some(secret)) = (&oauth.client_id, &oauth.client_secret) {
        // rmcp keeps the client id with the tokens, not the secret a refresh needs.
        let client = OAuthClientConfig::new(id.clone(), redirect_uri(0))
            .with_client_secret(secret.clone())
            .with_scopes(oauth.scopes.clone());
        manager
            .configure_client(client)
            .map_err(|e| format!("OAuth: {e}"))?;
    }
    Ok(manager)
}

/// `disco-gateway login <server>` for a server of `config`, its tokens kept in the state
/// directory `state`.
pub async fn login_server(
    config: &crate::config::Config,
    server: &str,
    state: &Path,
    show: impl FnOnce(&str),
) -> Result<String, String> {
    if config.left_out.iter().any(|s| s == server) {
        return Err(format!(
            "login: `{}` is not served: the configuration disables it (`\"disabled\": true`), \
             or it is of a kind the gateway leaves out (`disco-gateway lint` says why)",
            crate::text::shown(server)
        ));
    }
    let Some(found) = config.servers.iter().find(|s| s.name == server) else {
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        return Err(format!(
            "login: no server is named `{}` (servers: {})",
            crate::text::shown(server),
            names.join(", ")
        ));
    };
    let file = token_file(state, server);
    let config = match &found.transport {
        crate::config::Transport::Http { url, oauth, .. } => oauth.config().map(|c| (url, c)),
        crate::config::Transport::Stdio { .. } => None,
    };
    match config {
        Some((url, config)) => login(url, file, &config, show).await,
        None => Err(refusal(server, &found.transport)),
    }
}

/// Why `login` does not sign in to `server`, reached by `transport`.
fn refusal(server: &str, transport: &crate::config::Transport) -> String {
    let server = crate::text::shown(server);
    let crate::config::Transport::Http {
        headers,
        forward_token,
        ..
    } = transport
    else {
        return format!(
            "login: `{server}` is a stdio server: only a remote (URL) server signs in with OAuth"
        );
    };
    // The configuration's own token is sent, and its `oauth` not read (config.rs).
    if let Some(k) = headers
        .keys()
        .find(|k| k.eq_ignore_ascii_case("authorization"))
    {
        return format!(
            "login: `{server}` is called with the `{k}` header its configuration gives, not \
             with OAuth: remove that header to sign in"
        );
    }
    if *forward_token {
        return format!(
            "login: `{server}` is called with each caller's own token (`forwardToken`), not \
             with OAuth: remove `forwardToken` to sign in"
        );
    }
    format!(
        "login: `{server}` has OAuth turned off (`\"oauth\": false`, or `\"enabled\": false` in \
         its `oauth`): remove that to sign in"
    )
}

/// How long `login` waits for the browser to come back: the authorization request (its
/// state and PKCE verifier) is not kept longer.
const SIGN_IN_WITHIN: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// The largest request the redirect listener reads: a request line with a code and a state,
/// and a browser's headers.
const MAX_REDIRECT_BYTES: usize = 16 * 1024;

/// `disco-gateway login <server>`: discovery, registration (or the configured client), the
/// authorization URL handed to `show` for the user's browser, the redirect heard on
/// 127.0.0.1 (the configured `callbackPort`, else a free port), the code exchanged (with the
/// PKCE verifier) and the tokens written to `file`. Returns what was granted, for the user.
pub async fn login(
    url: &str,
    file: PathBuf,
    oauth: &OAuthConfig,
    show: impl FnOnce(&str),
) -> Result<String, String> {
    // An AuthError may carry a server's text: shown only as a terminal may show it.
    let said = |e: AuthError| crate::text::visible(&format!("OAuth: {e}"));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", oauth.callback_port.unwrap_or(0)))
        .await
        .map_err(|e| match oauth.callback_port {
            Some(port) => format!(
                "cannot listen on 127.0.0.1:{port} (its `callbackPort`) for the redirect: {e}"
            ),
            None => format!("cannot listen on 127.0.0.1 for the redirect: {e}"),
        })?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect = redirect_uri(port);

    let mut manager = AuthorizationManager::new(url).await.map_err(said)?;
    manager.set_credential_store(TokenFile::new_grant(file.clone(), url));
    let metadata = manager.resolve_metadata().await.map_err(said)?;
    manager.set_metadata(metadata.metadata);
    let mut request = AuthorizationRequest::new(redirect.clone()).with_client_name("disco-gateway");
    if !oauth.scopes.is_empty() {
        request = request.with_scopes(oauth.scopes.iter().cloned());
    }
    if let Some(id) = &oauth.client_id {
        request = request.with_preregistered_client(id.clone());
        if let Some(secret) = &oauth.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| said(e))?;
    let state = url_param(session.get_authorization_url(), "state")
        .ok_or("OAuth: the authorization URL has no state")?;
    show(session.get_authorization_url());

    let (mut browser, callback) =
        tokio::time::timeout(SIGN_IN_WITHIN, redirected(&listener, port, &state))
            .await
            .map_err(|_| {
                format!(
                    "the browser did not come back within {} minutes: run `login` again",
                    SIGN_IN_WITHIN.as_secs() / 60
                )
            })??;
    // The refresh lock from before the exchange until the new grant is saved: a refresh of
    // the old grant (a running gateway's) cannot write over it.
    let store = TokenFile::new(file.clone(), url);
    let guard = store.acquire_refresh_guard().await.map_err(said)?;
    let exchanged = session.handle_callback_url(&callback).await.map_err(said);
    drop(guard);
    // The browser is told once the tokens are saved, or that they are not.
    let page: &[u8] = match exchanged {
        Ok(_) => b"Signed in: disco-gateway has the tokens. You can close this page.",
        Err(_) => b"The sign-in failed: disco-gateway says why. You can close this page.",
    };
    answer(&mut browser, "200 OK", page).await;
    exchanged?;
    let stored = TokenFile::new(file.clone(), url)
        .load()
        .await
        .map_err(said)?;
    let scopes = stored
        .map(|s| s.granted_scopes.join(" "))
        .unwrap_or_default();
    Ok(format!(
        "signed in; tokens in {} (scopes: {})",
        file.display(),
        if scopes.is_empty() {
            "as granted"
        } else {
            &scopes
        }
    ))
}

/// How long the redirect listener waits for one connection's request: a connection that
/// says nothing (a browser's preconnect) does not hold up the redirect behind it.
const READ_REQUEST_WITHIN: std::time::Duration = std::time::Duration::from_secs(3);

/// The URL the browser was redirected to on the loopback listener, with the browser's
/// connection, to be answered once the code is exchanged: the first request for `/callback`
/// that carries `state`, the state of the authorization URL (others, such as a browser's
/// `/favicon.ico`, get 404; a callback with another state gets 400 and the listener goes
/// on). An authorization server's refusal (`error=`) is the error, the browser told at once.
async fn redirected(
    listener: &tokio::net::TcpListener,
    port: u16,
    state: &str,
) -> Result<(tokio::net::TcpStream, String), String> {
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|e| format!("the redirect listener failed: {e}"))?;
        let Ok(buf) = tokio::time::timeout(READ_REQUEST_WITHIN, request_head(&mut stream)).await
        else {
            continue;
        };
        // The request line: `GET /callback?code=...&state=... HTTP/1.1`.
        let head = String::from_utf8_lossy(&buf);
        let target = head
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or("");
        if !target.starts_with("/callback?") {
            answer(&mut stream, "404 Not Found", b"").await;
            continue;
        }
        let full = format!("http://127.0.0.1:{port}{target}");
        if url_param(&full, "state").as_deref() != Some(state) {
            answer(
                &mut stream,
                "400 Bad Request",
                b"This is not the sign-in disco-gateway is waiting for.",
            )
            .await;
            continue;
        }
        return match url_param(&full, "error") {
            Some(error) => {
                let page = b"The sign-in was refused. You can close this page.";
                answer(&mut stream, "200 OK", page).await;
                Err(format!(
                    "the authorization server refused the sign-in: {}",
                    crate::text::visible(&crate::text::clip(&error, 200))
                ))
            }
            None => Ok((stream, full)),
        };
    }
}

/// The head of the request on `stream`, up to its blank line (or [`MAX_REDIRECT_BYTES`]).
async fn request_head(stream: &mut tokio::net::TcpStream) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_REDIRECT_BYTES {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n.min(chunk.len())]),
        }
    }
    buf
}

/// Answers the request on `stream` with `status` and the text `page`, and closes it.
async fn answer(stream: &mut tokio::net::TcpStream, status: &str, page: &[u8]) {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        page.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(page).await;
    let _ = stream.shutdown().await;
}

/// The value of query parameter `name` of `url`, decoded.
fn url_param(url: &str, name: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

#[cfg(test)]
mod tests;
