//! An upstream's progress, relayed to the call that asked for it in the order it was sent and
//! before that call's answer.
//!
//! rmcp's service loop hands each incoming notification to a task of its own and each response
//! straight to the waiting request, so a handler sees notifications in no fixed order, and the
//! last progress of a call can arrive after the call has its answer and is gone. The order only
//! exists where messages are read off the wire: [`Relay`] wraps the upstream's transport and
//! routes a call's progress into that call's own queue as it is read, before the message after
//! it (the answer, say) reaches rmcp. A call that has its answer drains its queue and finds
//! every notification the upstream sent before the answer.
//!
//! A request written beside rmcp's service loop (a stdio upstream's `tools/call`, call.rs)
//! waits here for its answer ([`Answers`]): the answer is handed to it as it is read, after the
//! progress read before it, and never reaches rmcp, which does not know the request.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use disco_runtime::rmcp;
use disco_runtime::util;
use rmcp::model::{
    ClientNotification, ClientRequest, GetExtensions, GetMeta, JsonRpcMessage,
    ProgressNotificationParam, ProgressToken, RequestId, ServerNotification, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, ServiceError, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use tokio::sync::{oneshot, Notify};

/// The most progress notifications one call's queue holds. A caller that reads more slowly
/// than its upstream writes (a slow client, a chatty server) would otherwise grow the queue
/// without bound; past this many, the newest queued notification is replaced by each one read
/// (see [`ProgressQueue`]).
pub(crate) const MAX_QUEUED_PROGRESS: usize = 256;

/// One call's progress, in the order the upstream sent it, bounded.
///
/// Full, it keeps the notifications it holds and replaces its newest with the one read: the
/// caller still gets progress in the order it was sent, the first ones as they were and the
/// latest one the upstream sent, and never more than [`MAX_QUEUED_PROGRESS`] at once. Progress
/// only grows (the specification requires it), so what is replaced is a step the caller had
/// not seen and that a later one supersedes.
///
/// Written here rather than taken from tokio: its bounded channel can refuse or wait when
/// full, but not replace what it holds, and the transport must never wait on a caller.
pub(crate) struct ProgressQueue {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    queued: StdMutex<VecDeque<ProgressNotificationParam>>,
    /// Told when a notification is queued.
    ready: Notify,
    /// The call stopped reading (it has its answer, or it was dropped).
    closed: AtomicBool,
}

impl Shared {
    fn queued(&self) -> std::sync::MutexGuard<'_, VecDeque<ProgressNotificationParam>> {
        util::lock(&self.queued)
    }
}

impl ProgressQueue {
    /// The next notification, waiting for one.
    pub(crate) async fn recv(&mut self) -> ProgressNotificationParam {
        loop {
            if let Some(update) = self.try_recv() {
                return update;
            }
            // A notification queued between `try_recv` and here leaves a permit: not missed.
            self.shared.ready.notified().await;
        }
    }

    /// The next notification queued, if there is one.
    pub(crate) fn try_recv(&mut self) -> Option<ProgressNotificationParam> {
        self.shared.queued().pop_front()
    }
}

impl Drop for ProgressQueue {
    fn drop(&mut self) {
        // Under the queue's lock, as `send` checks it: no update lands in a queue nobody reads.
        let mut queued = self.shared.queued();
        self.shared.closed.store(true, Ordering::Release);
        queued.clear();
    }
}

/// Where one call's progress goes: put in the request's extensions by the call, taken out by
/// [`Relay::send`] as the request leaves (extensions are never serialised).
#[derive(Clone)]
pub(crate) struct ProgressSink(Arc<Shared>);

impl ProgressSink {
    /// Queues `update`; `false` when the call no longer reads its queue.
    fn send(&self, update: ProgressNotificationParam) -> bool {
        {
            let mut queued = self.0.queued();
            if self.is_closed() {
                return false;
            }
            if queued.len() >= MAX_QUEUED_PROGRESS {
                if let Some(newest) = queued.back_mut() {
                    *newest = update;
                }
            } else {
                queued.push_back(update);
            }
        }
        self.0.ready.notify_one();
        true
    }

    fn is_closed(&self) -> bool {
        self.0.closed.load(Ordering::Acquire)
    }
}

/// Asks for `request`'s progress to be relayed in order into the returned queue.
pub(crate) fn route_progress(request: &mut ClientRequest) -> ProgressQueue {
    let shared = Arc::new(Shared::default());
    request
        .extensions_mut()
        .insert(ProgressSink(shared.clone()));
    ProgressQueue { shared }
}

