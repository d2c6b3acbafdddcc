//! A bounded load generator for MCP servers: starts the server itself, sends a fixed number
//! of exact `tools/call` requests (the ten benchmark tools in turn) with a fixed number in
//! flight, and prints one JSON line: calls per second, latency percentiles, the server's CPU
//! time per call and its peak resident memory.
//!
//! ```text
//! loadgen --server PATH --transport stdio|http [--stateless] [--concurrency N]
//!         [--requests M] [--warmup W] [--max-seconds S]
//! ```
//!
//! stdio: N requests in flight on the one pipe (a new one is sent as each answer arrives).
//! HTTP: N connections to 127.0.0.1, each with its own session, each sending its share of the
//! requests one after another. Only loopback is ever used, and the run stops after M requests
//! or S seconds, whichever comes first.

use std::collections::HashMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

type Error = Box<dyn std::error::Error + Send + Sync>;

struct Options {
    server: String,
    server_args: Vec<String>,
    transport: String,
    stateless: bool,
    concurrency: usize,
    requests: usize,
    warmup: usize,
    max_seconds: f64,
}

/// The ten tools with valid arguments: every call resolves exactly and needs no repair.
fn call(i: usize) -> (&'static str, Value) {
    match i % 10 {
        0 => ("add", json!({"a": 2, "b": 3})),
        1 => ("multiply", json!({"a": 2.5, "b": 4})),
        2 => ("echo", json!({"text": "hello world"})),
        3 => ("reverse_text", json!({"text": "hello world"})),
        4 => ("uppercase", json!({"text": "hello"})),
        5 => ("word_count", json!({"text": "the quick brown fox"})),
        6 => ("celsius_to_fahrenheit", json!({"celsius": 21.5})),
        7 => ("is_prime", json!({"n": 7919})),
        8 => ("fibonacci", json!({"n": 50})),
        _ => (
            "join_words",
            json!({"words": ["a", "b", "c"], "separator": "-"}),
        ),
    }
}

fn request(id: u64, i: usize) -> Value {
    let (name, arguments) = call(i);
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "loadgen", "version": "0.1.0"}}})
}

/// Whether a JSON-RPC response is a successful, non-error tool result.
fn ok(response: &Value) -> bool {
    response
        .get("result")
        .is_some_and(|r| r["isError"] != json!(true))
}

/// utime + stime of a process, in clock ticks (100 Hz on Linux).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[derive(Default)]
struct Outcome {
    latencies: Vec<Duration>,
    errors: usize,
}

