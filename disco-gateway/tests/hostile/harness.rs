//! The hostile suite's harness: the gateway binary over stdio in front of scripted upstreams
//! (`upstream.py`), driven with raw JSON-RPC lines, its resident memory read from /proc.
//!
//! Every wait is bounded by [`LIVENESS`]: a test that gets no answer within it fails. That is a
//! liveness bound (the gateway must answer, and at once, not after a call timeout), never a
//! measure of speed.

// Three test binaries include this file (hostile.rs, live.rs, learning.rs), each using a part
// of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any answer may take.
pub const LIVENESS: Duration = Duration::from_secs(20);
/// The most resident memory the gateway may reach in any hostile case (its peak, VmHWM).
pub const RSS_CEILING_KB: u64 = 256 * 1024;

/// One upstream of a test's configuration: its name and the scenario it plays.
pub struct Up<'a> {
    pub name: &'a str,
    pub scenario: &'a str,
}

pub const fn up<'a>(name: &'a str, scenario: &'a str) -> Up<'a> {
    Up { name, scenario }
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/upstream.py")
}

/// A directory of the test's own, removed at the end.
pub struct Dir(pub PathBuf);

impl Dir {
    pub fn new(tag: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("disco-hostile-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        Dir(dir)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes a configuration of `upstreams`, in this order, with `disco` as its `disco` key; its
/// state (the tool pins) in the test's directory unless `disco` says where.
pub fn config(dir: &Dir, upstreams: &[Up], mut disco: Value) -> PathBuf {
    if disco.get("dataDir").is_none() {
        disco["dataDir"] = json!(state(dir));
    }
    let script = script();
    // Written by hand: serde_json's map would sort the servers, and their order is tested.
    let servers: Vec<String> = upstreams
        .iter()
        .map(|u| {
            // A scenario that is a URL is an upstream over HTTP, started by the test.
            let server = if u.scenario.starts_with("http://") {
                json!({"url": u.scenario})
            } else {
                json!({
                    "command": "python3",
                    "args": [script, u.scenario, u.name, dir.0],
                })
            };
            format!("{}: {server}", json!(u.name))
        })
        .collect();
    let text = format!(
        "{{\"mcpServers\": {{{}}}, \"disco\": {disco}}}",
        servers.join(", ")
    );
    let path = dir.0.join("servers.json");
    std::fs::write(&path, text).expect("the configuration");
    path
}

/// Where a test's gateway keeps its state.
pub fn state(dir: &Dir) -> PathBuf {
    dir.0.join("state")
}

/// The test's stand-in for the user's cache directory (`XDG_CACHE_HOME`).
pub fn cache(dir: &Dir) -> PathBuf {
    dir.0.join("cache")
}

/// Starts the gateway binary over the configuration of `upstreams`, with `args` after it and
/// `stdin`; its stdout piped, its log in the test's directory (returned).
fn spawn(
    dir: &Dir,
    upstreams: &[Up],
    disco: Value,
    args: &[&str],
    stdin: Stdio,
) -> (Child, PathBuf) {
    let config = config(dir, upstreams, disco);
    let log = dir.0.join("gateway.log");
    let child = Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
        .arg("--config")
        .arg(&config)
        .args(args)
        .env("RUST_LOG", "info,rmcp=warn")
        // What the gateway would keep in the user's cache directory (a semantic model's
        // vectors) stays in the test's.
        .env("XDG_CACHE_HOME", cache(dir))
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).expect("the log file"))
        .spawn()
        .expect("the gateway runs");
    (child, log)
}

/// The scripted upstream over Streamable HTTP (`http_upstream.py`), started by the test; it
/// stops when dropped.
pub struct HttpUpstream {
    child: Child,
    /// Its endpoint (`http://127.0.0.1:PORT/mcp`).
    pub url: String,
}

impl HttpUpstream {
    pub fn start(label: &str) -> HttpUpstream {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/http_upstream.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(label)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs the HTTP upstream");
        let stdout = child.stdout.take().expect("its stdout");
        let port = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("PORT ")?.trim().parse::<u16>().ok())
            .expect("the HTTP upstream prints its port");
        HttpUpstream {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpUpstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The gateway serving stdio.
pub struct Gateway {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    /// While set, nothing is read from the gateway: a client that stopped reading.
    paused: Arc<AtomicBool>,
    next: u64,
    log: PathBuf,
    /// The methods of the notifications read so far (skipped while waiting for answers).
    pub notified: Vec<String>,
}

impl Gateway {
    /// Starts the gateway and initializes a session.
    pub fn start(dir: &Dir, upstreams: &[Up], disco: Value) -> Gateway {
        Gateway::start_with(dir, upstreams, disco, &[])
    }

    /// Starts the gateway with `args` after its configuration and initializes a session.
    pub fn start_with(dir: &Dir, upstreams: &[Up], disco: Value, args: &[&str]) -> Gateway {
        let (mut child, log) = spawn(dir, upstreams, disco, args, Stdio::piped());
        let stdin = child.stdin.take().expect("its stdin");
        let stdout = child.stdout.take().expect("its stdout");
        let (tx, lines) = mpsc::channel();
        let paused = Arc::new(AtomicBool::new(false));
        let pause = paused.clone();
        std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            loop {
                while pause.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                let mut line = String::new();
                match stdout.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if tx.send(line.trim_end().to_string()).is_err() {
                    break;
                }
            }
        });
        let mut gateway = Gateway {
            child,
            stdin,
            lines,
            paused,
            next: 0,
            log,
            notified: Vec::new(),
        };
        let init = gateway.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "hostile-suite", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "initialize: {init}");
        gateway.notify("notifications/initialized", json!({}));
        gateway
    }

