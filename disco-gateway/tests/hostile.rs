//! The hostile-upstream suite: the gateway binary in front of scripted upstreams that say what
//! no well-behaved server says (tests/hostile/upstream.py), beside a well-behaved one. Each test
//! asserts that the gateway stays up, that the other upstreams serve, that the client gets a
//! clear answer within the liveness bound, and that the gateway's peak resident memory stays
//! under the ceiling (harness.rs).

#[path = "hostile/harness.rs"]
mod harness;

use harness::{lint, says, up, wait_for_file, Dir, Gateway};
use serde_json::{json, Value};

fn disco(namespace: &str) -> Value {
    json!({"namespace": namespace, "startupTimeoutMs": 10000, "callTimeoutMs": 15000,
           "restartInitialMs": 200, "restartMaxMs": 1000})
}

/// Settings with a call timeout far past the liveness bound: a flood takes its time through a
/// debug build, and an answer lost on the way must fail the test, not time out into one.
fn patient() -> Value {
    let mut settings = disco(".");
    settings["callTimeoutMs"] = json!(120_000);
    settings
}

/// A name listed twice and the meta-tools' names under `"namespace": "none"` once stopped the
/// gateway before `initialize` was answered (exit 2). Now they are left out of that upstream's
/// list, the log and `lint` say which, and everything else serves.
#[test]
fn a_name_listed_twice_or_a_meta_tools_name_stops_nothing() {
    let dir = Dir::new("twice");
    let ups = [
        up("dup", "duplicate"),
        up("meta", "meta_names"),
        up("good", "good"),
    ];
    let mut gw = Gateway::start(&dir, &ups, disco("none"));
    let names = gw.tool_names();
    for name in [
        "echo",
        "sum",
        "fine_dup",
        "fine_meta",
        "tool_search",
        "execute_tool",
    ] {
        assert_eq!(
            names.iter().filter(|n| *n == name).count(),
            1,
            "{name} in {names:?}"
        );
    }
    // `echo` is the good server's: the duplicated one is served by neither definition.
    assert_eq!(
        gw.call("echo", json!({"text": "hi"})).0,
        r#"good:echo:{"text": "hi"}"#
    );
    assert_eq!(gw.call("fine_dup", json!({})).0, "dup:fine_dup:{}");
    // The meta-tool is the gateway's own.
    let (text, error) = gw.call("tool_search", json!({"query": "echo"}));
    assert!(!error && !text.contains("meta:"), "{text}");
    let log = gw.log();
    assert!(
        log.contains("server=dup tool=echo") && log.contains("listed 2 times"),
        "{log}"
    );
    assert!(log.contains("server=meta tool=tool_search"), "{log}");
    gw.assert_healthy();

    let report = lint(&dir, &ups, disco("none"));
    says(&report, "upstream-tool-refused] `dup: echo`");
    says(&report, "upstream-tool-left-out] `tool_search`");
    says(&report, "`execute_tool` of server `meta`");
}

/// Each entry is admitted on its own: a schema that alone is unusable serves without argument
/// checks; a malformed entry, and one nested deeper than the reader goes, is left out and
/// named; the upstream and its other tools serve.
#[test]
fn one_bad_entry_costs_its_own_tool_alone() {
    let dir = Dir::new("entries");
    let ups = [up("bad", "bad_entries"), up("good", "good")];
    let mut gw = Gateway::start(&dir, &ups, disco("."));
    let names = gw.tool_names();
    let served = [
        "fine",
        "schema_true",
        "schema_false",
        "schema_list",
        "schema_text",
        "schema_null",
        "schema_missing",
    ];
    for tool in served {
        assert!(
            names.contains(&format!("bad.{tool}")),
            "bad.{tool}: {names:?}"
        );
    }
    for tool in ["bad_description", "deep_schema"] {
        assert!(!names.contains(&format!("bad.{tool}")), "{tool}: {names:?}");
    }
    assert!(names.contains(&"good.echo".to_string()));
    // Served as declaring no parameters: called with none it reaches the upstream; with
    // some, the catalog says the tool takes none.
    assert_eq!(
        gw.call("bad.schema_true", json!({})),
        ("bad:schema_true:{}".into(), false)
    );
    let (text, error) = gw.call("bad.schema_list", json!({"n": 1}));
    assert!(error && text.contains("takes no parameters"), "{text}");
    let (text, error) = gw.call("bad.deep_schema", json!({}));
    assert!(error && !text.contains("bad:"), "{text}");
    let log = gw.log();
    for named in ["tool=deep_schema", "tool=bad_description", "tool=(entry 7)"] {
        assert!(log.contains(named), "{named} not in the log:\n{log}");
    }
    gw.assert_healthy();

    let report = lint(&dir, &ups, disco("."));
    assert!(
        report.contains("`bad: deep_schema`") && report.contains("deeper than 100"),
        "{report}"
    );
    says(&report, "`bad: (entry 7)`");
    says(&report, "inputSchema is `true`");
}

