//! An OAuth server's sign-in as its upstream task sees it (oauth.rs does the rest): the
//! manager its next connection signs in with, what a caller is told when the server refuses
//! the token, and the token file watched so that a `login` is taken at once.
//!
//! A server whose entry does not ask for OAuth but could sign in ([`SignIn::WhenSignedIn`])
//! is called without credentials until its token file is there; from the first connection
//! that finds it there, it is an OAuth server: its connections sign in, and over HTTP only the
//! callers whose token entry names it see it ([`Upstream::acts_as_user`]), for as long as this
//! upstream runs (a reload that changes its entry makes a new one).

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use disco_runtime::rmcp;
use rmcp::transport::auth::AuthorizationManager;

use super::{Hub, Upstream};
use crate::config::{OAuthConfig, SignIn, Transport};
use crate::oauth;

impl Upstream {
    /// The file of its OAuth tokens, when it signs in with OAuth and the gateway has a state
    /// directory.
    fn token_file(&self, hub: &Hub) -> Option<PathBuf> {
        match &self.config.transport {
            Transport::Http {
                oauth: SignIn::Configured(_) | SignIn::WhenSignedIn,
                ..
            } => {
                let dir = hub.pins.as_ref()?.state_dir();
                Some(oauth::token_file(dir, &self.config.name))
            }
            _ => None,
        }
    }

    /// Whether its calls act as the user signed in with `disco-gateway login`: a configured
    /// OAuth server always, one that signs in when asked once a connection found its tokens.
    pub fn acts_as_user(&self) -> bool {
        match &self.config.transport {
            Transport::Http { oauth, .. } => match oauth {
                SignIn::Configured(_) => true,
                SignIn::WhenSignedIn => self.signed_in.load(Ordering::SeqCst),
                SignIn::Never => false,
            },
            Transport::Stdio { .. } => false,
        }
    }

    /// What a caller is told when the server refuses the gateway's credentials (or asks for
    /// some): for a server that signs in, to sign in (again); `None` for the others (the
    /// error as it is).
    pub(super) fn refused_text(&self, why: &str) -> Option<String> {
        let name = &self.config.name;
        match &self.config.transport {
            Transport::Http { oauth, .. } => match oauth {
                SignIn::WhenSignedIn if !self.acts_as_user() => Some(oauth::sign_in_first(name)),
                SignIn::Configured(_) | SignIn::WhenSignedIn => {
                    Some(oauth::sign_in_again(name, why))
                }
                SignIn::Never => None,
            },
            Transport::Stdio { .. } => None,
        }
    }

    /// What its next connection signs in with: `None` for a server without OAuth, or one that
    /// signs in when asked and has no tokens (yet). A server of the second kind whose tokens
    /// are there is an OAuth server from this moment ([`Upstream::acts_as_user`]), before the
    /// connection that uses them is up: no caller that may not call as the user finds that
    /// connection (`Upstream::call`). An error is what a caller is told.
    pub(crate) fn signs_in_with(&self, hub: &Hub) -> Result<Option<OAuthConfig>, String> {
        let Transport::Http {
            url, oauth: how, ..
        } = &self.config.transport
        else {
            return Ok(None);
        };
        let Some(file) = self.token_file(hub) else {
            return match how {
                SignIn::Configured(_) => {
                    Err("OAuth needs the gateway's state directory for its tokens".into())
                }
                SignIn::WhenSignedIn | SignIn::Never => Ok(None),
            };
        };
        match how {
            SignIn::Configured(config) => Ok(Some(config.clone())),
            SignIn::WhenSignedIn if oauth::kept_for(&file, url) => {
                self.signed_in.store(true, Ordering::SeqCst);
                Ok(Some(OAuthConfig::default()))
            }
            SignIn::WhenSignedIn | SignIn::Never => Ok(None),
        }
    }
}

/// What a caller is told when a call of theirs would have gone over a connection that acts as
/// the signed-in user since it was routed, and their token entry does not name the server.
pub(super) fn not_for(server: &str) -> String {
    format!(
        "Server `{server}` now acts as the user signed in with `disco-gateway login {server}`, \
         and only the callers whose token entry names it may call it."
    )
}

/// The manager `upstream`'s next connection signs in with ([`Upstream::signs_in_with`]): its
/// tokens read from the state directory and its authorization server found, within the
/// start-up timeout. An error is what a caller is told.
pub(super) async fn manager(
    hub: &Hub,
    upstream: &Upstream,
) -> Result<Option<Box<AuthorizationManager>>, String> {
    let (Some(config), Some(file), Transport::Http { url, .. }) = (
        upstream.signs_in_with(hub)?,
        upstream.token_file(hub),
        &upstream.config.transport,
    ) else {
        return Ok(None);
    };
    let server = &upstream.config.name;
    let timeout = hub.disco.startup_timeout;
    match tokio::time::timeout(timeout, oauth::manager(server, url, file, &config)).await {
        Ok(manager) => manager.map(|m| Some(Box::new(m))),
        Err(_) => Err(format!(
            "OAuth: its authorization server did not answer within {} ms",
            timeout.as_millis()
        )),
    }
}

/// An OAuth server's token file as it was when this was made, to hear a new sign-in after.
pub(super) struct Tokens {
    file: Option<PathBuf>,
    seen: Option<oauth::Seen>,
}

impl Tokens {
    pub(super) fn now(hub: &Hub, upstream: &Upstream) -> Self {
        let file = upstream.token_file(hub);
        let seen = match (&file, &upstream.config.transport) {
            (Some(file), Transport::Http { url, .. }) => Some(oauth::Seen::now(file, url)),
            _ => None,
        };
        Tokens { file, seen }
    }

    /// Resolves once the file holds another sign-in than when this was made (a `login`, not
    /// a refresh); never for a server without OAuth.
    pub(super) async fn signed_in_again(&self) {
        match (&self.file, &self.seen) {
            (Some(file), Some(seen)) => oauth::signed_in_again(file, seen.clone()).await,
            _ => std::future::pending().await,
        }
    }
}
