//! Token forwarding (`"forwardToken": true` on a `url` server): each downstream caller's calls
//! to that server go over a connection of the caller's own, opened on its first call with
//! `Authorization: Bearer <the caller's token>` in place of the configured one (the other
//! configured headers are kept). The upstream then decides for itself what each caller may do.
//!
//! The rules:
//! - A caller is known by its name (`disco.tokens[].caller`) and has exactly one token (the
//!   configuration refuses a second one), so the token a connection carries is never a guess.
//! - The anonymous caller (stdio downstream, or HTTP without `disco.tokens`) is the operator:
//!   its calls use the main connection, with the configured headers. A named caller's call
//!   never does: when its own connection cannot be opened (the token is refused, the server
//!   is unreachable), the call is answered with a tool error naming the server.
//! - The catalog (tools/list) always comes from the main connection.
//! - At most [`MAX_FORWARDED_CONNECTIONS`] connections per server are in the table; a new
//!   caller, once its connection is open, takes the place of the one used least recently,
//!   preferring one without calls in flight. One pushed out while its calls run closes when
//!   they are answered: no running call fails to make room.
//! - Every one of them is closed when the main connection ends (a restart, a shutdown): a
//!   connection is never older than the main connection it was opened beside.
//! - Concurrent first calls of one caller open one connection.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use disco_runtime::rmcp;
use disco_runtime::util;
use rmcp::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;

use tokio::task::JoinSet;

use crate::call::Calls;
use crate::client::{self, Endpoint, InitFailure, Role};
use crate::config::{ServerConfig, Transport};
use crate::headers::forwarded_headers;
use crate::relay::Heard;

/// How many callers of one forwarding server have a connection open at once.
pub const MAX_FORWARDED_CONNECTIONS: usize = 64;

/// A table bounded to `cap` entries, each used last at some tick: a new key takes the place
/// of the entry used least recently among those `busy` says are idle, or of the least recently
/// used one when none is.
pub(crate) struct Lru<V> {
    cap: usize,
    clock: u64,
    entries: HashMap<String, (V, u64)>,
}

