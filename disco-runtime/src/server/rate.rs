//! A rate limit per caller over HTTP: one token bucket per caller (per bearer token's caller;
//! every anonymous request shares one), so that one caller cannot take the tools, and the
//! servers behind them, from the others. What it counts is requests, read from the body
//! ([`requests_in`]): a client's notifications (`notifications/cancelled`,
//! `notifications/initialized`, progress) and its answers to the server's requests cost
//! nothing, so a client that cancels a call is not refused its next one.
//!
//! Written here rather than taken from a crate (`governor` is the well-kept one): the whole
//! of it is a refill and a subtraction under a lock, and the buckets of callers who went quiet
//! must be forgotten so their number stays bounded, which a keyed limiter leaves to its user.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::tool::Caller;

/// How many requests each caller may send: `per_second` on average, and up to `burst` at
/// once after a quiet spell. A POST whose requests are over it gets HTTP 429 with
/// `Retry-After`.
///
/// A request is a JSON-RPC message with a `method` and an `id` (whatever the id's value): it
/// costs one. A notification (a `method` without an `id`: `notifications/cancelled`,
/// `notifications/initialized`, `notifications/progress`...) and a response (an `id` with a
/// `result` or an `error`, no `method`: the client's answer to an elicitation or a sampling
/// request) cost nothing, and a POST of them alone is never refused. A batch costs one for
/// each request in it (at most `burst`, the whole bucket; the server answers each with an
/// error, since MCP has no batches). A body that is no JSON-RPC message (not JSON, or neither
/// a notification nor a response) costs one, like a request. GET and DELETE cost nothing.
///
/// The body is read before it is counted (within the body limit and the memory budget), and
/// counted before rmcp parses it or any tool runs: one pass over it that builds nothing.
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

    /// Takes `requests` from `caller`'s bucket (at most the whole bucket; none costs
    /// nothing): `Err(wait)` when it holds fewer, with the time until it holds them.
    pub(crate) fn admit(&self, caller: &Caller, requests: u32) -> Result<(), Duration> {
        self.admit_at(caller, Instant::now(), requests)
    }

    fn admit_at(&self, caller: &Caller, now: Instant, requests: u32) -> Result<(), Duration> {
        if requests == 0 {
            return Ok(());
        }
        let cost = f64::from(requests.min(self.limit.burst));
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
        if bucket.tokens >= cost {
            bucket.tokens -= cost;
            return Ok(());
        }
        Err(Duration::from_secs_f64((cost - bucket.tokens) / rate))
    }
}

/// How many requests a POST body holds, as [`RateLimit`] counts them: one for a request, none
/// for a notification or a response, each request of a batch, one for anything else. One pass
/// over the body that keeps nothing but three flags per message (serde's `IgnoredAny` skips
/// every value), so that counting costs no more than the read.
pub(crate) fn requests_in(body: &[u8]) -> u32 {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    serde_json::from_slice::<Body>(body).map_or(1, |b| b.0)
}

/// A POST body, by its count of requests.
struct Body(u32);

/// One message of a body (or of a batch), by its count: 0 or 1.
struct Message(u32);

/// The keys that tell a message's kind; every other is skipped without being kept.
#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Method,
    Id,
    Result,
    Error,
    #[serde(other)]
    Other,
}

impl<'de> serde::Deserialize<'de> for Body {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Counting { batch: true }).map(Body)
    }
}

impl<'de> serde::Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Counting { batch: false }).map(Message)
    }
}

/// Counts the requests of a value: an object is one message; an array is a batch at the top
/// of a body (each message counted, an empty one counted as one) and one malformed message
/// within a batch; anything else is one malformed message.
struct Counting {
    batch: bool,
}

