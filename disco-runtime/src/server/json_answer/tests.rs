use super::*;

const PRIMING: &[u8] = b"data: \nid: 0\nretry: 3000\n\n";
const KEEP_ALIVE: &[u8] = b":\n\n";
const RESPONSE: &[u8] =
    br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\n\"b\""}]}}"#;
const ERROR: &[u8] = br#"{"jsonrpc":"2.0","id":"k","error":{"code":-32602,"message":"no"}}"#;
const PROGRESS: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
const ELICIT: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{}}"#;

fn event(data: &[u8], id: Option<&str>) -> Vec<u8> {
    let mut out = b"data: ".to_vec();
    out.extend_from_slice(data);
    out.push(b'\n');
    if let Some(id) = id {
        out.extend_from_slice(format!("id: {id}\n").as_bytes());
    }
    out.push(b'\n');
    out
}

/// Every stream of rmcp's shape: none, one or two priming or keep-alive events, then a first
/// message of each kind (with and without an event id), then another message; with what the
/// reader must make of it.
fn streams() -> Vec<(Vec<u8>, Read)> {
    let heads: Vec<Vec<u8>> = vec![
        vec![],
        PRIMING.to_vec(),
        KEEP_ALIVE.to_vec(),
        [PRIMING, KEEP_ALIVE].concat(),
        [KEEP_ALIVE, PRIMING].concat(),
    ];
    let firsts: [(&[u8], bool); 4] = [
        (RESPONSE, true),
        (ERROR, true),
        (PROGRESS, false),
        (ELICIT, false),
    ];
    let mut out = Vec::new();
    for head in &heads {
        for (first, answer) in firsts {
            for id in [None, Some("0/1")] {
                let stream = [head.clone(), event(first, id), event(RESPONSE, None)].concat();
                let expected = if answer {
                    Read::Answer(Bytes::copy_from_slice(first))
                } else {
                    Read::Other
                };
                out.push((stream, expected));
            }
        }
    }
    out
}

fn read_split(stream: &[u8], cuts: &[usize]) -> Read {
    let mut reader = Events::default();
    let mut at = 0;
    for &cut in cuts.iter().chain(std::iter::once(&stream.len())) {
        match reader.feed(&Bytes::copy_from_slice(&stream[at..cut])) {
            Read::More => at = cut,
            done => return done,
        }
    }
    Read::More
}

#[test]
fn the_first_message_decides_however_the_bytes_arrive() {
    for (stream, expected) in streams() {
        let shown = String::from_utf8_lossy(&stream).into_owned();
        assert_eq!(read_split(&stream, &[]), expected, "{shown}");
        for cut in 0..=stream.len() {
            assert_eq!(
                read_split(&stream, &[cut]),
                expected,
                "{shown} cut at {cut}"
            );
        }
        let bytes: Vec<usize> = (1..stream.len()).collect();
        assert_eq!(
            read_split(&stream, &bytes),
            expected,
            "{shown} byte by byte"
        );
    }
}

/// The frames of `stream` as rmcp writes them: one event each.
fn frames_of(stream: &[u8]) -> Vec<Bytes> {
    let mut out = Vec::new();
    let mut start = 0;
    while let Some(end) = memchr::memmem::find(&stream[start..], b"\n\n") {
        out.push(Bytes::copy_from_slice(&stream[start..start + end + 2]));
        start += end + 2;
    }
    out
}

#[test]
fn an_answer_is_a_slice_of_the_frame_it_came_in_not_a_copy() {
    for (stream, expected) in streams() {
        let Read::Answer(expected) = expected else {
            continue;
        };
        let shown = String::from_utf8_lossy(&stream).into_owned();
        // The whole stream in one frame, and one event a frame.
        let whole = vec![Bytes::copy_from_slice(&stream)];
        for frames in [whole, frames_of(&stream)] {
            let mut reader = Events::default();
            let mut answer = None;
            for frame in &frames {
                match reader.feed(frame) {
                    Read::More => continue,
                    read => {
                        answer = Some((read, frame.clone()));
                        break;
                    }
                }
            }
            let Some((Read::Answer(json), frame)) = answer else {
                panic!("{shown}: no answer read");
            };
            assert_eq!(json, expected, "{shown}");
            assert!(
                frame.as_ptr_range().contains(&json.as_ptr()),
                "{shown}: the answer was copied out of its frame"
            );
            assert!(reader.partial.is_empty(), "{shown}");
        }
    }
}

#[test]
fn an_answer_split_across_frames_is_read_whole_once() {
    let stream = [PRIMING, &event(RESPONSE, Some("0/1"))].concat();
    for cut in PRIMING.len() + 1..stream.len() {
        let mut reader = Events::default();
        assert_eq!(
            reader.feed(&Bytes::copy_from_slice(&stream[..cut])),
            Read::More
        );
        assert_eq!(
            reader.feed(&Bytes::copy_from_slice(&stream[cut..])),
            Read::Answer(Bytes::from_static(RESPONSE)),
            "cut at {cut}"
        );
    }
}

#[test]
fn several_data_lines_are_joined_by_newlines() {
    let stream = b"data: {\"id\":1,\ndata: \"result\":{}}\n\n";
    assert_eq!(
        read_split(stream, &[]),
        Read::Answer(Bytes::from_static(b"{\"id\":1,\n\"result\":{}}"))
    );
}

#[test]
fn a_stream_cut_before_its_first_message_is_whole_waits() {
    for (stream, expected) in streams() {
        let end = stream.len() - event(RESPONSE, None).len();
        let before_blank = end - 1;
        if matches!(expected, Read::Answer(_)) {
            assert_eq!(read_split(&stream[..before_blank], &[]), Read::More);
        }
    }
    assert_eq!(read_split(PRIMING, &[]), Read::More);
    assert_eq!(read_split(b"", &[]), Read::More);
}

