//! A session's answer to a POST sent as one `application/json` body when the answer is the
//! first message of its stream.
//!
//! With sessions, rmcp answers every POST that carries a request with a `text/event-stream`:
//! a priming event (an event id and a retry time, no data: a place to resume from), then the
//! request's notifications, then its answer. A client that sends a request accepts either
//! body (the Streamable HTTP transport requires it to), and most requests are answered with
//! nothing before the answer: for those the stream costs a write and a wake-up of the client
//! more than a JSON body does, and its framing besides. rmcp's own `json_response` applies to
//! stateless serving only.
//!
//! So the stream is read here up to its first message: an answer (a JSON-RPC response or
//! error) becomes the body, as JSON, with rmcp's headers (the session id among them). A
//! notification or a request first (progress, a log message, an elicitation), a stream that
//! ends first, or anything this reader does not expect, and the response goes out as rmcp
//! made it, the events read so far first. An answer that takes longer than [`JSON_WAIT`]
//! goes out as the stream too, from the priming event on: a client whose connection breaks
//! during a long call can still resume it. Such a client receives the priming event only
//! when the wait ends, [`JSON_WAIT`] after the request: a connection that breaks within
//! those 250 ms leaves it nothing to resume from, and the call must be sent again.
//!
//! The events read are rmcp's own, written by its encoder in this process (`field: value`
//! lines, an empty line after each event): only that is read, and anything else leaves the
//! stream as it is.
//!
//! Why by hand: the stream that goes out as it is must be rmcp's bytes exactly, frame by
//! frame as they were read, so the reader keeps the frames and only looks into them; an SSE
//! parsing crate would hand back parsed events to be written again (and its own copies of
//! them). Whether the first message is an answer is read from its keys alone
//! ([`is_answer`]), not by parsing the whole answer into rmcp's `ServerJsonRpcMessage`, an
//! untagged enum that buffers the whole value to try each variant in turn.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures_util::StreamExt as _;
use http::{header, HeaderValue, StatusCode};

/// How long an answer is waited for before the stream goes out as it is.
pub(crate) const JSON_WAIT: Duration = Duration::from_millis(250);

/// Whether a request with these headers may be answered as JSON: it accepts
/// `application/json` (a Streamable HTTP client sends it with every POST).
pub(crate) fn accepts_json(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|v| {
            let media = v.split(';').next().unwrap_or("").trim();
            media.eq_ignore_ascii_case("application/json")
        })
}