    /// Stops reading the gateway's output (it fills the pipe, and the gateway's writes wait),
    /// or reads it again.
    pub fn pause_reading(&self, paused: bool) {
        self.paused.store(paused, Ordering::Release);
    }

    /// Sends a request without waiting for its answer; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> u64 {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send(&line);
    }

    fn send(&mut self, message: &Value) {
        let sent = writeln!(self.stdin, "{message}").and_then(|()| self.stdin.flush());
        if let Err(e) = sent {
            panic!("the gateway is gone ({e}); its log:\n{}", self.log());
        }
    }

    /// Sends a request and returns its answer (the whole JSON-RPC message), within
    /// [`LIVENESS`]; notifications in between are skipped.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.answer(id, method)
    }

    /// The answer to request `id`, within [`LIVENESS`].
    pub fn answer(&mut self, id: u64, method: &str) -> Value {
        let deadline = Instant::now() + LIVENESS;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!(
                        "no answer to {method} within {LIVENESS:?}; log:\n{}",
                        self.log()
                    )
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    panic!("the gateway ended during {method}; log:\n{}", self.log())
                }
            };
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
            if message.get("id").is_none() {
                if let Some(method) = message["method"].as_str() {
                    self.notified.push(method.to_string());
                }
            }
        }
    }

    /// The names tools/list gives (every page).
    pub fn tool_names(&mut self) -> Vec<String> {
        let mut names = Vec::new();
        let mut cursor: Option<Value> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let answer = self.request("tools/list", params);
            let result = &answer["result"];
            for t in result["tools"].as_array().expect("tools") {
                names.push(t["name"].as_str().unwrap_or_default().to_string());
            }
            match result.get("nextCursor") {
                Some(c) if !c.is_null() => cursor = Some(c.clone()),
                _ => return names,
            }
        }
    }

    /// Calls a tool; returns the text of its result, and whether it is an error (a JSON-RPC
    /// error counts as one, its message as the text).
    pub fn call(&mut self, tool: &str, arguments: Value) -> (String, bool) {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        if let Some(error) = answer.get("error") {
            return (
                error["message"].as_str().unwrap_or_default().to_string(),
                true,
            );
        }
        let result = &answer["result"];
        let text = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        (text, result["isError"] == json!(true))
    }

    /// Polls tools/list until `ready` holds of its names, within [`LIVENESS`].
    pub fn wait_for_tools(&mut self, what: &str, ready: impl Fn(&[String]) -> bool) -> Vec<String> {
        let deadline = Instant::now() + LIVENESS;
        loop {
            let names = self.tool_names();
            if ready(&names) {
                return names;
            }
            if Instant::now() > deadline {
                panic!(
                    "{what}: not within {LIVENESS:?}: {names:?}\nlog:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The gateway's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the gateway still runs.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Its peak resident memory, in kB (VmHWM of /proc/PID/status).
    pub fn peak_rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc/PID/status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM")
    }

    /// The end of every test: the gateway is up, answers, and stayed under the ceiling.
    pub fn assert_healthy(&mut self) {
        assert!(self.alive(), "the gateway exited; log:\n{}", self.log());
        let ping = self.request("ping", json!({}));
        assert!(ping.get("result").is_some(), "ping: {ping}");
        let peak = self.peak_rss_kb();
        eprintln!("the gateway's peak resident memory: {peak} kB");
        assert!(
            peak < RSS_CEILING_KB,
            "peak resident memory {peak} kB, over the ceiling of {RSS_CEILING_KB} kB"
        );
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The gateway serving Streamable HTTP on a port of its own, for tests of callers' tokens.
pub struct HttpGateway {
    child: Child,
    /// Where it serves (`http://127.0.0.1:PORT/mcp`).
    pub url: String,
    log: PathBuf,
}

impl HttpGateway {
    /// Starts the gateway with `--http 127.0.0.1:0` and waits, within [`LIVENESS`], for the
    /// address it says it bound.
    pub fn start(dir: &Dir, upstreams: &[Up], disco: Value) -> HttpGateway {
        HttpGateway::start_with(dir, upstreams, disco, &[])
    }

    /// [`HttpGateway::start`] with more of the gateway's arguments.
    pub fn start_with(dir: &Dir, upstreams: &[Up], disco: Value, args: &[&str]) -> HttpGateway {
        let mut http = vec!["--http", "127.0.0.1:0"];
        http.extend_from_slice(args);
        let (mut child, log) = spawn(dir, upstreams, disco, &http, Stdio::null());
        let stdout = child.stdout.take().expect("its stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("LISTENING ") {
                    let _ = tx.send(url.to_string());
                }
            }
        });
        let url = match rx.recv_timeout(LIVENESS) {
            Ok(url) => url,
            Err(_) => panic!(
                "the gateway did not listen within {LIVENESS:?}; log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            ),
        };
        HttpGateway { child, url, log }
    }

    /// The gateway's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for HttpGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits, within `within`, for the file an upstream leaves when its flood is written.
pub fn wait_for_file(path: &Path, within: Duration) {
    let deadline = Instant::now() + within;
    while !path.exists() {
        assert!(Instant::now() < deadline, "{path:?} not within {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Fails unless `report` says `part`.
#[track_caller]
pub fn says(report: &str, part: &str) {
    assert!(report.contains(part), "`{part}` is not in:\n{report}");
}

/// `disco-gateway lint` over the configuration of `upstreams`: its output (within
/// [`LIVENESS`]).
pub fn lint(dir: &Dir, upstreams: &[Up], disco: Value) -> String {
    command(dir, "lint", upstreams, disco)
}

/// `disco-gateway <subcommand>` (`lint`, `docs`) over the configuration of `upstreams`: its
/// output (within [`LIVENESS`]).
pub fn command(dir: &Dir, subcommand: &str, upstreams: &[Up], disco: Value) -> String {
    let config = config(dir, upstreams, disco);
    let out = dir.0.join(format!("{subcommand}.out"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
        .arg(subcommand)
        .arg("--config")
        .arg(&config)
        .env("RUST_LOG", "error")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("the output file"))
        .stderr(Stdio::null())
        .spawn()
        .expect("the gateway runs");
    let deadline = Instant::now() + LIVENESS;
    while matches!(child.try_wait(), Ok(None)) {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{subcommand} did not finish within {LIVENESS:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::read_to_string(&out).unwrap_or_default()
}

/// A downstream client over HTTP with a bearer token, on a runtime of its own.
pub struct HttpClient {
    runtime: tokio::runtime::Runtime,
    service: disco_runtime::rmcp::service::RunningService<
        disco_runtime::rmcp::RoleClient,
        disco_runtime::rmcp::model::ClientConfig,
    >,
}

impl HttpClient {
    /// A client of rmcp's newest protocol era (no sessions).
    pub fn connect(url: &str, token: &str) -> HttpClient {
        HttpClient::connect_as(url, token, Default::default())
    }

    /// A client of the 2025-06-18 era, whose requests share a session.
    pub fn connect_with_session(url: &str, token: &str) -> HttpClient {
        use disco_runtime::rmcp::model::{ClientConfig, ProtocolVersion};
        let config = ClientConfig::default().with_protocol_version(ProtocolVersion::V_2025_06_18);
        HttpClient::connect_as(url, token, config)
    }

    fn connect_as(
        url: &str,
        token: &str,
        client: disco_runtime::rmcp::model::ClientConfig,
    ) -> HttpClient {
        use disco_runtime::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        use disco_runtime::rmcp::transport::StreamableHttpClientTransport;
        use disco_runtime::rmcp::ServiceExt;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token);
        let service = runtime
            .block_on(async {
                // The test's own HTTP client, beside the gateway's.
                disco_gateway::install_tls();
                let transport = StreamableHttpClientTransport::from_config(config);
                tokio::time::timeout(LIVENESS, client.serve(transport)).await
            })
            .expect("connected within the liveness bound")
            .expect("the client connects");
        HttpClient { runtime, service }
    }

    /// A call's text and whether it is an error (a JSON-RPC error counts, its message the
    /// text).
    pub fn call(&self, tool: &str) -> (String, bool) {
        use disco_runtime::rmcp::model::CallToolRequestParams;
        let call = self
            .service
            .peer()
            .call_tool(CallToolRequestParams::new(tool.to_string()));
        let answer = self
            .runtime
            .block_on(async { tokio::time::timeout(LIVENESS, call).await })
            .expect("answered within the liveness bound");
        match answer {
            Ok(result) => {
                let text = result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                    .collect::<Vec<_>>()
                    .join("\n");
                (text, result.is_error == Some(true))
            }
            Err(e) => (e.to_string(), true),
        }
    }

    pub fn status(&self) -> Value {
        use disco_runtime::rmcp::model::{ReadResourceRequestParams, ResourceContents};
        let read = self
            .service
            .peer()
            .read_resource(ReadResourceRequestParams::new("disco://status"));
        let result = self
            .runtime
            .block_on(async { tokio::time::timeout(LIVENESS, read).await })
            .expect("answered within the liveness bound")
            .expect("the status");
        match &result.contents[0] {
            ResourceContents::TextResourceContents { text, .. } => {
                serde_json::from_str(text).expect("the status is JSON")
            }
            other => panic!("{other:?}"),
        }
    }
}
