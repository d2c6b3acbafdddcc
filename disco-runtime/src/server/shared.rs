//! What every session and request of a running server share (`Shared`), and the handle that
//! reloads it (`ServerHandle`), with the notices a reload sends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use rmcp::model::InitializeResult;
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};

use super::{Error, Resources};
use crate::catalog::{Catalog, StatsSnapshot};
use crate::tool::Caller;

/// Shared by every session and request: built once, never per request.
pub(crate) struct Shared {
    /// Swapped whole when the catalog is reloaded; each request reads one consistent version.
    pub(super) catalog: RwLock<Arc<Catalog>>,
    /// The server's own `initialize` answer, without the tools capability (which
    /// [`Embedded`](super::Embedded) adds) nor the caller's instructions.
    pub info: InitializeResult,
    pub page_size: usize,
    pub unknown_tool_as_result: bool,
    /// Whether disco writes per-caller instructions (the author gave none, not even empty).
    pub generate_instructions: bool,
    /// Connected sessions, told when their caller's tool list changes, with the caller that
    /// initialized them.
    pub(super) peers: Mutex<Vec<(Peer<RoleServer>, Caller)>>,
    /// Open `subscriptions/listen` requests (protocol 2026-07-28) that asked to be told when
    /// the tool list changes, by a number of their own, with their caller.
    pub(super) subscriptions: Mutex<Vec<(u64, Caller, SubscriptionSink)>>,
    pub(super) next_subscription: std::sync::atomic::AtomicU64,
    /// Calls of HTTP sessions answered beside rmcp's loop (http_calls.rs).
    pub(super) calls_beside: std::sync::atomic::AtomicU64,
    /// Held by a reload from its rebuild to its swap, so that an older rebuild never replaces
    /// a newer one.
    pub(super) reloading: tokio::sync::Mutex<()>,
    /// What `resources/list` and `resources/read` answer, when the server offers resources.
    pub(super) resources: Option<Arc<dyn Resources>>,
}

impl Shared {
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        crate::util::read(&self.catalog).clone()
    }

    pub(crate) fn add_peer(&self, peer: Peer<RoleServer>, caller: Caller) {
        let mut peers = crate::util::lock(&self.peers);
        peers.retain(|(p, _)| !p.is_transport_closed());
        peers.push((peer, caller));
    }

    /// Remembers an open subscription until [`Shared::remove_subscription`] with the number
    /// returned.
    pub(crate) fn add_subscription(&self, caller: Caller, sink: SubscriptionSink) -> u64 {
        let id = self
            .next_subscription
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        crate::util::lock(&self.subscriptions).push((id, caller, sink));
        id
    }

    pub(crate) fn remove_subscription(&self, id: u64) {
        crate::util::lock(&self.subscriptions).retain(|(i, _, _)| *i != id);
    }
}

/// Sends one notice of a change, waiting [`NOTIFY_TIMEOUT`] at most; a failure is only
/// logged (`who`: the kind of client).
pub(super) async fn notify<E: std::fmt::Display>(
    who: &str,
    notice: impl std::future::Future<Output = Result<(), E>>,
) {
    match tokio::time::timeout(NOTIFY_TIMEOUT, notice).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::debug!(error = %e, "could not send tools/list_changed to a {who}"),
        Err(_) => tracing::debug!("a {who} did not take tools/list_changed in time"),
    }
}

/// Runs `work` on the runtime's blocking pool and waits for it; a panic in it goes on as a
/// panic here, as if it had run in place.
async fn off_the_workers<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Error> {
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => Ok(done),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(Error::Io(std::io::Error::other(
            "the runtime shut down during a reload",
        ))),
    }
}

/// How long a reload waits for one client to take its notice of the change.
pub const NOTIFY_TIMEOUT: Duration = Duration::from_secs(5);

/// Controls a server while it runs: reload the catalog after providers changed, read the
/// counters.
#[derive(Clone)]
pub struct ServerHandle {
    pub(super) running: Arc<OnceLock<Arc<Shared>>>,
}

