//! Lines written to a pipe several at once when several are waiting: the stdio transports'
//! writing half (the server's stdout, disco-gateway's pipe to an upstream's stdin).
//!
//! Each message is one line, and a pipe's reader pays for every `write(2)` that wakes it: at
//! many calls in flight, a write a line wakes the reader (an upstream, a client) once a
//! message, where one write of the lines ready at the same moment wakes it once for all. So a
//! line queued when no other waits is written at once, by the caller, as far as the pipe takes
//! it without waiting: a lone line waits for nothing. The lines queued after it, while the
//! tasks already runnable run (the other calls of the same burst), wait for a task of its own,
//! which runs once those tasks have ([`Behind`]: no timer) and writes everything queued in
//! one write, again until nothing is queued. Every line goes whole and in the order it was
//! queued; the writing task owns the pipe while it writes, so a caller that stops waiting for
//! its line never leaves half of it on the wire.
//!
//! The queue holds what the callers waiting for the pipe held before, one copy of each line:
//! [`Lines::queue`] takes a line at once (a caller whose order is fixed when it calls, such as
//! rmcp's service loop handing out its messages one by one), and [`Lines::room`] waits until
//! the lines not yet written are under the bound before it takes one (a caller that may wait,
//! and that leaves no trace when it stops waiting first).

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, Notify};

use super::lock;

/// A pipe written line by line, the lines queued together written in one write.
pub struct Lines<W> {
    inner: Arc<Inner<W>>,
}

impl<W> Clone for Lines<W> {
    fn clone(&self) -> Self {
        Lines {
            inner: self.inner.clone(),
        }
    }
}

struct Inner<W> {
    state: StdMutex<State>,
    /// Held by the writing task while it writes, and by `close`.
    pipe: Mutex<Option<W>>,
    /// Told when a batch was written (or failed), and when room was given back.
    moved: Notify,
}

#[derive(Default)]
struct State {
    /// Whole lines, in order, not yet handed to the writing task.
    queued: Vec<u8>,
    /// How many lines were queued so far: a line's number is the count with it.
    count: u64,
    /// Every line up to this number has been written, or failed.
    done: u64,
    /// The first line that could not be written, and why: it and every line after it fail
    /// (a pipe whose write failed is broken).
    failed: Option<(u64, io::ErrorKind, String)>,
    /// A writing task runs or is about to (or a line is being written at once).
    writing: bool,
    /// A line written at once is not flushed yet: the writing task flushes it.
    unflushed: bool,
    /// Bytes queued, being written, or promised to a [`Room`].
    held: usize,
    max_held: usize,
}

impl State {
    /// Line `n`'s outcome, once it has one.
    fn outcome(&self, n: u64) -> Option<io::Result<()>> {
        if let Some((first, kind, why)) = &self.failed {
            if n >= *first {
                return Some(Err(io::Error::new(*kind, why.clone())));
            }
        }
        (n <= self.done).then_some(Ok(()))
    }
}

