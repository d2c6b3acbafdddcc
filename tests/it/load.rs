//! Bounded HTTP load on loopback: two stateless server processes behind one client that
//! spreads its requests over both (what a load balancer does), many concurrent keep-alive
//! connections, for a fixed time. Zero errors allowed; latency percentiles and the servers'
//! resident memory before and after are printed.
//!
//! `DISCO_LOAD_SECS` (default 3) and `DISCO_LOAD_CONNS` (default 32) set the run; the figures
//! in SECURITY.md come from `cargo test --release --test it load::two_stateless --
//! --nocapture` with 10 s. The server processes are this test binary started again in child
//! mode, running this module's child test alone.
//!
//! Its servers serve this module's tools alone (`common::server_in`): the tools/list it checks
//! holds these.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::http::Conn;
use crate::common::{serve_http_child, server_in, ChildServer};
use disco_runtime::catalog::SearchOptions;
use disco_runtime::{mcp_tool, HttpOptions};
use serde_json::{json, Value};

const CHILD_ENV: &str = "DISCO_LOAD_CHILD";

/// Repeat a text back.
#[mcp_tool(read_only)]
fn echo(text: String) -> String {
    text
}

/// Add two numbers and return the sum.
#[mcp_tool(read_only)]
fn add(a: f64, b: f64) -> String {
    (a + b).to_string()
}

/// Child mode: serve stateless HTTP on 127.0.0.1:0, print the port, stop when stdin closes.
#[test]
fn load_server_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    serve_http_child(
        server_in(module_path!())
            .search(SearchOptions::default().enabled(true))
            .http_options(HttpOptions::default().stateless(true)),
    );
}

fn spawn() -> ChildServer {
    ChildServer::spawn(module_path!(), "load_server_child", CHILD_ENV)
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[derive(Default)]
struct Tally {
    latencies_us: Vec<u64>,
    errors: Vec<String>,
    per_server: [u64; 2],
}

/// What a correct answer looks like.
type Check = Box<dyn Fn(&Value) -> bool + Send>;

/// One request, checked: the right HTTP status, the right id, the right answer.
async fn one(conn: &mut Conn, id: i64, kind: u64) -> Result<(), String> {
    let (body, expect): (Value, Check) = match kind % 10 {
        0 => (
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}),
            Box::new(|v: &Value| {
                v["result"]["tools"]
                    .as_array()
                    .is_some_and(|t| t.len() == 4)
            }),
        ),
        1 => (
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "tool_search", "arguments": {"query": "sum of two numbers"}}}),
            Box::new(|v: &Value| v["result"]["structuredContent"]["tools"][0]["name"] == "add"),
        ),
        2 => (
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "Add", "arguments": {"a": "2", "B": 3}}}),
            Box::new(|v: &Value| v["result"]["content"][0]["text"] == "5"),
        ),
        _ => {
            let text = format!("hello {id}");
            (
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                    "name": "echo", "arguments": {"text": text}}}),
                Box::new(move |v: &Value| v["result"]["content"][0]["text"] == text.as_str()),
            )
        }
    };
    let reply = conn
        .request(
            "POST",
            "/mcp",
            &[crate::common::http::ACCEPT, crate::common::http::JSON],
            body.to_string().as_bytes(),
        )
        .await
        .map_err(|e| format!("transport: {e}"))?;
    if reply.status != 200 {
        return Err(format!("HTTP {}: {}", reply.status, reply.text()));
    }
    let v: Value = serde_json::from_slice(&reply.body).map_err(|e| format!("body: {e}"))?;
    if v["id"] != id || !expect(&v) {
        return Err(format!("wrong answer: {v}"));
    }
    Ok(())
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stateless_processes_serve_one_client_under_load_without_errors() {
    let _alone = crate::common::HEAVY.lock().await;
    let secs = env_num("DISCO_LOAD_SECS", 3);
    let conns = env_num("DISCO_LOAD_CONNS", 32) as usize;
    let servers = [spawn(), spawn()];
    let addrs = [servers[0].addr, servers[1].addr];

    // Warm up both processes, then take the baseline.
    for addr in addrs {
        let mut c = Conn::open(addr).await;
        for i in 0..200 {
            one(&mut c, i, i as u64).await.expect("warm-up succeeds");
        }
    }
    let rss_before = [
        servers[0].status_kb("VmRSS:"),
        servers[1].status_kb("VmRSS:"),
    ];

    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut workers = Vec::new();
    for w in 0..conns {
        let stop = stop.clone();
        workers.push(tokio::spawn(async move {
            let mut tally = Tally::default();
            // Each worker holds one keep-alive connection to each server and alternates,
            // so consecutive requests of one client land on different processes.
            let mut conns = [Conn::open(addrs[0]).await, Conn::open(addrs[1]).await];
            let mut n: u64 = 0;
            while !stop.load(Ordering::Relaxed) {
                let s = ((n + w as u64) % 2) as usize;
                let id = (w as i64) * 10_000_000 + n as i64;
                let t = Instant::now();
                match one(&mut conns[s], id, n + w as u64).await {
                    Ok(()) => {
                        tally.latencies_us.push(t.elapsed().as_micros() as u64);
                        tally.per_server[s] += 1;
                    }
                    Err(e) => {
                        tally.errors.push(e);
                        conns[s] = Conn::open(addrs[s]).await;
                    }
                }
                n += 1;
            }
            tally
        }));
    }
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    let mut all = Tally::default();
    for w in workers {
        let t = w.await.expect("worker finishes");
        all.latencies_us.extend(t.latencies_us);
        all.errors.extend(t.errors);
        all.per_server[0] += t.per_server[0];
        all.per_server[1] += t.per_server[1];
    }
    let elapsed = started.elapsed().as_secs_f64();
    let rss_after = [
        servers[0].status_kb("VmRSS:"),
        servers[1].status_kb("VmRSS:"),
    ];
    all.latencies_us.sort_unstable();
    let l = &all.latencies_us;
    let total = l.len() + all.errors.len();
    eprintln!(
        "load: {total} requests in {elapsed:.1} s over {conns} connections x 2 processes \
         ({:.0}/s; {} + {} per process), {} errors; latency p50 {} us, p90 {} us, p99 {} us, \
         max {} us; RSS before {} kB + {} kB, after {} kB + {} kB",
        total as f64 / elapsed,
        all.per_server[0],
        all.per_server[1],
        all.errors.len(),
        percentile(l, 0.50),
        percentile(l, 0.90),
        percentile(l, 0.99),
        l.last().copied().unwrap_or(0),
        rss_before[0],
        rss_before[1],
        rss_after[0],
        rss_after[1],
    );
    assert!(
        all.errors.is_empty(),
        "errors: {:?}",
        &all.errors[..all.errors.len().min(5)]
    );
    assert!(total > 100, "the load ran ({total} requests)");
    assert!(
        all.per_server[0] > 0 && all.per_server[1] > 0,
        "both processes answered"
    );
    for i in 0..2 {
        // Memory settles after warm-up: a leak per request would show over thousands.
        assert!(
            rss_after[i] < rss_before[i] + 64 * 1024,
            "server {i}: RSS {} kB -> {} kB",
            rss_before[i],
            rss_after[i]
        );
    }
}
