//! The `tools/call` requests of a running stdio session, run beside rmcp's service loop.
//!
//! rmcp's loop takes each request from the transport, spawns a task for its handler, hands the
//! handler's answer back to the loop through a channel, and the loop gives it to the
//! transport: two hand-offs between tasks that a call, the most frequent request by far, does
//! not need. Once the session runs, [`GuardedStdio`](super::GuardedStdio) (which already reads a
//! `tools/call` straight into rmcp's request type) hands such a request to the session's
//! service itself, through rmcp's own `Service::handle_request` (its protocol-version checks,
//! its result shaping for each protocol era), with the context rmcp's loop would build: the
//! id, the session's peer, the request's `_meta` (its progress token included) and extensions,
//! and a cancellation token of its own. It writes the answer, rmcp's `ServerJsonRpcMessage`,
//! on its own line. Everything else still goes through rmcp's loop, and so does a call that
//!
//! - arrives before the session's peer exists (before `serve` returns: the `initialize`
//!   exchange), or
//! - names a protocol version in its `_meta`: rmcp runs such a handler inside a task-local of
//!   its own holding that version (it decides whether the handler may send requests to the
//!   client), which nothing outside rmcp can set.
//!
//! rmcp's loop sets one more task-local around each handler, `ORIGINATING_REQUEST`, the
//! request's id, which a call run here goes without. rmcp uses it for one thing: a request the
//! handler sends to the client carries that id in its extensions (`OriginatingRequestId`,
//! never on the wire), for the streamable HTTP transport to send the request on the response
//! stream of the call that made it. Over stdio there is one stream: this transport writes
//! every message, whichever call it comes from, as a line of the one output, and reads no
//! extensions. Without the id, such a request goes out the same way.
//!
//! A `notifications/cancelled` naming a call run here cancels the call's token and goes no
//! further; a cancelled call's answer is never sent, as rmcp sends none. A call's token is
//! also cancelled once it is answered (what it spawned stops, as under rmcp), and when the
//! session ends: at the end of the input the transport first waits (at most
//! [`DRAIN_TIMEOUT`]) for the calls still running to answer, as rmcp's loop waits for its own.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, OnceLock};
use std::time::Duration;

use rmcp::model::{ClientRequest, GetExtensions, GetMeta, RequestId, ServerJsonRpcMessage};
use rmcp::service::{DynService, Peer, RequestContext, Service, TxJsonRpcMessage};
use rmcp::{ErrorData, RoleServer};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use crate::util::lock;

/// How long the end of the input waits for the calls still running: what rmcp's loop waits for
/// its own handlers when its input closes.
pub(crate) const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Past this many requests in flight that rmcp runs, the duplicate-id check forgets their ids
/// rather than grow without bound (a client that never reads its answers).
const MAX_TRACKED_IDS: usize = 65_536;

/// At most this many calls run here at once; past it a call goes through rmcp's loop, whose
/// ids are bounded as above.
const MAX_RUNNING: usize = 65_536;

/// The ids of the requests in flight: those rmcp runs and the calls run here, with their
/// tokens.
#[derive(Default)]
pub(super) struct InFlight {
    rmcp: HashSet<RequestId>,
    running: HashMap<RequestId, Running>,
    next: u64,
}

/// A call run here: which one (an id may be reused once its call is answered) and its token.
struct Running {
    serial: u64,
    ct: CancellationToken,
}

impl InFlight {
    pub(super) fn contains(&self, id: &RequestId) -> bool {
        self.rmcp.contains(id) || self.running.contains_key(id)
    }

    /// A request handed to rmcp.
    pub(super) fn track(&mut self, id: RequestId) {
        if self.rmcp.len() >= MAX_TRACKED_IDS {
            self.rmcp.clear();
        }
        self.rmcp.insert(id);
    }

    /// rmcp answered `id`.
    pub(super) fn answered(&mut self, id: &RequestId) {
        self.rmcp.remove(id);
    }

    /// The client cancelled `id`, whose answer will not be sent by rmcp nor here: its id is
    /// free, and when it is a call run here, its token is cancelled.
    pub(super) fn cancel(&mut self, id: &RequestId) {
        self.rmcp.remove(id);
        if let Some(running) = self.running.remove(id) {
            running.ct.cancel();
        }
    }

    /// Whether one more call may run here.
    pub(super) fn has_room(&self) -> bool {
        self.running.len() < MAX_RUNNING
    }

    fn start(&mut self, id: RequestId, ct: CancellationToken) -> u64 {
        self.next += 1;
        let serial = self.next;
        self.running.insert(id, Running { serial, ct });
        serial
    }

    /// The call `serial` is over: whether its answer is to be sent (not when the client
    /// cancelled it). Its id is free from now on.
    fn finish(&mut self, id: &RequestId, serial: u64) -> bool {
        let ours = self.running.get(id).is_some_and(|r| r.serial == serial);
        if ours {
            self.running.remove(id);
        }
        ours
    }
}