impl<W> Lines<W>
where
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Writes to `pipe`; [`Lines::room`] waits while `max_held` bytes are not written yet
    /// (one line of any size is taken into an empty queue).
    pub fn new(pipe: W, max_held: usize) -> Self {
        Lines {
            inner: Arc::new(Inner {
                state: StdMutex::new(State {
                    max_held,
                    ..State::default()
                }),
                pipe: Mutex::new(Some(pipe)),
                moved: Notify::new(),
            }),
        }
    }

    /// Queues `line` (one message and its newline) at once, after every line queued before
    /// it. Must be called inside a tokio runtime: the writing task is spawned on it.
    pub fn queue(&self, line: Vec<u8>) -> Written<W> {
        lock(&self.inner.state).held += line.len();
        self.queue_held(line)
    }

    /// Waits until the lines not yet written leave room for `len` bytes, and keeps that room
    /// for one line. Dropped unused, the room is given back and nothing was queued.
    pub async fn room(&self, len: usize) -> Room<W> {
        loop {
            // Asked first without waiting (the common case); then again once registered for
            // the next change, so that none is missed between the two.
            if let Some(room) = self.try_room(len) {
                return room;
            }
            let moved = self.inner.moved.notified();
            tokio::pin!(moved);
            moved.as_mut().enable();
            if let Some(room) = self.try_room(len) {
                return room;
            }
            moved.await;
        }
    }

    fn try_room(&self, len: usize) -> Option<Room<W>> {
        let mut state = lock(&self.inner.state);
        if state.held == 0 || state.held.saturating_add(len) <= state.max_held {
            state.held += len;
            return Some(Room {
                lines: self.clone(),
                len,
                used: false,
            });
        }
        None
    }

    /// Writes what is queued, then closes the pipe (`shutdown`, then drop); a line queued
    /// after that fails as on a closed transport.
    pub async fn close(&self) {
        loop {
            let moved = self.inner.moved.notified();
            tokio::pin!(moved);
            moved.as_mut().enable();
            {
                let state = lock(&self.inner.state);
                if !state.writing && state.queued.is_empty() {
                    break;
                }
            }
            moved.await;
        }
        let mut pipe = self.inner.pipe.lock().await;
        if let Some(mut w) = pipe.take() {
            let _ = w.shutdown().await;
        }
    }

    /// `line`, whose bytes are already counted in `held`, queued: written at once when no
    /// line is waiting and the pipe takes it, then the writing task is started for the lines
    /// queued behind it.
    fn queue_held(&self, line: Vec<u8>) -> Written<W> {
        let n = {
            let mut state = lock(&self.inner.state);
            state.count += 1;
            let n = state.count;
            if state.failed.is_some() {
                // A broken pipe takes no more lines: this one fails with the first.
                state.held = state.held.saturating_sub(line.len());
                return Written {
                    lines: self.clone(),
                    n,
                };
            }
            if state.writing {
                state.queued.extend_from_slice(&line);
                return Written {
                    lines: self.clone(),
                    n,
                };
            }
            // Nothing waits: this line goes now, and the lines queued behind it go together.
            state.writing = true;
            n
        };
        let (taken, flushed, error) = self.write_now(&line);
        {
            let mut state = lock(&self.inner.state);
            state.held = state.held.saturating_sub(taken);
            match error {
                Some(e) => {
                    state.failed = Some((n, e.kind(), e.to_string()));
                    state.held = state.held.saturating_sub(line.len() - taken);
                    state.held = state.held.saturating_sub(state.queued.len());
                    state.queued = Vec::new();
                    state.done = state.count;
                    state.writing = false;
                    drop(state);
                    self.inner.moved.notify_waiters();
                    return Written {
                        lines: self.clone(),
                        n,
                    };
                }
                None if taken == line.len() && flushed => state.done = n,
                None if taken == line.len() => state.unflushed = true,
                None => {
                    // The pipe is full: the rest of the line goes first in the next write.
                    let mut rest = line[taken..].to_vec();
                    rest.extend_from_slice(&state.queued);
                    state.queued = rest;
                }
            }
        }
        tokio::spawn(write_queued(self.inner.clone()));
        Written {
            lines: self.clone(),
            n,
        }
    }

    /// Writes as much of `line` as the pipe takes without waiting, and flushes it when it took
    /// it all: how much it took, whether it was flushed, and the pipe's error.
    fn write_now(&self, line: &[u8]) -> (usize, bool, Option<io::Error>) {
        let Ok(mut pipe) = self.inner.pipe.try_lock() else {
            // Being closed: the writing task finds out.
            return (0, false, None);
        };
        let Some(w) = pipe.as_mut() else {
            let closed = io::Error::new(io::ErrorKind::NotConnected, "transport closed");
            return (0, false, Some(closed));
        };
        let mut cx = Context::from_waker(Waker::noop());
        let mut taken = 0;
        while taken < line.len() {
            match Pin::new(&mut *w).poll_write(&mut cx, &line[taken..]) {
                Poll::Ready(Ok(0)) => {
                    return (taken, false, Some(io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(k)) => taken += k,
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(e)) => return (taken, false, Some(e)),
                Poll::Pending => return (taken, false, None),
            }
        }
        match Pin::new(&mut *w).poll_flush(&mut cx) {
            Poll::Ready(Ok(())) => (taken, true, None),
            Poll::Ready(Err(e)) => (taken, false, Some(e)),
            // Not flushed yet: the writing task flushes.
            Poll::Pending => (taken, false, None),
        }
    }
}