/// Upstream names are held to the rules of requested names: control, format, bidi and
/// zero-width characters, the empty name and names over 128 characters are refused, never
/// listed and never called; look-alikes are listed and flagged by `lint`.
#[test]
fn upstream_names_follow_the_rules_of_requests() {
    let dir = Dir::new("names");
    let ups = [up("names", "bad_names"), up("good", "good")];
    let mut gw = Gateway::start(&dir, &ups, disco("."));
    let names = gw.tool_names();
    let from_names: Vec<&String> = names.iter().filter(|n| n.starts_with("names.")).collect();
    assert_eq!(
        from_names,
        [
            "names.echo",
            "names.\u{435}cho",
            "names.\u{ff45}\u{ff43}\u{ff48}\u{ff4f}"
        ],
        "{names:?}"
    );
    for refused in [
        "names.nul\u{0}echo",
        "names.zero\u{200b}echo",
        "names.rtl\u{202e}echo",
    ] {
        let (text, error) = gw.call(refused, json!({}));
        assert!(error, "{refused:?}: {text}");
        assert!(!text.contains("names:"), "reached the upstream: {text}");
    }
    assert!(gw.call("good.echo", json!({})).0.starts_with("good:echo"));
    let log = gw.log();
    assert!(
        log.contains("nul\\\\0echo") || log.contains("nul\\0echo"),
        "{log}"
    );
    // (The runtime logs the names callers request as they sent them; the gateway's own
    // lines about the upstream's tools show them escaped.)
    for line in log.lines().filter(|l| l.contains("left out")) {
        assert!(
            !line.contains(['\u{202e}', '\u{1b}', '\u{200b}']),
            "raw: {line:?}"
        );
    }
    gw.assert_healthy();

    let report = lint(&dir, &ups, disco("."));
    says(&report, "tool-name-look-alike");
    says(&report, "`names: rtl\\u{202e}echo`");
    says(&report, "500 characters");
    assert!(
        !report.contains('\u{202e}') && !report.contains('\u{0}'),
        "raw in lint"
    );
}

/// Under `"namespace": "none"` the server listed first in the configuration keeps a contested
/// name, even when it starts last; a look-alike of a name counts as the name.
#[test]
fn the_server_listed_first_keeps_a_contested_name() {
    let dir = Dir::new("contested");
    // `first` answers initialize 1.5 s late: `second` lists `shared` before it.
    let ups = [
        up("first", "shared"),
        up("second", "shared"),
        up("good", "good"),
        up("alike", "look_alike"),
    ];
    let mut gw = Gateway::start(&dir, &ups, disco("none"));
    let names = gw.wait_for_tools("both servers listed", |n| {
        n.iter().any(|n| n == "only_first") && n.iter().any(|n| n == "only_second")
    });
    assert_eq!(names.iter().filter(|n| *n == "shared").count(), 1);
    assert_eq!(gw.call("shared", json!({})).0, "first:shared:{}");
    assert!(
        !names
            .iter()
            .any(|n| n == "\u{ff45}\u{ff43}\u{ff48}\u{ff4f}"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "only_alike"));
    assert_eq!(gw.call("echo", json!({})).0, "good:echo:{}");
    gw.assert_healthy();

    let report = lint(&dir, &ups, disco("none"));
    says(&report, "`shared` of server `second` is left out");
    says(&report, "reads as `echo` of server `good`");
}

/// The same conditions after start-up: the upstream's list changes to hold a meta-tool's
/// name, a name twice and a bad schema; those are left out or served without checks, and the
/// rest of the catalog updates (it used to stay frozen at the previous one).
#[test]
fn changes_after_start_up_update_the_rest_of_the_catalog() {
    let dir = Dir::new("changes");
    let ups = [up("mut", "mutating"), up("good", "good")];
    let mut gw = Gateway::start(&dir, &ups, disco("none"));
    assert!(gw.tool_names().contains(&"mutate".to_string()));
    assert_eq!(gw.call("mutate", json!({})).0, "mut:mutate:{}");
    let names = gw.wait_for_tools("the new tool", |n| n.iter().any(|n| n == "fresh"));
    assert_eq!(names.iter().filter(|n| *n == "tool_search").count(), 1);
    assert!(!names.iter().any(|n| n == "again"), "{names:?}");
    assert_eq!(gw.call("fresh", json!({})).0, "mut:fresh:{}");
    assert_eq!(gw.call("echo", json!({})).0, "good:echo:{}");
    let log = gw.log();
    assert!(!log.contains("the previous one stays"), "{log}");
    gw.assert_healthy();
}