/// Settles a call run here however its task ends: answered, or unwound by a panic in the
/// service (then its id is freed and what it started is cancelled, with no answer).
struct Settle {
    in_flight: Arc<StdMutex<InFlight>>,
    id: RequestId,
    serial: u64,
    ct: CancellationToken,
    settled: bool,
}

impl Settle {
    /// Frees the id and cancels the call's token: whether to send the answer.
    fn settle(&mut self) -> bool {
        self.settled = true;
        let send = lock(&self.in_flight).finish(&self.id, self.serial);
        self.ct.cancel();
        send
    }
}

impl Drop for Settle {
    fn drop(&mut self) {
        if !self.settled {
            let how = if std::thread::panicking() {
                "its service panicked"
            } else {
                "its task was stopped"
            };
            tracing::error!(id = %self.id, "tools/call ended without an answer: {how}");
            self.settle();
        }
    }
}

/// What the transport needs to run calls itself, once the session runs.
pub(super) struct Runner {
    service: Arc<dyn DynService<RoleServer>>,
    peer: Peer<RoleServer>,
}

/// The calls a transport runs beside rmcp's loop: shared by the transport and the `serve`
/// that sets up the session, which hands over the service and the peer once it has them.
#[derive(Default)]
pub(super) struct Calls {
    runner: OnceLock<Runner>,
    /// The parent of every call's token, and the token rmcp's loop serves with: cancelled
    /// when the session is stopped, or at the end of the drain.
    session: CancellationToken,
    tasks: TaskTracker,
    /// When the input ended: the drain's deadline counts from it, as rmcp's does.
    ended: OnceLock<tokio::time::Instant>,
    /// How many calls ran here: the one sign of which path a call took, since both answer
    /// alike.
    beside: AtomicU64,
}

impl Calls {
    pub(super) fn set_runner(
        &self,
        service: Arc<dyn DynService<RoleServer>>,
        peer: Peer<RoleServer>,
    ) {
        let _ = self.runner.set(Runner { service, peer });
    }

    /// The token the session is served with (`serve_with_ct`).
    pub(super) fn session(&self) -> CancellationToken {
        self.session.clone()
    }

    /// The input ended now (or could not be read).
    pub(super) fn input_ended(&self) {
        let _ = self.ended.set(tokio::time::Instant::now());
    }

    /// How many calls ran beside rmcp's loop so far (each counted as it starts).
    #[cfg(test)]
    pub(super) fn beside(&self) -> u64 {
        self.beside.load(Ordering::Relaxed)
    }

    /// What runs `request` here, if it runs here: a `tools/call` once the session's peer
    /// exists, unless it names a protocol version in its `_meta` (see the module's
    /// documentation).
    pub(super) fn runner_for(&self, request: &ClientRequest) -> Option<&Runner> {
        if !matches!(request, ClientRequest::CallToolRequest(_))
            || request.get_meta().protocol_version().is_some()
        {
            return None;
        }
        self.runner.get()
    }

    /// Runs `request` beside rmcp's loop with the runner [`Calls::runner_for`] gave, and
    /// answers it on `write`.
    pub(super) fn run<W>(
        &self,
        runner: &Runner,
        id: RequestId,
        mut request: ClientRequest,
        in_flight: &Arc<StdMutex<InFlight>>,
        write: &Arc<Mutex<Option<W>>>,
    ) where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.beside.fetch_add(1, Ordering::Relaxed);
        let ct = self.session.child_token();
        let serial = lock(in_flight).start(id.clone(), ct.clone());
        let mut settle = Settle {
            in_flight: in_flight.clone(),
            id: id.clone(),
            serial,
            ct: ct.clone(),
            settled: false,
        };
        // As rmcp's loop builds the context: `_meta` first (it holds the progress token), then
        // the extensions, moved out of the request.
        let meta = std::mem::take(request.get_meta_mut());
        let extensions = std::mem::take(request.extensions_mut());
        let mut context = RequestContext::new(id.clone(), runner.peer.clone());
        context.ct = ct.child_token();
        context.meta = meta;
        context.extensions = extensions;
        let service = runner.service.clone();
        let write = write.clone();
        // In the span rmcp's loop runs its handlers in (the transport is read inside it).
        let span = tracing::Span::current();
        self.tasks.spawn(
            async move {
                let message = match service.handle_request(request, context).await {
                    Ok(result) => ServerJsonRpcMessage::response(result, id.clone()),
                    Err(error) => {
                        tracing::warn!(%id, ?error, "tools/call answered with an error");
                        ServerJsonRpcMessage::error(error, Some(id.clone()))
                    }
                };
                if !settle.settle() {
                    tracing::debug!(%id, "tools/call cancelled: its answer is not sent");
                    return;
                }
                if let Err(error) = write_message(&write, &message).await {
                    tracing::error!(%error, "stdout: writing an answer failed");
                }
            }
            .instrument(span),
        );
    }

    /// The end of the session: waits for the calls still running to answer, until
    /// [`DRAIN_TIMEOUT`] after the input ended (rmcp's own wait for its handlers counts from
    /// then too), then cancels those that did not.
    pub(super) async fn drain(&self) {
        self.tasks.close();
        let from = self
            .ended
            .get()
            .copied()
            .unwrap_or_else(tokio::time::Instant::now);
        if tokio::time::timeout_at(from + DRAIN_TIMEOUT, self.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                "end of input: calls still running after {DRAIN_TIMEOUT:?} are cancelled"
            );
        }
        self.session.cancel();
    }
}