async fn run_stdio(
    child: &mut Child,
    o: &Options,
    count: usize,
    start_id: u64,
) -> Result<Outcome, Error> {
    let stdin = child.stdin.as_mut().ok_or("no stdin")?;
    let stdout = child.stdout.as_mut().ok_or("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let mut sent_at: HashMap<u64, Instant> = HashMap::new();
    let mut out = Outcome::default();
    let deadline = Instant::now() + Duration::from_secs_f64(o.max_seconds);
    let mut next = 0usize;
    let mut buf = Vec::with_capacity(256);
    let send = |next: &mut usize, sent_at: &mut HashMap<u64, Instant>, buf: &mut Vec<u8>| {
        let id = start_id + *next as u64;
        buf.clear();
        serde_json::to_writer(&mut *buf, &request(id, *next)).ok();
        buf.push(b'\n');
        sent_at.insert(id, Instant::now());
        *next += 1;
    };
    while next < count.min(o.concurrency) {
        send(&mut next, &mut sent_at, &mut buf);
        stdin.write_all(&buf).await?;
    }
    stdin.flush().await?;
    while !sent_at.is_empty() {
        let line = tokio::time::timeout_at(deadline.into(), lines.next_line())
            .await
            .map_err(|_| "time limit reached")??
            .ok_or("server closed stdout")?;
        let response: Value = serde_json::from_str(&line)?;
        let Some(id) = response["id"].as_u64() else {
            continue;
        };
        let Some(t0) = sent_at.remove(&id) else {
            continue;
        };
        out.latencies.push(t0.elapsed());
        if !ok(&response) {
            out.errors += 1;
        }
        if next < count && Instant::now() < deadline {
            send(&mut next, &mut sent_at, &mut buf);
            stdin.write_all(&buf).await?;
            stdin.flush().await?;
        }
    }
    Ok(out)
}

async fn stdio(o: &Options) -> Result<Value, Error> {
    let mut child = Command::new(&o.server)
        .args(&o.server_args)
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().ok_or("no pid")?;
    {
        let stdin = child.stdin.as_mut().ok_or("no stdin")?;
        let line = format!("{}\n", initialize(0));
        stdin.write_all(line.as_bytes()).await?;
        stdin.flush().await?;
    }
    {
        let stdout = child.stdout.as_mut().ok_or("no stdout")?;
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        reader.read_line(&mut line).await?;
        if !line.contains("\"result\"") {
            return Err(format!("initialize failed: {line}").into());
        }
    }
    {
        let stdin = child.stdin.as_mut().ok_or("no stdin")?;
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await?;
    }
    run_stdio(&mut child, o, o.warmup, 1_000_000).await?;
    let cpu0 = cpu_ticks(pid);
    let t0 = Instant::now();
    let outcome = run_stdio(&mut child, o, o.requests, 10_000_000).await?;
    let elapsed = t0.elapsed();
    let cpu1 = cpu_ticks(pid);
    let rss = peak_rss_kb(pid);
    child.kill().await.ok();
    Ok(report(o, outcome, elapsed, cpu0.zip(cpu1), rss))
}

struct Conn {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    authority: String,
    session: Option<String>,
}

impl Conn {
    async fn open(authority: &str) -> Result<Conn, Error> {
        let tcp = tokio::net::TcpStream::connect(authority).await?;
        tcp.set_nodelay(true)?;
        let (sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await?;
        tokio::spawn(conn);
        Ok(Conn {
            sender,
            authority: authority.to_string(),
            session: None,
        })
    }

    /// POSTs one JSON-RPC message; returns the JSON-RPC response (from a JSON body or the
    /// SSE event that carries it), or Null for a notification.
    async fn post(&mut self, body: &Value) -> Result<Value, Error> {
        let mut req = hyper::Request::post("/mcp")
            .header("host", &self.authority)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        let req = req.body(Full::new(Bytes::from(serde_json::to_vec(body)?)))?;
        self.sender.ready().await?;
        let response = self.sender.send_request(req).await?;
        let status = response.status();
        if let Some(s) = response.headers().get("mcp-session-id") {
            self.session = Some(s.to_str()?.to_string());
        }
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let bytes = response.into_body().collect().await?.to_bytes();
        if !status.is_success() {
            return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&bytes)).into());
        }
        if bytes.is_empty() {
            return Ok(Value::Null);
        }
        if sse {
            let text = std::str::from_utf8(&bytes)?;
            for line in text.lines() {
                if let Some(data) = line.strip_prefix("data:") {
                    let data = data.trim();
                    if let Ok(v) = serde_json::from_str::<Value>(data) {
                        if v.get("id").is_some() {
                            return Ok(v);
                        }
                    }
                }
            }
            return Err(format!("no response in SSE body: {text}").into());
        }
        Ok(serde_json::from_slice(&bytes)?)
    }
}

async fn http_worker(
    authority: String,
    stateless: bool,
    warmup: usize,
    count: usize,
    deadline: Instant,
) -> Result<(Conn, Outcome), Error> {
    let mut conn = Conn::open(&authority).await?;
    if !stateless {
        let init = conn.post(&initialize(0)).await?;
        if init.get("result").is_none() {
            return Err(format!("initialize failed: {init}").into());
        }
        conn.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
    }
    for i in 0..warmup {
        if Instant::now() >= deadline {
            break;
        }
        conn.post(&request(1 + i as u64, i)).await?;
    }
    let out = Outcome {
        latencies: Vec::with_capacity(count),
        errors: 0,
    };
    Ok((conn, out))
}

async fn http_measure(
    mut conn: Conn,
    mut out: Outcome,
    count: usize,
    offset: usize,
    deadline: Instant,
) -> Result<Outcome, Error> {
    for i in 0..count {
        if Instant::now() >= deadline {
            break;
        }
        let t0 = Instant::now();
        let response = conn.post(&request(100 + i as u64, offset + i)).await?;
        out.latencies.push(t0.elapsed());
        if !ok(&response) {
            out.errors += 1;
        }
    }
    Ok(out)
}

