//! The upstream servers, each kept alive by its own task: connect (a child process over stdio,
//! or Streamable HTTP) through rmcp's client, list every tool page, follow `list_changed`,
//! and on a crash log the stderr tail and restart with capped exponential backoff. Whatever
//! an upstream does, the others and the downstream side are not disturbed: every wait on it is
//! bounded, and its tools leave the catalog while it is down.

// Logging notifications are deprecated by SEP-2577 but still sent by servers of every era.
#![allow(deprecated)]

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use disco_runtime::rmcp;
use disco_runtime::Context;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientCapabilities, ClientConfig, ClientRequest, ContentBlock, Implementation,
    LoggingMessageNotificationParam, NumberOrString, ProgressNotificationParam, ProgressToken,
    ResultType, ServerResult, Tool,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::AsyncBufReadExt;
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;

use crate::config::{DiscoConfig, ServerConfig, Transport};

/// How many lines of an upstream's stderr are kept for the log of its crash.
const STDERR_TAIL_LINES: usize = 20;
/// A run this long resets the restart backoff.
const HEALTHY_RUN: Duration = Duration::from_secs(60);
/// How long a shutdown waits for an upstream to close before its process group is killed.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// Where an upstream is in its life.
#[derive(Clone, Debug)]
pub enum Status {
    Starting,
    Ready,
    /// Stopped or failed to start; being restarted. The reason is for the log and errors.
    Down(String),
}

struct Live {
    status: Status,
    peer: Option<Peer<RoleClient>>,
    /// What it served when it was last up: kept while it is down, so that a call to one of
    /// them gets an answer naming the server instead of "unknown tool".
    tools: Arc<Vec<Tool>>,
}

/// One upstream server.
pub struct Upstream {
    pub config: ServerConfig,
    live: RwLock<Live>,
    /// Calls in flight, by a number of their own: where log messages go.
    calls: Mutex<HashMap<u64, Context>>,
    /// Calls in flight that asked for progress, by the progress token rmcp sent upstream.
    progress: Mutex<HashMap<u64, Context>>,
    next_call: AtomicU64,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The process group of the child being started, so that a shutdown during its start-up
    /// still ends it.
    starting_group: Mutex<Group>,
}

/// Everything the upstream tasks share with the provider.
pub struct Hub {
    pub upstreams: Vec<Arc<Upstream>>,
    pub disco: DiscoConfig,
    /// Signalled whenever an upstream's tools change (joined, left, relisted).
    pub changed: Notify,
    /// Upstreams whose first start-up attempt has ended, one way or the other.
    settled: AtomicUsize,
    settled_notify: Notify,
    pub shutdown: CancellationToken,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Hub {
    pub fn new(servers: Vec<ServerConfig>, disco: DiscoConfig) -> Arc<Hub> {
        Arc::new(Hub {
            upstreams: servers
                .into_iter()
                .map(|config| {
                    Arc::new(Upstream {
                        config,
                        live: RwLock::new(Live {
                            status: Status::Starting,
                            peer: None,
                            tools: Arc::new(Vec::new()),
                        }),
                        calls: Mutex::new(HashMap::new()),
                        progress: Mutex::new(HashMap::new()),
                        next_call: AtomicU64::new(1),
                        stderr: Arc::new(Mutex::new(VecDeque::new())),
                        starting_group: Mutex::new(None),
                    })
                })
                .collect(),
            disco,
            changed: Notify::new(),
            settled: AtomicUsize::new(0),
            settled_notify: Notify::new(),
            shutdown: CancellationToken::new(),
            tasks: Mutex::new(Vec::new()),
        })
    }

    /// Starts every upstream at once.
    pub fn start(self: &Arc<Self>) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        for (i, _) in self.upstreams.iter().enumerate() {
            let hub = self.clone();
            tasks.push(tokio::spawn(async move { supervise(hub, i).await }));
        }
    }

    /// Waits until every upstream has listed its tools or failed its first start, or until
    /// `timeout`; returns the names of those still starting.
    pub async fn settle(&self, timeout: Duration) -> Vec<String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.settled_notify.notified();
            if self.settled.load(Ordering::SeqCst) >= self.upstreams.len() {
                break;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break;
            }
        }
        self.upstreams
            .iter()
            .filter(|u| matches!(u.status(), Status::Starting))
            .map(|u| u.config.name.clone())
            .collect()
    }

    fn settle_one(&self) {
        self.settled.fetch_add(1, Ordering::SeqCst);
        self.settled_notify.notify_waiters();
    }

    /// Ends every upstream: closes its connection, ends and reaps its child process.
    pub async fn stop(&self) {
        self.shutdown.cancel();
        let tasks: Vec<_> =
            std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|e| e.into_inner()));
        for task in tasks {
            let _ = tokio::time::timeout(SHUTDOWN_WAIT * 2, task).await;
        }
    }
}

