//! `"forwardToken": true` against a real disco HTTP upstream that takes bearer tokens and
//! answers each call with the token it came with: every call of a caller reaches the upstream
//! with that caller's token, never another caller's and never the operator's; the callers'
//! connections stay within [`MAX_FORWARDED_CONNECTIONS`], least recently used out first; a
//! refused token is a tool error naming the server; a restart of the main connection closes
//! them all. The gateway is driven both as the binary over HTTP and through its `Hub`.

// Log messages are deprecated by SEP-2577 but still sent by servers of every era.
#![allow(deprecated)]

mod support;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use disco_gateway::config::Config;
use disco_gateway::forward::{Forwarded, MAX_FORWARDED_CONNECTIONS};
use disco_gateway::upstream::{self, Hub, Status};
use disco_runtime::catalog::DynamicTool;
use disco_runtime::rmcp;
use disco_runtime::tool::BoxFuture;
use disco_runtime::{
    CallToolResult, Caller, CatalogTool, Content, Context, HttpOptions, Server, ToolProvider,
};
use rmcp::model::{CallToolRequestParams, LoggingLevel, LoggingMessageNotificationParam, Tool};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::{json, Map, Value};

/// The token of the gateway's own (main) connection.
const OPERATOR: &str = "operator-token-0f1e2d3c";
/// Tokens the upstream refuses start with this.
const REFUSED: &str = "refused-";
/// A hang guard, never a measure.
const GUARD: Duration = Duration::from_secs(60);

type Seen = Arc<Mutex<Vec<String>>>;

