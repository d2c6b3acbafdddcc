//! Small helpers of every layer.
//!
//! Public (and hidden) for disco-gateway alone, which takes its locks by the same rule with
//! [`lock`], [`read`] and [`write`], and makes its state directories with [`private_dir`]: no
//! API, it may change in any release.

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

// The locks of the runtime (and of the gateway) guard data that every writer replaces or
// updates in one step (a map swapped whole, a counter, a queue pushed to), so a thread that
// panicked while holding one left the data whole. A poisoned lock is taken as it is rather than spreading one tool's
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

/// Makes `dir` and its parents when missing, each made here of mode 0700: the rule of a state
/// directory, whose files (discovery events, their secret; the gateway's pins, tokens and
/// adoption records) are the owner's alone. A `dir` that is there and the user's own is made
/// 0700 too (one made before, or by hand, open to others); one of another user is left as it
/// is, and so is a symlink (its target is not changed through it: a warning says so).
pub fn private_dir(dir: &std::path::Path) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("{}: {e}", dir.display());
    let meta = match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            return builder.create(dir).map_err(failed);
        }
        other => other.map_err(failed)?,
    };
    if meta.is_symlink() {
        if !dir.is_dir() {
            return Err(format!("{}: a symlink to no directory", dir.display()));
        }
        tracing::warn!(
            dir = %dir.display(),
            "a state directory that is a symlink: its target's mode is left as it is"
        );
        return Ok(());
    }
    if !meta.is_dir() {
        return Err(format!("{}: not a directory", dir.display()));
    }
    #[cfg(unix)]
    tighten(dir).map_err(|e| failed(e.into()))?;
    Ok(())
}

/// `dir` made 0700 when it is the user's own and open to others. Opened without following a
/// link, so that the owner and mode read (fstat) and the mode changed (fchmod) are of one
/// directory, even if `dir` is replaced meanwhile.
#[cfg(unix)]
fn tighten(dir: &std::path::Path) -> rustix::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::open(dir, flags, Mode::empty())?;
    let stat = rustix::fs::fstat(&fd)?;
    let mine = stat.st_uid == rustix::process::geteuid().as_raw();
    if mine && stat.st_mode & 0o077 != 0 {
        rustix::fs::fchmod(&fd, Mode::RWXU)?;
    }
    Ok(())
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

#[cfg(test)]
pub(crate) mod tests;