/// `message` as one line of JSON.
pub(super) fn line_of(message: &TxJsonRpcMessage<RoleServer>) -> std::io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(message)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Writes `bytes` (whole lines) and flushes, under the lock every writer of the transport
/// takes, so that lines never interleave.
pub(super) async fn write_bytes<W>(write: &Mutex<Option<W>>, bytes: &[u8]) -> std::io::Result<()>
where
    W: AsyncWrite + Send + Unpin,
{
    let mut guard = write.lock().await;
    let w = guard
        .as_mut()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotConnected, "transport closed"))?;
    w.write_all(bytes).await?;
    w.flush().await
}

async fn write_message<W>(
    write: &Mutex<Option<W>>,
    message: &TxJsonRpcMessage<RoleServer>,
) -> std::io::Result<()>
where
    W: AsyncWrite + Send + Unpin,
{
    write_bytes(write, &line_of(message)?).await
}

/// The service a [`GuardedStdio::serve`](super::GuardedStdio::serve) runs: yours, shared with
/// the transport, which runs the session's calls with it.
pub struct Served<S>(Arc<S>);

impl<S> Served<S> {
    pub(super) fn new(service: Arc<S>) -> Self {
        Served(service)
    }
}

impl<S> std::ops::Deref for Served<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.0
    }
}

impl<S: Service<RoleServer>> Service<RoleServer> for Served<S> {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ServerResult, ErrorData> {
        self.0.handle_request(request, context).await
    }

    async fn handle_notification(
        &self,
        notification: rmcp::model::ClientNotification,
        context: rmcp::service::NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.0.handle_notification(notification, context).await
    }

    fn get_info(&self) -> rmcp::model::ServerConfig {
        self.0.get_info()
    }

    fn supported_protocol_versions(
        &self,
    ) -> std::borrow::Cow<'static, [rmcp::model::ProtocolVersion]> {
        self.0.supported_protocol_versions()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> RequestId {
        RequestId::Number(n)
    }

    /// However a call's task ends without an answer (a panic unwinding through it), its id
    /// is free again and its token cancelled; an answered call frees its id once.
    #[test]
    fn a_call_settles_however_it_ends() {
        let in_flight = Arc::new(StdMutex::new(InFlight::default()));
        for panics in [true, false] {
            let ct = CancellationToken::new();
            let serial = lock(&in_flight).start(id(1), ct.clone());
            assert!(lock(&in_flight).contains(&id(1)));
            let settle = Settle {
                in_flight: in_flight.clone(),
                id: id(1),
                serial,
                ct: ct.clone(),
                settled: false,
            };
            if panics {
                let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                    let _settle = settle;
                    panic!("the service panicked");
                }));
                assert!(unwound.is_err());
            } else {
                let mut settle = settle;
                assert!(settle.settle(), "an answer nobody cancelled is sent");
                assert!(!settle.settle(), "and only once");
            }
            assert!(!lock(&in_flight).contains(&id(1)));
            assert!(ct.is_cancelled());
        }
    }

    /// A cancelled call's answer is not sent, and a reused id is not freed by the call that
    /// used it before.
    #[test]
    fn a_cancelled_or_older_call_sends_nothing() {
        let mut in_flight = InFlight::default();
        let first = in_flight.start(id(7), CancellationToken::new());
        in_flight.cancel(&id(7));
        assert!(!in_flight.contains(&id(7)));
        let second = in_flight.start(id(7), CancellationToken::new());
        assert!(!in_flight.finish(&id(7), first));
        assert!(in_flight.contains(&id(7)), "the newer call keeps its id");
        assert!(in_flight.finish(&id(7), second));
    }

    /// Both tables stay bounded: rmcp's ids are forgotten past their bound, the calls run
    /// here are never forgotten but stop being taken past theirs.
    #[test]
    fn the_ids_in_flight_are_bounded() {
        let mut in_flight = InFlight::default();
        for n in 0..MAX_RUNNING as i64 {
            assert!(in_flight.has_room());
            in_flight.start(id(n), CancellationToken::new());
        }
        assert!(!in_flight.has_room());
        for n in 0..=MAX_TRACKED_IDS as i64 {
            in_flight.track(id(-1 - n));
        }
        assert!(in_flight.rmcp.len() <= MAX_TRACKED_IDS);
        assert_eq!(in_flight.running.len(), MAX_RUNNING);
        in_flight.cancel(&id(0));
        assert!(in_flight.has_room());
    }
}