fn seen(seen: &Seen) -> Vec<String> {
    seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The upstream's tools: `whoami` answers with the token its call came with (the upstream's
/// caller is named by its token) and records it; `operator_only` only the operator sees;
/// `shout` sends a log message with the token, then waits for a permit of `release` before it
/// answers (so the calls of several callers are in flight together).
struct Whoami {
    seen: Seen,
    release: Arc<tokio::sync::Semaphore>,
}

impl ToolProvider for Whoami {
    fn tools(&self) -> Vec<DynamicTool> {
        ["whoami", "operator_only", "shout"]
            .into_iter()
            .map(|name| {
                DynamicTool::new(Tool::new(
                    name,
                    "Answer with the bearer token of the call.",
                    Arc::new(Map::new()),
                ))
            })
            .collect()
    }

    fn call(&self, name: &str, _arguments: Map<String, Value>, ctx: Context) -> BoxFuture {
        let token = ctx.caller().id().unwrap_or("(anonymous)").to_string();
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(token.clone());
        let release = (name == "shout").then(|| self.release.clone());
        Box::pin(async move {
            if let Some(release) = release {
                let _ = ctx.log(LoggingLevel::Info, json!({"from": token})).await;
                if let Ok(permit) = release.acquire().await {
                    permit.forget();
                }
            }
            CallToolResult::success(vec![Content::text(token)])
        })
    }
}

/// Holds the upstream's check of chosen tokens (so the opening of a connection with one of
/// them waits) until they are let through.
#[derive(Default)]
struct Gate {
    held: Mutex<HashSet<String>>,
    open: Condvar,
}

impl Gate {
    fn hold(&self, token: &str) {
        self.lock().insert(token.to_string());
    }

    fn release(&self, token: &str) {
        self.lock().remove(token);
        self.open.notify_all();
    }

    /// Returns once `token` is not held (bounded by the hang guard).
    fn pass(&self, token: &str) {
        let mut held = self.lock();
        while held.contains(token) {
            let (next, waited) = self
                .open
                .wait_timeout(held, GUARD)
                .unwrap_or_else(|e| e.into_inner());
            assert!(!waited.timed_out(), "hang guard: a held token");
            held = next;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A disco HTTP server in a runtime of its own, so that stopping it ends every connection to
/// it at once, as a crash does.
struct Upstream {
    addr: SocketAddr,
    seen: Seen,
    release: Arc<tokio::sync::Semaphore>,
    gate: Arc<Gate>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Upstream {
    fn start(at: Option<SocketAddr>, seen: Seen) -> Upstream {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let listener = {
            let _inside = runtime.enter();
            let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
            socket.set_reuseaddr(true).expect("SO_REUSEADDR");
            socket
                .bind(at.unwrap_or_else(|| "127.0.0.1:0".parse().unwrap()))
                .expect("bind");
            socket.listen(1024).expect("listen")
        };
        let addr = listener.local_addr().expect("an address");
        let gate = Arc::new(Gate::default());
        let check = {
            let gate = gate.clone();
            move |token: &str| {
                gate.pass(token);
                (!token.starts_with(REFUSED)).then(|| Caller::new(token))
            }
        };
        let release = Arc::new(tokio::sync::Semaphore::new(0));
        let server = Server::from_inventory()
            .provider(Whoami {
                seen: seen.clone(),
                release: release.clone(),
            })
            .visibility(|caller: &Caller, tool: &CatalogTool| {
                tool.name() != "operator_only" || caller.id() == Some(OPERATOR)
            })
            .http_options(HttpOptions::default().bearer_auth(check));
        runtime.spawn(server.serve_http_on(listener, std::future::pending()));
        Upstream {
            addr,
            seen,
            release,
            gate,
            runtime: Some(runtime),
        }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Ends the server and every connection to it.
    fn stop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `count` callers whose tokens share a long prefix (a table keyed by less than the whole
/// name or token would mix them up).
fn callers(tag: &str, count: usize) -> Vec<(String, String)> {
    (0..count)
        .map(|i| {
            (
                format!("caller-{tag}-{i:03}"),
                format!("token-{tag}-with-a-long-shared-prefix-{i:03}"),
            )
        })
        .collect()
}

/// The gateway's configuration: one forwarding server, with an `Authorization` of the
/// operator's and another header, and these callers' tokens. No pings (their timing would
/// depend on the machine's load), except where a test needs a stopped upstream noticed:
/// then with a wait long enough for a loaded machine.
fn config(url: &str, callers: &[(String, String)]) -> String {
    config_with(url, callers, json!(false), 10_000)
}

fn config_with(url: &str, callers: &[(String, String)], ping: Value, ping_timeout: u64) -> String {
    let tokens: Vec<Value> = callers
        .iter()
        .map(|(caller, token)| json!({"token": token, "caller": caller}))
        .collect();
    json!({
        "mcpServers": {"up": {
            "url": url,
            "headers": {"Authorization": format!("Bearer {OPERATOR}"), "X-Kept": "yes"},
            "forwardToken": true,
        }},
        "disco": {
            "tokens": tokens,
            "pingIntervalMs": ping,
            "pingTimeoutMs": ping_timeout,
            "restartInitialMs": 50,
            "restartMaxMs": 200,
        },
    })
    .to_string()
}

async fn hub(config_text: &str) -> Arc<Hub> {
    let config = Config::parse(config_text, &|_| None).expect("the configuration");
    let hub = Hub::new(config.servers, config.disco);
    hub.start();
    assert!(hub.settle(GUARD).await.is_empty(), "the upstream started");
    hub
}

/// The callers' connections of the hub's one upstream.
fn forwarded(hub: &Hub) -> Callers {
    Callers(hub.upstreams()[0].clone())
}

/// An upstream, seen as its callers' connections.
struct Callers(Arc<upstream::Upstream>);

impl std::ops::Deref for Callers {
    type Target = Forwarded;
    fn deref(&self) -> &Forwarded {
        self.0.forwarded().expect("up forwards")
    }
}

/// The text of an answer (the upstream's and the gateway's answers here have one block).
fn text(result: &CallToolResult) -> String {
    let first = result.content.first().and_then(|c| c.as_text());
    first.map(|t| t.text.clone()).unwrap_or_default()
}

/// The answer to a call whose token the upstream refused: a tool error naming the server,
/// saying so, showing no token.
fn assert_refused(result: &CallToolResult) {
    let said = text(result);
    assert_eq!(result.is_error, Some(true), "{said}");
    assert!(said.contains("Server `up`"), "{said}");
    assert!(said.contains("refused the caller's bearer token"), "{said}");
    assert!(
        !said.contains(REFUSED) && !said.contains(OPERATOR),
        "a token shown: {said}"
    );
}

async fn call_as(hub: &Hub, caller: Caller, tool: &str) -> CallToolResult {
    let upstream = hub.upstreams()[0].clone();
    // A forwarding server never acts as a signed-in user: `as_user` does not matter to it.
    let call = upstream.call(tool, Map::new(), Context::for_caller(caller), false);
    tokio::time::timeout(GUARD, call).await.expect("hang guard")
}

/// Waits until `done` holds, bounded by the hang guard.
async fn until(what: &str, done: impl Fn() -> bool) {
    let wait = async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    if tokio::time::timeout(GUARD, wait).await.is_err() {
        panic!("hang guard: {what}");
    }
}

/// Waits until the main connection is in the state asked for.
async fn wait_until(hub: &Hub, ready: bool) {
    until("the main connection's state", || {
        matches!(hub.upstreams()[0].status(), Status::Ready) == ready
    })
    .await;
}

/// Generated sequences of calls over a few callers and over more callers than the bound:
/// each answer carries the caller's own token; the connections open never exceed the bound;
/// a connection is opened exactly when a least-recently-used table of the bound's size
/// misses (so the one used least recently is the one closed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_callers_calls_carry_its_token_within_the_bound_least_recently_used_out() {
    let upstream = Upstream::start(None, Seen::default());
    for (seed, count) in [(1u64, 3usize), (2, MAX_FORWARDED_CONNECTIONS + 5)] {
        let callers = callers(&format!("lru{seed}"), count);
        let hub = hub(&config(&upstream.url(), &callers)).await;
        let mut rng = fastrand::Rng::with_seed(seed);
        // The model: callers in order of use, least recent first.
        let mut model: Vec<usize> = Vec::new();
        let mut misses = 0u64;
        for step in 0..count * 5 {
            // Every caller once in order first (past the bound, the first ones go out), then
            // mostly a caller used lately, now and then any: hits and misses both.
            let i = if step < count {
                step
            } else if rng.u8(..3) == 0 {
                rng.usize(..count)
            } else {
                model[model.len() - 1 - rng.usize(..model.len().min(8))]
            };
            match model.iter().position(|&m| m == i) {
                Some(p) => {
                    model.remove(p);
                }
                None => {
                    misses += 1;
                    if model.len() == MAX_FORWARDED_CONNECTIONS {
                        model.remove(0);
                    }
                }
            }
            model.push(i);
            let (caller, token) = &callers[i];
            let result = call_as(&hub, Caller::new(caller.clone()), "whoami").await;
            assert_eq!(text(&result), *token, "step {step}: {caller}");
            let f = forwarded(&hub);
            assert!(
                f.open_connections() <= MAX_FORWARDED_CONNECTIONS,
                "step {step}"
            );
            assert_eq!(f.open_connections(), model.len(), "step {step}");
            assert_eq!(f.opened(), misses, "step {step}: connections opened");
        }
        hub.stop().await;
    }
    let seen = seen(&upstream.seen);
    assert!(!seen.iter().any(|t| t == OPERATOR), "the operator's token");
}

/// Concurrent first calls of one caller share one connection: the upstream holds the
/// opening of the first until all eight calls are waiting for a connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_calls_of_one_caller_open_one_connection() {
    let upstream = Upstream::start(None, Seen::default());
    let callers = callers("concurrent", 6);
    let hub = hub(&config(&upstream.url(), &callers)).await;
    for (n, (caller, token)) in callers.iter().enumerate() {
        upstream.gate.hold(token);
        let mut calls = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let hub = hub.clone();
            let caller = caller.clone();
            calls.spawn(async move { call_as(&hub, Caller::new(caller), "whoami").await });
        }
        until("eight calls waiting for the connection", || {
            forwarded(&hub).calls_in_flight() == 8
        })
        .await;
        upstream.gate.release(token);
        while let Some(result) = calls.join_next().await {
            assert_eq!(text(&result.expect("the call ran")), *token, "{caller}");
        }
        assert_eq!(forwarded(&hub).opened(), n as u64 + 1, "{caller}");
    }
    hub.stop().await;
}

/// A token the upstream refuses is a tool error naming the server and saying so, and nothing
/// reaches the upstream in its place; a caller the configuration does not know is refused
/// too; the anonymous caller (the operator) uses the main connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_is_a_tool_error_and_never_the_operators_connection() {
    let upstream = Upstream::start(None, Seen::default());
    let mut callers = callers("refused", 3);
    callers.push(("caller-refused-x".into(), format!("{REFUSED}token-x")));
    let hub = hub(&config(&upstream.url(), &callers)).await;
    for (round, (caller, _)) in callers.iter().take(3).enumerate() {
        let before = seen(&upstream.seen).len();
        let opened = forwarded(&hub).opened();
        assert_refused(&call_as(&hub, Caller::new("caller-refused-x"), "whoami").await);
        assert_eq!(
            forwarded(&hub).opened(),
            opened,
            "a refused open counted as opened"
        );
        assert_eq!(
            seen(&upstream.seen).len(),
            before,
            "the call reached the upstream"
        );
        // It keeps no place in the table: only the callers of the rounds before have one.
        assert_eq!(forwarded(&hub).open_connections(), round);

        let result = call_as(&hub, Caller::new("caller-nobody"), "whoami").await;
        assert_eq!(result.is_error, Some(true), "{}", text(&result));
        assert!(text(&result).contains("Server `up`"), "{}", text(&result));
        assert_eq!(seen(&upstream.seen).len(), before);

        // A caller's own connection does not see what only the operator sees.
        let result = call_as(&hub, Caller::new(caller.clone()), "operator_only").await;
        assert_eq!(result.is_error, Some(true), "{}", text(&result));
        assert_eq!(seen(&upstream.seen).len(), before);

        let result = call_as(&hub, Caller::anonymous(), "whoami").await;
        assert_eq!(text(&result), OPERATOR);
    }
    hub.stop().await;
}

/// Each caller's connection now, from the table.
async fn peers(hub: &Hub, callers: &[(String, String)]) -> Vec<rmcp::Peer<rmcp::RoleClient>> {
    let mut peers = Vec::new();
    for (caller, _) in callers {
        let peer = forwarded(hub).connection(caller).await;
        peers.push(peer.unwrap_or_else(|| panic!("{caller} has no connection")));
    }
    peers
}

/// Waits until every one of `peers` has seen its connection end (hang guard only).
async fn until_closed(what: &str, peers: &[rmcp::Peer<rmcp::RoleClient>]) {
    until(what, || peers.iter().all(|p| p.is_transport_closed())).await;
}

/// When the main connection ends (the upstream went away) every caller's connection is
/// closed, and after the restart each caller opens a new one. Pings tell the gateway the
/// upstream went away, with a wait far above what a loaded machine needs to answer one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_of_the_main_connection_closes_every_callers_connection() {
    let seen = Seen::default();
    let mut upstream = Upstream::start(None, seen.clone());
    let addr = upstream.addr;
    let callers = callers("restart", 5);
    let hub = hub(&config_with(&upstream.url(), &callers, json!(100), 3_000)).await;
    for round in 0..2u64 {
        for (caller, token) in &callers {
            let result = call_as(&hub, Caller::new(caller.clone()), "whoami").await;
            assert_eq!(text(&result), *token, "round {round}");
        }
        let f = forwarded(&hub);
        assert_eq!(f.open_connections(), callers.len(), "round {round}");
        assert_eq!(f.opened(), (round + 1) * callers.len() as u64);

        upstream.stop();
        wait_until(&hub, false).await;
        assert_eq!(forwarded(&hub).open_connections(), 0, "round {round}");
        let (caller, _) = &callers[0];
        let result = call_as(&hub, Caller::new(caller.clone()), "whoami").await;
        assert!(
            text(&result).contains("is unavailable since"),
            "{}",
            text(&result)
        );

        upstream = Upstream::start(Some(addr), seen.clone());
        wait_until(&hub, true).await;
    }
    // A shutdown closes them too, and waits for them: once it returns, every one has ended.
    for (caller, token) in &callers {
        let result = call_as(&hub, Caller::new(caller.clone()), "whoami").await;
        assert_eq!(text(&result), *token);
    }
    assert_eq!(forwarded(&hub).open_connections(), callers.len());
    let open = peers(&hub, &callers).await;
    assert!(open.iter().all(|p| !p.is_transport_closed()));
    hub.stop().await;
    assert_eq!(forwarded(&hub).open_connections(), 0, "after the shutdown");
    for (peer, (caller, _)) in open.iter().zip(&callers) {
        assert!(
            peer.is_transport_closed(),
            "{caller}: open after the shutdown"
        );
    }
    assert!(!self::seen(&seen).iter().any(|t| t == OPERATOR));
}

/// Closing the callers' connections (what the end of the main connection does) ends each
/// of them, while the upstream is still there to keep them open; the next call of a caller
/// opens a new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_callers_connections_ends_each_of_them() {
    let upstream = Upstream::start(None, Seen::default());
    let all = callers("close", 5);
    let callers = &all[..4];
    let hub = hub(&config(&upstream.url(), &all)).await;
    for round in 0..2u64 {
        for (caller, token) in callers {
            let result = call_as(&hub, Caller::new(caller.clone()), "whoami").await;
            assert_eq!(text(&result), *token, "round {round}");
        }
        let open = peers(&hub, callers).await;
        assert!(
            open.iter().all(|p| !p.is_transport_closed()),
            "round {round}"
        );
        forwarded(&hub).close_all();
        assert_eq!(forwarded(&hub).open_connections(), 0, "round {round}");
        until_closed("a closed connection still open", &open).await;
        // The main connection is still up: let callers open again.
        forwarded(&hub).resume();
    }
    // Closed while it is being opened (the upstream holds its opening): the call is told the
    // server restarts, as any call that finds its connection closed is, and nothing is kept.
    let (caller, token) = all[4].clone();
    let hub_config = hub.clone();
    upstream.gate.hold(&token);
    let call =
        tokio::spawn(async move { call_as(&hub_config, Caller::new(caller), "whoami").await });
    until("the call waiting for its connection", || {
        forwarded(&hub).calls_in_flight() == 1
    })
    .await;
    assert_eq!(forwarded(&hub).open_connections(), 1, "being opened");
    forwarded(&hub).close_all();
    upstream.gate.release(&token);
    let result = call.await.expect("the call ran");
    assert_eq!(result.is_error, Some(true), "{}", text(&result));
    assert!(text(&result).contains("restarts"), "{}", text(&result));
    assert_eq!(forwarded(&hub).open_connections(), 0);
    hub.stop().await;
}

/// With every place taken by a connection whose call is running, a new caller pushes out
/// the one used least recently, and that caller's running call is still answered (its
/// connection closes after); with one place idle, the idle one goes, even when a busy one
/// was used less recently. A refused token pushes no one out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_caller_pushes_out_no_running_call() {
    let upstream = Upstream::start(None, Seen::default());
    let mut callers = callers("busy", MAX_FORWARDED_CONNECTIONS + 2);
    callers.push(("caller-busy-refused".into(), format!("{REFUSED}busy")));
    let hub = hub(&config(&upstream.url(), &callers)).await;
    let name = |i: usize| callers[i].0.clone();
    let (x, y, refused) = (
        MAX_FORWARDED_CONNECTIONS,
        MAX_FORWARDED_CONNECTIONS + 1,
        MAX_FORWARDED_CONNECTIONS + 2,
    );
    // Callers 0..MAX in order: caller 1 idle, every other one with a call running.
    let mut running = tokio::task::JoinSet::new();
    let mut shouting = 0;
    let mut shout = async |i: usize| {
        let before = seen(&upstream.seen).len();
        let hub = hub.clone();
        let caller = name(i);
        running.spawn(async move { (i, call_as(&hub, Caller::new(caller), "shout").await) });
        shouting += 1;
        until("the call reaching the upstream", || {
            seen(&upstream.seen).len() == before + 1
        })
        .await;
    };
    for i in 0..MAX_FORWARDED_CONNECTIONS {
        if i == 1 {
            let result = call_as(&hub, Caller::new(name(1)), "whoami").await;
            assert_eq!(text(&result), callers[1].1);
        } else {
            shout(i).await;
        }
    }
    let f = forwarded(&hub);
    assert_eq!(f.open_connections(), MAX_FORWARDED_CONNECTIONS);
    let first = f.connection(&name(0)).await.expect("caller 0's connection");

    // A refused token takes no place: every connection stays.
    assert_refused(&call_as(&hub, Caller::new(name(refused)), "whoami").await);
    assert_eq!(f.open_connections(), MAX_FORWARDED_CONNECTIONS);
    assert!(f.connection(&name(1)).await.is_some(), "the idle one went");

    // One idle: it goes, not caller 0 (used less recently, but busy).
    let result = call_as(&hub, Caller::new(name(x)), "whoami").await;
    assert_eq!(text(&result), callers[x].1);
    assert!(
        f.connection(&name(1)).await.is_none(),
        "the idle one stayed"
    );
    assert!(f.connection(&name(0)).await.is_some(), "a busy one went");
    // Caller x has a call running too now: every place is busy.
    shout(x).await;
    // All busy: the least recently used (caller 0) goes, its call still running.
    let result = call_as(&hub, Caller::new(name(y)), "whoami").await;
    assert_eq!(text(&result), callers[y].1);
    assert_eq!(f.open_connections(), MAX_FORWARDED_CONNECTIONS);
    assert!(f.connection(&name(0)).await.is_none(), "caller 0 stayed");
    assert!(!first.is_transport_closed(), "closed under a running call");

    upstream.release.add_permits(shouting);
    while let Some(done) = running.join_next().await {
        let (i, result) = done.expect("the call ran");
        assert_ne!(result.is_error, Some(true), "caller {i}: {}", text(&result));
        assert_eq!(text(&result), callers[i].1, "caller {i}");
    }
    // Its last call answered, caller 0's pushed-out connection ends.
    until_closed(
        "a pushed-out connection still open",
        std::slice::from_ref(&first),
    )
    .await;
    hub.stop().await;
}

/// The gateway binary serving HTTP, with callers' tokens in front of a forwarding server.
struct Gateway {
    _child: tokio::process::Child,
    url: String,
    _config: TempFile,
}

struct TempFile(std::path::PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_dir_all(self.0.with_extension("state"));
    }
}

