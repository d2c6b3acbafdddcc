use std::pin::Pin;
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Poll};

use futures_util::FutureExt as _;
use tokio::io::{AsyncBufReadExt, AsyncWrite, BufReader};

use super::Lines;

/// A pipe that keeps every write it is given, one entry a write; broken, it fails them all.
#[derive(Clone, Default)]
struct Recorded {
    writes: Arc<StdMutex<Vec<Vec<u8>>>>,
    broken: bool,
}

impl Recorded {
    fn writes(&self) -> Vec<Vec<u8>> {
        self.writes.lock().expect("not poisoned").clone()
    }
}

impl AsyncWrite for Recorded {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.broken {
            let e = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the reader is gone");
            return Poll::Ready(Err(e));
        }
        self.writes.lock().expect("not poisoned").push(buf.to_vec());
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn line(writer: usize, n: usize, size: usize) -> Vec<u8> {
    let mut line = format!("{writer} {n} ").into_bytes();
    line.extend(std::iter::repeat_n(b'x', size));
    line.push(b'\n');
    line
}

/// Many writers at once, through both ways in, over a pipe with a small buffer: every line
/// arrives whole, each writer's in the order it queued them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_of_many_writers_arrive_whole_and_in_order() {
    for (writers, per_writer, size, buffer) in
        [(16, 200, 40, 64), (4, 50, 10_000, 4096), (32, 20, 1, 1)]
    {
        let (write, read) = tokio::io::duplex(buffer);
        let lines = Lines::new(write, 8 * 1024);
        let mut tasks = Vec::new();
        for w in 0..writers {
            let lines = lines.clone();
            tasks.push(tokio::spawn(async move {
                for n in 0..per_writer {
                    // Lengths vary from line to line, by the writer and the line's number.
                    let line = line(w, n, size + (w * 7 + n * 13) % 97);
                    let written = if n % 2 == 0 {
                        lines.queue(line)
                    } else {
                        lines.room(line.len()).await.queue(line)
                    };
                    if n % 3 == 0 {
                        written.outcome().await.expect("written");
                    } else {
                        drop(written);
                        tokio::task::yield_now().await;
                    }
                }
            }));
        }
        let reader = tokio::spawn(async move {
            let mut read = BufReader::new(read);
            let mut next = vec![0usize; writers];
            let mut text = String::new();
            for _ in 0..writers * per_writer {
                text.clear();
                read.read_line(&mut text).await.expect("reads");
                let mut parts = text.trim_end_matches('\n').splitn(3, ' ');
                let w: usize = parts.next().and_then(|p| p.parse().ok()).expect("a writer");
                let n: usize = parts.next().and_then(|p| p.parse().ok()).expect("a number");
                let body = parts.next().expect("a body");
                assert_eq!(n, next[w], "writer {w}'s lines in order");
                assert_eq!(
                    body.len(),
                    size + (w * 7 + n * 13) % 97,
                    "line {w} {n} whole"
                );
                assert!(body.bytes().all(|b| b == b'x'), "line {w} {n} unmixed");
                next[w] += 1;
            }
            next
        });
        for task in tasks {
            task.await.expect("a writer finishes");
        }
        let next = reader.await.expect("the reader finishes");
        assert!(next.iter().all(|&n| n == per_writer));
    }
}

/// A lone line is written at once, by the call that queues it, without waiting for another
/// line or for any task to run; so is the first line after a quiet spell.
#[tokio::test]
async fn a_lone_line_is_written_at_once() {
    let pipe = Recorded::default();
    let lines = Lines::new(pipe.clone(), 1024);
    let written = lines.queue(b"alone\n".to_vec());
    assert_eq!(pipe.writes(), vec![b"alone\n".to_vec()]);
    written
        .outcome()
        .now_or_never()
        .expect("known at once")
        .expect("written");
    // The writing task started behind it finds nothing and stops; the next lone line goes
    // at once again.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    let written = lines.queue(b"later\n".to_vec());
    assert_eq!(
        pipe.writes(),
        vec![b"alone\n".to_vec(), b"later\n".to_vec()]
    );
    written.outcome().await.expect("written");
    // Over a real pipe too: read back without another line queued.
    let (write, read) = tokio::io::duplex(1024);
    let lines = Lines::new(write, 1024);
    lines
        .queue(b"alone\n".to_vec())
        .outcome()
        .await
        .expect("written");
    let mut text = String::new();
    BufReader::new(read)
        .read_line(&mut text)
        .await
        .expect("reads");
    assert_eq!(text, "alone\n");
}