/// `response` (rmcp's answer to a POST) with its stream's first message as a JSON body when
/// that message is the answer; otherwise `response` as it was made.
pub(crate) async fn first_answer_as_json(response: Response) -> Response {
    let is_stream = response.status() == StatusCode::OK
        && response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_stream {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let mut stream = body.into_data_stream();
    let mut reader = Events::default();
    // The frames read, sent first when the stream goes out as it is: a break among them too,
    // so that the client sees the stream break rather than end.
    let mut held: Vec<Result<Bytes, axum::Error>> = Vec::new();
    let wait = tokio::time::sleep(JSON_WAIT);
    tokio::pin!(wait);
    let outcome = loop {
        let next = tokio::select! {
            biased;
            next = stream.next() => next,
            _ = &mut wait => None,
        };
        // Ended, broken, or slow: the stream as it is.
        let next = match next {
            Some(Ok(next)) => next,
            Some(Err(broken)) => {
                held.push(Err(broken));
                break None;
            }
            None => break None,
        };
        held.push(Ok(next.clone()));
        match reader.feed(&next) {
            Read::More => {}
            Read::Answer(answer) => break Some(answer),
            Read::Other => break None,
        }
    };
    match outcome {
        Some(answer) => {
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            parts.headers.remove("x-accel-buffering");
            parts.headers.remove(header::CACHE_CONTROL);
            Response::from_parts(parts, Body::from(answer))
        }
        None => {
            let replay = futures_util::stream::iter(held);
            Response::from_parts(parts, Body::from_stream(replay.chain(stream)))
        }
    }
}

/// What the events read so far come to.
#[derive(Debug, PartialEq)]
enum Read {
    /// Only priming events so far (events without data), or an event not yet whole.
    More,
    /// The first message is an answer: its JSON.
    Answer(Bytes),
    /// The first message is something else, or the stream is not what rmcp writes.
    Other,
}

/// rmcp's events, read as their bytes arrive.
///
/// rmcp writes each event as one frame, and an answer's JSON on one `data` line, so the
/// answer is taken as a slice of the frame it came in: the frame is the only copy of it held
/// here (a large answer is not copied once into a buffer of unread bytes and again into its
/// joined data). Only an event split across frames is gathered in `partial`, and one of
/// several `data` lines is joined into a new buffer.
#[derive(Default)]
struct Events {
    /// The bytes of the events not yet read, when an event was split across frames.
    partial: Vec<u8>,
    /// How far `partial` is known to hold no event's end.
    scanned: usize,
}

impl Events {
    fn feed(&mut self, bytes: &Bytes) -> Read {
        if self.partial.is_empty() {
            let (read, start) = scan(bytes, 0);
            return match read {
                Scanned::More => {
                    self.partial.extend_from_slice(&bytes[start..]);
                    self.scanned = self.partial.len();
                    Read::More
                }
                Scanned::Answer(Data::Line(range)) => Read::Answer(bytes.slice(range)),
                Scanned::Answer(Data::Joined(joined)) => Read::Answer(Bytes::from(joined)),
                Scanned::Other => Read::Other,
            };
        }
        self.partial.extend_from_slice(bytes);
        let (read, start) = scan(&self.partial, self.scanned);
        match read {
            Scanned::More => {
                self.partial.drain(..start);
                self.scanned = self.partial.len();
                Read::More
            }
            Scanned::Answer(Data::Line(range)) => {
                Read::Answer(Bytes::from(std::mem::take(&mut self.partial)).slice(range))
            }
            Scanned::Answer(Data::Joined(joined)) => Read::Answer(Bytes::from(joined)),
            Scanned::Other => Read::Other,
        }
    }
}

/// What the events of a buffer come to, the answer's data placed within the buffer.
enum Scanned {
    More,
    Answer(Data),
    Other,
}

/// The events of `buf` read in order up to the first that decides, an event's end searched
/// from `scanned` on (a byte back, so that an end found across two reads is found too).
/// Returns what they come to and, for [`Scanned::More`], where the event not yet whole starts.
fn scan(buf: &[u8], scanned: usize) -> (Scanned, usize) {
    let mut start = 0;
    loop {
        let from = scanned.saturating_sub(1).max(start);
        let Some(end) = memchr::memmem::find(&buf[from..], b"\n\n") else {
            return (Scanned::More, start);
        };
        let end = from + end;
        let event = start;
        start = end + 2;
        // A line's range is within the event: moved to within `buf`.
        let data = data(&buf[event..end]).map(|data| match data {
            Data::Line(line) => Data::Line(event + line.start..event + line.end),
            joined => joined,
        });
        match data {
            // A priming event, or a comment (a keep-alive).
            Some(data) if data.is_empty() => continue,
            Some(Data::Line(line)) if is_answer(&buf[line.clone()]) => {
                return (Scanned::Answer(Data::Line(line)), start);
            }
            Some(Data::Joined(joined)) if is_answer(&joined) => {
                return (Scanned::Answer(Data::Joined(joined)), start)
            }
            _ => return (Scanned::Other, start),
        }
    }
}

/// The data of one event.
#[derive(Debug)]
enum Data {
    /// One `data` line (or none: empty), as the range of its value within the event.
    Line(std::ops::Range<usize>),
    /// Several `data` lines, joined by newlines.
    Joined(Vec<u8>),
}

impl Data {
    fn is_empty(&self) -> bool {
        match self {
            Data::Line(range) => range.is_empty(),
            Data::Joined(_) => false,
        }
    }
}

/// The data of one event (its lines without the empty line that ends it); `None` for an event
/// this reader does not take: another `event` type than a message, a carriage return, a line
/// that is no field.
fn data(event: &[u8]) -> Option<Data> {
    let mut data: Option<Data> = None;
    let mut at = 0;
    for line in event.split(|&b| b == b'\n') {
        let line_start = at;
        at += line.len() + 1;
        if line.contains(&b'\r') {
            return None;
        }
        if line.first() == Some(&b':') {
            continue;
        }
        let colon = line.iter().position(|&b| b == b':')?;
        let (field, value) = (&line[..colon], &line[colon + 1..]);
        let skip = usize::from(value.first() == Some(&b' '));
        let value_start = line_start + colon + 1 + skip;
        let value = &value[skip..];
        match field {
            b"data" => {
                data = Some(match data {
                    None => Data::Line(value_start..value_start + value.len()),
                    Some(Data::Line(first)) => {
                        let mut joined = event[first].to_vec();
                        joined.push(b'\n');
                        joined.extend_from_slice(value);
                        Data::Joined(joined)
                    }
                    Some(Data::Joined(mut joined)) => {
                        joined.push(b'\n');
                        joined.extend_from_slice(value);
                        Data::Joined(joined)
                    }
                });
            }
            b"event" if value != b"message" => return None,
            b"event" | b"id" | b"retry" => {}
            _ => return None,
        }
    }
    Some(data.unwrap_or(Data::Line(0..0)))
}

/// Whether `json` is a JSON-RPC response or error: an object with an `id` and `result` or
/// `error`, and no `method` (a notification or a request of the server's has one).
fn is_answer(json: &[u8]) -> bool {
    use super::call_parse::Present;
    #[derive(serde::Deserialize)]
    struct Keys {
        #[serde(default)]
        id: Present,
        #[serde(default)]
        method: Present,
        #[serde(default)]
        result: Present,
        #[serde(default)]
        error: Present,
    }
    serde_json::from_slice::<Keys>(json)
        .is_ok_and(|k| k.id.0 && !k.method.0 && (k.result.0 ^ k.error.0))
}

#[cfg(test)]
mod tests;
