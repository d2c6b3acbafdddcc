//! Peak resident memory of a disco HTTP server per request, as a multiple of the request's
//! body, for the argument shapes that cost most (many tiny values where another type is
//! expected), resident memory per open session, and the peak while one call is answered with
//! a large text (`--answer-mib`, 16 by default). Linux only: it reads `/proc/<pid>/status`
//! and resets the peak through `/proc/<pid>/clear_refs`.
//!
//! ```text
//! cargo build --release -p http-memory
//! target/release/http-memory [--rounds 3] [--sessions 2000]
//! ```
//!
//! The server is this binary started again (`http-memory serve`), on 127.0.0.1:0, so its
//! memory is its own; it stops when its stdin closes. Every request goes over loopback.
//!
//! A last table is measured in this process, not in a server: the heap that parsing each body
//! takes at its peak, into a `serde_json::Value` and into rmcp's `ClientJsonRpcMessage` (what
//! rmcp's Streamable HTTP service does with every body before any handler runs), counted by
//! this binary's allocator. It is the floor under the server's figure for that body.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use disco_runtime::rmcp::model::ClientJsonRpcMessage;
use disco_runtime::{mcp_tool, HttpOptions, Server};
use serde_json::{json, Value};

/// The system allocator, counting the bytes allocated now and the most at once since the last
/// [`peak_since`]. Two relaxed atomic operations per allocation; the server's resident figures
/// do not depend on them.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = NOW.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is passed to `System` unchanged; only the counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // Forwarded, not left to the default (alloc, then write zeros): calloc's fresh pages
        // stay untouched, as they would in the server without this allocator.
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout);
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = System.realloc(p, layout, new_size);
        if !q.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                NOW.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes `work` had allocated at once above what was allocated before it.
fn peak_since<T>(work: impl FnOnce() -> T) -> usize {
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let kept = work();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    drop(kept);
    peak
}

/// Return how many limits were given.
#[mcp_tool(read_only)]
fn count_limits(limits: Vec<u32>) -> String {
    limits.len().to_string()
}

/// Return a text of `bytes` letters.
#[mcp_tool(read_only)]
fn letters(bytes: u32) -> String {
    "x".repeat(bytes as usize)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        serve(args.iter().any(|a| a == "--stateless"));
        return;
    }
    let flag = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let rounds = flag("--rounds", 3);
    let sessions = flag("--sessions", 2000);
    let answer_mib = flag("--answer-mib", 16);
    let cases = requests(rounds);
    per_session(sessions);
    large_answer(answer_mib, rounds);
    parse_floor(&cases);
}

/// The heap each body's parse takes at its peak, as a multiple of the body.
fn parse_floor(cases: &[(&str, Vec<u8>)]) {
    println!();
    println!("| request | body | parse into `Value`: peak heap | multiple | into rmcp's `ClientJsonRpcMessage` | multiple |");
    println!("|---|---|---|---|---|---|");
    for (name, body) in cases {
        let value = peak_since(|| serde_json::from_slice::<Value>(body).ok());
        let rmcp = peak_since(|| serde_json::from_slice::<ClientJsonRpcMessage>(body).ok());
        println!(
            "| {name} | {:.2} MB | {:.1} MB | {:.1}x | {:.1} MB | {:.1}x |",
            body.len() as f64 / 1e6,
            value as f64 / 1e6,
            value as f64 / body.len() as f64,
            rmcp as f64 / 1e6,
            rmcp as f64 / body.len() as f64,
        );
    }
}

fn serve(stateless: bool) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        println!("PORT {}", listener.local_addr().expect("addr").port());
        let shutdown = async {
            let _ = tokio::task::spawn_blocking(|| {
                let mut sink = Vec::new();
                let _ = std::io::stdin().read_to_end(&mut sink);
            })
            .await;
        };
        Server::from_inventory()
            .http_options(HttpOptions::default().stateless(stateless))
            .serve_http_on(listener, shutdown)
            .await
            .expect("server runs");
    });
}

