//! A bounded load generator for MCP servers: starts the server itself, sends a fixed number
//! of exact `tools/call` requests (the ten benchmark tools of bench/disco-tools in turn, or the
//! calls given with `--call`) with a fixed number in flight, and prints one JSON line: calls
//! per second, latency percentiles, the server's CPU time and context switches per call and
//! its peak resident memory.
//!
//! ```text
//! loadgen --server PATH [--server-arg ARG]... --transport stdio|http [--stateless]
//!         [--call NAME=JSON]... [--concurrency N] [--requests M] [--warmup W]
//!         [--max-seconds S]
//! ```
//!
//! The server is started as `PATH ARG... --stdio`, or `PATH ARG... --http 127.0.0.1:0
//! [--stateless]`, and must then print `LISTENING http://127.0.0.1:PORT/PATH` as its first
//! line; the calls go to that path. Connecting is retried for up to 10 s, since a wrapper may
//! print the line before the server it starts listens.
//!
//! `--call NAME=JSON` (repeatable) replaces the built-in calls: the tool `NAME` with the JSON
//! object as its arguments, the calls sent in turn.
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
    /// The calls sent in turn: tool name and arguments. Never empty.
    calls: Vec<(String, Value)>,
}

/// bench/disco-tools' ten tools with valid arguments: every call resolves exactly and needs no
/// repair.
fn default_calls() -> Vec<(String, Value)> {
    [
        ("add", json!({"a": 2, "b": 3})),
        ("multiply", json!({"a": 2.5, "b": 4})),
        ("echo", json!({"text": "hello world"})),
        ("reverse_text", json!({"text": "hello world"})),
        ("uppercase", json!({"text": "hello"})),
        ("word_count", json!({"text": "the quick brown fox"})),
        ("celsius_to_fahrenheit", json!({"celsius": 21.5})),
        ("is_prime", json!({"n": 7919})),
        ("fibonacci", json!({"n": 50})),
        (
            "join_words",
            json!({"words": ["a", "b", "c"], "separator": "-"}),
        ),
    ]
    .into_iter()
    .map(|(name, args)| (name.to_string(), args))
    .collect()
}

/// Reads `NAME=JSON`: the name up to the first `=`, then a JSON object of arguments.
fn parse_call(spec: &str) -> Result<(String, Value), String> {
    let (name, args) = spec
        .split_once('=')
        .ok_or(format!("--call {spec}: expected NAME=JSON"))?;
    if name.is_empty() {
        return Err(format!("--call {spec}: the tool name is empty"));
    }
    let args: Value =
        serde_json::from_str(args).map_err(|e| format!("--call {spec}: arguments: {e}"))?;
    if !args.is_object() {
        return Err(format!("--call {spec}: arguments must be a JSON object"));
    }
    Ok((name.to_string(), args))
}

fn request(id: u64, i: usize, calls: &[(String, Value)]) -> Value {
    // `calls` is never empty (parse() fills in the defaults); the fallback keeps this total.
    let (name, arguments) = calls
        .get(i % calls.len().max(1))
        .map_or(("", &Value::Null), |(n, a)| (n.as_str(), a));
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

/// Context switches (voluntary and not) of all of a process's live threads, from
/// /proc/PID/task/*/status: hand-offs between threads cost time without instructions.
fn context_switches(pid: u32) -> Option<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let Ok(task) = task else { continue };
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        for line in status.lines() {
            if let Some(v) = line
                .strip_prefix("voluntary_ctxt_switches:")
                .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
            {
                total += v.trim().parse::<u64>().unwrap_or(0);
            }
        }
    }
    Some(total)
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
        serde_json::to_writer(&mut *buf, &request(id, *next, &o.calls)).ok();
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
        // Skip what the server sends before its answer (log notifications, for one).
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).await? == 0 {
                return Err("server closed stdout before answering initialize".into());
            }
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id") != Some(&json!(0)) {
                continue;
            }
            if message.get("result").is_none() {
                return Err(format!("initialize failed: {line}").into());
            }
            break;
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
    let cs0 = context_switches(pid);
    let t0 = Instant::now();
    let outcome = run_stdio(&mut child, o, o.requests, 10_000_000).await?;
    let elapsed = t0.elapsed();
    let cpu1 = cpu_ticks(pid);
    let cs1 = context_switches(pid);
    let rss = peak_rss_kb(pid);
    child.kill().await.ok();
    let server = Server {
        cpu: cpu0.zip(cpu1),
        switches: cs0.zip(cs1),
        rss_kb: rss,
    };
    Ok(report(o, outcome, elapsed, server))
}