impl<V: Clone> Lru<V> {
    pub(crate) fn new(cap: usize) -> Self {
        Lru {
            cap: cap.max(1),
            clock: 0,
            entries: HashMap::new(),
        }
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// The entry of `key`, now the most recently used.
    pub(crate) fn get(&mut self, key: &str) -> Option<V> {
        let now = self.tick();
        let (value, used) = self.entries.get_mut(key)?;
        *used = now;
        Some(value.clone())
    }

    /// Puts `value` under `key` as the most recently used; returns what left the table: the
    /// value `key` had, or the entry that made room.
    pub(crate) fn insert(&mut self, key: &str, value: V, busy: impl Fn(&V) -> bool) -> Option<V> {
        let now = self.tick();
        if let Some((old, used)) = self.entries.get_mut(key) {
            *used = now;
            return Some(std::mem::replace(old, value));
        }
        let mut evicted = None;
        if self.entries.len() >= self.cap {
            let victim = self
                .entries
                .iter()
                .min_by_key(|(_, (v, used))| (busy(v), *used))
                .map(|(k, _)| k.clone());
            evicted = victim.and_then(|k| self.entries.remove(&k)).map(|(v, _)| v);
        }
        self.entries.insert(key.to_string(), (value, now));
        evicted
    }

    /// The entry of `key`, its place in the order of use left as it is.
    pub(crate) fn peek(&self, key: &str) -> Option<V> {
        self.entries.get(key).map(|(v, _)| v.clone())
    }

    /// Takes `key`'s entry out if `which` says it is the one meant.
    pub(crate) fn remove_if(&mut self, key: &str, which: impl Fn(&V) -> bool) -> Option<V> {
        if !self.entries.get(key).is_some_and(|(v, _)| which(v)) {
            return None;
        }
        self.entries.remove(key).map(|(v, _)| v)
    }

    /// Everything, the table left empty.
    pub(crate) fn drain(&mut self) -> Vec<V> {
        self.entries.drain().map(|(_, (v, _))| v).collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    #[cfg(test)]
    fn keys(&self) -> Vec<String> {
        let mut keys: Vec<_> = self.entries.iter().map(|(k, (_, u))| (*u, k)).collect();
        keys.sort();
        keys.into_iter().map(|(_, k)| k.clone()).collect()
    }
}

/// One caller's connection, or its place while it is being opened. When the last reference
/// goes (it left the table and its last call ended), the connection closes: a caller pushed
/// out while a call runs keeps its connection until that call is answered.
pub(crate) struct Slot {
    /// Closes the connection (it is the connection's own cancellation token), also while it
    /// is still being opened.
    close: CancellationToken,
    conn: tokio::sync::Mutex<Opened>,
}

impl Slot {
    fn new(close: CancellationToken) -> Self {
        Slot {
            close,
            conn: tokio::sync::Mutex::new(Opened::Not),
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.close.cancel();
    }
}

/// Where a slot's connection is.
enum Opened {
    Not,
    Open(Conn),
    /// The open failed: the answer for the calls that waited for it.
    Failed(String),
}

/// An open connection with a caller's token.
#[derive(Clone)]
pub(crate) struct Conn {
    pub(crate) peer: Peer<RoleClient>,
    /// Its calls in flight, where its own log messages go (never another caller's calls).
    pub(crate) calls: Arc<Calls>,
}

/// A connection in use by one call: while it is held, its slot counts as busy (and stays
/// open), and the call counts among the server's calls in flight.
pub(crate) struct Lease {
    _slot: Arc<Slot>,
    _in_flight: InFlight,
    pub(crate) conn: Conn,
}

/// One call in flight on a caller's connection.
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        InFlight(count.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The state that changes together: the table, the connections being opened, and the token
/// the connections of the current main connection descend from.
struct State {
    table: Lru<Arc<Slot>>,
    /// Callers whose connection is being opened: they take a place in the table only once it
    /// is open, so a refused token pushes no one out.
    opening: HashMap<String, Arc<Slot>>,
    /// Cancelled when the main connection ends; a fresh one when it is up again.
    epoch: CancellationToken,
}

impl State {
    /// Takes `slot` out of wherever `caller`'s entry is it.
    fn forget(&mut self, caller: &str, slot: &Arc<Slot>) {
        self.leave_opening(caller, slot);
        self.table.remove_if(caller, |s| Arc::ptr_eq(s, slot));
    }

    /// Takes `slot` out of the connections being opened if `caller`'s entry there is it.
    fn leave_opening(&mut self, caller: &str, slot: &Arc<Slot>) {
        if self
            .opening
            .get(caller)
            .is_some_and(|s| Arc::ptr_eq(s, slot))
        {
            self.opening.remove(caller);
        }
    }
}

/// The per-caller connections of one forwarding server.
pub struct Forwarded {
    server: String,
    url: String,
    /// The configured headers (their `Authorization`, if any, is replaced).
    headers: BTreeMap<String, String>,
    /// Each caller's one token, by caller name.
    tokens: Arc<HashMap<String, String>>,
    open_timeout: Duration,
    /// The largest answer read from the upstream (`disco.maxMessageBytes`).
    max_message: usize,
    /// What the callers' connections read counts as heard from the server (the ping rule).
    heard: Arc<Heard>,
    shutdown: CancellationToken,
    state: Mutex<State>,
    opened: AtomicU64,
    /// Calls in flight on the callers' connections.
    running: Arc<AtomicUsize>,
    /// The tasks serving the connections, awaited at shutdown (so that each one's end, the
    /// session's DELETE included, is sent before the gateway exits).
    tasks: Mutex<JoinSet<()>>,
}

impl Forwarded {
    /// The table of `config`'s server, when it forwards its callers' tokens.
    pub(crate) fn for_server(
        config: &ServerConfig,
        tokens: Arc<HashMap<String, String>>,
        open_timeout: Duration,
        max_message: usize,
        heard: Arc<Heard>,
        shutdown: &CancellationToken,
    ) -> Option<Self> {
        let Transport::Http {
            url,
            headers,
            forward_token: true,
            ..
        } = &config.transport
        else {
            return None;
        };
        // Until the main connection is up, nothing may open.
        let epoch = CancellationToken::new();
        epoch.cancel();
        Some(Forwarded {
            server: config.name.clone(),
            url: url.clone(),
            headers: headers.clone(),
            tokens,
            open_timeout,
            max_message,
            heard,
            shutdown: shutdown.clone(),
            state: Mutex::new(State {
                table: Lru::new(MAX_FORWARDED_CONNECTIONS),
                opening: HashMap::new(),
                epoch,
            }),
            opened: AtomicU64::new(0),
            running: Arc::default(),
            tasks: Mutex::new(JoinSet::new()),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        util::lock(&self.state)
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, JoinSet<()>> {
        util::lock(&self.tasks)
    }

    #[cfg(test)]
    pub(crate) fn heard(&self) -> &Arc<Heard> {
        &self.heard
    }

    /// The main connection is up: connections may be opened beside it. Called before the
    /// main connection is handed to calls, so that none of them finds the old, closed epoch.
    /// Public for the tests.
    #[doc(hidden)]
    pub fn resume(&self) {
        let mut state = self.state();
        if state.epoch.is_cancelled() {
            state.epoch = self.shutdown.child_token();
        }
    }

    /// The main connection ended: every connection is closed, those being opened and those
    /// with calls running too, and none opens until it is up again. Public for the tests.
    #[doc(hidden)]
    pub fn close_all(&self) {
        let slots = {
            let mut state = self.state();
            state.epoch.cancel();
            let mut slots = state.table.drain();
            slots.extend(state.opening.drain().map(|(_, s)| s));
            slots
        };
        for slot in slots {
            slot.close.cancel();
        }
    }

    /// Waits, at most `within`, for the tasks serving the connections to end (a shutdown
    /// has closed them); those still running then are stopped.
    pub(crate) async fn wait_closed(&self, within: Duration) {
        let mut tasks = std::mem::take(&mut *self.tasks());
        let all = async { while tasks.join_next().await.is_some() {} };
        let _ = tokio::time::timeout(within, all).await;
    }

    /// How many callers have a connection open or being opened.
    pub fn open_connections(&self) -> usize {
        let state = self.state();
        state.table.len() + state.opening.len()
    }

    /// The connection `caller` has in the table now, if open (its place in the order of use
    /// is left as it is). Public for the tests.
    #[doc(hidden)]
    pub async fn connection(&self, caller: &str) -> Option<Peer<RoleClient>> {
        let slot = self.state().table.peek(caller)?;
        let opened = slot.conn.lock().await;
        match &*opened {
            Opened::Open(c) => Some(c.peer.clone()),
            _ => None,
        }
    }

    /// How many calls run on the callers' connections now (they keep the upstream busy as
    /// calls on the main connection do).
    pub fn calls_in_flight(&self) -> usize {
        self.running.load(Ordering::Relaxed)
    }

    /// How many connections were opened since start-up (each with one caller's token);
    /// attempts that failed are not counted.
    pub fn opened(&self) -> u64 {
        self.opened.load(Ordering::Relaxed)
    }

    /// The connection of `caller`, opened now if it has none. The error is the call's answer.
    pub(crate) async fn lease(&self, caller: &str) -> Result<Lease, String> {
        let server = &self.server;
        let Some(token) = self.tokens.get(caller) else {
            // Callers are named by the gateway's own token table, so this is a caller the
            // configuration does not know: nothing of the operator's is used in its place.
            return Err(format!(
                "Server `{server}` takes each caller's own token, and caller `{caller}` has none \
                 in the gateway's configuration; the call was not run."
            ));
        };
        let in_flight = InFlight::new(&self.running);
        let slot = {
            let mut state = self.state();
            if state.epoch.is_cancelled() {
                // The main connection is down or not yet up: no place is taken.
                return Err(closed(server));
            }
            let found = match state.table.get(caller) {
                Some(slot) => Some(slot),
                None => state.opening.get(caller).cloned(),
            };
            match found {
                Some(slot) if !slot.close.is_cancelled() => slot,
                _ => {
                    let slot = Arc::new(Slot::new(state.epoch.child_token()));
                    state.opening.insert(caller.to_string(), slot.clone());
                    slot
                }
            }
        };
        let lease = |conn: Conn| Lease {
            _slot: slot.clone(),
            _in_flight: in_flight,
            conn,
        };
        // One opener at a time per slot: a concurrent first call waits here and finds the
        // connection the first one opened (or its failure).
        let mut opened = slot.conn.lock().await;
        match &*opened {
            // A connection closed (its slot, or its transport) is never handed out.
            Opened::Open(c) if !slot.close.is_cancelled() && !c.peer.is_transport_closed() => {
                return Ok(lease(c.clone()));
            }
            Opened::Failed(answer) => return Err(answer.clone()),
            _ => {}
        }
        if slot.close.is_cancelled() {
            drop(opened);
            self.state().forget(caller, &slot);
            return Err(closed(server));
        }
        let calls = Arc::new(Calls::default());
        // Built only to open a connection, not on every call (the configuration has checked
        // the token and the headers already).
        let service = match forwarded_headers(&self.headers, token) {
            Ok(headers) => client::open(
                server,
                Endpoint::Http {
                    url: &self.url,
                    headers,
                    max: self.max_message,
                    // A forwarding server sends each caller's own token, never a sign-in.
                    auth: None,
                },
                Role::Beside,
                calls.clone(),
                self.heard.clone(),
                self.open_timeout,
                slot.close.clone(),
            )
            .await
            // An HTTP connection: its calls take rmcp's loop, there is no other way.
            .map(|(running, _)| running)
            .map_err(|failure| {
                let why = failure.detail.replace(token.as_str(), "(token)");
                tracing::warn!(server = %server, caller = %caller, reason = %why,
                    "connection with the caller's token failed");
                if slot.close.is_cancelled() {
                    closed(server)
                } else {
                    failed(server, &failure)
                }
            }),
            Err(e) => Err(format!("Server `{server}`: {e}")),
        };
        match service {
            Ok(service) => {
                let conn = Conn {
                    peer: service.peer().clone(),
                    calls,
                };
                {
                    let mut tasks = self.tasks();
                    while tasks.try_join_next().is_some() {}
                    // The service lives until the slot closes or the transport ends.
                    tasks.spawn(async move {
                        let _ = service.waiting().await;
                    });
                }
                *opened = Opened::Open(conn.clone());
                drop(opened);
                let out = {
                    let mut state = self.state();
                    if slot.close.is_cancelled() {
                        // Closed while it opened (a restart, a shutdown).
                        state.forget(caller, &slot);
                        return Err(closed(server));
                    }
                    state.leave_opening(caller, &slot);
                    if state
                        .table
                        .peek(caller)
                        .is_some_and(|s| Arc::ptr_eq(&s, &slot))
                    {
                        None
                    } else {
                        // Room is made now that the connection is open. A slot held by a
                        // call is busy: the table's own reference is one.
                        state
                            .table
                            .insert(caller, slot.clone(), |s| Arc::strong_count(s) > 1)
                    }
                };
                // What left the table closes when its last call ends (`Slot`'s drop).
                drop(out);
                self.opened.fetch_add(1, Ordering::Relaxed);
                Ok(lease(conn))
            }
            Err(answer) => {
                *opened = Opened::Failed(answer.clone());
                drop(opened);
                // A refused token keeps no place another caller could use.
                self.state().forget(caller, &slot);
                slot.close.cancel();
                Err(answer)
            }
        }
    }
}

/// The answer to a call that found the caller's connection closed: the main connection is
/// restarting (or not yet up), or the gateway is shutting down.
fn closed(server: &str) -> String {
    format!(
        "Server `{server}` is not available: its connection with the caller's token is closed \
         while the server restarts; the call was not run. Try again shortly."
    )
}

/// The answer to a call whose connection with the caller's token could not be opened: a
/// refusal (rmcp's typed 401/403) is said as such; anything else only as unreachable (what
/// went wrong, which may name the upstream's address, is in the gateway's log).
fn failed(server: &str, failure: &InitFailure) -> String {
    let what = if failure.refused {
        "refused the caller's bearer token (authorization required)"
    } else {
        "could not be reached with the caller's bearer token"
    };
    format!(
        "Server `{server}` {what}; the call was not run. This server is given each caller's \
         own token, never the gateway's."
    )
}

#[cfg(test)]
mod tests;
