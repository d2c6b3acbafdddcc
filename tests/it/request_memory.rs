//! The memory of an HTTP server under hostile bodies: what the costliest bodies within the
//! limits take, request by request, and the server's peak resident memory (VmHWM, from /proc)
//! while many clients send them at once, with a legitimate client served meanwhile.
//!
//! The servers run with the default `HttpOptions` (stateless), each in a process of its own:
//! this test binary started again in child mode, running this module's child test alone, so
//! that its memory is its own. Bounded: a few hundred loopback requests, 60 s at most.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{serve_http_child, server_in, ChildServer};
use disco_runtime::{mcp_tool, HttpOptions};
use serde_json::{json, Value};

const CHILD_ENV: &str = "DISCO_REQUEST_MEMORY_CHILD";
/// The catalog's default argument budget (`CatalogBuilder::max_argument_values`).
const MAX_ARGUMENT_VALUES: usize = 100_000;
/// Values in the hostile bodies: as many as the budget lets through to the parse.
const VALUES: usize = 99_000;
/// Clients sending hostile bodies at once.
const ATTACKERS: usize = 48;
/// Bodies each of them sends.
const ROUNDS: usize = 4;

/// Repeat a text back.
#[mcp_tool(read_only)]
fn echo(text: String) -> String {
    text
}

/// Return how many limits were given.
#[mcp_tool(read_only)]
fn count_limits(limits: Vec<u32>) -> String {
    limits.len().to_string()
}

fn options() -> HttpOptions {
    HttpOptions::default().stateless(true)
}

/// Child mode: serve with the default options, print the port, stop when stdin closes.
#[test]
fn request_memory_server_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    serve_http_child(server_in(module_path!()).http_options(options()));
}

/// A server process with the default options, warmed up.
fn start() -> ChildServer {
    let served = ChildServer::spawn(module_path!(), "request_memory_server_child", CHILD_ENV);
    // Warm up: the allocator's arenas, rmcp's first request.
    let (status, _) = send(served.addr, &call(1, "echo", json!({"text": "warm"})));
    assert_eq!(status, 200);
    served
}

/// A figure in kB of the server's `/proc/<pid>/status`.
fn status_kb(server: &ChildServer, field: &str) -> u64 {
    let kb = server.status_kb(field);
    assert!(kb > 0, "{field} of the server process");
    kb
}

/// Resets the peak resident size (VmHWM) to the current one.
fn reset_peak(server: &ChildServer) {
    std::fs::write(format!("/proc/{}/clear_refs", server.child.id()), "5")
        .expect("reset the peak resident size (Linux clear_refs)");
}

/// One request on its own connection: the status and the raw answer (status 0 when the
/// connection failed).
fn send(addr: SocketAddr, body: &[u8]) -> (u16, String) {
    let Ok(mut tcp) = TcpStream::connect(addr) else {
        return (0, "connect failed".into());
    };
    tcp.set_read_timeout(Some(Duration::from_secs(60))).ok();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        addr.port(),
        body.len()
    );
    // A server that answers before reading the body may close the connection under the
    // write: the answer is still there to read.
    let _ = tcp
        .write_all(head.as_bytes())
        .and_then(|_| tcp.write_all(body));
    let mut answer = Vec::new();
    let _ = tcp.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

fn call(id: i64, name: &str, arguments: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
    .to_string()
    .into_bytes()
}

/// The costliest bodies within the limits, and one at the body limit: tiny values (as many
/// as the value budget lets through), values of every kind, long keys, one long string.
fn hostile_bodies() -> Vec<(&'static str, Vec<u8>)> {
    let keys: serde_json::Map<String, Value> = (0..VALUES / 2)
        .map(|i| (format!("{i:0>64}"), json!(0)))
        .collect();
    vec![
        (
            "99,000 zeros",
            call(2, "count_limits", json!({"limits": vec![0; VALUES]})),
        ),
        // An empty array or object counts as two values (its opening and its separator).
        (
            "49,500 empty arrays",
            call(3, "echo", json!({"a": vec![json!([]); VALUES / 2]})),
        ),
        (
            "49,500 empty objects",
            call(4, "echo", json!({"a": vec![json!({}); VALUES / 2]})),
        ),
        (
            "99,000 strings of 38 bytes",
            call(
                5,
                "count_limits",
                json!({"limits": vec!["x".repeat(38); VALUES]}),
            ),
        ),
        (
            "49,500 keys of 64 bytes",
            call(6, "echo", json!({"a": keys})),
        ),
        (
            "one string of 4,000,000 bytes",
            call(7, "echo", json!({"text": "7".repeat(4_000_000)})),
        ),
        (
            "2,000,000 zeros at the body limit",
            call(8, "count_limits", json!({"limits": vec![0; 2_000_000]})),
        ),
    ]
}

#[tokio::test]
async fn hostile_bodies_at_once_stay_under_the_memory_ceiling_and_others_are_served() {
    let _alone = crate::common::HEAVY.lock().await;
    let outcome = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::task::spawn_blocking(measure),
    )
    .await;
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(e)) => std::panic::resume_unwind(e.into_panic()),
        Err(_) => panic!("the test did not finish within 120 s"),
    }
}