struct Conn {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    authority: String,
    path: String,
    session: Option<String>,
}

/// How long connecting is retried: a wrapper may print `LISTENING` before the server it
/// starts has bound its port.
const CONNECT_FOR: Duration = Duration::from_secs(10);

impl Conn {
    async fn open(authority: &str, path: &str) -> Result<Conn, Error> {
        let give_up = Instant::now() + CONNECT_FOR;
        let tcp = loop {
            match tokio::net::TcpStream::connect(authority).await {
                Ok(tcp) => break tcp,
                Err(_) if Instant::now() < give_up => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => return Err(format!("connecting to {authority}: {e}").into()),
            }
        };
        tcp.set_nodelay(true)?;
        let (sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await?;
        tokio::spawn(conn);
        Ok(Conn {
            sender,
            authority: authority.to_string(),
            path: path.to_string(),
            session: None,
        })
    }

    /// POSTs one JSON-RPC message; returns the JSON-RPC response (from a JSON body or the
    /// SSE event that carries it), or Null for a notification.
    async fn post(&mut self, body: &Value) -> Result<Value, Error> {
        let mut req = hyper::Request::post(self.path.as_str())
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

/// Where one benchmark connection goes and what it sends.
#[derive(Clone)]
struct Target {
    authority: String,
    path: String,
    stateless: bool,
    calls: std::sync::Arc<Vec<(String, Value)>>,
}

async fn http_worker(
    target: Target,
    warmup: usize,
    count: usize,
    deadline: Instant,
) -> Result<(Conn, Outcome), Error> {
    let mut conn = Conn::open(&target.authority, &target.path).await?;
    if !target.stateless {
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
        conn.post(&request(1 + i as u64, i, &target.calls)).await?;
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
    calls: std::sync::Arc<Vec<(String, Value)>>,
) -> Result<Outcome, Error> {
    for i in 0..count {
        if Instant::now() >= deadline {
            break;
        }
        let t0 = Instant::now();
        let response = conn
            .post(&request(100 + i as u64, offset + i, &calls))
            .await?;
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
    let (authority, path) = listening(&line)?;
    let target = Target {
        authority,
        path,
        stateless: o.stateless,
        calls: std::sync::Arc::new(o.calls.clone()),
    };
    let deadline = Instant::now() + Duration::from_secs_f64(o.max_seconds);
    let n = o.concurrency.max(1);
    let warm_each = o.warmup.div_ceil(n);
    let mut ready = Vec::new();
    for _ in 0..n {
        ready.push(tokio::spawn(http_worker(
            target.clone(),
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
    let cs0 = context_switches(pid);
    let t0 = Instant::now();
    let per = o.requests / n;
    let mut tasks = Vec::new();
    for (k, (conn, out)) in conns.into_iter().enumerate() {
        tasks.push(tokio::spawn(http_measure(
            conn,
            out,
            per,
            k,
            deadline,
            target.calls.clone(),
        )));
    }
    let mut all = Outcome::default();
    for t in tasks {
        let out = t.await??;
        all.latencies.extend(out.latencies);
        all.errors += out.errors;
    }
    let elapsed = t0.elapsed();
    let cpu1 = cpu_ticks(pid);
    let cs1 = context_switches(pid);
    let rss = peak_rss_kb(pid);
    child.kill().await.ok();
    let server = Server {
        cpu: cpu0.zip(cpu1),
        switches: cs0.zip(cs1),
        rss_kb: rss,
    };
    Ok(report(o, all, elapsed, server))
}

/// Reads `LISTENING http://127.0.0.1:PORT[/PATH]` into the authority and the path (`/` when
/// none is given). Anything but loopback is refused.
fn listening(line: &str) -> Result<(String, String), Error> {
    let url = line
        .trim()
        .strip_prefix("LISTENING http://")
        .ok_or_else(|| format!("unexpected first line: {line}"))?;
    let (authority, path) = match url.find('/') {
        Some(i) => url.split_at(i),
        None => (url, "/"),
    };
    if !authority.starts_with("127.0.0.1:") {
        return Err("refusing a non-loopback address".into());
    }
    Ok((authority.to_string(), path.to_string()))
}

/// What was read of the server process around the measured calls: CPU ticks and context
/// switches before and after, and its peak resident memory.
struct Server {
    cpu: Option<(u64, u64)>,
    switches: Option<(u64, u64)>,
    rss_kb: Option<u64>,
}

fn report(o: &Options, mut out: Outcome, elapsed: Duration, server_stats: Server) -> Value {
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
        "server_cpu_us_per_call": server_stats.cpu.map(|(a, b)| b.saturating_sub(a) as f64 * 10_000.0 / n.max(1) as f64),
        "server_context_switches_per_call": server_stats.switches.map(|(a, b)| b.saturating_sub(a) as f64 / n.max(1) as f64),
        "server_peak_rss_kb": server_stats.rss_kb,
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
        calls: Vec::new(),
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
            "--call" => o.calls.push(parse_call(&value()?)?),
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    if o.server.is_empty() {
        return Err("--server is required".into());
    }
    if o.calls.is_empty() {
        o.calls = default_calls();
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
            eprintln!("error: {e}\nusage: loadgen --server PATH [--server-arg ARG]... --transport stdio|http [--stateless] [--call NAME=JSON]... [--concurrency N] [--requests M] [--warmup W] [--max-seconds S]");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_line_gives_authority_and_path() {
        for (line, authority, path) in [
            (
                "LISTENING http://127.0.0.1:4000/mcp\n",
                "127.0.0.1:4000",
                "/mcp",
            ),
            ("LISTENING http://127.0.0.1:4000/", "127.0.0.1:4000", "/"),
            ("LISTENING http://127.0.0.1:4000", "127.0.0.1:4000", "/"),
            ("LISTENING http://127.0.0.1:1/a/b", "127.0.0.1:1", "/a/b"),
        ] {
            let (a, p) = listening(line).expect(line);
            assert_eq!((a.as_str(), p.as_str()), (authority, path), "{line}");
        }
        for line in [
            "LISTENING http://0.0.0.0:4000/mcp",
            "LISTENING http://example.com/mcp",
            "listening on 4000",
            "",
        ] {
            assert!(listening(line).is_err(), "{line}");
        }
    }

    #[test]
    fn call_option_takes_a_name_and_an_object() {
        let (name, args) = parse_call(r#"everything/echo={"message": "a=b"}"#).expect("valid");
        assert_eq!(name, "everything/echo");
        assert_eq!(args, json!({"message": "a=b"}));
        for bad in ["echo", "={}", "echo=[1]", "echo=\"x\"", "echo={"] {
            assert!(parse_call(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn calls_are_sent_in_turn() {
        let calls = vec![
            ("a".to_string(), json!({})),
            ("b".to_string(), json!({"x": 1})),
        ];
        let names: Vec<Value> = (0..4)
            .map(|i| request(i as u64, i, &calls)["params"]["name"].clone())
            .collect();
        assert_eq!(names, [json!("a"), json!("b"), json!("a"), json!("b")]);
        assert_eq!(default_calls().len(), 10);
    }
}
