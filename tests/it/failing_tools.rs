//! Tools that fail: a panic, a hang past the timeout, output that breaks the tool's own
//! output schema, a cancellation mid-way. The caller gets a clear error result, other calls
//! in flight finish normally, and nothing is left behind (tasks, futures, memory).
//!
//! Its catalog and server hold this module's tools alone (`common::tools_in`,
//! `common::server_in`): the counters and results over the protocol are those of these tools.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::{server_in, test_name, tools_in};
use disco_runtime::{mcp_tool, Catalog, Context, Json};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

/// Futures of the hanging tools that are still alive (not yet dropped): one counter for
/// the leak test's tools, one for the rest (tests run in parallel).
static LIVE: AtomicUsize = AtomicUsize::new(0);
static LIVE_OTHERS: AtomicUsize = AtomicUsize::new(0);

struct Live(&'static AtomicUsize);
impl Live {
    fn new() -> Live {
        Live::on(&LIVE_OTHERS)
    }
    fn on(counter: &'static AtomicUsize) -> Live {
        counter.fetch_add(1, Ordering::SeqCst);
        Live(counter)
    }
}
impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Panic with an internal detail that must not reach the caller.
#[mcp_tool(read_only)]
fn panics_sync() -> String {
    panic!("database password is hunter2")
}

/// Panic inside an async tool.
#[mcp_tool(read_only)]
async fn panics_async() -> String {
    tokio::task::yield_now().await;
    panic!("{}", String::from("connection string with secrets"))
}

/// Hang far past the timeout.
#[mcp_tool(read_only, timeout_ms = 100)]
async fn hangs() -> String {
    let _live = Live::new();
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "never".into()
}

/// Hang with the smallest timeout (for the leak loop).
#[mcp_tool(read_only, timeout_ms = 1)]
async fn hangs_briefly() -> String {
    let _live = Live::on(&LIVE);
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "never".into()
}

/// Block a thread past the timeout (sync tools run on the blocking pool).
#[mcp_tool(read_only, timeout_ms = 50)]
fn blocks() -> String {
    std::thread::sleep(Duration::from_millis(300));
    "late".into()
}

#[derive(JsonSchema)]
struct Count {
    count: u32,
}

// Serialises unlike its schema says: `count` as a string.
impl Serialize for Count {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Count", 1)?;
        st.serialize_field("count", &format!("{} items", self.count))?;
        st.end()
    }
}

/// Return output that breaks the declared output schema.
#[mcp_tool(read_only)]
fn bad_output() -> Json<Count> {
    Json(Count { count: 3 })
}

/// Wait until cancelled.
#[mcp_tool(read_only)]
async fn waits() -> String {
    let _live = Live::new();
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "never".into()
}

/// Wait until cancelled (for the leak loop).
#[mcp_tool(read_only)]
async fn waits_too() -> String {
    let _live = Live::on(&LIVE);
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "never".into()
}

/// A well-behaved slow tool.
#[mcp_tool(read_only)]
async fn slow_ok(tag: String, ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms.min(2_000))).await;
    format!("done {tag}")
}

fn catalog() -> Catalog {
    Catalog::builder()
        .from_specs(tools_in(module_path!()))
        .expect("catalog builds")
}

fn text(r: &disco_runtime::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn quiet_panics() {
    // The tools' panics are on purpose: keep them out of the output, but not the tests' own.
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            // Only this module's panics: the hook is the whole binary's, and another module's
            // failed assertion may well print the word.
            let here = info.location().is_some_and(|l| l.file() == file!());
            if !(here && (payload.contains("hunter2") || payload.contains("secrets"))) {
                default(info);
            }
        }));
    });
}

