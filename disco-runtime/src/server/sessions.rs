//! Sessions of the initialize era over HTTP: rmcp's in-memory session manager, with the caller
//! that created each session and a bound on how many are open at once.
//!
//! rmcp's sessions answer to whoever presents the id; MCP's security guidance binds a session
//! id to the user. The guard (guard.rs) looks up a session's creator here and answers a request
//! from anyone else exactly as for an unknown session.
//!
//! When a session's calls run beside rmcp's loop (http_calls.rs), rmcp's session worker no
//! longer sees them, and its idle timeout (five minutes without a message through it) would
//! end a session that is calling all the time. Such sessions are ended here instead, by the
//! same rule seen from the requests: a session no request has named for [`IDLE`], and with no
//! request of its open (a call running, a stream being read), is closed as rmcp would close it.
//! A standalone (GET) stream does not keep its session busy, as under rmcp, whose worker ends a
//! session whose stream stays silent for that long. One difference: rmcp's worker counts the
//! messages the server sends as activity, and this rule sees only the client's requests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

use super::http_calls::SessionCalls;
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
    /// Every open session: the caller whose request created it, and its calls run beside
    /// rmcp's loop once it is initialized (when they are: see http_calls.rs).
    owners: Mutex<HashMap<SessionId, Entry>>,
}

struct Entry {
    caller: Caller,
    calls: Option<Arc<SessionCalls>>,
    /// When the last request naming the session ended (or the session was created).
    last: tokio::time::Instant,
    /// The requests naming it whose answers are still being sent.
    open: usize,
}

/// The header that names a request's session.
pub(crate) const SESSION_ID: &str = "mcp-session-id";

/// The session `headers` name, if any (and readable).
pub(crate) fn session_id(headers: &http::HeaderMap) -> Option<&str> {
    headers.get(SESSION_ID).and_then(|v| v.to_str().ok())
}

/// How long a session no request names stays open, when the idle rule is kept here: rmcp's own
/// default.
pub(crate) const IDLE: std::time::Duration =
    rmcp::transport::streamable_http_server::session::local::SessionConfig::DEFAULT_KEEP_ALIVE;

/// A request naming a session, until its answer has been sent: the session is not idle.
pub(crate) struct Activity {
    sessions: std::sync::Weak<Sessions>,
    id: SessionId,
}

impl Drop for Activity {
    fn drop(&mut self) {
        if let Some(sessions) = self.sessions.upgrade() {
            if let Some(entry) = sessions.owners().get_mut(&self.id) {
                entry.open = entry.open.saturating_sub(1);
                entry.last = tokio::time::Instant::now();
            }
        }
    }
}

impl Sessions {
    /// `idle_here`: whether sessions are ended for idleness here rather than by rmcp's worker
    /// (see the module's documentation); the caller then runs [`Sessions::end_idle`].
    pub(crate) fn new(max: usize, idle_here: bool) -> Self {
        let mut inner = LocalSessionManager::default();
        if idle_here {
            inner.session_config.keep_alive = None;
        }
        Sessions {
            inner,
            max: max.max(1),
            owners: Mutex::new(HashMap::new()),
        }
    }

    /// A request naming session `id` (its caller's) begins: the session is not idle until the
    /// returned guard is dropped.
    pub(crate) fn active(self: &Arc<Self>, id: &str) -> Option<Activity> {
        let mut owners = self.owners();
        let id = owners.get_key_value(id)?.0.clone();
        owners.get_mut(&id)?.open += 1;
        Some(Activity {
            sessions: Arc::downgrade(self),
            id,
        })
    }

    /// A request naming session `id` that does not keep it busy while it lasts (a GET
    /// stream, as rmcp's worker counts it): the session's idle time starts again now.
    pub(crate) fn touch(&self, id: &str) {
        if let Some(entry) = self.owners().get_mut(id) {
            entry.last = tokio::time::Instant::now();
        }
    }