async fn gateway(config_text: &str, tag: &str) -> Gateway {
    let path = std::env::temp_dir().join(format!(
        "disco-forward-token-{}-{tag}.json",
        std::process::id()
    ));
    std::fs::write(&path, config_text).expect("the configuration file");
    let file = TempFile(path);
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_disco-gateway"))
        .arg("--config")
        .arg(&file.0)
        .args(["--http", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        // The tool pins beside the configuration, never in the user's own state.
        .env("XDG_STATE_HOME", file.0.with_extension("state"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the gateway runs");
    let url = support::listening_url(&mut child, GUARD).await;
    Gateway {
        _child: child,
        url,
        _config: file,
    }
}

/// A downstream client that keeps the log messages it is sent.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<Value>>>);

impl Logs {
    fn all(&self) -> Vec<Value> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl rmcp::ClientHandler for Logs {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(params.data);
    }
}

type Client = rmcp::service::RunningService<rmcp::RoleClient, Logs>;

async fn client(url: &str, token: &str) -> Client {
    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token);
    // The test's own HTTP client, beside the gateway's.
    disco_gateway::install_tls();
    let transport = StreamableHttpClientTransport::from_config(config);
    tokio::time::timeout(GUARD, Logs::default().serve(transport))
        .await
        .expect("hang guard")
        .expect("the client connects")
}

async fn call(client: &Client, tool: &str) -> CallToolResult {
    let call = client
        .peer()
        .call_tool(CallToolRequestParams::new(tool.to_string()));
    tokio::time::timeout(GUARD, call)
        .await
        .expect("hang guard")
        .expect("an answer")
}

/// Through the binary: many callers (a few, and more than the bound), calls in generated
/// order, eight at a time, each answered with its own caller's token; the catalog is the
/// operator's; a refused token is a tool error naming the server; the upstream never sees
/// the operator's token on a call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_gateway_each_call_reaches_the_upstream_with_its_callers_token() {
    let upstream = Upstream::start(None, Seen::default());
    for (seed, count) in [(7u64, 3usize), (8, MAX_FORWARDED_CONNECTIONS + 6)] {
        let tag = format!("gw{seed}");
        let mut callers = callers(&tag, count);
        callers.push((format!("caller-{tag}-refused"), format!("{REFUSED}{tag}")));
        let gateway = gateway(&config(&upstream.url(), &callers), &tag).await;
        let mut clients = Vec::new();
        for (_, token) in &callers {
            clients.push(Arc::new(client(&gateway.url, token).await));
        }
        let refused = clients.pop().expect("the refused caller");

        // The catalog comes from the operator's connection: it has the operator's tool.
        let listed = clients[0]
            .peer()
            .list_all_tools()
            .await
            .expect("tools/list");
        let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
        assert!(names.contains(&"up.whoami"), "{names:?}");
        assert!(names.contains(&"up.operator_only"), "{names:?}");

        let before = seen(&upstream.seen).len();
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut made: HashMap<String, usize> = HashMap::new();
        for _batch in 0..count / 2 + 4 {
            let mut calls = tokio::task::JoinSet::new();
            for _ in 0..8 {
                let i = rng.usize(..count);
                let client = clients[i].clone();
                let token = callers[i].1.clone();
                *made.entry(token.clone()).or_default() += 1;
                calls.spawn(async move { (call(&client, "up.whoami").await, token) });
            }
            while let Some(done) = calls.join_next().await {
                let (result, token) = done.expect("the call ran");
                assert_ne!(result.is_error, Some(true), "{}", text(&result));
                assert_eq!(text(&result), token);
            }
        }
        // Every caller once more, in order: those pushed out come back with their own token.
        for (i, (_, token)) in callers.iter().take(count).enumerate() {
            *made.entry(token.clone()).or_default() += 1;
            assert_eq!(text(&call(&clients[i], "up.whoami").await), *token);
        }
        let mut reached: HashMap<String, usize> = HashMap::new();
        for token in &seen(&upstream.seen)[before..] {
            *reached.entry(token.clone()).or_default() += 1;
        }
        assert_eq!(reached, made, "what the upstream saw, token by token");

        assert_refused(&call(&refused, "up.whoami").await);

        let result = call(&clients[0], "up.operator_only").await;
        assert_eq!(result.is_error, Some(true), "{}", text(&result));
        assert!(!seen(&upstream.seen).iter().any(|t| t == OPERATOR));
    }
}

/// A log message an upstream sends on a caller's own connection reaches that caller alone:
/// with the calls of several callers in flight at once, each client hears its own caller's
/// message and no other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_messages_of_a_callers_connection_reach_that_caller_alone() {
    let upstream = Upstream::start(None, Seen::default());
    let callers = callers("logs", 4);
    let gateway = gateway(&config(&upstream.url(), &callers), "logs").await;
    let mut clients = Vec::new();
    for (_, token) in &callers {
        clients.push(Arc::new(client(&gateway.url, token).await));
    }
    let mut calls = tokio::task::JoinSet::new();
    for client in &clients {
        let client = client.clone();
        calls.spawn(async move { call(&client, "up.shout").await });
    }
    let heard = |client: &Client| -> Vec<String> {
        let logs = client.service().all();
        let from = logs.iter().filter_map(|l| l["data"]["from"].as_str());
        from.map(str::to_string).collect()
    };
    // Every call is in flight until each client heard its own caller's message.
    until("a caller never heard its own log message", || {
        let mut each = clients.iter().zip(&callers);
        each.all(|(c, (_, token))| heard(c).contains(token))
    })
    .await;
    for (client, (caller, token)) in clients.iter().zip(&callers) {
        assert_eq!(
            heard(client),
            std::slice::from_ref(token),
            "{caller}: {:?}",
            client.service().all()
        );
    }
    upstream.release.add_permits(callers.len());
    while let Some(done) = calls.join_next().await {
        let result = done.expect("the call ran");
        assert_ne!(result.is_error, Some(true), "{}", text(&result));
    }
}

/// Calls on the callers' connections count as calls in flight on the server, in the count
/// the ping rule reads (an unanswered ping is excused while they run, as it is for calls on
/// the main connection; the rule itself is tested in upstream/tests.rs), from their start to their
/// end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_on_callers_connections_count_as_calls_in_flight() {
    let upstream = Upstream::start(None, Seen::default());
    let callers = callers("inflight", 5);
    let hub = hub(&config(&upstream.url(), &callers)).await;
    let mut calls = tokio::task::JoinSet::new();
    for (caller, _) in &callers {
        let hub = hub.clone();
        let caller = caller.clone();
        calls.spawn(async move { call_as(&hub, Caller::new(caller), "shout").await });
    }
    until("the calls reaching the upstream", || {
        seen(&upstream.seen).len() == callers.len()
    })
    .await;
    assert_eq!(forwarded(&hub).calls_in_flight(), callers.len());
    // What the ping rule reads.
    assert_eq!(hub.upstreams()[0].calls_in_flight(), callers.len());
    upstream.release.add_permits(callers.len());
    while let Some(done) = calls.join_next().await {
        assert_ne!(done.expect("the call ran").is_error, Some(true));
    }
    assert_eq!(forwarded(&hub).calls_in_flight(), 0);
    assert_eq!(hub.upstreams()[0].calls_in_flight(), 0);
    hub.stop().await;
}
