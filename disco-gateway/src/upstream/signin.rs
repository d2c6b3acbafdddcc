//! An OAuth server's sign-in as its upstream task sees it (oauth.rs does the rest): the
//! manager its next connection signs in with, what a caller is told when the server refuses
//! the token, and the token file watched so that a `login` is taken at once.

use std::path::PathBuf;

use disco_runtime::rmcp;
use rmcp::transport::auth::AuthorizationManager;

use super::{Hub, Upstream};
use crate::config::Transport;
use crate::oauth;

impl Upstream {
    /// The file of its OAuth tokens, when it signs in with OAuth and the gateway has a state
    /// directory.
    fn token_file(&self, hub: &Hub) -> Option<PathBuf> {
        match &self.config.transport {
            Transport::Http { oauth: Some(_), .. } => {
                let dir = hub.pins.as_ref()?.state_dir();
                Some(oauth::token_file(dir, &self.config.name))
            }
            _ => None,
        }
    }

    /// What a caller is told when the server refuses the gateway's credentials: for an OAuth
    /// server, to sign in again; `None` for the others (the error as it is).
    pub(super) fn refused_text(&self, why: &str) -> Option<String> {
        matches!(
            &self.config.transport,
            Transport::Http { oauth: Some(_), .. }
        )
        .then(|| oauth::sign_in_again(&self.config.name, why))
    }
}

/// The manager `upstream`'s next connection signs in with: `None` for a server without
/// OAuth; its tokens read from the state directory and its authorization server found,
/// within the start-up timeout. An error is what a caller is told.
pub(super) async fn manager(
    hub: &Hub,
    upstream: &Upstream,
) -> Result<Option<Box<AuthorizationManager>>, String> {
    let Transport::Http {
        url,
        oauth: Some(config),
        ..
    } = &upstream.config.transport
    else {
        return Ok(None);
    };
    let Some(file) = upstream.token_file(hub) else {
        return Err("OAuth needs the gateway's state directory for its tokens".into());
    };
    let server = &upstream.config.name;
    let timeout = hub.disco.startup_timeout;
    match tokio::time::timeout(timeout, oauth::manager(server, url, file, config)).await {
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