impl Upstream {
    pub fn status(&self) -> Status {
        self.live
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .status
            .clone()
    }

    /// The tools it serves when up, or served when last up, and whether it is up.
    pub fn tools(&self) -> (Arc<Vec<Tool>>, bool) {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        (live.tools.clone(), live.peer.is_some())
    }

    /// Up, with its tools.
    fn set_up(&self, peer: Peer<RoleClient>, tools: Vec<Tool>) {
        let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
        live.status = Status::Ready;
        live.peer = Some(peer);
        live.tools = Arc::new(tools);
    }

    /// Down: its last tools are kept (hidden by the provider).
    fn set_down(&self, reason: String) {
        let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
        live.status = Status::Down(reason);
        live.peer = None;
    }

    fn stderr_tail(&self) -> String {
        let lines = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        if lines.is_empty() {
            "(nothing on stderr)".to_string()
        } else {
            lines.iter().cloned().collect::<Vec<_>>().join("\n")
        }
    }

    /// Forwards one call; the result comes back unchanged. Never hangs on a dead upstream: a
    /// closed transport ends the request with an error, and the catalog's per-call timeout
    /// bounds the rest (dropping this future sends `notifications/cancelled` upstream).
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        ctx: Context,
    ) -> CallToolResult {
        let name = &self.config.name;
        let (peer, status) = {
            let live = self.live.read().unwrap_or_else(|e| e.into_inner());
            (live.peer.clone(), live.status.clone())
        };
        let Some(peer) = peer else {
            let why = match status {
                Status::Down(reason) => format!("it stopped ({reason}) and is being restarted"),
                _ => "it is still starting".to_string(),
            };
            return error(format!(
                "Server `{name}` is not available: {why}. Try again shortly."
            ));
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // rmcp gives every request a progress token of its own: the handle says which, and
        // the upstream's progress on it is passed to this call's client.
        let handle = match peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => return error(format!("Server `{name}` could not be sent `{tool}`: {e}")),
        };
        let mut abandoned = Abandoned {
            peer: peer.clone(),
            id: Some(handle.id.clone()),
        };
        let _progress = ctx.wants_progress().then(|| {
            CallGuard::new(
                &self.progress,
                token_key(&handle.progress_token),
                ctx.clone(),
            )
        });
        let _logs = CallGuard::new(
            &self.calls,
            self.next_call.fetch_add(1, Ordering::Relaxed),
            ctx,
        );
        let response = handle.await_response().await;
        abandoned.id = None;
        match response {
            Ok(ServerResult::CallToolResult(mut result)) => {
                // An upstream of an older protocol era sends no `resultType`, which means
                // "complete" (SEP-2322); a 2026-07-28 client needs it said. rmcp strips it again
                // for clients of the older eras.
                result.result_type.get_or_insert(ResultType::COMPLETE);
                result
            }
            Ok(_) => error(format!(
                "Server `{name}` answered `{tool}` with something other than a tool result."
            )),
            Err(e) => {
                tracing::warn!(server = %name, tool = %tool, error = %e, "upstream call failed");
                error(format!("Server `{name}` could not run `{tool}`: {e}"))
            }
        }
    }
}

/// The key of a progress token in [`Upstream::calls`]: rmcp's tokens are numbers.
fn token_key(token: &ProgressToken) -> u64 {
    match &token.0 {
        NumberOrString::Number(n) => *n as u64,
        NumberOrString::String(s) => {
            // Not rmcp's form; kept apart from the numbers by the top bit.
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            s.hash(&mut h);
            h.finish() | (1 << 63)
        }
    }
}

/// Sends `notifications/cancelled` upstream when a call is dropped before its answer (the
/// client cancelled, or the call timed out).
struct Abandoned {
    peer: Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let reason = Some("the gateway's caller abandoned the call".to_string());
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                    .await;
            });
        }
    }
}

/// Keeps a call's context where the upstream's progress and log messages can reach it, for
/// as long as the call runs (also when it is dropped: cancelled or timed out).
struct CallGuard<'a> {
    map: &'a Mutex<HashMap<u64, Context>>,
    key: u64,
}