/// The first line of a burst goes at once; the lines queued behind it before the writing task
/// runs go out together in one write, in order; a line queued after that write goes at once.
#[tokio::test]
async fn lines_queued_together_are_written_in_one_write() {
    for count in [2, 3, 5, 40] {
        let pipe = Recorded::default();
        let lines = Lines::new(pipe.clone(), 1 << 20);
        let written: Vec<_> = (0..count).map(|n| lines.queue(line(0, n, n))).collect();
        for w in written {
            w.outcome().await.expect("written");
        }
        let rest: Vec<u8> = (1..count).flat_map(|n| line(0, n, n)).collect();
        assert_eq!(
            pipe.writes(),
            vec![line(0, 0, 0), rest.clone()],
            "{count} lines"
        );
        // The writing task stops once nothing is queued.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        lines.queue(b"later\n".to_vec());
        assert_eq!(
            pipe.writes(),
            vec![line(0, 0, 0), rest, b"later\n".to_vec()]
        );
    }
}

/// Room is kept until what is queued is written: past the bound a caller waits, and gives
/// back what it kept when it stops waiting or drops its room unused.
#[tokio::test]
async fn room_waits_while_the_queue_is_over_its_bound() {
    // Nobody reads: the first line fills the pipe's buffer and stays queued.
    let (write, mut read) = tokio::io::duplex(4);
    let lines = Lines::new(write, 100);
    let first = lines.room(80).await.queue(vec![b'a'; 80]);
    // 80 + 30 is over 100: the next room waits.
    assert!(lines.room(30).now_or_never().is_none());
    let kept = lines.room(20).await;
    assert!(
        lines.room(5).now_or_never().is_none(),
        "the line's unwritten bytes and 20 held"
    );
    drop(kept);
    let small = lines.room(1).now_or_never().expect("the room given back");
    drop(small);
    // The line is written once the pipe is read; then room comes back.
    let reader = tokio::spawn(async move {
        let mut got = vec![0u8; 80];
        tokio::io::AsyncReadExt::read_exact(&mut read, &mut got)
            .await
            .expect("reads");
        got
    });
    first.outcome().await.expect("written");
    assert_eq!(reader.await.expect("read"), vec![b'a'; 80]);
    lines.room(100).now_or_never().expect("the queue is empty");
    // One line of any size is taken into an empty queue.
    lines.room(1_000).now_or_never().expect("an empty queue");
}

/// A pipe whose write fails fails that line and every one after it, with its error.
#[tokio::test]
async fn a_broken_pipe_fails_its_line_and_every_later_one() {
    let broken = Recorded {
        broken: true,
        ..Recorded::default()
    };
    let lines = Lines::new(broken, 1024);
    let first = lines.queue(b"one\n".to_vec());
    let second = lines.queue(b"two\n".to_vec());
    for w in [first, second] {
        let e = w.outcome().await.expect_err("not written");
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
        assert_eq!(e.to_string(), "the reader is gone");
    }
    let later = lines.queue(b"three\n".to_vec()).outcome().await;
    assert_eq!(
        later.expect_err("not written").kind(),
        std::io::ErrorKind::BrokenPipe
    );
}

/// Closing writes what is queued first; a line queued after it fails as on a closed transport.
#[tokio::test]
async fn close_writes_what_is_queued_then_refuses() {
    let pipe = Recorded::default();
    let lines = Lines::new(pipe.clone(), 1024);
    let queued = lines.queue(b"before\n".to_vec());
    lines.close().await;
    queued.outcome().await.expect("written before closing");
    assert_eq!(pipe.writes(), vec![b"before\n".to_vec()]);
    let after = lines.queue(b"after\n".to_vec()).outcome().await;
    let e = after.expect_err("closed");
    assert_eq!(e.kind(), std::io::ErrorKind::NotConnected);
    assert_eq!(e.to_string(), "transport closed");
}