#[test]
fn what_rmcp_does_not_write_leaves_the_stream_as_it_is() {
    for odd in [
        &b"event: other\ndata: {\"id\":1,\"result\":{}}\n\n"[..],
        b"data: {\"id\":1,\"result\":{}}\r\n\r\n\n\n",
        b"nonsense\n\n",
        b"data: not json\n\n",
        b"data: {\"id\":1}\n\n",
        b"data: {\"result\":{}}\n\n",
        b"data: {\"id\":1,\"result\":{},\"error\":{}}\n\n",
        b"data: [1]\n\n",
    ] {
        assert_eq!(
            read_split(odd, &[]),
            Read::Other,
            "{}",
            String::from_utf8_lossy(odd)
        );
    }
    // `event: message` is the default type, said.
    assert_eq!(
        read_split(b"event: message\ndata: {\"id\":1,\"result\":{}}\n\n", &[]),
        Read::Answer(Bytes::from_static(b"{\"id\":1,\"result\":{}}"))
    );
}

#[test]
fn accept_headers() {
    let accepts = |values: &[&str]| {
        let mut headers = http::HeaderMap::new();
        for v in values {
            headers.append(header::ACCEPT, HeaderValue::from_str(v).unwrap());
        }
        accepts_json(&headers)
    };
    assert!(accepts(&["application/json, text/event-stream"]));
    assert!(accepts(&["text/event-stream", "Application/JSON;q=0.9"]));
    assert!(!accepts(&["text/event-stream"]));
    assert!(!accepts(&["application/jsonx"]));
    assert!(!accepts(&[]));
}

fn sse(frames: Vec<Result<Bytes, std::io::Error>>) -> Response {
    let mut response = Response::new(Body::from_stream(futures_util::stream::iter(frames)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("mcp-session-id", HeaderValue::from_static("s1"));
    response
}

async fn body(response: Response) -> Vec<u8> {
    let mut out = Vec::new();
    let mut stream = response.into_body().into_data_stream();
    while let Some(Ok(chunk)) = stream.next().await {
        out.extend_from_slice(&chunk);
    }
    out
}

#[tokio::test]
async fn an_answer_first_is_sent_as_json_with_the_session_header() {
    for (stream, expected) in streams() {
        let frames = vec![Ok(Bytes::from(stream.clone()))];
        let response = first_answer_as_json(sse(frames)).await;
        let session = response.headers().get("mcp-session-id").cloned();
        assert_eq!(session.as_ref().map(|v| v.as_bytes()), Some(&b"s1"[..]));
        let kind = response.headers().get(header::CONTENT_TYPE).cloned();
        match expected {
            Read::Answer(json) => {
                assert_eq!(
                    kind.as_ref().map(|v| v.as_bytes()),
                    Some(&b"application/json"[..])
                );
                assert!(response.headers().get(header::CACHE_CONTROL).is_none());
                assert_eq!(body(response).await, json);
            }
            _ => {
                // The stream goes out byte for byte as rmcp made it.
                assert_eq!(
                    kind.as_ref().map(|v| v.as_bytes()),
                    Some(&b"text/event-stream"[..])
                );
                assert_eq!(body(response).await, stream);
            }
        }
    }
}

#[tokio::test]
async fn a_stream_that_ends_or_breaks_first_goes_out_as_it_is() {
    let ended = first_answer_as_json(sse(vec![Ok(Bytes::from_static(PRIMING))])).await;
    assert_eq!(body(ended).await, PRIMING);
    let broken = sse(vec![
        Ok(Bytes::from_static(PRIMING)),
        Err(std::io::Error::other("gone")),
    ]);
    let broken = first_answer_as_json(broken).await;
    // The frames read, then the break itself: the client sees the stream break, not end.
    let mut frames = broken.into_body().into_data_stream();
    let first = frames.next().await.map(|f| f.map(|b| b.to_vec()).ok());
    assert_eq!(first, Some(Some(PRIMING.to_vec())));
    let then = frames.next().await;
    assert!(
        then.as_ref().is_some_and(|f| f.is_err()),
        "the break goes out after the held frames"
    );
}

#[tokio::test]
async fn other_responses_are_left_alone() {
    let mut plain = Response::new(Body::from("{\"a\":1}"));
    plain.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let plain = first_answer_as_json(plain).await;
    assert_eq!(body(plain).await, b"{\"a\":1}");
    let mut refused = sse(vec![Ok(Bytes::from(event(RESPONSE, None)))]);
    *refused.status_mut() = StatusCode::ACCEPTED;
    let refused = first_answer_as_json(refused).await;
    assert_eq!(refused.status(), StatusCode::ACCEPTED);
    assert_eq!(body(refused).await, event(RESPONSE, None));
}

#[tokio::test]
async fn a_slow_answer_is_streamed_from_the_priming_event_on() {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    let mut response = Response::new(Body::from_stream(tokio_stream_of(rx)));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    tx.send(Ok(Bytes::from_static(PRIMING))).await.unwrap();
    // The answer comes only once the response has gone out without it.
    let response = first_answer_as_json(response).await;
    assert_eq!(
        response
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.as_bytes()),
        Some(&b"text/event-stream"[..])
    );
    tx.send(Ok(Bytes::from(event(RESPONSE, None))))
        .await
        .unwrap();
    drop(tx);
    assert_eq!(
        body(response).await,
        [PRIMING, &event(RESPONSE, None)].concat()
    );
}

fn tokio_stream_of(
    mut rx: tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}