    /// Ends, every `every`, the sessions idle for `idle` (see the module's documentation), as
    /// long as `sessions` is alive.
    pub(crate) async fn end_idle(
        sessions: std::sync::Weak<Sessions>,
        idle: std::time::Duration,
        every: std::time::Duration,
    ) {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(sessions) = sessions.upgrade() else {
                return;
            };
            sessions.sweep(idle).await;
        }
    }

    /// Closes the sessions idle for `idle` now: none open, none named for that long.
    async fn sweep(&self, idle: std::time::Duration) {
        let now = tokio::time::Instant::now();
        let is_idle = |entry: &Entry| entry.open == 0 && now.duration_since(entry.last) >= idle;
        let candidates: Vec<SessionId> = self
            .owners()
            .iter()
            .filter(|(_, entry)| is_idle(entry))
            .map(|(id, _)| id.clone())
            .collect();
        for id in candidates {
            // Still idle once the lock is held again (a request may have begun since): taken
            // out under that lock, so that no request finds it half closed.
            let closed = {
                let mut owners = self.owners();
                match owners.get(&id) {
                    Some(entry) if is_idle(entry) => owners.remove(&id),
                    _ => None,
                }
            };
            let Some(entry) = closed else {
                continue;
            };
            tracing::debug!(session = %id, "session idle: closed");
            if let Err(error) = self.end(&id, Some(entry)).await {
                tracing::warn!(session = %id, %error, "closing an idle session failed");
            }
        }
    }

    /// Ends session `id`, whose entry was taken out of the table: its calls run beside rmcp's
    /// loop are cancelled, and rmcp closes it.
    async fn end(&self, id: &SessionId, entry: Option<Entry>) -> Result<(), SessionsError> {
        if let Some(calls) = entry.and_then(|entry| entry.calls) {
            calls.close();
        }
        Ok(self.inner.close_session(id).await?)
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Entry>> {
        crate::util::lock(&self.owners)
    }

    /// Whether `caller` created session `id`; `None` when no such session is open.
    pub(crate) fn owned_by(&self, id: &str, caller: &Caller) -> Option<bool> {
        self.owners().get(id).map(|entry| &entry.caller == caller)
    }

    /// The calls of session `id` run beside rmcp's loop, once it registered them.
    pub(crate) fn calls(&self, id: &str) -> Option<Arc<SessionCalls>> {
        self.owners().get(id)?.calls.clone()
    }

    /// Session `id` runs its calls with `calls` from now on (its first registration stays:
    /// a second `notifications/initialized` changes nothing).
    pub(crate) fn set_calls(&self, id: &str, calls: SessionCalls) {
        if let Some(entry) = self.owners().get_mut(id) {
            entry.calls.get_or_insert_with(|| Arc::new(calls));
        }
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
        self.owners().insert(
            id.clone(),
            Entry {
                caller,
                calls: None,
                last: tokio::time::Instant::now(),
                open: 0,
            },
        );
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
        let closed = self.owners().remove(id);
        self.end(id, closed).await
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    async fn open(sessions: &Sessions) -> SessionId {
        let (id, _transport) = sessions.create_session().await.expect("a session");
        id
    }

    /// A session no request names for the idle time, with none open, is closed; one with a
    /// request open, or named since, stays, and is closed once idle in its turn.
    #[tokio::test(start_paused = true)]
    async fn idle_sessions_are_closed_and_busy_ones_kept() {
        let idle = Duration::from_secs(10);
        let sessions = Arc::new(Sessions::new(16, true));
        assert_eq!(sessions.inner.session_config.keep_alive, None);
        let quiet = open(&sessions).await;
        let busy = open(&sessions).await;
        let named = open(&sessions).await;
        let caller = Caller::default();
        let held = sessions.active(&busy).expect("an open session");
        tokio::spawn(Sessions::end_idle(
            Arc::downgrade(&sessions),
            idle,
            Duration::from_secs(1),
        ));
        tokio::time::sleep(Duration::from_secs(6)).await;
        drop(sessions.active(&named));
        tokio::time::sleep(Duration::from_secs(6)).await;
        // 12 s on: `quiet` is over the idle time, `named` was named 6 s ago, `busy` is busy.
        assert_eq!(sessions.owned_by(&quiet, &caller), None, "closed");
        assert_eq!(sessions.owned_by(&named, &caller), Some(true));
        assert_eq!(sessions.owned_by(&busy, &caller), Some(true));
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(
            sessions.owned_by(&named, &caller),
            None,
            "closed in its turn"
        );
        assert_eq!(sessions.owned_by(&busy, &caller), Some(true), "still busy");
        drop(held);
        tokio::time::sleep(Duration::from_secs(12)).await;
        assert_eq!(
            sessions.owned_by(&busy, &caller),
            None,
            "idle once its request ended"
        );
        assert!(
            sessions.active(&busy).is_none(),
            "a closed session is not made busy"
        );
    }

    /// Generated schedules of requests beginning, ending and naming sessions, with time
    /// passing between sweeps: after every sweep the sessions open are exactly those a model
    /// of the rule keeps (a session is closed when none of its requests is open and none named
    /// it for the idle time).
    #[tokio::test(start_paused = true)]
    async fn the_idle_rule_holds_on_generated_schedules() {
        let idle = Duration::from_millis(100);
        let caller = Caller::default();
        for seed in 0..40u64 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let sessions = Arc::new(Sessions::new(16, true));
            let mut ids = Vec::new();
            for _ in 0..4 {
                ids.push(open(&sessions).await);
            }
            // The model: per session, whether it is open, its requests open, its last request.
            let start = tokio::time::Instant::now();
            let mut model: Vec<(bool, usize, tokio::time::Instant)> = vec![(true, 0, start); 4];
            let mut held: Vec<(usize, Activity)> = Vec::new();
            for step in 0..60 {
                let k = rng.usize(..4);
                match rng.u8(..4) {
                    0 => {
                        if let Some(activity) = sessions.active(&ids[k]) {
                            assert!(model[k].0, "seed {seed} step {step}: a closed one began");
                            model[k].1 += 1;
                            held.push((k, activity));
                        } else {
                            assert!(!model[k].0, "seed {seed} step {step}: an open one refused");
                        }
                    }
                    1 if !held.is_empty() => {
                        let (k, activity) = held.swap_remove(rng.usize(..held.len()));
                        drop(activity);
                        if model[k].0 {
                            model[k].1 -= 1;
                            model[k].2 = tokio::time::Instant::now();
                        }
                    }
                    2 => {
                        sessions.touch(&ids[k]);
                        if model[k].0 {
                            model[k].2 = tokio::time::Instant::now();
                        }
                    }
                    _ => {
                        let pass = rng.u64(0..=250);
                        tokio::time::advance(Duration::from_millis(pass)).await;
                        sessions.sweep(idle).await;
                        let now = tokio::time::Instant::now();
                        for (open, busy, last) in &mut model {
                            if *open && *busy == 0 && now.duration_since(*last) >= idle {
                                *open = false;
                            }
                        }
                        for (k, id) in ids.iter().enumerate() {
                            assert_eq!(
                                sessions.owned_by(id, &caller).is_some(),
                                model[k].0,
                                "seed {seed} step {step}: session {k}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Without the idle rule kept here, rmcp's worker keeps its own.
    #[test]
    fn rmcps_idle_rule_stays_unless_kept_here() {
        let sessions = Sessions::new(16, false);
        assert_eq!(
            sessions.inner.session_config.keep_alive,
            Some(IDLE),
            "rmcp's default"
        );
    }
}
