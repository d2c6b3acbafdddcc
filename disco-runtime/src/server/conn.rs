//! The HTTP/1.1 connections: accepted, limited and timed here, before any request reaches the
//! router (and its bearer check).
//!
//! axum's `serve` keeps every connection for as long as the client likes: a client that sends
//! half a request head holds its connection (and a file descriptor) forever, and enough of
//! them leave no descriptor for anyone else. This loop serves the same router with hyper's
//! HTTP/1 connection directly, which has the settings axum does not expose:
//!
//! - a header read timeout (hyper's own, with tokio's timer): a head not complete in time gets
//!   408 and the connection is closed;
//! - a cap on open connections: at the cap, a new connection closes the oldest one that is
//!   not in the middle of a request (idle, or still sending its head), so clients that hold
//!   connections open without sending requests cannot lock others out; when every connection
//!   is busy, the new one is closed at once.
//!
//! The body read timeout is the guard's (guard.rs), where the body is read.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio_util::sync::CancellationToken;
use tower_service::Service as _;

use super::headers::HeaderRules;

pub(crate) struct Limits {
    pub header_read_timeout: Duration,
    pub max_connections: usize,
    pub headers: HeaderRules,
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets open connections finish
/// their requests (graceful shutdown) and returns when all are closed.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let open = Arc::new(Open::new(limits.max_connections));
    let headers = Arc::new(limits.headers);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let graceful = CancellationToken::new();
    // Every connection task holds a receiver; the sender is closed when all are gone.
    let (all_closed_tx, all_closed_rx) = tokio::sync::watch::channel(());
    let mut shutdown = pin!(shutdown);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of descriptors or a connection reset before it was taken: the
                    // listener itself is fine. Pause briefly rather than spin.
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let Some((id, slot)) = open.admit() else {
            tracing::debug!("every connection is busy: closing a new one");
            continue;
        };
        // rmcp writes an SSE event and the end of the body separately: with Nagle on, every
        // call would stall ~40 ms waiting for the peer's delayed ACK.
        let _ = tcp.set_nodelay(true);
        let service = ConnService {
            app: app.clone(),
            slot: slot.clone(),
            headers: headers.clone(),
        };
        let connection = builder.serve_connection(TokioIo::new(tcp), service);
        let graceful = graceful.clone();
        let all_closed = all_closed_rx.clone();
        let open = open.clone();
        tokio::spawn(async move {
            let _forget = Forget(&open, id);
            let mut connection = pin!(connection);
            let mut stopping = false;
            loop {
                tokio::select! {
                    result = connection.as_mut() => {
                        if let Err(e) = result {
                            tracing::debug!(error = %e, "connection ended");
                        }
                        break;
                    }
                    // Dropping the connection closes it.
                    _ = slot.evict.cancelled() => break,
                    _ = graceful.cancelled(), if !stopping => {
                        stopping = true;
                        connection.as_mut().graceful_shutdown();
                    }
                }
            }
            drop(all_closed);
        });
    }
    graceful.cancel();
    drop(all_closed_rx);
    all_closed_tx.closed().await;
    Ok(())
}

/// Serves `app`, a router of a program's own beside its MCP endpoint (the gateway's metrics),
/// on `listener` with the connections of the MCP endpoint: at most `max_connections` open (at
/// the cap a new connection closes the oldest idle one, or is closed itself when every one is
/// busy), each request head read within `header_read_timeout`, the header rules checked.
/// Until `shutdown` resolves. Public, hidden, for disco-gateway: no API.
#[doc(hidden)]
pub async fn serve_bounded(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    max_connections: usize,
    header_read_timeout: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = Limits {
        header_read_timeout,
        max_connections,
        headers: HeaderRules::new(&[]),
    };
    serve(listener, app, limits, shutdown).await
}

/// The open connections, oldest first.
struct Open {
    max: usize,
    slots: Mutex<BTreeMap<u64, Arc<Slot>>>,
    next: AtomicU64,
}

struct Slot {
    /// Requests whose response has not been sent whole yet.
    in_flight: AtomicUsize,
    evict: CancellationToken,
}

impl Open {
    fn new(max: usize) -> Self {
        Open {
            max: max.max(1),
            slots: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(0),
        }
    }

    /// A place for a new connection, closing the oldest waiting one if all are taken; `None`
    /// when every connection is in the middle of a request.
    fn admit(&self) -> Option<(u64, Arc<Slot>)> {
        let mut slots = crate::util::lock(&self.slots);
        if slots.len() >= self.max {
            let waiting = slots
                .iter()
                .find(|(_, s)| s.in_flight.load(Ordering::Acquire) == 0)
                .map(|(id, _)| *id)?;
            if let Some(slot) = slots.remove(&waiting) {
                slot.evict.cancel();
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let slot = Arc::new(Slot {
            in_flight: AtomicUsize::new(0),
            evict: CancellationToken::new(),
        });
        slots.insert(id, slot.clone());
        Some((id, slot))
    }
}

/// Removes a connection from [`Open`] when its task ends.
struct Forget<'a>(&'a Open, u64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        crate::util::lock(&self.0.slots).remove(&self.1);
    }
}

/// One request in flight on a connection, until its response body is sent or dropped.
struct Busy(Arc<Slot>);

impl Busy {
    fn new(slot: &Arc<Slot>) -> Self {
        slot.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(slot.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its request counted as in flight until it is done.
pub(crate) struct Tracked {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The router behind one connection: header rules first, then the router (bearer check,
/// guard, rmcp).
struct ConnService {
    app: axum::Router,
    slot: Arc<Slot>,
    headers: Arc<HeaderRules>,
}

impl hyper::service::Service<hyper::Request<Incoming>> for ConnService {
    type Response = http::Response<Tracked>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Tracked>, Infallible>> + Send>>;

    fn call(&self, req: hyper::Request<Incoming>) -> Self::Future {
        let busy = Busy::new(&self.slot);
        let track = move |response: Response| response.map(|body| Tracked { body, _busy: busy });
        if let Some(refused) = self.headers.refuse(&req) {
            return Box::pin(std::future::ready(Ok(track(refused))));
        }
        let mut app = self.app.clone();
        let req: Request = req.map(Body::new);
        Box::pin(async move {
            let response = match app.call(req).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            Ok(track(response))
        })
    }
}
