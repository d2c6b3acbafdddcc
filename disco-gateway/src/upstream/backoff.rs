//! The wait before an upstream's next start.

use std::time::Duration;

use super::HEALTHY_RUN;

/// How long an upstream waits before its next start: `initial` after a run of at least
/// [`HEALTHY_RUN`], else twice the last wait, never more than `max` (nor less than `initial`
/// when `max` is below it: then every wait is `max`).
#[derive(Debug)]
pub(super) struct Backoff {
    initial: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    pub(super) fn new(initial: Duration, max: Duration) -> Self {
        Backoff {
            initial,
            max,
            next: initial.min(max),
        }
    }

    /// The wait after a connection that served for `ran` and then closed.
    pub(super) fn after_run(&mut self, ran: Duration) -> Duration {
        if ran >= HEALTHY_RUN {
            self.next = self.initial.min(self.max);
        }
        self.next
    }

    /// The wait after a start that failed.
    pub(super) fn after_failed_start(&self) -> Duration {
        self.next
    }

    pub(super) fn current(&self) -> Duration {
        self.next
    }

    /// The wait is over: the next one, if this start fails too, is twice as long.
    pub(super) fn waited(&mut self) {
        self.next = self.next.saturating_mul(2).min(self.max);
    }
}