/// When the upstream last sent anything (an answer, a notification, a request): a server that
/// is talking is not hung, whether or not it has answered a ping yet.
#[derive(Debug)]
pub(crate) struct Heard {
    epoch: Instant,
    /// Milliseconds after `epoch`.
    last: AtomicU64,
}

impl Heard {
    pub(crate) fn new() -> Arc<Heard> {
        Arc::new(Heard {
            epoch: Instant::now(),
            last: AtomicU64::new(0),
        })
    }

    fn mark(&self) {
        let now = self.epoch.elapsed().as_millis() as u64;
        self.last.fetch_max(now, Ordering::Relaxed);
    }

    /// How long the upstream has said nothing (since `reset` when it has said nothing yet).
    pub(crate) fn silent_for(&self) -> Duration {
        let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
        self.epoch.elapsed().saturating_sub(last)
    }

    /// A new connection starts as heard now.
    pub(crate) fn reset(&self) {
        self.mark();
    }
}

struct Route {
    id: RequestId,
    sink: ProgressSink,
}

/// A request's answer as rmcp's loop gives it to a request of its own: the result, or the
/// upstream's error.
pub(crate) type Answer = Result<ServerResult, ServiceError>;

/// What a connection's relay knows of the calls in flight; shared with the calls written
/// beside rmcp's loop ([`Answers`]).
#[derive(Default)]
struct Table {
    /// Calls in flight that asked for progress, by the progress token sent upstream.
    routes: HashMap<ProgressToken, Route>,
    /// The same calls by request id, to end their route with their answer.
    tokens: HashMap<RequestId, ProgressToken>,
    /// Requests written beside rmcp's loop, by id: where their answer goes.
    answers: HashMap<RequestId, oneshot::Sender<Answer>>,
    /// The connection ended: no answer comes any more.
    closed: bool,
}

impl Table {
    fn end(&mut self, id: &RequestId) {
        if let Some(token) = self.tokens.remove(id) {
            self.routes.remove(&token);
        }
    }

