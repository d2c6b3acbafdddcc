//! The server-wide budget of memory for requests in flight over HTTP.
//!
//! A request body is read whole, then parsed by rmcp into a tree of values (its untagged
//! message enums buffer the input once more on the way): a body of tiny values peaks at
//! about 100 times its size before any handler runs, and the parsed arguments live until the
//! call is answered. The body limit and the value budget bound one request; this budget bounds
//! all of them together. Every POST reserves the most its body can cost
//! ([`BodyCost::of`]) before a byte of its body is read, and holds it until its answer has been
//! sent; a request that finds no room waits, holding no body bytes, at most [`WAIT`], then is
//! answered 503 with `Retry-After`.
//!
//! Room is taken by whoever fits when it frees, not in arrival order, and a quarter of the
//! budget is kept for bodies of at most [`SMALL_BODY`] bytes: a flood of large bodies delays
//! no small request (the usual tool call) by more than the time one of them takes to finish.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

/// How long a request waits for room in the budget before it gets 503.
pub(crate) const WAIT: Duration = Duration::from_secs(1);

/// Bodies of at most this many bytes may use the part of the budget kept for them.
pub(crate) const SMALL_BODY: usize = 64 * 1024;

/// The most memory one request may take, estimated from its body before it is read: see
/// SECURITY.md ("HTTP") and BENCHMARKS.md ("Memory per request") for the measurements behind
/// each factor.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyCost {
    /// The most the server reads of one body.
    max_body_bytes: usize,
    /// The most JSON values a body may hold before it is refused unparsed.
    max_values: usize,
}

/// Peak memory per byte of a body made of the tiniest values (`0,` or `[],`): rmcp's parse
/// peaks at 53-106 times such a body, and the server's whole request at about 100 times.
const PER_BODY_BYTE_TINY: usize = 128;
/// Peak memory per JSON value at most (the tree node, rmcp's buffered copy, the allocator's
/// rounding): measured about 190 bytes.
const PER_VALUE: usize = 256;
/// Peak memory per byte of a body whose bytes sit in a few large values (strings): the body
/// read, rmcp's copy of it, the parsed strings and the buffered copy: measured 4.1 times.
const PER_BODY_BYTE_LARGE: usize = 5;
/// What any request costs on top of its body: rmcp's per-request service and transport, the
/// response.
const PER_REQUEST: usize = 32 * 1024;

impl BodyCost {
    pub(crate) fn new(max_body_bytes: usize, max_values: usize) -> Self {
        BodyCost {
            max_body_bytes,
            max_values,
        }
    }

    /// The most a body of `len` bytes can cost (`len` above the body limit costs what a body
    /// at the limit does: it is refused when it reaches the limit).
    pub(crate) fn of(&self, len: usize) -> usize {
        let len = len.min(self.max_body_bytes);
        let tiny = len
            .saturating_mul(PER_BODY_BYTE_TINY)
            .min(self.max_values.saturating_mul(PER_VALUE));
        tiny.saturating_add(len.saturating_mul(PER_BODY_BYTE_LARGE))
            .saturating_add(PER_REQUEST)
    }

    /// The most one request can cost.
    pub(crate) fn most(&self) -> usize {
        self.of(self.max_body_bytes)
    }

    /// The default budget: room for four requests at the most one can cost, or one per
    /// connection when fewer connections may be open.
    pub(crate) fn default_budget(&self, max_connections: usize) -> usize {
        self.most().saturating_mul(max_connections.clamp(1, 4))
    }
}

/// The budget: bytes reserved by requests in flight, and the requests waiting for room.
pub(crate) struct Budget {
    capacity: usize,
    used: Mutex<usize>,
    freed: Notify,
}

/// Room taken in the [`Budget`], given back when dropped.
pub(crate) struct Reservation {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Budget {
    pub(crate) fn new(capacity: usize) -> Arc<Budget> {
        Arc::new(Budget {
            capacity: capacity.max(1),
            used: Mutex::new(0),
            freed: Notify::new(),
        })
    }

