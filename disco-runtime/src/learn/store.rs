//! Where discovery events are kept: one trait ([`EventStore`]), an in-memory store for tests
//! and replays ([`MemoryStore`]), and SQLite (`sqlite.rs`, feature `learning`).

use std::collections::VecDeque;
use std::fmt;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::catalog::Discovery;

/// An event as a store keeps it: when (seconds since the Unix epoch), who (the caller's
/// identity as an HMAC-SHA256 under the store's secret, in hex; never the identity itself),
/// in which session (`None`: a call without one), and what (names, a query, tool names;
/// never an argument value).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredEvent {
    /// When, in seconds since the Unix epoch.
    pub at: u64,
    /// The caller's HMAC, in hex.
    pub caller: String,
    /// The session, unique across runs; `None` without one.
    pub session: Option<String>,
    /// What happened.
    pub event: Discovery,
}

impl StoredEvent {
    /// The name the event is about (a requested name, a query or a called tool) and the
    /// tool it was corrected to: what [`Forget`] matches.
    pub(crate) fn names(&self) -> (&str, &str) {
        match &self.event {
            Discovery::Unknown { requested, .. } => (requested, ""),
            Discovery::Corrected {
                requested,
                resolved,
                ..
            } => (requested, resolved),
            Discovery::Search { query, .. } => (query, ""),
            Discovery::Call { tool, .. } => (tool, ""),
        }
    }

    /// Roughly what the event weighs in memory or on disk, in bytes.
    pub(crate) fn weight(&self) -> usize {
        let list = |v: &[String]| v.iter().map(|s| s.len() + 24).sum::<usize>();
        let body = match &self.event {
            Discovery::Unknown {
                requested,
                suggested,
            } => requested.len() + list(suggested),
            Discovery::Corrected {
                requested,
                resolved,
                rule,
            } => requested.len() + resolved.len() + rule.len(),
            Discovery::Search { query, shown } => query.len() + list(shown),
            Discovery::Call { tool, .. } => tool.len(),
        };
        96 + self.caller.len() + self.session.as_ref().map_or(0, String::len) + body
    }
}

/// What to forget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Forget {
    /// Every event.
    All,
    /// Every event that names this tool or name: calls of it, names corrected to it, unknown
    /// names spelled so, queries written so.
    Name(String),
    /// Every event of one caller (its HMAC, as [`StoredEvent::caller`] shows it).
    Caller(String),
}

impl Forget {
    /// The same request with its name made [`bounded_text`](crate::catalog::bounded_text), as
    /// the events' names are: a name of control characters or past the length limit forgets
    /// the events stored under it.
    pub fn bounded(self) -> Forget {
        match self {
            Forget::Name(n) => Forget::Name(crate::catalog::bounded_text(n)),
            other => other,
        }
    }

    pub(crate) fn matches(&self, e: &StoredEvent) -> bool {
        match self {
            Forget::All => true,
            Forget::Name(n) => {
                let (a, b) = e.names();
                a == n || b == n
            }
            Forget::Caller(c) => &e.caller == c,
        }
    }
}

/// Why a store failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

/// Where discovery events are kept. A store is bounded: past its size it deletes its oldest
/// events first, and it never holds an event older than its time to live once `expire` ran.
/// A fleet of processes that share one store learns together.
pub trait EventStore: Send + Sync + 'static {
    /// Keeps `events` (oldest first), deleting the oldest kept ones if the store would
    /// exceed its size.
    fn append(&self, events: &[StoredEvent]) -> Result<(), StoreError>;
    /// Every event kept, oldest first.
    fn events(&self) -> Result<Vec<StoredEvent>, StoreError>;
    /// Deletes the events older than `before` (seconds since the epoch); how many.
    fn expire(&self, before: u64) -> Result<u64, StoreError>;
    /// Deletes what `what` names; how many events.
    fn forget(&self, what: &Forget) -> Result<u64, StoreError>;
}

/// Events in memory, at most `max_bytes` of them by [`StoredEvent`]'s weight: for tests,
/// replays and a process that keeps nothing on disk.
pub struct MemoryStore {
    max_bytes: usize,
    inner: Mutex<(VecDeque<StoredEvent>, usize)>,
}

impl MemoryStore {
    /// A store of at most `max_bytes`.
    pub fn new(max_bytes: usize) -> Self {
        MemoryStore {
            max_bytes,
            inner: Mutex::new((VecDeque::new(), 0)),
        }
    }

    /// The bytes held now, by [`StoredEvent`]'s weight.
    pub fn bytes(&self) -> usize {
        self.lock().1
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (VecDeque<StoredEvent>, usize)> {
        // A panic elsewhere while holding the lock leaves whole events: keep going.
        crate::util::lock(&self.inner)
    }
}

impl EventStore for MemoryStore {
    fn append(&self, events: &[StoredEvent]) -> Result<(), StoreError> {
        let mut guard = self.lock();
        let (queue, bytes) = &mut *guard;
        for e in events {
            let w = e.weight();
            if w > self.max_bytes {
                continue;
            }
            while *bytes + w > self.max_bytes {
                match queue.pop_front() {
                    Some(old) => *bytes -= old.weight(),
                    None => break,
                }
            }
            *bytes += w;
            queue.push_back(e.clone());
        }
        Ok(())
    }

    fn events(&self) -> Result<Vec<StoredEvent>, StoreError> {
        Ok(self.lock().0.iter().cloned().collect())
    }

    fn expire(&self, before: u64) -> Result<u64, StoreError> {
        self.forget_where(|e| e.at < before)
    }

    fn forget(&self, what: &Forget) -> Result<u64, StoreError> {
        self.forget_where(|e| what.matches(e))
    }
}

impl MemoryStore {
    fn forget_where(&self, gone: impl Fn(&StoredEvent) -> bool) -> Result<u64, StoreError> {
        let mut guard = self.lock();
        let (queue, bytes) = &mut *guard;
        let before = queue.len();
        queue.retain(|e| !gone(e));
        *bytes = queue.iter().map(StoredEvent::weight).sum();
        Ok((before - queue.len()) as u64)
    }
}
