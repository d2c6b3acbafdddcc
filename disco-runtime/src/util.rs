//! Small helpers of every layer.
//!
//! Public (and hidden) for disco-gateway alone, which takes its locks by the same rule with
//! [`lock`], [`read`] and [`write`]: no API, it may change in any release.

#[cfg(feature = "semantic")]
use std::sync::Condvar;
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde_json::Value;

/// Keeps hostile input from filling messages and logs.
pub(crate) fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let head: String = s.chars().take(max).collect();
        format!("{head}…")
    }
}

/// How much of a request's text (a tool's name, a method, a resource's URI, a parser's error) a
/// message or a log line quotes.
pub(crate) const QUOTED_CHARS: usize = 128;

/// A request's text as messages and logs quote it: at most [`QUOTED_CHARS`] characters.
pub(crate) fn clip_quoted(s: &str) -> String {
    clip(s, QUOTED_CHARS)
}

// The locks of the runtime (and of the gateway) guard data that every writer replaces or updates in one step (a
// map swapped whole, a counter, a queue pushed to), so a thread that panicked while holding one
// left the data whole. A poisoned lock is taken as it is rather than spreading one tool's
// panic to every later caller.

/// `m` locked, poisoned or not.
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `l` read, poisoned or not.
pub fn read<T: ?Sized>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

/// `l` written, poisoned or not.
pub fn write<T: ?Sized>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

/// `guard` given back once `changed` is notified, poisoned or not.
#[cfg(feature = "semantic")]
pub(crate) fn wait<'a, T>(changed: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    changed.wait(guard).unwrap_or_else(PoisonError::into_inner)
}

/// How a JSON value is named in messages: "a string", "an object".
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