impl<'de> serde::de::Visitor<'de> for Counting {
    type Value = u32;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON-RPC message or a batch of them")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<u32, A::Error> {
        let (mut method, mut id, mut answer) = (false, false, false);
        while let Some(key) = map.next_key::<Key>()? {
            map.next_value::<serde::de::IgnoredAny>()?;
            match key {
                Key::Method => method = true,
                Key::Id => id = true,
                Key::Result | Key::Error => answer = true,
                Key::Other => {}
            }
        }
        let notification = method && !id;
        let response = !method && id && answer;
        Ok(u32::from(!notification && !response))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<u32, A::Error> {
        if !self.batch {
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            return Ok(1);
        }
        let (mut requests, mut items) = (0u32, 0u32);
        while let Some(Message(n)) = seq.next_element()? {
            requests = requests.saturating_add(n);
            items = items.saturating_add(1);
        }
        Ok(if items == 0 { 1 } else { requests })
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<u32, E> {
        Ok(1)
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<u32, E> {
        Ok(1)
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<u32, E> {
        Ok(1)
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<u32, E> {
        Ok(1)
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<u32, E> {
        Ok(1)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<u32, E> {
        Ok(1)
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
            assert!(limiter.admit_at(&alice, t0, 1).is_ok());
        }
        let wait = limiter.admit_at(&alice, t0, 1).unwrap_err();
        assert!((wait.as_secs_f64() - 0.5).abs() < 1e-9, "{wait:?}");
        // Others are untouched by alice's burst.
        for _ in 0..3 {
            assert!(limiter.admit_at(&bob, t0, 1).is_ok());
            assert!(limiter.admit_at(&anonymous, t0, 1).is_ok());
        }
        assert!(limiter.admit_at(&anonymous, t0, 1).is_err());
        // Half a second gives alice one more, not two.
        let t1 = t0 + Duration::from_millis(500);
        assert!(limiter.admit_at(&alice, t1, 1).is_ok());
        assert!(limiter.admit_at(&alice, t1, 1).is_err());
        // A long quiet spell refills to the burst, no more.
        let t2 = t1 + Duration::from_secs(3600);
        for _ in 0..3 {
            assert!(limiter.admit_at(&alice, t2, 1).is_ok());
        }
        assert!(limiter.admit_at(&alice, t2, 1).is_err());
    }

    #[test]
    fn quiet_callers_are_forgotten_so_the_buckets_stay_bounded() {
        let limiter = Limiter::new(RateLimit::new(1000.0, 1));
        let t0 = Instant::now();
        for i in 0..3 * PRUNE_AT {
            let at = t0 + Duration::from_millis(i as u64);
            assert!(limiter
                .admit_at(&Caller::new(format!("c{i}")), at, 1)
                .is_ok());
        }
        let kept = limiter.buckets.lock().map(|b| b.len()).unwrap_or(0);
        assert!(kept <= PRUNE_AT, "{kept}");
    }

    /// `RateLimit`'s rule, written out over a message's shape: a `method` with an `id` is a
    /// request (one); a `method` alone a notification, an `id` with a `result` or an `error`
    /// and no `method` a response (none); anything else is no JSON-RPC message (one).
    fn rule(method: bool, id: bool, answer: bool) -> u32 {
        match (method, id) {
            (true, true) => 1,
            (true, false) => 0,
            (false, true) if answer => 0,
            _ => 1,
        }
    }

    /// Every shape of message: with or without `method`, each kind of `id` (none, a number, a
    /// string, `null`, one spelled with an escape), `result`, `error` or neither, `params` or
    /// not, and keys that only look like the ones that count (`id` inside `params`).
    fn messages() -> Vec<(serde_json::Value, u32)> {
        use serde_json::json;
        let methods = [None, Some("tools/call"), Some("notifications/cancelled")];
        let ids = [
            None,
            Some(json!(7)),
            Some(json!("a-1")),
            Some(serde_json::Value::Null),
        ];
        let answers = [
            None,
            Some(("result", json!({}))),
            Some(("error", json!({"code": 1}))),
        ];
        let mut out = Vec::new();
        for method in methods {
            for id in &ids {
                for answer in &answers {
                    for params in [false, true] {
                        let mut m = json!({"jsonrpc": "2.0"});
                        if let Some(method) = method {
                            m["method"] = json!(method);
                        }
                        if let Some(id) = id {
                            m["id"] = id.clone();
                        }
                        if let Some((key, value)) = answer {
                            m[*key] = value.clone();
                        }
                        if params {
                            m["params"] = json!({"id": 1, "method": "x", "requestId": 1,
                                                 "result": [], "nested": [{"id": 2}]});
                        }
                        let expected = rule(method.is_some(), id.is_some(), answer.is_some());
                        out.push((m, expected));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn requests_are_counted_and_notifications_and_responses_are_not() {
        let all = messages();
        for (message, expected) in &all {
            let body = message.to_string();
            assert_eq!(requests_in(body.as_bytes()), *expected, "{body}");
            // The same with a byte order mark, white space, and pretty-printed.
            let spaced = format!(
                "\u{feff} \n{}\n ",
                serde_json::to_string_pretty(message).unwrap()
            );
            assert_eq!(requests_in(spaced.as_bytes()), *expected, "{spaced}");
        }
        // A batch costs the sum of its messages, every pair of shapes.
        for (a, ca) in &all {
            for (b, cb) in all.iter().step_by(7) {
                let batch = serde_json::json!([a, b]).to_string();
                assert_eq!(requests_in(batch.as_bytes()), ca + cb, "{batch}");
            }
        }
        // Keys spelled with escapes count as the keys they are.
        assert_eq!(
            requests_in(br#"{"jsonrpc":"2.0","\u006dethod":"notifications/x"}"#),
            0
        );
        assert_eq!(requests_in(br#"{"\u0069d":1,"method":"tools/list"}"#), 1);
        assert_eq!(requests_in(br#"{"\u0069d":1,"result":{}}"#), 0);
        // Whatever is no JSON-RPC message costs one, as a request does; in a batch, each.
        let bodies: &[&[u8]] = &[
            b"",
            b"not json",
            b"{\"method\":\"notifications/x\"",
            b"[]",
            b"[[]]",
            b"null",
            b"7",
            b"\"notifications/cancelled\"",
            b"true",
            b"{}",
            b"{\"result\":{}}",
        ];
        for body in bodies {
            assert_eq!(requests_in(body), 1, "{}", String::from_utf8_lossy(body));
        }
        assert_eq!(requests_in(b"[1, \"x\", null, [], {}]"), 5);
        // Values are skipped whatever their depth (serde_json skips them with a stack of its
        // own, one byte a level): the message's shape is read all the same.
        let deep = |head: &str| {
            format!(
                "{{{head}\"params\":{}{}}}",
                "[".repeat(500),
                "]".repeat(500)
            )
        };
        assert_eq!(
            requests_in(deep(r#""method":"notifications/x","#).as_bytes()),
            0
        );
        assert_eq!(
            requests_in(deep(r#""method":"tools/call","id":1,"#).as_bytes()),
            1
        );
        let many: Vec<_> = (0..300)
            .map(|i| serde_json::json!({"jsonrpc": "2.0", "id": i, "method": "ping"}))
            .collect();
        assert_eq!(
            requests_in(serde_json::json!(many).to_string().as_bytes()),
            300
        );
    }

    #[test]
    fn a_body_takes_as_many_tokens_as_requests_and_none_costs_nothing() {
        let limiter = Limiter::new(RateLimit::new(1.0, 4));
        let t0 = Instant::now();
        let alice = Caller::new("alice");
        assert!(limiter.admit_at(&alice, t0, 3).is_ok());
        let wait = limiter.admit_at(&alice, t0, 2).unwrap_err();
        assert!((wait.as_secs_f64() - 1.0).abs() < 1e-9, "{wait:?}");
        assert!(limiter.admit_at(&alice, t0, 1).is_ok());
        // An empty bucket still takes what costs nothing.
        for _ in 0..100 {
            assert!(limiter.admit_at(&alice, t0, 0).is_ok());
        }
        assert!(limiter.admit_at(&alice, t0, 1).is_err());
        // A batch larger than the burst takes the whole bucket, once it is full.
        let t1 = t0 + Duration::from_secs(2);
        let wait = limiter.admit_at(&alice, t1, 1_000).unwrap_err();
        assert!((wait.as_secs_f64() - 2.0).abs() < 1e-9, "{wait:?}");
        let t2 = t0 + Duration::from_secs(4);
        assert!(limiter.admit_at(&alice, t2, 1_000).is_ok());
        assert!(limiter.admit_at(&alice, t2, 1).is_err());
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
