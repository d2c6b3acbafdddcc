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

pub(super) use super::in_flight::InFlight;
use super::in_flight::Settle;
use crate::util::lock;

/// How long the end of the input waits for the calls still running: what rmcp's loop waits for
/// its own handlers when its input closes.
pub(crate) const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

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
        let mut settle = Settle::new(in_flight.clone(), id.clone(), serial, ct.clone());
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