/// A client that stops reading while an upstream floods log messages (30,000 of 8 KiB, 240 MB
/// in all): the gateway used to keep every one of them (1.8 GB resident at twice the flood).
/// Now at most 256 wait per connection, the oldest dropped and counted in the log; the call is
/// answered when the client reads again.
#[test]
fn a_log_flood_to_a_client_that_stopped_reading_is_bounded() {
    let dir = Dir::new("logs");
    let ups = [up("flood", "log_flood"), up("good", "good")];
    let mut gw = Gateway::start(&dir, &ups, patient());
    let level = gw.request("logging/setLevel", json!({"level": "debug"}));
    assert!(level.get("result").is_some(), "{level}");
    gw.pause_reading(true);
    let call = gw.send_request(
        "tools/call",
        json!({"name": "flood.flood", "arguments": {}}),
    );
    wait_for_file(&dir.0.join("flood.done"));
    let peak = gw.peak_rss_kb();
    eprintln!("peak resident memory while the client was not reading: {peak} kB");
    assert!(
        peak < harness::RSS_CEILING_KB,
        "peak {peak} kB while the client was not reading"
    );
    gw.pause_reading(false);
    let answer = gw.answer(call, "tools/call");
    assert_eq!(
        answer["result"]["content"][0]["text"], "flood:flood:{}",
        "{answer}"
    );
    assert_eq!(gw.call("good.echo", json!({})).0, "good:echo:{}");
    let log = gw.log();
    assert!(
        log.contains("log messages of the upstream dropped"),
        "{log}"
    );
    gw.assert_healthy();
}

/// An upstream whose `nextCursor` never ends, one that repeats its cursor, and one that lists
/// more than `maxTools` (5,000 by default) are refused, each with a log line naming it and the
/// bound; the others serve.
#[test]
fn listings_are_bounded_in_pages_cursors_and_tools() {
    let dir = Dir::new("pages");
    let ups = [
        up("endless", "endless_cursor"),
        up("repeat", "repeat_cursor"),
        up("many", "many_tools"),
        up("good", "good"),
    ];
    let mut gw = Gateway::start(&dir, &ups, disco("."));
    let names = gw.tool_names();
    assert_eq!(
        names.iter().filter(|n| n.starts_with("good.")).count(),
        2,
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| !n.starts_with("good.") && !n.contains('_')),
        "{names:?}"
    );
    assert_eq!(gw.call("good.echo", json!({})).0, "good:echo:{}");
    let log = gw.log();
    for expected in [
        "server=endless reason=tools/list: refused after 100 pages",
        "server=repeat reason=tools/list: refused, it gave the cursor `same` twice",
        "server=many reason=tools/list: refused, it lists more than 5000 tools",
    ] {
        assert!(log.contains(expected), "{expected} not in:\n{log}");
    }
    gw.assert_healthy();
}

/// A result over the limit (`maxMessageBytes`, 1 MiB here) is answered at once with a tool
/// error naming its size and the limit, whether its `id` comes before the result or after it;
/// an upstream's 300 KB error message reaches the caller clipped. The call timeout is longer
/// than the liveness bound: an answer lost on the way would fail the test.
#[test]
fn a_result_over_the_limit_is_answered_at_once_and_errors_are_clipped() {
    let dir = Dir::new("huge");
    let ups = [up("huge", "huge"), up("good", "good")];
    let mut settings = patient();
    settings["maxMessageBytes"] = json!(1_048_576);
    let mut gw = Gateway::start(&dir, &ups, settings);
    for tool in ["huge.huge_first", "huge.huge_last"] {
        let (text, error) = gw.call(tool, json!({}));
        assert!(error, "{tool}: {text}");
        assert!(
            text.contains("over the gateway's limit of 1048576 bytes") && text.contains("2097"),
            "{tool}: {text}"
        );
    }
    let (text, error) = gw.call("huge.huge_error", json!({}));
    assert!(
        error && text.chars().count() < 1_200,
        "{} characters",
        text.len()
    );
    // The upstream serves on.
    assert_eq!(gw.call("huge.small", json!({})).0, "huge:small:{}");
    assert_eq!(gw.call("good.echo", json!({})).0, "good:echo:{}");
    gw.assert_healthy();
}
