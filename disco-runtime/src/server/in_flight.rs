//! The ids of the requests in flight in a session whose calls run beside rmcp's loop (over
//! stdio, stdio_calls.rs; over HTTP, http_calls.rs), and what settles each call run there
//! however its task ends.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use rmcp::model::RequestId;
use tokio_util::sync::CancellationToken;

use crate::util::lock;

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
    closed: bool,
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

    /// The session ended: every call run here is cancelled, none is answered, and no call
    /// starts here any more.
    pub(super) fn cancel_all(&mut self) {
        self.closed = true;
        for (_, running) in self.running.drain() {
            running.ct.cancel();
        }
    }

    /// Whether the session ended ([`InFlight::cancel_all`]).
    pub(super) fn is_closed(&self) -> bool {
        self.closed
    }

    pub(super) fn start(&mut self, id: RequestId, ct: CancellationToken) -> u64 {
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
pub(super) struct Settle {
    in_flight: Arc<Mutex<InFlight>>,
    id: RequestId,
    serial: u64,
    ct: CancellationToken,
    settled: bool,
}

impl Settle {
    /// The call `serial` ([`InFlight::start`]) under `id`, with its token.
    pub(super) fn new(
        in_flight: Arc<Mutex<InFlight>>,
        id: RequestId,
        serial: u64,
        ct: CancellationToken,
    ) -> Self {
        Settle {
            in_flight,
            id,
            serial,
            ct,
            settled: false,
        }
    }

    /// Frees the id and cancels the call's token: whether to send the answer.
    pub(super) fn settle(&mut self) -> bool {
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
        let in_flight = Arc::new(Mutex::new(InFlight::default()));
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