    /// Room for `bytes` if there is some now. A request that costs more than the whole budget
    /// takes all of it (it runs alone rather than never); a body over [`SMALL_BODY`]
    /// (`small == false`) leaves a quarter of the budget to small ones.
    fn try_take(self: &Arc<Self>, bytes: usize, small: bool) -> Option<Reservation> {
        let limit = if small {
            self.capacity
        } else {
            self.capacity - self.capacity / 4
        };
        let bytes = bytes.min(limit);
        let mut used = crate::util::lock(&self.used);
        if used.saturating_add(bytes) > limit {
            return None;
        }
        *used += bytes;
        Some(Reservation {
            budget: self.clone(),
            bytes,
        })
    }

    /// Room for `bytes`, waiting at most `wait` for it to free; `None` when it did not.
    pub(crate) async fn take(
        self: &Arc<Self>,
        bytes: usize,
        small: bool,
        wait: Duration,
    ) -> Option<Reservation> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Registered before the check, so a release between the check and the wait is
            // not missed.
            let freed = self.freed.notified();
            let mut freed = std::pin::pin!(freed);
            freed.as_mut().enable();
            if let Some(reservation) = self.try_take(bytes, small) {
                return Some(reservation);
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return None;
            }
        }
    }

    #[cfg(test)]
    fn used(&self) -> usize {
        *crate::util::lock(&self.used)
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        {
            let mut used = crate::util::lock(&self.budget.used);
            *used = used.saturating_sub(self.bytes);
        }
        self.budget.freed.notify_waiters();
    }
}

/// A response body that holds what its request holds (its [`Reservation`], or a session's
/// [`Activity`](super::sessions::Activity)) until it has been sent (or dropped): the parsed arguments of a call live until its answer is produced, and in sessions
/// mode the answer comes on this body's stream after the head was sent.
pub(crate) struct Held<G = Reservation> {
    pub(crate) body: axum::body::Body,
    pub(crate) _held: G,
}

impl<G: Unpin> http_body::Body for Held<G> {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_grows_with_the_body_and_stops_at_the_limits() {
        let cost = BodyCost::new(4 * 1024 * 1024, 100_064);
        let mut last = 0;
        for len in [
            0,
            1,
            100,
            1_000,
            10_000,
            100_000,
            1_000_000,
            4 * 1024 * 1024,
        ] {
            let c = cost.of(len);
            assert!(c > last, "{len}: {c} after {last}");
            assert!(c >= len * 5, "{len}: {c}");
            last = c;
        }
        assert_eq!(cost.of(usize::MAX), cost.most());
        assert_eq!(cost.of(4 * 1024 * 1024 + 1), cost.most());
        // A body of tiny values is charged per byte until the value budget caps it.
        assert_eq!(cost.of(1_000), 1_000 * (128 + 5) + 32 * 1024);
        assert_eq!(cost.most(), 100_064 * 256 + 4 * 1024 * 1024 * 5 + 32 * 1024);
        assert_eq!(cost.default_budget(1), cost.most());
        assert_eq!(cost.default_budget(16_384), 4 * cost.most());
    }

    #[tokio::test]
    async fn room_is_taken_and_given_back_and_small_bodies_keep_a_quarter() {
        let budget = Budget::new(1_000);
        let big = budget.take(700, false, Duration::ZERO).await;
        assert!(big.is_some());
        // A second large one would pass three quarters: it waits, then gives up.
        assert!(budget
            .take(100, false, Duration::from_millis(50))
            .await
            .is_none());
        // A small one fits in the rest.
        let small = budget.take(300, true, Duration::ZERO).await;
        assert!(small.is_some());
        assert_eq!(budget.used(), 1_000);
        assert!(budget.take(1, true, Duration::ZERO).await.is_none());
        // A waiter gets the room freed while it waits.
        let waiter = {
            let budget = budget.clone();
            tokio::spawn(async move { budget.take(450, false, Duration::from_secs(5)).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(big);
        let got = waiter.await.ok().flatten();
        assert!(got.is_some());
        assert_eq!(budget.used(), 750);
        drop(got);
        drop(small);
        assert_eq!(budget.used(), 0);
        // More than the whole budget: alone, never more than the budget.
        let huge = budget.take(10_000, true, Duration::ZERO).await;
        assert_eq!(budget.used(), 1_000);
        drop(huge);
        let huge = budget.take(10_000, false, Duration::ZERO).await;
        assert_eq!(budget.used(), 750);
        drop(huge);
        assert_eq!(budget.used(), 0);
    }
}
