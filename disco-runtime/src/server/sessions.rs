//! Sessions of the initialize era over HTTP: rmcp's in-memory session manager, with the caller
//! that created each session and a bound on how many are open at once.
//!
//! rmcp's sessions answer to whoever presents the id; MCP's security guidance binds a session
//! id to the user. The guard (guard.rs) looks up a session's creator here and answers a request
//! from anyone else exactly as for an unknown session.

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

use crate::tool::Caller;

/// Why a session operation failed.
#[derive(Debug)]
pub(crate) enum SessionsError {
    /// `max_sessions` sessions are open.
    Full(usize),
    Local(LocalSessionManagerError),
}

impl std::fmt::Display for SessionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionsError::Full(max) => write!(f, "{max} sessions are open, the most allowed"),
            SessionsError::Local(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(e: LocalSessionManagerError) -> Self {
        SessionsError::Local(e)
    }
}

pub(crate) struct Sessions {
    inner: LocalSessionManager,
    max: usize,
    /// Every open session and the caller whose request created it.
    owners: Mutex<HashMap<SessionId, Caller>>,
}

impl Sessions {
    pub(crate) fn new(max: usize) -> Self {
        Sessions {
            inner: LocalSessionManager::default(),
            max: max.max(1),
            owners: Mutex::new(HashMap::new()),
        }
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Caller>> {
        crate::util::lock(&self.owners)
    }

    /// Whether `caller` created session `id`; `None` when no such session is open.
    pub(crate) fn owned_by(&self, id: &str, caller: &Caller) -> Option<bool> {
        self.owners().get(id).map(|owner| owner == caller)
    }

    /// Whether a new session would be refused.
    pub(crate) fn full(&self) -> bool {
        self.owners().len() >= self.max
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // The guard answers 503 before this when the sessions are full; this holds the bound
        // when several initialize requests race for the last place.
        if self.full() {
            return Err(SessionsError::Full(self.max));
        }
        let caller = super::REQUEST_CALLER
            .try_with(Clone::clone)
            .unwrap_or_default();
        let (id, transport) = self.inner.create_session().await?;
        self.owners().insert(id.clone(), caller);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    /// Called on DELETE and when a session's worker ends (idle timeout, shutdown).
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.owners().remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    /// Without an external store there is nothing to restore, and a session brought back
    /// without its creator could not be bound to it.
    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(RestoreOutcome::NotSupported)
    }
}
