//! The gateway while it serves: its configuration file edited under a client's session (servers
//! added, removed and changed, a broken edit, SIGHUP), and its Prometheus endpoint scraped
//! after calls. The gateway binary over stdio, in front of the scripted upstreams of the
//! hostile suite (tests/hostile/upstream.py).

#[path = "hostile/harness.rs"]
mod harness;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use harness::{up, Dir, Gateway, LIVENESS};
use serde_json::{json, Value};

fn disco() -> Value {
    json!({"startupTimeoutMs": 10000, "callTimeoutMs": 30000,
           "restartInitialMs": 200, "restartMaxMs": 1000})
}

/// Waits, within [`LIVENESS`], until the gateway's log has `what` `count` times.
fn wait_for_log(gw: &Gateway, what: &str, count: usize) -> String {
    let deadline = Instant::now() + LIVENESS;
    loop {
        let log = gw.log();
        if log.matches(what).count() >= count {
            return log;
        }
        assert!(
            Instant::now() < deadline,
            "`{what}` not logged {count} time(s) within {LIVENESS:?}; log:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The client heard `tools/list_changed` since `gw.notified` was last cleared.
fn assert_heard_list_changed(gw: &Gateway) {
    assert!(
        gw.notified
            .iter()
            .any(|m| m == "notifications/tools/list_changed"),
        "no list_changed after the edit: {:?}",
        gw.notified
    );
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// An edit of the file while a client holds a session and calls run: the added server's tools
/// are callable, the removed server's are gone, the changed server is restarted with its new
/// tools held for approval (a reload approves nothing), the kept server is never restarted,
/// the client hears `tools/list_changed`, and the calls that ran (on the kept server and on the
/// removed one) complete with their answers. A broken edit then keeps everything serving and
/// the log names the key; SIGHUP reads the file again.
#[test]
fn an_edit_of_the_configuration_is_served_without_a_restart() {
    let dir = Dir::new("live-edit");
    let before = [
        up("keep", "patient"),
        up("gone", "patient"),
        up("moved", "good"),
    ];
    let mut gw = Gateway::start(&dir, &before, disco());
    // The servers' tools, and the gateway's `tool_search` and `execute_tool`.
    let names = gw.wait_for_tools("the first servers", |n| n.len() == 6 + 2);
    assert!(names.contains(&"gone.wait".to_string()), "{names:?}");

    // Two calls that run until the test ends them: on a server that stays, and on one the
    // edit removes.
    let kept_call = gw.send_request(
        "tools/call",
        json!({"name": "keep.wait", "arguments": {"text": "kept"}}),
    );
    let gone_call = gw.send_request(
        "tools/call",
        json!({"name": "gone.wait", "arguments": {"text": "gone"}}),
    );

    // `moved` changes (another scenario: the same `echo`, and a `wait` its pins never saw),
    // `gone` goes, `fresh` comes.
    let after = [
        up("keep", "patient"),
        up("moved", "patient"),
        up("fresh", "good"),
    ];
    gw.notified.clear();
    harness::config(&dir, &after, disco());
    // `moved` is out of the catalog while it restarts, and back when it has listed its tools.
    let names = gw.wait_for_tools("the edited servers", |n| {
        let has = |name: &str| n.iter().any(|t| t == name);
        has("fresh.echo") && has("moved.echo") && !n.iter().any(|t| t.starts_with("gone."))
    });
    let upstream_tools = |names: Vec<String>| {
        let mut names: Vec<String> = names.into_iter().filter(|n| n.contains('.')).collect();
        names.sort();
        names
    };
    let sorted = upstream_tools(names);
    assert_eq!(
        sorted,
        [
            "fresh.echo",
            "fresh.sum",
            "keep.echo",
            "keep.wait",
            "moved.echo"
        ],
        "moved.wait is new since `moved` was approved: held, not served"
    );
    assert_heard_list_changed(&gw);

    let (text, is_error) = gw.call("fresh.echo", json!({"text": "hi"}));
    assert_eq!(
        (text.as_str(), is_error),
        ("fresh:echo:{\"text\": \"hi\"}", false)
    );
    let (text, is_error) = gw.call("moved.wait", json!({}));
    assert!(
        is_error && text.contains("disco-gateway approve moved.wait"),
        "{text}"
    );
    let (text, is_error) = gw.call("gone.echo", json!({"text": "hi"}));
    assert!(is_error && !text.contains("gone:echo"), "{text}");

    // The calls that ran through the edit answer once let go, one after the other (the
    // harness skips an answer it does not wait for).
    let go = |label: &str| {
        std::fs::write(dir.0.join(format!("{label}.go")), "go").expect("the go file");
    };
    go("keep");
    let kept = gw.answer(kept_call, "keep.wait");
    assert_eq!(text_of(&kept), "keep:wait:{\"text\": \"kept\"}", "{kept}");
    go("gone");
    let gone = gw.answer(gone_call, "gone.wait");
    assert_eq!(text_of(&gone), "gone:wait:{\"text\": \"gone\"}", "{gone}");

    let log = wait_for_log(&gw, "configuration reloaded", 1);
    let starts = |server: &str| {
        log.lines()
            .filter(|l| l.contains("upstream ready") && l.contains(&format!("server={server} ")))
            .count()
    };
    assert_eq!(starts("keep"), 1, "keep was restarted; log:\n{log}");
    assert_eq!(starts("moved"), 2, "moved was not restarted; log:\n{log}");

    // A broken edit: the running configuration serves, and the log names the key.
    let path = dir.0.join("servers.json");
    let good = std::fs::read_to_string(&path).expect("the configuration");
    std::fs::write(&path, good.replacen("\"command\"", "\"comand\"", 1)).expect("the edit");
    let log = wait_for_log(&gw, "mcpServers.keep.comand", 1);
    let refused = log
        .lines()
        .find(|l| l.contains("mcpServers.keep.comand"))
        .unwrap_or_default();
    assert!(refused.contains("was not reloaded"), "{log}");
    assert_eq!(upstream_tools(gw.tool_names()), sorted);
    let (text, is_error) = gw.call("keep.echo", json!({"text": "still"}));
    assert_eq!(
        (text.as_str(), is_error),
        ("keep:echo:{\"text\": \"still\"}", false)
    );

    // Put right, and SIGHUP: read again, nothing changes.
    std::fs::write(&path, &good).expect("the edit");
    wait_for_log(&gw, "configuration reloaded", 2);
    let pid = i32::try_from(gw.pid()).expect("a pid");
    // SAFETY: kill(2) sends SIGHUP to the gateway this test started; no memory is involved.
    let sent = unsafe { libc::kill(pid, libc::SIGHUP) };
    assert_eq!(sent, 0, "SIGHUP not sent");
    wait_for_log(&gw, "configuration reloaded", 3);
    assert_eq!(upstream_tools(gw.tool_names()), sorted);
    gw.assert_healthy();
}

/// An edit of the `disco` section's aliases and keywords is in force at once, without a
/// restart of any server: a new alias calls its tool, a new keyword finds its tool. A change to
/// a key read at start is logged once by its name. An edit whose aliases the catalog could not
/// take (one alias for two tools) is refused whole, naming the key: the running aliases and
/// servers serve on.
#[test]
fn an_edit_of_aliases_and_keywords_is_in_force_at_once() {
    let dir = Dir::new("live-labels");
    let servers = [up("keep", "good")];
    let mut gw = Gateway::start(&dir, &servers, disco());
    gw.wait_for_tools("the server", |n| n.iter().any(|t| t == "keep.sum"));
    let (text, is_error) = gw.call("shout", json!({"text": "hi"}));
    assert!(is_error && !text.contains("keep:echo"), "{text}");

    // An alias alone: nothing a client lists changes, and the alias calls its tool.
    let mut edited = disco();
    edited["aliases"] = json!({"keep.echo": ["shout"]});
    harness::config(&dir, &servers, edited.clone());
    wait_for_log(&gw, "`disco.aliases` and `disco.keywords` reloaded", 1);
    let shout = |gw: &mut Gateway| gw.call("shout", json!({"text": "hi"}));
    wait_until("the alias calls its tool", || !shout(&mut gw).1);
    assert_eq!(shout(&mut gw).0, "keep:echo:{\"text\": \"hi\"}");

    // A keyword, and a key read at start.
    let search = |gw: &mut Gateway| gw.call("tool_search", json!({"query": "zanzibar"})).0;
    assert!(
        !search(&mut gw).contains("keep.sum"),
        "found before the keyword was given"
    );
    edited["keywords"] = json!({"keep.sum": ["zanzibar"]});
    edited["callTimeoutMs"] = json!(20000);
    harness::config(&dir, &servers, edited.clone());
    wait_for_log(&gw, "`disco.aliases` and `disco.keywords` reloaded", 2);
    wait_until("the keyword finds its tool", || {
        search(&mut gw).contains("keep.sum")
    });
    wait_for_log(&gw, "`disco.callTimeoutMs` changed", 1);

    // An edit the catalog could not take, with a server added: refused whole.
    let more = [up("keep", "good"), up("more", "good")];
    let mut broken = edited.clone();
    broken["aliases"] = json!({"keep.echo": ["shout"], "keep.sum": ["shout"]});
    harness::config(&dir, &more, broken);
    let log = wait_for_log(&gw, "disco.aliases.keep.sum[0]", 1);
    assert!(log.contains("was not reloaded"), "{log}");
    assert_eq!(shout(&mut gw).0, "keep:echo:{\"text\": \"hi\"}");
    assert!(!gw.tool_names().iter().any(|t| t.starts_with("more.")));

    // Put right: the server joins; the key read at start was said once.
    harness::config(&dir, &more, edited);
    gw.wait_for_tools("the added server", |n| n.iter().any(|t| t == "more.echo"));
    let log = gw.log();
    assert_eq!(
        log.matches("`disco.callTimeoutMs` changed").count(),
        1,
        "{log}"
    );
    let starts = log
        .lines()
        .filter(|l| l.contains("upstream ready") && l.contains("server=keep "))
        .count();
    assert_eq!(starts, 1, "keep was restarted; log:\n{log}");
    gw.assert_healthy();
}

/// Polls `done` until it holds, within [`LIVENESS`].
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + LIVENESS;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {LIVENESS:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A scrape over the loopback: a GET of `/metrics`, the body returned.
fn scrape(addr: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).expect("the metrics endpoint");
    stream.set_read_timeout(Some(LIVENESS)).expect("a timeout");
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("the request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("the response");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default()
}

/// The value of the sample `name{labels}` of the exposition; 0 when it is absent.
fn sample(body: &str, series: &str) -> f64 {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.trim().parse().expect("a number"))
        .unwrap_or(0.0)
}

/// After a call, a corrected call, a refused call, an upstream error, a search and an upstream
/// that exits, the endpoint's counters say each: by server and tool, by rule, by server.
#[test]
fn the_metrics_endpoint_counts_calls_corrections_refusals_and_searches() {
    let dir = Dir::new("live-metrics");
    let ups = [up("s", "good"), up("h", "huge"), up("f", "flaky")];
    let mut gw = Gateway::start_with(&dir, &ups, disco(), &["--metrics", "127.0.0.1:0"]);
    gw.wait_for_tools("the servers", |n| n.len() == 8 + 2);
    let log = wait_for_log(&gw, "serving Prometheus metrics", 1);
    let addr = log
        .lines()
        .find(|l| l.contains("serving Prometheus metrics"))
        .and_then(|l| l.split("addr=").nth(1))
        .map(|a| a.trim().to_string())
        .expect("the address in the log");

    let (text, is_error) = gw.call("s.echo", json!({"text": "a"}));
    assert!(!is_error, "{text}");
    // A spelling-equivalent name: corrected, then forwarded to `s.echo`.
    let (text, is_error) = gw.call("S.Echo", json!({"text": "b"}));
    assert!(!is_error && text.starts_with("s:echo"), "{text}");
    // Nothing is near this name: refused.
    let (text, is_error) = gw.call("qqqqqqqq", json!({}));
    assert!(is_error, "{text}");
    // The upstream answers with an error.
    let (_, is_error) = gw.call("h.huge_error", json!({}));
    assert!(is_error);
    let search = gw.call("tool_search", json!({"query": "echo"}));
    assert!(!search.1, "{}", search.0);
    // `f` answers, then exits: it is restarted once.
    let (text, _) = gw.call("f.exit", json!({}));
    assert_eq!(text, "f:exit");
    wait_for_log(&gw, "upstream stopped", 1);
    wait_for_log(&gw, "server=f tools=2", 2);

    let body = scrape(&addr);
    let calls = r#"disco_gateway_calls_total{server="s",tool="s.echo"}"#;
    assert_eq!(sample(&body, calls), 2.0, "{body}");
    let errors = r#"disco_gateway_call_errors_total{server="h",tool="h.huge_error"}"#;
    assert_eq!(sample(&body, errors), 1.0, "{body}");
    assert_eq!(
        sample(
            &body,
            r#"disco_gateway_call_errors_total{server="s",tool="s.echo"}"#
        ),
        0.0
    );
    let latency = r#"disco_gateway_call_duration_seconds_count{server="s",tool="s.echo"}"#;
    assert_eq!(sample(&body, latency), 2.0, "{body}");
    let equivalent = r#"disco_gateway_corrections_total{rule="equivalent"}"#;
    assert_eq!(sample(&body, equivalent), 1.0, "{body}");
    let refused = r#"disco_gateway_refusals_total{rule="unknown_tool"}"#;
    assert_eq!(sample(&body, refused), 1.0, "{body}");
    let suggested = r#"disco_gateway_refusals_total{rule="unknown_tool_suggested"}"#;
    assert_eq!(sample(&body, suggested), 0.0, "{body}");
    assert_eq!(
        sample(&body, r#"disco_gateway_searches_total{result="found"}"#),
        1.0,
        "{body}"
    );
    // Every tools/call: the six above.
    assert_eq!(sample(&body, "disco_gateway_requests_total"), 6.0, "{body}");
    assert_eq!(
        sample(
            &body,
            r#"disco_gateway_upstream_restarts_total{server="s"}"#
        ),
        0.0,
        "{body}"
    );
    let restarts = r#"disco_gateway_upstream_restarts_total{server="f"}"#;
    assert_eq!(sample(&body, restarts), 1.0, "{body}");
    gw.assert_healthy();
}
