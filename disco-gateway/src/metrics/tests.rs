use super::*;

/// The tool labels stop growing at the cap, whatever the tools called: the calls past it are
/// counted under `(other)` of their server, and no call goes uncounted.
#[test]
fn tool_labels_are_capped_and_every_call_counted() {
    let metrics = Metrics::default();
    let mut rng = fastrand::Rng::with_seed(0x3E7);
    let servers = ["a", "b", "c"];
    let calls = MAX_TOOL_LABELS * 2;
    let mut failed = 0;
    for i in 0..calls {
        let server = servers[rng.usize(..servers.len())];
        let fail = rng.bool();
        failed += usize::from(fail);
        metrics.call(
            server,
            &format!("{server}.t{i}"),
            fail,
            Duration::from_millis(3),
        );
    }
    let text = metrics.render(None, &[]);
    let series = |name: &str| -> Vec<(String, f64)> {
        text.lines()
            .filter_map(|l| l.strip_prefix(name)?.strip_prefix('{'))
            .filter_map(|l| {
                let (labels, value) = l.rsplit_once(' ')?;
                Some((labels.to_string(), value.parse().ok()?))
            })
            .collect()
    };
    let counted = series("disco_gateway_calls_total");
    let others = counted
        .iter()
        .filter(|(l, _)| l.contains(&format!("tool=\"{OTHER_TOOL}\"")))
        .count();
    assert_eq!(counted.len() - others, MAX_TOOL_LABELS);
    assert!(others <= servers.len());
    let total: f64 = counted.iter().map(|(_, v)| v).sum();
    assert_eq!(total, calls as f64);
    let errors: f64 = series("disco_gateway_call_errors_total")
        .iter()
        .map(|(_, v)| v)
        .sum();
    assert_eq!(errors, failed as f64);
    let timed: f64 = series("disco_gateway_call_duration_seconds_count")
        .iter()
        .map(|(_, v)| v)
        .sum();
    assert_eq!(timed, calls as f64);
}

/// A label value with the characters the format escapes is written escaped: a scrape reads
/// it back as one sample.
#[test]
fn label_values_are_escaped() {
    let metrics = Metrics::default();
    metrics.call("s", "a\"b\\c\nd", false, Duration::ZERO);
    let text = metrics.render(None, &[("x\"y".into(), 2)]);
    assert!(
        text.contains(r#"disco_gateway_calls_total{server="s",tool="a\"b\\c\nd"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"disco_gateway_upstream_restarts_total{server="x\"y"} 2"#),
        "{text}"
    );
}

/// What a client reads on `c` within `wait`: `None` while the connection stays open and
/// silent, else what came before the end (nothing: closed).
async fn heard(c: &mut tokio::net::TcpStream, wait: Duration) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let read = tokio::time::timeout(wait, async {
        let mut buf = [0u8; 4096];
        loop {
            match c.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    read.ok()
        .map(|()| String::from_utf8_lossy(&got).into_owned())
}

/// The endpoint's connections do not grow past the cap: clients that each open one and send
/// half a request head leave at most `cap` open (a new one closes the oldest idle one); a
/// scrape past the cap is still answered; and a connection that never finishes its head is
/// closed after the head timeout.
#[tokio::test]
async fn connections_past_the_cap_are_closed_and_slow_heads_time_out() {
    use tokio::io::AsyncWriteExt;
    let cap = 3;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let server = tokio::spawn(serve_within(
        listener,
        || "disco_gateway_test 1\n".to_string(),
        cap,
        Duration::from_secs(4),
        stop.clone().cancelled_owned(),
    ));
    let mut held = Vec::new();
    for _ in 0..cap * 4 {
        let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        held.push(c);
    }
    // Each connection listened to at once, for the same short while (well within the head
    // timeout): the ones still open are silent, the others were closed unanswered.
    let mut listening = tokio::task::JoinSet::new();
    for mut c in held {
        listening.spawn(async move {
            let said = heard(&mut c, Duration::from_millis(300)).await;
            (c, said)
        });
    }
    let mut open = Vec::new();
    while let Some(done) = listening.join_next().await {
        match done.unwrap() {
            (c, None) => open.push(c),
            (_, Some(said)) => {
                assert_eq!(said, "", "a connection past the cap is closed unanswered")
            }
        }
    }
    assert!(
        (1..=cap).contains(&open.len()),
        "{} connections held open, the cap is {cap}",
        open.len()
    );

    let mut scrape = tokio::net::TcpStream::connect(addr).await.unwrap();
    scrape
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let answer = heard(&mut scrape, Duration::from_secs(10)).await;
    let answer = answer.expect("the scrape is answered");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("disco_gateway_test 1"), "{answer}");

    for mut c in open {
        // Closed by the scrape's admission (nothing), or by the head timeout (408).
        let said = heard(&mut c, Duration::from_secs(10)).await;
        let said = said.expect("a head never finished is not kept past the timeout");
        assert!(
            said.is_empty() || said.starts_with("HTTP/1.1 408"),
            "{said}"
        );
    }
    stop.cancel();
    server.await.unwrap().unwrap();
}
