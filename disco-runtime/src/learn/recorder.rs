//! The recorder: a [`DiscoverySink`] that hands each event to a bounded queue on the call's
//! path, and a thread of its own that names the caller by an HMAC and writes the events to an
//! [`EventStore`] in batches. A full queue drops the event (and counts it): recording never
//! slows a call down by waiting.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::store::{EventStore, StoredEvent};
use crate::catalog::{Discovery, DiscoverySink};
use crate::tool::Caller;

/// How long events are kept by default: 30 days.
pub const DEFAULT_TTL: Duration = Duration::from_secs(30 * 24 * 3600);
/// How many events wait for the writer at most by default; past it new ones are dropped.
pub const DEFAULT_QUEUE: usize = 4096;
/// How long the writer sleeps when the queue is empty.
const POLL: Duration = Duration::from_millis(50);
/// The file of the secret callers are named under, in the state directory.
pub const SECRET_FILE: &str = "learning.key";

/// The seconds since the Unix epoch now.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The 32 random bytes callers are named under: read from `dir/learning.key`, or made there
/// (mode 0600, the directory 0700) at first use.
pub fn secret_in(dir: &Path) -> Result<[u8; 32], String> {
    let path = dir.join(SECRET_FILE);
    match std::fs::read(&path) {
        Ok(bytes) => {
            return <[u8; 32]>::try_from(bytes.as_slice())
                .map_err(|_| format!("{}: not a 32-byte secret", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("{}: {e}", path.display())),
    }
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| format!("no random bytes for the secret: {e}"))?;
    super::files::private_dir(dir)?;
    let temp = path.with_extension(format!("key.{}.tmp", std::process::id()));
    super::files::write_private(&temp, &secret)?;
    // Another process may have made one meanwhile: the first one made is the secret.
    if let Err(e) = std::fs::hard_link(&temp, &path) {
        let _ = std::fs::remove_file(&temp);
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            return secret_in(dir);
        }
        return Err(format!("{}: {e}", path.display()));
    }
    let _ = std::fs::remove_file(&temp);
    Ok(secret)
}

/// How a [`Recorder`] keeps events.
#[derive(Clone, Debug)]
pub struct RecorderOptions {
    /// How long an event is kept (default [`DEFAULT_TTL`]).
    pub ttl: Duration,
    /// How many events may wait for the writer (default [`DEFAULT_QUEUE`]).
    pub queue: usize,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        RecorderOptions {
            ttl: DEFAULT_TTL,
            queue: DEFAULT_QUEUE,
        }
    }
}

enum Message {
    Event {
        caller: Option<String>,
        session: Option<u64>,
        event: Discovery,
    },
    Flush(SyncSender<()>),
}

/// Records a catalog's discovery events into a store (give it to
/// [`CatalogBuilder::discovery`](crate::catalog::CatalogBuilder::discovery) or
/// [`Server::discovery`](crate::Server::discovery)).
pub struct Recorder {
    queue: SyncSender<Message>,
    dropped: AtomicU64,
}

impl Recorder {
    /// A recorder writing into `store`, naming callers under `secret`; its writer thread
    /// runs until the recorder is dropped, expiring old events at start and hourly.
    pub fn new(
        store: Arc<dyn EventStore>,
        secret: [u8; 32],
        options: RecorderOptions,
    ) -> std::io::Result<Recorder> {
        let (queue, rx) = sync_channel(options.queue.max(1));
        // A per-process prefix for session numbers: sessions of two runs never meet.
        let run = hex(&{
            let mut b = [0u8; 8];
            let _ = getrandom::fill(&mut b);
            b
        });
        std::thread::Builder::new()
            .name("disco-learning".into())
            .spawn(move || write_events(rx, store, secret, options.ttl, run))?;
        Ok(Recorder {
            queue,
            dropped: AtomicU64::new(0),
        })
    }

    /// Waits until every event recorded before this call is in the store.
    pub fn flush(&self) {
        let (tx, rx) = sync_channel(1);
        if self.queue.send(Message::Flush(tx)).is_ok() {
            let _ = rx.recv();
        }
    }

    /// How many events were dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl DiscoverySink for Recorder {
    fn record(&self, caller: &Caller, session: Option<u64>, event: Discovery) {
        let message = Message::Event {
            caller: caller.id().map(str::to_string),
            session,
            event,
        };
        if let Err(TrySendError::Full(_)) = self.queue.try_send(message) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The writer thread: batches of events, each caller named by its HMAC (remembered for at
/// most 1,024 callers at a time), stamped with the time it takes them (to the second, as
/// they are kept). It polls the queue rather than waiting on it: a call that hands over an
/// event then never has a sleeping thread to wake, which would cost it a system call.
fn write_events(
    rx: Receiver<Message>,
    store: Arc<dyn EventStore>,
    secret: [u8; 32],
    ttl: Duration,
    run: String,
) {
    const BATCH: usize = 256;
    let mut names: HashMap<Option<String>, String> = HashMap::new();
    let mut batch: Vec<StoredEvent> = Vec::with_capacity(BATCH);
    let mut last_expiry = 0u64;
    let expire = |store: &dyn EventStore, last: &mut u64| {
        let now = now();
        if now.saturating_sub(*last) >= 3600 {
            *last = now;
            if let Err(e) = store.expire(now.saturating_sub(ttl.as_secs())) {
                tracing::warn!(error = %e, "expiring discovery events failed");
            }
        }
    };
    expire(&*store, &mut last_expiry);
    loop {
        let message = match rx.try_recv() {
            Ok(m) => Some(m),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                write_batch(&*store, &mut batch);
                return;
            }
        };
        match message {
            Some(Message::Event {
                caller,
                session,
                event,
            }) => {
                if names.len() >= 1024 {
                    names.clear();
                }
                let caller = names
                    .entry(caller)
                    .or_insert_with_key(|id| caller_hmac(&secret, id.as_deref()))
                    .clone();
                batch.push(StoredEvent {
                    at: now(),
                    caller,
                    session: session.map(|s| format!("{run}-{s:x}")),
                    event: event.bounded(),
                });
                if batch.len() >= BATCH {
                    write_batch(&*store, &mut batch);
                }
            }
            Some(Message::Flush(done)) => {
                write_batch(&*store, &mut batch);
                let _ = done.send(());
            }
            None => {
                write_batch(&*store, &mut batch);
                expire(&*store, &mut last_expiry);
                std::thread::sleep(POLL);
            }
        }
    }
}

fn write_batch(store: &dyn EventStore, batch: &mut Vec<StoredEvent>) {
    if batch.is_empty() {
        return;
    }
    if let Err(e) = store.append(batch) {
        tracing::warn!(error = %e, events = batch.len(), "discovery events not kept");
    }
    batch.clear();
}

/// A caller's name in the store: HMAC-SHA256 of its identity under the secret, in hex. Every
/// anonymous caller (stdio, HTTP without a token) is one caller.
pub fn caller_hmac(secret: &[u8; 32], id: Option<&str>) -> String {
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(secret) else {
        // HMAC takes a key of any length; this is unreachable, and an empty name is safe.
        return String::new();
    };
    match id {
        Some(id) => {
            mac.update(b"caller:");
            mac.update(id.as_bytes());
        }
        None => mac.update(b"anonymous"),
    }
    hex(&mac.finalize().into_bytes())
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