impl<'a> CallGuard<'a> {
    fn new(map: &'a Mutex<HashMap<u64, Context>>, key: u64, ctx: Context) -> Self {
        map.lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, ctx);
        CallGuard { map, key }
    }
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.key);
    }
}

fn error(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// rmcp's client side of one connection: hears list changes, progress and log messages.
struct Client {
    upstream: Arc<Upstream>,
    relist: mpsc::UnboundedSender<()>,
}

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.relist.send(());
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let ctx = self
            .upstream
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&token_key(&params.progress_token))
            .cloned();
        if let Some(ctx) = ctx {
            let _ = ctx
                .progress(params.progress, params.total, params.message)
                .await;
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // A log message belongs to no request: it goes to the clients whose calls are running
        // on this upstream now (each client's own logging level applies).
        let contexts: Vec<Context> = self
            .upstream
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        tracing::debug!(server = %self.upstream.config.name, "log message from upstream");
        let data = match params.logger {
            Some(logger) => serde_json::json!({
                "server": self.upstream.config.name,
                "logger": logger,
                "data": params.data,
            }),
            None => serde_json::json!({"server": self.upstream.config.name, "data": params.data}),
        };
        for ctx in contexts {
            let _ = ctx.log(params.level, data.clone()).await;
        }
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("disco-gateway", env!("CARGO_PKG_VERSION")),
        )
    }
}

type Running = RunningService<RoleClient, Client>;

/// Why a connection ended.
enum End {
    Shutdown,
    Closed(String),
}

async fn supervise(hub: Arc<Hub>, index: usize) {
    let upstream = hub.upstreams[index].clone();
    let name = upstream.config.name.clone();
    let mut backoff = hub.disco.restart_initial;
    let mut first = true;
    loop {
        if hub.shutdown.is_cancelled() {
            break;
        }
        let started = Instant::now();
        let outcome = tokio::select! {
            r = connect(&hub, &upstream) => Some(r),
            _ = hub.shutdown.cancelled() => None,
        };
        let starting = upstream
            .starting_group
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(outcome) = outcome else {
            kill_group(starting);
            break;
        };
        match outcome {
            Ok((running, relist, group)) => {
                if first {
                    hub.settle_one();
                    first = false;
                }
                let end = watch(&hub, &upstream, running, relist).await;
                upstream.set_down(match &end {
                    End::Shutdown => "shut down".into(),
                    End::Closed(why) => why.clone(),
                });
                hub.changed.notify_one();
                kill_group(group);
                match end {
                    End::Shutdown => break,
                    End::Closed(why) => {
                        if started.elapsed() >= HEALTHY_RUN {
                            backoff = hub.disco.restart_initial;
                        }
                        tracing::error!(
                            server = %name,
                            reason = %why,
                            restart_in_ms = backoff.as_millis() as u64,
                            stderr_tail = %upstream.stderr_tail(),
                            "upstream stopped; its tools leave the catalog until it is back"
                        );
                    }
                }
            }
            Err((why, group)) => {
                kill_group(group);
                upstream.set_down(why.clone());
                if first {
                    hub.settle_one();
                    first = false;
                }
                tracing::error!(
                    server = %name,
                    reason = %why,
                    restart_in_ms = backoff.as_millis() as u64,
                    stderr_tail = %upstream.stderr_tail(),
                    "upstream failed to start"
                );
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = hub.shutdown.cancelled() => break,
        }
        backoff = (backoff * 2).min(hub.disco.restart_max);
    }
}

/// A child's process group, to end whatever it started when it goes.
type Group = Option<u32>;

/// Connects, initializes and lists every tool page, all within the start-up timeout.
async fn connect(
    hub: &Hub,
    upstream: &Arc<Upstream>,
) -> Result<(Running, mpsc::UnboundedReceiver<()>, Group), (String, Group)> {
    let (tx, rx) = mpsc::unbounded_channel();
    let client = Client {
        upstream: upstream.clone(),
        relist: tx,
    };
    let timeout = hub.disco.startup_timeout;
    let (running, group) = match &upstream.config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).envs(env);
            if let Some(dir) = cwd {
                cmd.current_dir(dir);
            }
            // Its own process group: `npx` and shell wrappers start the server as a
            // grandchild, which must end with it.
            #[cfg(unix)]
            cmd.process_group(0);
            cmd.kill_on_drop(true);
            let (transport, stderr) = crate::wire::ChildStdio::spawn(cmd)
                .map_err(|e| (format!("cannot run `{command}`: {e}"), None))?;
            let group = transport.id();
            *upstream
                .starting_group
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = group;
            upstream
                .stderr
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
            if let Some(stderr) = stderr {
                tokio::spawn(read_stderr(
                    upstream.config.name.clone(),
                    stderr,
                    upstream.stderr.clone(),
                ));
            }
            match tokio::time::timeout(timeout, client.serve(transport)).await {
                Ok(Ok(running)) => (running, group),
                Ok(Err(e)) => return Err((format!("initialization failed: {e}"), group)),
                Err(_) => {
                    return Err((
                        format!("did not initialize within {} ms", timeout.as_millis()),
                        group,
                    ))
                }
            }
        }
        Transport::Http { url, headers } => {
            let mut map = HashMap::new();
            for (k, v) in headers {
                let name = http::HeaderName::from_bytes(k.as_bytes())
                    .map_err(|_| (format!("header `{k}` is not a valid header name"), None))?;
                // The value is a secret: the error names the header only.
                let value = http::HeaderValue::from_str(v)
                    .map_err(|_| (format!("the value of header `{k}` is not valid"), None))?;
                map.insert(name, value);
            }
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(map);
            let transport = StreamableHttpClientTransport::from_config(config);
            match tokio::time::timeout(timeout, client.serve(transport)).await {
                Ok(Ok(running)) => (running, None),
                Ok(Err(e)) => return Err((format!("initialization failed: {e}"), None)),
                Err(_) => {
                    return Err((
                        format!("did not initialize within {} ms", timeout.as_millis()),
                        None,
                    ))
                }
            }
        }
    };
    let tools = match tokio::time::timeout(timeout, running.peer().list_all_tools()).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) => {
            let _ = running.cancel().await;
            return Err((format!("tools/list failed: {e}"), group));
        }
        Err(_) => {
            let _ = running.cancel().await;
            return Err((
                format!("did not list its tools within {} ms", timeout.as_millis()),
                group,
            ));
        }
    };
    tracing::info!(server = %upstream.config.name, tools = tools.len(), "upstream ready");
    upstream.set_up(running.peer().clone(), tools);
    hub.changed.notify_one();
    Ok((running, rx, group))
}