fn measure() {
    let options = options();
    let bodies = hostile_bodies();
    let limit = options.max_body_bytes;
    for (name, body) in &bodies {
        assert!(body.len() <= limit, "{name}: {} bytes", body.len());
    }

    // One body at a time, each on a fresh server (the allocator keeps what a request freed,
    // so a second request would reach no new peak): what each costs is within what it is
    // charged in the budget.
    println!("| body | bytes | peak RSS above idle | charged |");
    for (name, body) in &bodies {
        let server = start();
        let idle = status_kb(&server, "VmRSS:");
        reset_peak(&server);
        let (status, text) = send(server.addr, body);
        assert!(
            [200, 413].contains(&status),
            "{name}: {status} {}",
            &text[..text.len().min(300)]
        );
        let peak = (status_kb(&server, "VmHWM:").saturating_sub(idle) * 1024) as usize;
        let charged = options.request_cost(MAX_ARGUMENT_VALUES, body.len());
        println!(
            "| {name} | {} | {:.1} MB | {:.1} MB |",
            body.len(),
            peak as f64 / 1e6,
            charged as f64 / 1e6
        );
        assert!(
            peak <= charged,
            "{name}: {peak} bytes above idle, charged {charged}"
        );
    }

    // All at once: ATTACKERS clients each send ROUNDS hostile bodies, while a legitimate
    // client calls `echo` every 100 ms.
    let budget = options.request_memory_budget(MAX_ARGUMENT_VALUES);
    let server = start();
    let idle = status_kb(&server, "VmRSS:");
    reset_peak(&server);
    let addr = server.addr;
    let statuses = Mutex::new(Vec::new());
    let legit = Mutex::new(Vec::new());
    let flooding = AtomicBool::new(true);
    let bodies = Arc::new(bodies);
    std::thread::scope(|s| {
        let attackers: Vec<_> = (0..ATTACKERS)
            .map(|a| {
                let bodies = bodies.clone();
                let statuses = &statuses;
                s.spawn(move || {
                    for r in 0..ROUNDS {
                        let (_, body) = &bodies[(a + r) % bodies.len()];
                        let (status, text) = send(addr, body);
                        let retry = text
                            .lines()
                            .any(|l| l.to_ascii_lowercase().starts_with("retry-after: 1"));
                        statuses
                            .lock()
                            .expect("lock")
                            .push((status, retry, text.len().min(400)));
                    }
                })
            })
            .collect();
        let legit = &legit;
        let flooding = &flooding;
        let caller = s.spawn(move || {
            let mut id = 100;
            while flooding.load(Ordering::Relaxed) {
                let started = Instant::now();
                let (status, text) = send(addr, &call(id, "echo", json!({"text": "alive"})));
                let ok = status == 200 && text.contains("\"text\":\"alive\"");
                legit
                    .lock()
                    .expect("lock")
                    .push((status, ok, started.elapsed()));
                id += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        for a in attackers {
            a.join().expect("an attacker");
        }
        flooding.store(false, Ordering::Relaxed);
        caller.join().expect("the legitimate caller");
    });
    let peak = (status_kb(&server, "VmHWM:").saturating_sub(idle) * 1024) as usize;
    let statuses = statuses.into_inner().expect("lock");
    let legit = legit.into_inner().expect("lock");
    let count = |code: u16| statuses.iter().filter(|(s, ..)| *s == code).count();
    println!(
        "{ATTACKERS} clients x {ROUNDS} hostile bodies: {} answered 200, {} 413, {} 503; idle {:.1} MB, peak {:.1} MB above idle (budget {:.1} MB)",
        count(200),
        count(413),
        count(503),
        idle as f64 / 1024.0,
        peak as f64 / 1e6,
        budget as f64 / 1e6,
    );
    let served = legit.iter().filter(|(_, ok, _)| *ok).count();
    let slowest = legit
        .iter()
        .map(|(.., took)| *took)
        .max()
        .unwrap_or_default();
    println!(
        "legitimate calls meanwhile: {served} of {} answered, slowest {slowest:?}",
        legit.len()
    );
    for (status, retry, _) in &statuses {
        assert!(
            [200, 413, 503].contains(status),
            "every hostile request is answered: {statuses:?}"
        );
        assert!(*status != 503 || *retry, "a 503 says when to retry");
    }
    assert!(served >= 1, "a legitimate call was answered: {legit:?}");
    for (status, ok, _) in &legit {
        assert!(
            *ok || *status == 503,
            "a legitimate call is answered or told to retry: {legit:?}"
        );
    }
    assert!(
        peak <= budget + CONNECTIONS_ALLOWANCE,
        "{peak} bytes above idle, over the budget {budget} + {CONNECTIONS_ALLOWANCE}"
    );
}

/// What the open connections, the tasks and the allocator's arenas add to the requests'
/// charges (SECURITY.md, "HTTP").
const CONNECTIONS_ALLOWANCE: usize = 32 * 1024 * 1024;