#[tokio::test]
async fn each_failure_is_a_clear_error_result_without_internals() {
    quiet_panics();
    let c = catalog();
    let r = c.call("panics_sync", json!({})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(
        text(&r),
        "Tool `panics_sync` failed with an internal error."
    );
    let r = c.call("panics_async", json!({})).await.unwrap();
    assert_eq!(
        text(&r),
        "Tool `panics_async` failed with an internal error."
    );
    assert!(!format!("{r:?}").contains("secret"));

    let r = c.call("hangs", json!({})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(
        text(&r),
        "Tool `hangs` did not finish within 100 ms and was stopped."
    );
    let r = c.call("blocks", json!({})).await.unwrap();
    assert_eq!(
        text(&r),
        "Tool `blocks` did not finish within 50 ms and was stopped."
    );

    let r = c.call("bad_output", json!({})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(
        t.starts_with("Tool `bad_output` produced output that does not match its output schema"),
        "{t}"
    );
    assert!(
        r.structured_content.is_none(),
        "the bad output is not passed on"
    );

    let token = disco_runtime::tool::CancellationToken::new();
    let ctx = Context::builder().cancellation(token.clone()).build();
    let call = c.call_with("waits", None, &ctx);
    let canceller = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    };
    let (r, ()) = tokio::join!(call, canceller);
    assert_eq!(text(&r.unwrap()), "Tool `waits` was cancelled.");

    let s = c.stats();
    assert_eq!((s.panics, s.timeouts, s.cancelled), (2, 2, 1), "{s:?}");
    // The catalog goes on serving.
    let r = c
        .call("slow_ok", json!({"tag": "after", "ms": 1}))
        .await
        .unwrap();
    assert_eq!(text(&r), "done after");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_do_not_disturb_calls_in_flight() {
    quiet_panics();
    let c = std::sync::Arc::new(catalog());
    let mut good = Vec::new();
    let mut bad = Vec::new();
    let mut tokens = Vec::new();
    for i in 0..20 {
        let c2 = c.clone();
        good.push(tokio::spawn(async move {
            c2.call("slow_ok", json!({"tag": i.to_string(), "ms": 150}))
                .await
        }));
        for name in [
            "panics_sync",
            "panics_async",
            "hangs",
            "bad_output",
            "blocks",
        ] {
            let c2 = c.clone();
            bad.push(tokio::spawn(async move { c2.call(name, json!({})).await }));
        }
        let token = disco_runtime::tool::CancellationToken::new();
        tokens.push(token.clone());
        let c2 = c.clone();
        bad.push(tokio::spawn(async move {
            let ctx = Context::builder().cancellation(token).build();
            c2.call_with("waits", None, &ctx).await
        }));
    }
    tokio::time::sleep(Duration::from_millis(30)).await;
    for t in &tokens {
        t.cancel();
    }
    for (i, h) in good.into_iter().enumerate() {
        let r = h.await.expect("no panic escapes").expect("a result");
        assert_ne!(r.is_error, Some(true), "{r:?}");
        assert_eq!(text(&r), format!("done {i}"));
    }
    for h in bad {
        let r = h.await.expect("no panic escapes").expect("a result");
        assert_eq!(r.is_error, Some(true), "{r:?}");
    }
    let s = c.stats();
    assert_eq!(s.panics, 40, "{s:?}");
    assert_eq!(s.timeouts, 40, "{s:?}");
    assert_eq!(s.cancelled, 20, "{s:?}");
}

fn resident_kb() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4
}

const LEAK_CHILD_ENV: &str = "DISCO_FAILING_TOOLS_LEAK_CHILD";

/// Resident memory is the whole process's, and the other tests of this binary run beside this
/// one: it runs alone, in this binary started again in child mode, and passes if that does.
#[test]
fn nothing_leaks_tasks_futures_or_memory() {
    if std::env::var_os(LEAK_CHILD_ENV).is_some() {
        return tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(nothing_leaks());
    }
    let name = test_name(module_path!(), "nothing_leaks_tasks_futures_or_memory");
    let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            name.as_str(),
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(LEAK_CHILD_ENV, "1")
        .output()
        .expect("run the child");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    eprint!("{stderr}");
    assert!(out.status.success(), "{:?}\n{stdout}", out.status);
    // Not a filter that matched nothing.
    assert!(stdout.contains("1 passed"), "{stdout}");
}

async fn nothing_leaks() {
    quiet_panics();
    let c = catalog();
    let metrics = tokio::runtime::Handle::current().metrics();
    // Warm up allocators and lazily built state.
    for _ in 0..200 {
        let _ = c.call("hangs_briefly", json!({})).await;
        let _ = c.call("panics_async", json!({})).await;
        let _ = c.call("bad_output", json!({})).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let tasks_before = metrics.num_alive_tasks();
    let rss_before = resident_kb();
    let rounds = 3_000;
    for _ in 0..rounds {
        let r = c.call("hangs_briefly", json!({})).await.unwrap();
        assert_eq!(r.is_error, Some(true));
        let r = c.call("panics_async", json!({})).await.unwrap();
        assert_eq!(r.is_error, Some(true));
        let r = c.call("bad_output", json!({})).await.unwrap();
        assert_eq!(r.is_error, Some(true));
        let token = disco_runtime::tool::CancellationToken::new();
        token.cancel();
        let ctx = Context::builder().cancellation(token).build();
        let r = c.call_with("waits_too", None, &ctx).await.unwrap();
        assert_eq!(r.is_error, Some(true));
    }
    // Aborted tasks are dropped on their worker shortly after the abort.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while (LIVE.load(Ordering::SeqCst) > 0 || metrics.num_alive_tasks() > tasks_before)
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let rss_after = resident_kb();
    eprintln!(
        "{rounds} rounds of timeout+panic+bad output+cancel: tasks {tasks_before} -> {}, live futures {}, RSS {rss_before} kB -> {rss_after} kB",
        metrics.num_alive_tasks(),
        LIVE.load(Ordering::SeqCst)
    );
    assert_eq!(
        LIVE.load(Ordering::SeqCst),
        0,
        "hanging futures were not dropped"
    );
    assert!(
        metrics.num_alive_tasks() <= tasks_before,
        "tasks left behind"
    );
    assert!(
        rss_after < rss_before + 16 * 1024,
        "resident memory grew from {rss_before} kB to {rss_after} kB"
    );
    let s = c.stats();
    assert_eq!(s.timeouts, 200 + rounds, "{s:?}");
    assert_eq!(s.cancelled, rounds, "{s:?}");
}

#[tokio::test]
async fn failures_over_the_protocol_are_results_not_broken_sessions() {
    quiet_panics();
    use disco_runtime::rmcp::ServiceExt;
    use disco_runtime::server::GuardedStdio;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (client, server) = tokio::io::duplex(1 << 16);
    let handler = server_in(module_path!()).into_handler().unwrap();
    tokio::spawn(async move {
        let (r, w) = tokio::io::split(server);
        if let Ok(running) = handler.serve(GuardedStdio::new(r, w)).await {
            let _ = running.waiting().await;
        }
    });
    let (r, mut w) = tokio::io::split(client);
    let mut lines = BufReader::new(r).lines();
    let send = |v: Value| {
        let mut line = v.to_string();
        line.push('\n');
        line
    };
    let init = send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
    );
    w.write_all(init.as_bytes()).await.unwrap();
    let _ = lines.next_line().await.unwrap();
    let mut batch = String::new();
    batch.push_str(&send(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ));
    for (id, name) in [
        (1, "panics_sync"),
        (2, "hangs"),
        (3, "bad_output"),
        (4, "waits"),
        (5, "slow_ok"),
    ] {
        let args = if name == "slow_ok" {
            json!({"tag": "x", "ms": 200})
        } else {
            json!({})
        };
        batch.push_str(&send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                    "params": {"name": name, "arguments": args}}),
        ));
    }
    batch.push_str(&send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}}),
    ));
    w.write_all(batch.as_bytes()).await.unwrap();
    let mut seen = std::collections::BTreeMap::new();
    while seen.len() < 4 {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("answers in time")
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        seen.insert(v["id"].as_i64().unwrap(), v);
    }
    for id in [1, 2, 3] {
        assert_eq!(seen[&id]["result"]["isError"], true, "{}", seen[&id]);
    }
    assert_eq!(seen[&5]["result"]["content"][0]["text"], "done x");
    // The cancelled call gets no answer (MCP), and the session goes on.
    assert!(!seen.contains_key(&4));
    w.write_all(send(json!({"jsonrpc": "2.0", "id": 6, "method": "ping"})).as_bytes())
        .await
        .unwrap();
    let line = lines.next_line().await.unwrap().unwrap();
    assert_eq!(serde_json::from_str::<Value>(&line).unwrap()["id"], 6);
}