struct Served {
    child: Child,
    addr: SocketAddr,
}

impl Served {
    fn start(stateless: bool) -> Served {
        let mut cmd = Command::new(std::env::current_exe().expect("exe"));
        cmd.arg("serve");
        if stateless {
            cmd.arg("--stateless");
        }
        let mut child = cmd
            .env("RUST_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the server");
        let stdout = child.stdout.take().expect("stdout");
        let port = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("PORT ")?.trim().parse::<u16>().ok())
            .expect("the server prints its port");
        Served {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }

    fn status_kb(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// Resets the peak resident size (VmHWM) to the current one.
    fn reset_peak(&self) {
        std::fs::write(format!("/proc/{}/clear_refs", self.child.id()), "5")
            .expect("reset the peak resident size (Linux clear_refs)");
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        std::thread::sleep(Duration::from_millis(200));
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One request on its own connection: the status and the raw answer.
fn send(addr: SocketAddr, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
    let mut tcp = TcpStream::connect(addr).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(120))).ok();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n",
        addr.port(),
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    tcp.write_all(head.as_bytes()).expect("write");
    tcp.write_all(body).expect("write");
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

fn call(arguments: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "count_limits", "arguments": arguments}})
    .to_string()
    .into_bytes()
}

fn requests(rounds: usize) -> Vec<(&'static str, Vec<u8>)> {
    let cases: Vec<(&'static str, Vec<u8>)> = vec![
        (
            "1,000,000 strings for Vec<u32> (over the budget)",
            call(json!({"limits": vec!["1"; 1_000_000]})),
        ),
        (
            "1,000,000 integers (over the budget)",
            call(json!({"limits": vec![1; 1_000_000]})),
        ),
        (
            "99,000 strings for Vec<u32> (within the budget)",
            call(json!({"limits": vec!["1"; 99_000]})),
        ),
        (
            "99,000 integers (valid)",
            call(json!({"limits": vec![7; 99_000]})),
        ),
        (
            "one 4,000,000-byte string for Vec<u32>",
            call(json!({"limits": "7".repeat(4_000_000)})),
        ),
    ];
    println!("| request | body | peak RSS above the idle server | multiple of the body | answer |");
    println!("|---|---|---|---|---|");
    // A fresh server for every request: the allocator keeps what a request freed, so a second
    // request on the same server would reach no new peak.
    let measure = |body: &[u8]| {
        let server = Served::start(true);
        // Warm up: the allocator's arenas and rmcp's first request.
        send(server.addr, &[], &call(json!({"limits": [1, 2, 3]})));
        let before = server.status_kb("VmRSS:");
        server.reset_peak();
        let (status, text) = send(server.addr, &[], body);
        let peak = server.status_kb("VmHWM:").saturating_sub(before);
        let answer = if text.contains("\"isError\":true") {
            format!("{status}, isError")
        } else if text.contains("\"error\"") {
            format!("{status}, JSON-RPC error")
        } else {
            format!("{status}")
        };
        (peak, answer)
    };
    for (name, body) in &cases {
        let mut peaks = Vec::new();
        let mut answer = String::new();
        for _ in 0..rounds {
            let (peak, seen) = measure(body);
            peaks.push(peak);
            answer = seen;
        }
        peaks.sort_unstable();
        let peak_kb = peaks[peaks.len() / 2];
        println!(
            "| {name} | {:.2} MB | {:.1} MB (median of {rounds}; {:.1}-{:.1}) | {:.1}x | {answer} |",
            body.len() as f64 / 1e6,
            peak_kb as f64 / 1024.0,
            peaks[0] as f64 / 1024.0,
            peaks[peaks.len() - 1] as f64 / 1024.0,
            (peak_kb * 1024) as f64 / body.len() as f64,
        );
    }
    // Eight of the costliest at once.
    let server = Served::start(true);
    send(server.addr, &[], &call(json!({"limits": [1, 2, 3]})));
    let body = &cases[0].1;
    let before = server.status_kb("VmRSS:");
    server.reset_peak();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| send(server.addr, &[], body));
        }
    });
    let peak = server.status_kb("VmHWM:").saturating_sub(before);
    println!(
        "| 8 of the first at once | 8 x {:.2} MB | {:.1} MB | {:.1}x of one body | |",
        body.len() as f64 / 1e6,
        peak as f64 / 1024.0,
        (peak * 1024) as f64 / body.len() as f64,
    );
    cases
}