/// Serves one connection until it closes or the gateway shuts down; relists on list_changed.
async fn watch(
    hub: &Hub,
    upstream: &Upstream,
    running: Running,
    mut relist: mpsc::UnboundedReceiver<()>,
) -> End {
    let peer = running.peer().clone();
    let cancel = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    loop {
        tokio::select! {
            done = &mut waiting => {
                return End::Closed(match done {
                    Ok(reason) => format!("the connection ended ({reason:?})"),
                    Err(e) => format!("its connection task failed: {e}"),
                });
            }
            Some(()) = relist.recv() => {
                while relist.try_recv().is_ok() {}
                match tokio::time::timeout(hub.disco.startup_timeout, peer.list_all_tools()).await {
                    Ok(Ok(tools)) => {
                        tracing::info!(server = %upstream.config.name, tools = tools.len(), "upstream tools changed");
                        upstream.set_up(peer.clone(), tools);
                        hub.changed.notify_one();
                    }
                    Ok(Err(e)) => tracing::warn!(server = %upstream.config.name, error = %e, "relisting tools failed"),
                    Err(_) => tracing::warn!(server = %upstream.config.name, "relisting tools timed out"),
                }
            }
            _ = hub.shutdown.cancelled() => {
                cancel.cancel();
                let _ = tokio::time::timeout(SHUTDOWN_WAIT, &mut waiting).await;
                return End::Shutdown;
            }
        }
    }
}

/// Ends what is left of a child's process group (rmcp ends and reaps the child itself).
fn kill_group(group: Group) {
    #[cfg(unix)]
    if let Some(pid) = group.and_then(|p| i32::try_from(p).ok()).filter(|&p| p > 1) {
        // SAFETY: kill(2) with a negative pid signals the process group `pid`, which the
        // child leads (`process_group(0)`); no memory is involved.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = group;
}

async fn read_stderr(
    server: String,
    stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line: String = line.chars().take(500).collect();
        tracing::debug!(server = %server, line = %line, "upstream stderr");
        let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
        if tail.len() >= STDERR_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}