async fn http(o: &Options) -> Result<Value, Error> {
    let mut cmd = Command::new(&o.server);
    cmd.args(&o.server_args).arg("--http").arg("127.0.0.1:0");
    if o.stateless {
        cmd.arg("--stateless");
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().ok_or("no pid")?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .map_err(|_| "server did not say where it listens")??
        .ok_or("server exited")?;
    let url = line
        .strip_prefix("LISTENING http://")
        .ok_or("unexpected first line")?;
    let authority = url.trim_end_matches("/mcp").to_string();
    if !authority.starts_with("127.0.0.1:") {
        return Err("refusing a non-loopback address".into());
    }
    let deadline = Instant::now() + Duration::from_secs_f64(o.max_seconds);
    let n = o.concurrency.max(1);
    let warm_each = o.warmup.div_ceil(n);
    let mut ready = Vec::new();
    for _ in 0..n {
        ready.push(tokio::spawn(http_worker(
            authority.clone(),
            o.stateless,
            warm_each,
            o.requests / n,
            deadline,
        )));
    }
    let mut conns = Vec::new();
    for r in ready {
        conns.push(r.await??);
    }
    let cpu0 = cpu_ticks(pid);
    let t0 = Instant::now();
    let per = o.requests / n;
    let mut tasks = Vec::new();
    for (k, (conn, out)) in conns.into_iter().enumerate() {
        tasks.push(tokio::spawn(http_measure(conn, out, per, k, deadline)));
    }
    let mut all = Outcome::default();
    for t in tasks {
        let out = t.await??;
        all.latencies.extend(out.latencies);
        all.errors += out.errors;
    }
    let elapsed = t0.elapsed();
    let cpu1 = cpu_ticks(pid);
    let rss = peak_rss_kb(pid);
    child.kill().await.ok();
    Ok(report(o, all, elapsed, cpu0.zip(cpu1), rss))
}

fn report(
    o: &Options,
    mut out: Outcome,
    elapsed: Duration,
    cpu: Option<(u64, u64)>,
    rss_kb: Option<u64>,
) -> Value {
    out.latencies.sort();
    let n = out.latencies.len();
    let pct = |p: f64| -> f64 {
        if n == 0 {
            return 0.0;
        }
        let i = ((p / 100.0) * (n - 1) as f64).round() as usize;
        out.latencies[i].as_secs_f64() * 1e6
    };
    let server = std::path::Path::new(&o.server)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    json!({
        "server": server,
        "transport": if o.transport == "http" && o.stateless { "http-stateless".to_string() } else { o.transport.clone() },
        "concurrency": o.concurrency,
        "calls": n,
        "errors": out.errors,
        "seconds": elapsed.as_secs_f64(),
        "calls_per_s": n as f64 / elapsed.as_secs_f64(),
        "p50_us": pct(50.0),
        "p90_us": pct(90.0),
        "p99_us": pct(99.0),
        "max_us": pct(100.0),
        "server_cpu_us_per_call": cpu.map(|(a, b)| (b - a) as f64 * 10_000.0 / n.max(1) as f64),
        "server_peak_rss_kb": rss_kb,
    })
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        server: String::new(),
        server_args: Vec::new(),
        transport: "stdio".into(),
        stateless: false,
        concurrency: 1,
        requests: 20_000,
        warmup: 2_000,
        max_seconds: 60.0,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--server" => o.server = value()?,
            "--server-arg" => o.server_args.push(value()?),
            "--transport" => o.transport = value()?,
            "--stateless" => o.stateless = true,
            "--concurrency" => o.concurrency = value()?.parse().map_err(|e| format!("{e}"))?,
            "--requests" => o.requests = value()?.parse().map_err(|e| format!("{e}"))?,
            "--warmup" => o.warmup = value()?.parse().map_err(|e| format!("{e}"))?,
            "--max-seconds" => o.max_seconds = value()?.parse().map_err(|e| format!("{e}"))?,
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    if o.server.is_empty() {
        return Err("--server is required".into());
    }
    o.concurrency = o.concurrency.clamp(1, 1024);
    o.requests = o.requests.min(10_000_000);
    o.max_seconds = o.max_seconds.clamp(0.1, 600.0);
    Ok(o)
}

#[tokio::main]
async fn main() {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}\nusage: loadgen --server PATH --transport stdio|http [--stateless] [--concurrency N] [--requests M] [--warmup W] [--max-seconds S]");
            std::process::exit(2);
        }
    };
    let result = match o.transport.as_str() {
        "stdio" => stdio(&o).await,
        "http" => http(&o).await,
        other => Err(format!("unknown transport {other}").into()),
    };
    match result {
        Ok(v) => println!("{v}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