/// The value of header `name` in a raw HTTP answer (the first line that has it).
fn header(answer: &str, name: &str) -> Option<String> {
    answer.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
    })
}

/// Opens a session (initialize, then initialized) and returns its id.
fn open_session(addr: SocketAddr) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    .to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let (status, text) = send(addr, &[], init.as_bytes());
    assert_eq!(status, 200, "{text}");
    let id = header(&text, "mcp-session-id").expect("a session id");
    let headers = [
        ("Mcp-Session-Id", id.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let (status, _) = send(addr, &headers, initialized.as_bytes());
    assert_eq!(status, 202);
    id
}

/// Peak resident memory above the idle server while one call is answered with `mib` MiB of
/// text, with sessions (the answer read from rmcp's event stream and sent as one JSON body)
/// and stateless (rmcp's own JSON answer), as a multiple of the answer's size.
fn large_answer(mib: usize, rounds: usize) {
    let bytes = mib * 1024 * 1024;
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "letters", "arguments": {"bytes": bytes}}})
    .to_string();
    let small = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "letters", "arguments": {"bytes": 1000}}})
    .to_string();
    println!();
    println!("| a call answered with {mib} MiB of text | peak RSS above the idle server | multiple of the answer | answer |");
    println!("|---|---|---|---|");
    for stateless in [false, true] {
        let mut peaks = Vec::new();
        let mut seen = String::new();
        for _ in 0..rounds {
            let server = Served::start(stateless);
            let session = (!stateless).then(|| open_session(server.addr));
            let mut headers = vec![("MCP-Protocol-Version", "2025-06-18")];
            if let Some(id) = &session {
                headers.push(("Mcp-Session-Id", id.as_str()));
            }
            send(server.addr, &headers, small.as_bytes());
            let before = server.status_kb("VmRSS:");
            server.reset_peak();
            let (status, text) = send(server.addr, &headers, body.as_bytes());
            peaks.push(server.status_kb("VmHWM:").saturating_sub(before));
            let kind = header(&text, "content-type").unwrap_or_default();
            seen = format!("{status}, {kind}, {:.1} MiB", text.len() as f64 / 1048576.0);
        }
        peaks.sort_unstable();
        let peak = peaks[peaks.len() / 2];
        println!(
            "| {} | {:.1} MiB (median of {rounds}; {:.1}-{:.1}) | {:.2}x | {seen} |",
            if stateless {
                "stateless"
            } else {
                "with a session"
            },
            peak as f64 / 1024.0,
            peaks[0] as f64 / 1024.0,
            peaks[peaks.len() - 1] as f64 / 1024.0,
            (peak * 1024) as f64 / bytes as f64,
        );
    }
}

fn per_session(count: usize) {
    let server = Served::start(false);
    let open = |n: usize| {
        for _ in 0..n {
            open_session(server.addr);
        }
    };
    open(100);
    std::thread::sleep(Duration::from_millis(300));
    let before = server.status_kb("VmRSS:");
    let started = std::time::Instant::now();
    open(count);
    let took = started.elapsed();
    std::thread::sleep(Duration::from_millis(300));
    let after = server.status_kb("VmRSS:");
    println!(
        "\n{count} sessions opened in {:.2} s: RSS {:.1} -> {:.1} MB, {:.1} KB per session",
        took.as_secs_f64(),
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        (after.saturating_sub(before)) as f64 / count as f64
    );
}
