//! A rate limit per caller over HTTP: one token bucket per caller (per bearer token's caller;
//! every anonymous request shares one), so that one caller cannot take the tools, and the
//! servers behind them, from the others.
//!
//! Written here rather than taken from a crate (`governor` is the well-kept one): the whole
//! of it is a refill and a subtraction under a lock, and the buckets of callers who went quiet
//! must be forgotten so their number stays bounded, which a keyed limiter leaves to its user.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::tool::Caller;

/// How many requests each caller may send: `per_second` on average, and up to `burst` at
/// once after a quiet spell. A request over it gets HTTP 429 with `Retry-After`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct RateLimit {
    /// Requests per second a caller may send on average (above 0).
    pub per_second: f64,
    /// Requests a caller may send at once (at least 1).
    pub burst: u32,
}

impl RateLimit {
    /// `per_second` requests a second on average per caller, `burst` at once; a
    /// `per_second` that is not a positive number is taken as one request an hour.
    pub fn new(per_second: f64, burst: u32) -> Self {
        let per_second = if per_second.is_finite() && per_second > 0.0 {
            per_second
        } else {
            1.0 / 3600.0
        };
        RateLimit {
            per_second,
            burst: burst.max(1),
        }
    }
}

/// Buckets kept before those of quiet callers (full again) are forgotten.
const PRUNE_AT: usize = 4_096;

/// The buckets of the callers seen lately.
pub(crate) struct Limiter {
    limit: RateLimit,
    buckets: Mutex<HashMap<Option<String>, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Limiter {
    pub(crate) fn new(limit: RateLimit) -> Self {
        Limiter {
            limit: RateLimit::new(limit.per_second, limit.burst),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one request from `caller`'s bucket: `Err(wait)` when it is empty, with the time
    /// until it holds one again.
    pub(crate) fn admit(&self, caller: &Caller) -> Result<(), Duration> {
        self.admit_at(caller, Instant::now())
    }

    fn admit_at(&self, caller: &Caller, now: Instant) -> Result<(), Duration> {
        let burst = f64::from(self.limit.burst);
        let rate = self.limit.per_second;
        let mut buckets = crate::util::lock(&self.buckets);
        if buckets.len() >= PRUNE_AT {
            buckets.retain(|_, b| b.refilled(now, rate, burst) < burst);
        }
        let key = caller.id().map(str::to_owned);
        let bucket = buckets.entry(key).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        bucket.tokens = bucket.refilled(now, rate, burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Ok(());
        }
        Err(Duration::from_secs_f64((1.0 - bucket.tokens) / rate))
    }
}

impl Bucket {
    fn refilled(&self, now: Instant, rate: f64, burst: f64) -> f64 {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        (self.tokens + elapsed * rate).min(burst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_caller_has_its_own_bucket_refilled_at_the_rate() {
        let limiter = Limiter::new(RateLimit::new(2.0, 3));
        let t0 = Instant::now();
        let alice = Caller::new("alice");
        let bob = Caller::new("bob");
        let anonymous = Caller::default();
        for _ in 0..3 {
            assert!(limiter.admit_at(&alice, t0).is_ok());
        }
        let wait = limiter.admit_at(&alice, t0).unwrap_err();
        assert!((wait.as_secs_f64() - 0.5).abs() < 1e-9, "{wait:?}");
        // Others are untouched by alice's burst.
        for _ in 0..3 {
            assert!(limiter.admit_at(&bob, t0).is_ok());
            assert!(limiter.admit_at(&anonymous, t0).is_ok());
        }
        assert!(limiter.admit_at(&anonymous, t0).is_err());
        // Half a second gives alice one more, not two.
        let t1 = t0 + Duration::from_millis(500);
        assert!(limiter.admit_at(&alice, t1).is_ok());
        assert!(limiter.admit_at(&alice, t1).is_err());
        // A long quiet spell refills to the burst, no more.
        let t2 = t1 + Duration::from_secs(3600);
        for _ in 0..3 {
            assert!(limiter.admit_at(&alice, t2).is_ok());
        }
        assert!(limiter.admit_at(&alice, t2).is_err());
    }

    #[test]
    fn quiet_callers_are_forgotten_so_the_buckets_stay_bounded() {
        let limiter = Limiter::new(RateLimit::new(1000.0, 1));
        let t0 = Instant::now();
        for i in 0..3 * PRUNE_AT {
            let at = t0 + Duration::from_millis(i as u64);
            assert!(limiter.admit_at(&Caller::new(format!("c{i}")), at).is_ok());
        }
        let kept = limiter.buckets.lock().map(|b| b.len()).unwrap_or(0);
        assert!(kept <= PRUNE_AT, "{kept}");
    }

    #[test]
    fn nonsense_settings_are_made_safe() {
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let limit = RateLimit::new(rate, 0);
            assert!(limit.per_second > 0.0 && limit.per_second.is_finite());
            assert_eq!(limit.burst, 1);
        }
    }
}
