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

/// One server's tokens in their file, as rmcp's credential store: read on every use, so that
/// what `login` writes is what the next request sends.
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    pub fn new(path: PathBuf) -> Self {
        TokenFile { path }
    }

    fn failed(&self, what: &str, e: impl std::fmt::Display) -> AuthError {
        AuthError::CredentialStoreError(format!("{} {what}: {e}", self.path.display()))
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let bytes = match tokio::fs::read(&self.path).await {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.failed("cannot be read", e)),
        };
        // serde_json's error names a line and column, never the text there (a token).
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| self.failed("is not a token file", e.classify_text()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let bytes = serde_json::to_vec_pretty(&credentials)
            .map_err(|e| self.failed("cannot be written", e.classify_text()))?;
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            if let Some(dir) = path.parent() {
                crate::pins::private_dir(dir)?;
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
                crate::pins::private_dir(dir)?;
            }
            crate::pins::lock_file(&path.with_extension("lock"))
        })
        .await
        .map_err(|e| self.failed("cannot be locked", e))?
        .map_err(|e| self.failed("cannot be locked", e))?;
        Ok(Some(CredentialRefreshGuard::new(held)))
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

/// When the token file at `path` was last written, and its length: a change is a `login`
/// to take.
pub fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// Waits until the token file at `path` is not as `seen` says (polled every 500 ms).
pub async fn written(path: &Path, seen: Option<(SystemTime, u64)>) {
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        if stamp(path) != seen {
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
    manager.set_credential_store(TokenFile::new(file));
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
    let Some(found) = config.servers.iter().find(|s| s.name == server) else {
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        return Err(format!(
            "login: no server is named `{}` (servers: {})",
            crate::text::shown(server),
            names.join(", ")
        ));
    };
    match &found.transport {
        crate::config::Transport::Http {
            url,
            oauth: Some(oauth),
            ..
        } => login(url, token_file(state, server), oauth, show).await,
        _ => Err(format!(
            "login: `{server}` does not sign in with OAuth (give it `\"oauth\": true`, or an \
             `oauth` object with its `clientId`)"
        )),
    }
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
    let said = |e: AuthError| format!("OAuth: {e}");
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", oauth.callback_port.unwrap_or(0)))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1 for the redirect: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect = redirect_uri(port);

    let mut manager = AuthorizationManager::new(url).await.map_err(said)?;
    manager.set_credential_store(TokenFile::new(file.clone()));
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
    show(session.get_authorization_url());

    let callback = tokio::time::timeout(SIGN_IN_WITHIN, redirected(&listener, port))
        .await
        .map_err(|_| {
            format!(
                "the browser did not come back within {} minutes: run `login` again",
                SIGN_IN_WITHIN.as_secs() / 60
            )
        })??;
    session.handle_callback_url(&callback).await.map_err(said)?;
    let stored = TokenFile::new(file.clone()).load().await.map_err(said)?;
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

/// The URL the browser was redirected to on the loopback listener: the first request for
/// `/callback` (others, such as a browser's `/favicon.ico`, get 404), answered with a page
/// saying the browser may close. An authorization server's refusal (`error=`) is the error.
async fn redirected(listener: &tokio::net::TcpListener, port: u16) -> Result<String, String> {
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|e| format!("the redirect listener failed: {e}"))?;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 2048];
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_REDIRECT_BYTES {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n.min(chunk.len())]),
            }
        }
        // The request line: `GET /callback?code=...&state=... HTTP/1.1`.
        let head = String::from_utf8_lossy(&buf);
        let target = head
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or("");
        if !target.starts_with("/callback?") {
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
            continue;
        }
        let full = format!("http://127.0.0.1:{port}{target}");
        let refused = url_param(&full, "error");
        let page: &[u8] = match refused {
            None => b"Signed in: disco-gateway has the tokens. You can close this page.",
            Some(_) => b"The sign-in was refused. You can close this page.",
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n",
            page.len()
        );
        let _ = stream.write_all(head.as_bytes()).await;
        let _ = stream.write_all(page).await;
        let _ = stream.shutdown().await;
        return match refused {
            Some(error) => Err(format!(
                "the authorization server refused the sign-in: {}",
                crate::text::clip(&error, 200)
            )),
            None => Ok(full),
        };
    }
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