impl ServerHandle {
    /// Rebuilds the catalog (inventory plus the providers' current tools), swaps it in and
    /// sends `notifications/tools/list_changed` to every connected session and every
    /// `subscriptions/listen` stream (protocol 2026-07-28) whose caller's tool list changed (a
    /// session's caller is the one that initialized it).
    /// Calls in flight finish on the catalog they started with, and calls go on being served
    /// during a reload: the rebuild and the comparison of each caller's lists run on tokio's
    /// blocking pool, not on the runtime's workers. Reloads run one at a time;
    /// each notice is given [`NOTIFY_TIMEOUT`] to be written, all at once, so a client that
    /// stops reading delays a reload by that much at most.
    ///
    /// A stream is told of the changes after its acknowledgment was sent: a client should list
    /// the tools once it holds the acknowledgment.
    pub async fn reload(&self) -> Result<(), Error> {
        use futures_util::future::join_all;
        let shared = self.running.get().ok_or(Error::NotRunning)?;
        let (before, fresh) = {
            let _one_at_a_time = shared.reloading.lock().await;
            let before = shared.catalog();
            // Rebuilding takes a while with many tools (about half a second at 10,000): on the
            // blocking pool, so that the runtime's workers go on serving calls meanwhile (a
            // server with one worker would otherwise stop answering, pings included).
            let fresh = Arc::new(
                off_the_workers({
                    let before = before.clone();
                    move || before.rebuild()
                })
                .await??,
            );
            *crate::util::write(&shared.catalog) = fresh.clone();
            (before, fresh)
        };
        let peers: Vec<(Peer<RoleServer>, Caller)> = {
            let mut peers = crate::util::lock(&shared.peers);
            peers.retain(|(p, _)| !p.is_transport_closed());
            peers.clone()
        };
        let streams: Vec<(SubscriptionSink, Caller)> = crate::util::lock(&shared.subscriptions)
            .iter()
            .map(|(_, caller, sink)| (sink.clone(), caller.clone()))
            .collect();
        // A client hears of a change only when its caller's own list changed: a change to
        // tools it cannot see tells it nothing.
        // Listing every tool twice per caller is a rebuild's worth of work too: on the
        // blocking pool as well, one caller of each id, the first one met.
        let mut callers: HashMap<Option<String>, Caller> = HashMap::new();
        for caller in peers
            .iter()
            .map(|(_, c)| c)
            .chain(streams.iter().map(|(_, c)| c))
        {
            callers
                .entry(caller.id().map(str::to_owned))
                .or_insert_with(|| caller.clone());
        }
        let changed_for: HashMap<Option<String>, bool> = off_the_workers(move || {
            callers
                .into_iter()
                .map(|(id, caller)| (id, before.list(&caller) != fresh.list(&caller)))
                .collect()
        })
        .await?;
        let changed = |caller: &Caller| {
            changed_for
                .get(&caller.id().map(str::to_owned))
                .copied()
                .unwrap_or(false)
        };
        let peers: Vec<Peer<RoleServer>> = peers
            .into_iter()
            .filter(|(_, caller)| changed(caller))
            .map(|(peer, _)| peer)
            .collect();
        let streams: Vec<SubscriptionSink> = streams
            .into_iter()
            .filter(|(_, caller)| changed(caller))
            .map(|(sink, _)| sink)
            .collect();
        let to_sessions = join_all(
            peers
                .iter()
                .map(|peer| notify("session", peer.notify_tool_list_changed())),
        );
        let to_streams = join_all(
            streams
                .iter()
                .map(|sink| notify("listener", sink.notify_tool_list_changed())),
        );
        futures_util::future::join(to_sessions, to_streams).await;
        Ok(())
    }

    /// The catalog served now, or `None` before the server runs.
    pub fn catalog(&self) -> Option<Arc<crate::catalog::Catalog>> {
        self.running.get().map(|s| s.catalog())
    }

    /// How many calls of HTTP sessions were answered beside rmcp's loop
    /// ([`HttpOptions::calls_beside`](super::HttpOptions::calls_beside)), or `None` before the
    /// server runs.
    #[doc(hidden)]
    pub fn calls_beside(&self) -> Option<u64> {
        self.running
            .get()
            .map(|s| s.calls_beside.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// The counters of resolution, repair and failures, or `None` before the server runs.
    pub fn stats(&self) -> Option<StatsSnapshot> {
        self.running.get().map(|s| s.catalog().stats())
    }
}