/// Writes what is queued until nothing is, each time everything queued in one write.
async fn write_queued<W>(inner: Arc<Inner<W>>)
where
    W: AsyncWrite + Send + Unpin + 'static,
{
    // The tasks already runnable (calls about to queue their lines) run first.
    Behind::default().await;
    let mut batch = Vec::new();
    loop {
        let last = {
            let mut state = lock(&inner.state);
            if state.queued.is_empty() && !state.unflushed {
                state.writing = false;
                break;
            }
            state.unflushed = false;
            std::mem::swap(&mut state.queued, &mut batch);
            state.count
        };
        let written = {
            let mut pipe = inner.pipe.lock().await;
            match pipe.as_mut() {
                Some(w) => match w.write_all(&batch).await {
                    Ok(()) => w.flush().await,
                    Err(e) => Err(e),
                },
                None => Err(io::Error::new(
                    io::ErrorKind::NotConnected,
                    "transport closed",
                )),
            }
        };
        {
            let mut state = lock(&inner.state);
            state.held = state.held.saturating_sub(batch.len());
            if let Err(e) = written {
                // This batch's first line is the one after the last batch's.
                let first = state.done + 1;
                state.failed = Some((first, e.kind(), e.to_string()));
                state.held = state.held.saturating_sub(state.queued.len());
                state.queued = Vec::new();
                state.done = state.count;
                state.writing = false;
                drop(state);
                inner.moved.notify_waiters();
                return;
            }
            state.done = last;
        }
        batch.clear();
        if batch.capacity() > 64 * 1024 {
            batch.shrink_to(64 * 1024);
        }
        inner.moved.notify_waiters();
    }
    inner.moved.notify_waiters();
}

/// Ready on its second poll, after waking its task on the first: the task goes to the back of
/// the run queue, behind the tasks already runnable. `tokio::task::yield_now` would wake it
/// only after the runtime polled its I/O driver: one more `epoll_wait` at every burst, which a
/// lone line pays for too.
#[derive(Default)]
struct Behind(bool);

impl std::future::Future for Behind {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Room for one line in a [`Lines`] queue ([`Lines::room`]).
pub struct Room<W> {
    lines: Lines<W>,
    len: usize,
    /// Its line was queued: nothing to give back.
    used: bool,
}

impl<W> Room<W>
where
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Queues `line` in the room kept for it (see [`Lines::queue`]).
    pub fn queue(mut self, line: Vec<u8>) -> Written<W> {
        {
            let mut state = lock(&self.lines.inner.state);
            // The room held `self.len`; the line takes its own length.
            state.held = state.held.saturating_sub(self.len) + line.len();
        }
        self.used = true;
        self.lines.queue_held(line)
    }
}

impl<W> Drop for Room<W> {
    fn drop(&mut self) {
        if self.used {
            return;
        }
        {
            let mut state = lock(&self.lines.inner.state);
            state.held = state.held.saturating_sub(self.len);
        }
        self.lines.inner.moved.notify_waiters();
    }
}

/// A queued line, to learn whether it was written.
pub struct Written<W> {
    lines: Lines<W>,
    n: u64,
}

impl<W> Written<W> {
    /// Waits until the line was written; the pipe's error when it could not be. Dropping
    /// this does not take the line back.
    pub async fn outcome(self) -> io::Result<()> {
        let state = &self.lines.inner.state;
        loop {
            // Known at once for a line written at once; else asked again once registered.
            if let Some(outcome) = lock(state).outcome(self.n) {
                return outcome;
            }
            let moved = self.lines.inner.moved.notified();
            tokio::pin!(moved);
            moved.as_mut().enable();
            if let Some(outcome) = lock(state).outcome(self.n) {
                return outcome;
            }
            moved.await;
        }
    }
}

#[cfg(test)]
mod tests;