    /// Notes where a request's progress goes, if its caller asked (see [`route_progress`]).
    fn outgoing(&mut self, message: &mut TxJsonRpcMessage<RoleClient>) {
        match message {
            JsonRpcMessage::Request(request) => {
                let Some(sink) = request.request.extensions_mut().remove::<ProgressSink>() else {
                    return;
                };
                let Some(token) = request.request.get_meta().get_progress_token() else {
                    return;
                };
                // Calls dropped before their answer (cancelled, timed out) leave with the
                // next call that asks for progress, so the table holds what is in flight.
                self.routes.retain(|_, route| !route.sink.is_closed());
                let routes = &self.routes;
                self.tokens.retain(|_, token| routes.contains_key(token));
                self.tokens.insert(request.id.clone(), token.clone());
                self.routes.insert(
                    token,
                    Route {
                        id: request.id.clone(),
                        sink,
                    },
                );
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                {
                    if let Some(id) = cancelled.params.request_id.clone() {
                        self.end(&id);
                        self.answers.remove(&id);
                    }
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
    }

    /// Takes a message read off the wire: a routed call's progress goes into its queue, the
    /// answer to a request written beside rmcp's loop goes to that request (and `None` is
    /// returned for both); an answer ends its call's route; everything else passes on.
    fn incoming(
        &mut self,
        message: RxJsonRpcMessage<RoleClient>,
    ) -> Option<RxJsonRpcMessage<RoleClient>> {
        match message {
            JsonRpcMessage::Notification(notification) => {
                let ServerNotification::ProgressNotification(progress) = &notification.notification
                else {
                    return Some(JsonRpcMessage::Notification(notification));
                };
                let Some(route) = self.routes.get(&progress.params.progress_token) else {
                    // Not a call of ours that asked: rmcp's own handling (which ignores it).
                    return Some(JsonRpcMessage::Notification(notification));
                };
                if !route.sink.send(progress.params.clone()) {
                    // The call is gone; so is its route.
                    let id = route.id.clone();
                    self.end(&id);
                }
                None
            }
            JsonRpcMessage::Response(response) => {
                self.end(&response.id);
                match self.answers.remove(&response.id) {
                    Some(waiting) => {
                        let _ = waiting.send(Ok(response.result));
                        None
                    }
                    None => Some(JsonRpcMessage::Response(response)),
                }
            }
            JsonRpcMessage::Error(error) => {
                let Some(id) = error.id.clone() else {
                    return Some(JsonRpcMessage::Error(error));
                };
                self.end(&id);
                match self.answers.remove(&id) {
                    Some(waiting) => {
                        let _ = waiting.send(Err(ServiceError::McpError(error.error)));
                        None
                    }
                    None => Some(JsonRpcMessage::Error(error)),
                }
            }
            JsonRpcMessage::Request(request) => Some(JsonRpcMessage::Request(request)),
        }
    }

    /// The connection ended: every request waiting beside rmcp's loop learns it (its answer's
    /// sender is dropped), none waits from now on, and no progress is routed any more.
    fn close(&mut self) {
        self.closed = true;
        self.answers.clear();
        self.routes.clear();
        self.tokens.clear();
    }
}

/// A transport that relays each call's progress into the call's own queue, in wire order,
/// and hands the answers of the requests written beside rmcp's loop to them.
pub(crate) struct Relay<T> {
    inner: T,
    heard: Arc<Heard>,
    table: Arc<StdMutex<Table>>,
}

impl<T> Relay<T> {
    pub(crate) fn new(inner: T, heard: Arc<Heard>) -> Self {
        heard.reset();
        Self::beside(inner, heard)
    }

    /// A connection beside the main one (a caller's own): what it reads counts as heard from
    /// the server, its opening does not (a hung server is not taken for talking because
    /// callers keep trying to reach it).
    pub(crate) fn beside(inner: T, heard: Arc<Heard>) -> Self {
        Relay {
            inner,
            heard,
            table: Arc::default(),
        }
    }

    /// Where the requests written beside rmcp's loop over this connection wait for their
    /// answers.
    pub(crate) fn answers(&self) -> Answers {
        Answers(self.table.clone())
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        util::lock(&self.table)
    }

    #[cfg(test)]
    fn routed(&self) -> usize {
        let table = self.table();
        debug_assert_eq!(table.routes.len(), table.tokens.len());
        table.routes.len()
    }
}

impl<T> Drop for Relay<T> {
    fn drop(&mut self) {
        self.table().close();
    }
}

/// The requests of one connection written beside rmcp's service loop, waiting for their
/// answers: the relay reads each answer off the wire and hands it over.
#[derive(Clone)]
pub(crate) struct Answers(Arc<StdMutex<Table>>);

impl Answers {
    /// Notes that `message`, a request about to be written beside rmcp's loop, waits here for
    /// its answer, and routes its progress as [`Relay`] routes a request it sends. `None`: the
    /// connection has ended (no answer would come).
    pub(crate) fn expect(&self, message: &mut TxJsonRpcMessage<RoleClient>) -> Option<Waiting> {
        let JsonRpcMessage::Request(request) = message else {
            return None;
        };
        let id = request.id.clone();
        let (answer, waiting) = oneshot::channel();
        let mut table = util::lock(&self.0);
        if table.closed {
            return None;
        }
        table.outgoing(message);
        table.answers.insert(id.clone(), answer);
        Some(Waiting {
            id,
            answer: waiting,
            table: self.0.clone(),
            failed: None,
        })
    }
}

/// A request written beside rmcp's loop, waiting for its answer. Dropped before it (the call
/// was cancelled or timed out), it waits no more.
pub(crate) struct Waiting {
    id: RequestId,
    answer: oneshot::Receiver<Answer>,
    table: Arc<StdMutex<Table>>,
    /// Why the request never left (its line could not be written): its answer.
    failed: Option<ServiceError>,
}

impl Waiting {
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// The request could not be written: `why` is its answer.
    pub(crate) fn failed(&mut self, why: ServiceError) {
        self.failed = Some(why);
    }

    /// The answer; `TransportClosed` when the connection ended first, as rmcp answers a
    /// request of its own then.
    pub(crate) async fn answer(mut self) -> Answer {
        if let Some(why) = self.failed.take() {
            return Err(why);
        }
        (&mut self.answer)
            .await
            .unwrap_or(Err(ServiceError::TransportClosed))
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        // Answered: the relay took its place already.
        if !matches!(
            self.answer.try_recv(),
            Err(oneshot::error::TryRecvError::Empty)
        ) {
            return;
        }
        util::lock(&self.table).answers.remove(&self.id);
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Relay<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Before the request is on its way: its progress can only come after this.
        self.table().outgoing(&mut item);
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            // Cancel-safe as the inner transport is: nothing is held across this await.
            let Some(message) = self.inner.receive().await else {
                self.table().close();
                return None;
            };
            self.heard.mark();
            if let Some(message) = self.table().incoming(message) {
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests;
