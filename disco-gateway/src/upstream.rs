//! The upstream servers, each kept alive by its own task: connect (a child process over stdio,
//! or Streamable HTTP) through rmcp's client, list every tool page, follow `list_changed`,
//! and on a crash log the stderr tail and restart with capped exponential backoff. Whatever
//! an upstream does, the others and the downstream side are not disturbed: every wait on it is
//! bounded, and its tools leave the catalog while it is down.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use disco_runtime::rmcp;
use disco_runtime::util;
use disco_runtime::Context;
use rmcp::model::{CallToolResult, ClientRequest, PingRequest, ServerResult};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Map, Value};
use tokio::io::AsyncBufReadExt;
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;

use crate::admit::{self, Admitted};
use crate::call::{call_on, error, Calls, Connection};
use crate::client::{self, Endpoint, Role, Running};
use crate::config::{DiscoConfig, Labels, OnChange, ServerConfig, Transport};
use crate::forward::Forwarded;
use crate::headers::header_map;
use crate::pins::{Pins, Review, Sha, Waiting, Why};
use crate::relay::Heard;

/// How many lines of an upstream's stderr are kept for the log of its crash.
const STDERR_TAIL_LINES: usize = 20;
/// A run this long resets the restart backoff.
const HEALTHY_RUN: Duration = Duration::from_secs(60);
/// How long a shutdown waits for an upstream to close before its process group is killed.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);
/// The least time one start of an upstream (spawn, initialize, every tool page) is given
/// before it is stopped and tried again, whatever `disco.startupTimeoutMs` says: that setting
/// is how long the gateway waits before serving, and an upstream still starting then joins
/// when it is ready. A first `npx -y` downloads its package, which takes tens of seconds on a
/// slow network, and a download stopped half-way leaves npm's cache broken for every later
/// start.
pub const START_ATTEMPT_FLOOR: Duration = Duration::from_secs(120);

/// How long one start of an upstream is given: [`START_ATTEMPT_FLOOR`], or
/// `disco.startupTimeoutMs` when that is longer.
pub fn start_attempt(disco: &DiscoConfig) -> Duration {
    disco.startup_timeout.max(START_ATTEMPT_FLOOR)
}
/// How often the gateway looks for an approval made by `disco-gateway approve` (another
/// process) while a tool waits for one: a pin file's time and length, read once a second.
const PIN_POLL: Duration = Duration::from_secs(1);
/// This many pings in a row without an answer, and an upstream is taken for hung: its
/// connection is closed and it is restarted like one that crashed. One miss may be a pause
/// (a garbage collection, a swap); two are not.
const MISSED_PINGS: u32 = 2;

/// Where an upstream is in its life.
#[derive(Clone, Debug)]
pub enum Status {
    /// Its first start is under way.
    Starting,
    Ready,
    /// Stopped or failed to start; being restarted.
    Down(Outage),
}

/// Why and since when an upstream is down, and when it is next started: what a call to one of
/// its tools and `disco://status` tell.
#[derive(Clone, Debug)]
pub struct Outage {
    /// For the log and the callers (an upstream's text in it is clipped where it is read).
    pub reason: String,
    /// When it went down: the run that ended, or the first of the starts that failed since.
    pub since: Instant,
    /// The same moment on the wall clock, for the callers.
    pub since_utc: chrono::DateTime<chrono::Utc>,
    /// When its next start begins; `None` while a start is under way.
    pub next_start: Option<Instant>,
}

impl Outage {
    /// What a caller of one of its tools is told: the server, since when it is down and why,
    /// and when it is next started.
    pub fn message(&self, server: &str, now: Instant) -> String {
        let next = match self.next_start {
            Some(at) if at > now => format!(
                "its next start is in {}",
                span(at.saturating_duration_since(now), true)
            ),
            _ => "a start is under way now".into(),
        };
        format!(
            "Server `{server}` is unavailable since {} ({} ago): {}; {next}. Try again then.",
            self.since_utc
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            span(now.saturating_duration_since(self.since), false),
            crate::text::clip(&self.reason, MAX_REASON_CHARS),
        )
    }
}

/// The most characters of the reason an upstream is down that a caller is shown.
const MAX_REASON_CHARS: usize = 300;

/// A span of time as a person reads it: seconds, minutes past two minutes, hours past two
/// hours; rounded up when it is a wait (`3 s` is never a wait of 3.4 s), down when it is past.
fn span(d: Duration, wait: bool) -> String {
    let secs = if wait && d.subsec_nanos() > 0 {
        d.as_secs() + 1
    } else {
        d.as_secs()
    };
    match secs {
        0..120 => format!("{secs} s"),
        120..7_200 => format!("{} min", secs / 60),
        _ => format!("{} h", secs / 3_600),
    }
}

struct Live {
    status: Status,
    /// Its connection while it is up: rmcp's peer, and a stdio upstream's way for
    /// `tools/call` beside rmcp's loop on the same connection, set and cleared together.
    conn: Option<Connection>,
    /// What it served when it was last up, with the tools its last listing left out: kept
    /// while it is down, so that a call to one of them gets an answer naming the server
    /// instead of "unknown tool".
    listed: Arc<Admitted>,
    /// Its tools whose definitions wait for approval (pins.rs), by the upstream's name.
    waiting: Arc<BTreeMap<String, Waiting>>,
}

/// One upstream server.
pub struct Upstream {
    pub config: ServerConfig,
    live: RwLock<Live>,
    /// Calls in flight on the main connection.
    calls: Arc<Calls>,
    /// With `forwardToken`: each caller's own connection.
    forwarded: Option<Forwarded>,
    /// When its connection last read anything from it.
    heard: Arc<Heard>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The process group of the child being started, so that a shutdown during its start-up
    /// still ends it.
    starting_group: Mutex<Group>,
    /// The waiting definitions whose diff this process has logged, so that a relisting logs
    /// only what is new.
    logged: Mutex<HashMap<String, Sha>>,
    /// The pin file as the last review read it (its time and length): one written since is an
    /// approval to take.
    pin_stamp: Mutex<Option<(std::time::SystemTime, u64)>>,
    /// Ends this upstream alone (a configuration reload removed or changed it); a child of the
    /// hub's shutdown.
    stop: CancellationToken,
    /// Its starts after the first: restarts after a crash, a hang or a failed start.
    restarts: AtomicU64,
    /// Its calls act as the user signed in with `disco-gateway login` (upstream/signin.rs).
    signed_in: std::sync::atomic::AtomicBool,
}

/// Everything the upstream tasks share with the provider.
pub struct Hub {
    /// In the configuration's order; replaced whole by a reload (upstream/reload.rs).
    upstreams: RwLock<Arc<[Arc<Upstream>]>>,
    /// The `disco` section as read at start, but for its aliases and keywords: those are
    /// followed while the gateway serves, and are [`Hub::labels`]' alone (empty here).
    pub disco: DiscoConfig,
    /// The operator's aliases and keywords now (`disco.aliases`, `disco.keywords`): replaced
    /// whole when the configuration is read again (follow.rs).
    labels: RwLock<Arc<Labels>>,
    /// One token per caller, for the servers that forward them.
    tokens: Arc<HashMap<String, String>>,
    /// Signalled whenever an upstream's tools change (joined, left, relisted, approved).
    pub changed: Notify,
    /// How many changes there have been: a catalog built after reading it has every change up
    /// to it, and one signalled before needs no rebuild.
    generation: AtomicU64,
    /// Upstreams whose first start-up attempt has ended, one way or the other.
    settled: AtomicUsize,
    settled_notify: Notify,
    pub shutdown: CancellationToken,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The tool pins (pins.rs); `None`: every definition is served as listed.
    pub pins: Option<Pins>,
}

impl Hub {
    /// Upstreams whose definitions are served as listed, unpinned.
    pub fn new(servers: Vec<ServerConfig>, disco: DiscoConfig) -> Arc<Hub> {
        Hub::pinned(servers, disco, None)
    }

    /// Upstreams whose tool definitions are reviewed against `pins`.
    pub fn pinned(
        servers: Vec<ServerConfig>,
        mut disco: DiscoConfig,
        pins: Option<Pins>,
    ) -> Arc<Hub> {
        let labels = Labels {
            aliases: std::mem::take(&mut disco.aliases),
            keywords: std::mem::take(&mut disco.keywords),
        };
        let shutdown = CancellationToken::new();
        // One token per caller when any server forwards (the configuration checks it).
        let tokens: Arc<HashMap<String, String>> = Arc::new(
            disco
                .tokens
                .iter()
                .map(|t| (t.caller.clone(), t.token.clone()))
                .collect(),
        );
        let upstreams = servers
            .into_iter()
            .map(|config| Upstream::new(config, &disco, &tokens, &shutdown))
            .collect();
        Arc::new(Hub {
            upstreams: RwLock::new(upstreams),
            labels: RwLock::new(Arc::new(labels)),
            disco,
            tokens,
            changed: Notify::new(),
            generation: AtomicU64::new(0),
            settled: AtomicUsize::new(0),
            settled_notify: Notify::new(),
            shutdown,
            tasks: Mutex::new(Vec::new()),
            pins,
        })
    }

    /// The upstreams now, in the configuration's order.
    pub fn upstreams(&self) -> Arc<[Arc<Upstream>]> {
        util::read(&self.upstreams).clone()
    }

    /// Starts every upstream at once.
    pub fn start(self: &Arc<Self>) {
        let mut tasks = util::lock(&self.tasks);
        for upstream in self.upstreams().iter() {
            let hub = self.clone();
            let upstream = upstream.clone();
            tasks.push(tokio::spawn(async move { supervise(hub, upstream).await }));
        }
        if self.pins.as_ref().is_some_and(Pins::writable) {
            let hub = self.clone();
            tasks.push(tokio::spawn(async move { watch_pins(hub).await }));
        }
    }

    /// Waits until every upstream has listed its tools or failed its first start, or until
    /// `timeout`; returns the names of those still starting.
    pub async fn settle(&self, timeout: Duration) -> Vec<String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.settled_notify.notified();
            if self.settled.load(Ordering::SeqCst) >= self.upstreams().len() {
                break;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break;
            }
        }
        self.upstreams()
            .iter()
            .filter(|u| matches!(u.status(), Status::Starting))
            .map(|u| u.config.name.clone())
            .collect()
    }

    /// An upstream's tools changed: counted, and the catalog's rebuilder woken.
    fn change(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_one();
    }

    /// The count of changes so far (see [`Hub::change`]).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    fn settle_one(&self) {
        self.settled.fetch_add(1, Ordering::SeqCst);
        self.settled_notify.notify_waiters();
    }

    /// Ends every upstream: closes its connection, ends and reaps its child process.
    pub async fn stop(&self) {
        self.shutdown.cancel();
        let tasks: Vec<_> = std::mem::take(&mut *util::lock(&self.tasks));
        for task in tasks {
            let _ = tokio::time::timeout(SHUTDOWN_WAIT * 2, task).await;
        }
        // The callers' connections were closed with the main ones; their ends (rmcp's
        // session DELETE) are sent before this returns.
        let deadline = tokio::time::Instant::now() + SHUTDOWN_WAIT;
        for forwarded in self.upstreams().iter().filter_map(|u| u.forwarded.as_ref()) {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            forwarded.wait_closed(left).await;
        }
    }
}

impl Upstream {
    fn new(
        config: ServerConfig,
        disco: &DiscoConfig,
        tokens: &Arc<HashMap<String, String>>,
        shutdown: &CancellationToken,
    ) -> Arc<Upstream> {
        let stop = shutdown.child_token();
        let heard = Heard::new();
        let forwarded = Forwarded::for_server(
            &config,
            tokens.clone(),
            disco.startup_timeout,
            disco.max_message_bytes,
            heard.clone(),
            &stop,
        );
        Arc::new(Upstream {
            config,
            live: RwLock::new(Live {
                status: Status::Starting,
                conn: None,
                listed: Arc::default(),
                waiting: Arc::default(),
            }),
            calls: Arc::default(),
            forwarded,
            heard,
            stderr: Arc::new(Mutex::new(VecDeque::new())),
            starting_group: Mutex::new(None),
            logged: Mutex::default(),
            pin_stamp: Mutex::new(None),
            stop,
            restarts: AtomicU64::new(0),
            signed_in: Default::default(),
        })
    }

    /// How many times it was started again since the gateway (or the reload that made it)
    /// started it first.
    pub fn restarts(&self) -> u64 {
        self.restarts.load(Ordering::Relaxed)
    }

    pub fn status(&self) -> Status {
        util::read(&self.live).status.clone()
    }

    /// The tools it serves when up, or served when last up (with those its listing left
    /// out), and whether it is up.
    pub fn tools(&self) -> (Arc<Admitted>, bool) {
        let live = util::read(&self.live);
        (live.listed.clone(), live.conn.is_some())
    }

    /// Sets the tools it served when last up, as a listing would.
    #[cfg(test)]
    pub(crate) fn set_listed(&self, tools: Vec<rmcp::model::Tool>) {
        let mut live = util::write(&self.live);
        live.listed = Arc::new(Admitted {
            tools,
            ..Admitted::default()
        });
    }

    /// Its tools whose definitions wait for approval (served anyway under `disco.onChange:
    /// "serve"`), by the upstream's name.
    pub fn waiting(&self) -> Arc<BTreeMap<String, Waiting>> {
        util::read(&self.live).waiting.clone()
    }

    /// What its pins say of its tools now: logged, and kept for the provider.
    fn set_review(&self, review: Review, hub: &Hub) {
        let server = &self.config.name;
        if review.first_seen {
            if let Some(pins) = hub.pins.as_ref().filter(|p| p.writable()) {
                tracing::info!(
                    server = %server,
                    file = %pins.file_of(server).display(),
                    "server seen for the first time: its tools are approved as listed now"
                );
            }
        }
        let serve = hub.disco.on_change == OnChange::Serve;
        for (tool, diff) in &review.diffs {
            let why = review.waiting.get(tool).map(|w| w.why);
            let what = match why {
                Some(Why::New) => "upstream tool new since its server was approved",
                _ => "upstream tool changed since approved",
            };
            let action = if serve {
                "served as it is now (disco.onChange: serve)"
            } else {
                "held until approved"
            };
            // The diff last, on lines of its own: what changed is read there.
            tracing::warn!(
                server = %server,
                tool = %crate::text::shown(tool),
                diff = %format!("\n{diff}"),
                "{what}; {action}: run `disco-gateway approve {server}.{}`",
                crate::text::shown(tool),
            );
        }
        {
            let mut logged = util::lock(&self.logged);
            logged.retain(|name, _| review.waiting.contains_key(name));
            for (name, w) in &review.waiting {
                logged.insert(name.clone(), w.sha);
            }
        }
        if let Some(pins) = &hub.pins {
            *util::lock(&self.pin_stamp) = pins.stamp(server);
        }
        util::write(&self.live).waiting = Arc::new(review.waiting);
    }

    /// Up, with its tools.
    fn set_up(&self, conn: Connection, listed: Arc<Admitted>) {
        for r in &listed.refused {
            tracing::error!(
                server = %self.config.name,
                tool = %r.tool,
                reason = %r.why,
                "upstream tool left out; the server's other tools serve"
            );
        }
        for (tool, note) in &listed.notes {
            tracing::warn!(server = %self.config.name, tool = %admit::shown(tool), problem = %note, "upstream tool served with a schema problem");
        }
        let mut live = util::write(&self.live);
        live.status = Status::Ready;
        live.conn = Some(conn);
        live.listed = listed;
    }

    /// Down: its last tools are kept (the provider answers calls to them with the outage);
    /// the connections with callers' tokens are closed with the main one. Down since the
    /// first failure: a start that fails again keeps the moment.
    fn set_down(&self, reason: String) {
        {
            let mut live = util::write(&self.live);
            let (since, since_utc) = match &live.status {
                Status::Down(o) => (o.since, o.since_utc),
                _ => (Instant::now(), chrono::Utc::now()),
            };
            live.status = Status::Down(Outage {
                reason,
                since,
                since_utc,
                next_start: None,
            });
            live.conn = None;
        }
        if let Some(forwarded) = &self.forwarded {
            forwarded.close_all();
        }
    }

    /// When its next start begins (`None`: one is under way), while it is down.
    fn set_next_start(&self, at: Option<Instant>) {
        let mut live = util::write(&self.live);
        if let Status::Down(outage) = &mut live.status {
            outage.next_start = at;
        }
    }

    /// With `forwardToken`: the callers' own connections.
    pub fn forwarded(&self) -> Option<&Forwarded> {
        self.forwarded.as_ref()
    }

    /// The calls running on it now: on the main connection and on the callers' own.
    pub fn calls_in_flight(&self) -> usize {
        let forwarded = self.forwarded.as_ref().map_or(0, |f| f.calls_in_flight());
        self.calls.len() + forwarded
    }

    fn stderr_tail(&self) -> String {
        let lines = util::lock(&self.stderr);
        if lines.is_empty() {
            "(nothing on stderr)".to_string()
        } else {
            lines.iter().cloned().collect::<Vec<_>>().join("\n")
        }
    }

    /// Forwards one call; the result comes back unchanged. Never hangs on a dead upstream: a
    /// closed transport ends the request with an error, and the catalog's per-call timeout
    /// bounds the rest (dropping this future sends `notifications/cancelled` upstream).
    ///
    /// With `forwardToken`, a named caller's call goes over that caller's own connection
    /// (forward.rs), never over the main one; the anonymous caller is the operator.
    /// `as_user`: whether this caller may make calls that act as the signed-in user (provider.rs,
    /// `can_see`); checked against the connection the call goes over.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        ctx: Context,
        as_user: bool,
    ) -> CallToolResult {
        let name = &self.config.name;
        let (conn, status) = {
            let live = util::read(&self.live);
            (live.conn.clone(), live.status.clone())
        };
        let Some(conn) = conn else {
            // The catalog this call started on was built while the server was up.
            return error(match status {
                Status::Down(outage) => outage.message(name, Instant::now()),
                _ => format!("Server `{name}` is still starting. Try again shortly."),
            });
        };
        if !as_user && self.acts_as_user() {
            return error(signin::not_for(name));
        }
        match (&self.forwarded, ctx.caller().id()) {
            (Some(forwarded), Some(caller)) => match forwarded.lease(caller).await {
                Ok(lease) => {
                    let own = Connection {
                        peer: lease.conn.peer.clone(),
                        direct: None,
                    };
                    let calls = &lease.conn.calls;
                    call_on(name, &own, calls, tool, arguments, ctx, None).await
                }
                Err(why) => error(why),
            },
            _ => {
                let refused = self.refused_text("the server refused the gateway's token");
                let refused = refused.as_deref();
                let calls = &self.calls;
                call_on(name, &conn, calls, tool, arguments, ctx, refused).await
            }
        }
    }
}

/// Why a connection ended.
enum End {
    Shutdown,
    Closed(String),
}

async fn supervise(hub: Arc<Hub>, upstream: Arc<Upstream>) {
    let name = upstream.config.name.clone();
    let mut backoff = Backoff::new(hub.disco.restart_initial, hub.disco.restart_max);
    let mut first = true;
    let mut started = false;
    loop {
        if upstream.stop.is_cancelled() {
            break;
        }
        if started {
            upstream.restarts.fetch_add(1, Ordering::Relaxed);
        }
        started = true;
        upstream.set_next_start(None);
        // A `login` that writes its tokens from now on starts the next attempt at once.
        let tokens = signin::Tokens::now(&hub, &upstream);
        let outcome = tokio::select! {
            r = connect(&hub, &upstream) => Some(r),
            _ = upstream.stop.cancelled() => None,
        };
        let starting = util::lock(&upstream.starting_group).take();
        let Some(outcome) = outcome else {
            kill_group(starting);
            break;
        };
        match outcome {
            Ok((running, conn, relist, group)) => {
                if first {
                    hub.settle_one();
                    first = false;
                }
                // A run counts from when the upstream is up: a slow start-up is not a run.
                let up = Instant::now();
                let end = watch(&hub, &upstream, running, conn, relist, &tokens).await;
                upstream.set_down(match &end {
                    End::Shutdown => "shut down".into(),
                    End::Closed(why) => why.clone(),
                });
                hub.change();
                kill_group(group);
                match end {
                    End::Shutdown => break,
                    End::Closed(why) => {
                        let wait = backoff.after_run(up.elapsed());
                        tracing::error!(
                            server = %name,
                            reason = %why,
                            restart_in_ms = wait.as_millis() as u64,
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
                let wait = backoff.after_failed_start();
                tracing::error!(
                    server = %name,
                    reason = %why,
                    restart_in_ms = wait.as_millis() as u64,
                    stderr_tail = %upstream.stderr_tail(),
                    "upstream failed to start"
                );
            }
        }
        upstream.set_next_start(Some(Instant::now() + backoff.current()));
        tokio::select! {
            _ = tokio::time::sleep(backoff.current()) => {}
            _ = upstream.stop.cancelled() => break,
            _ = tokens.signed_in_again() => tracing::info!(server = %name, "new OAuth tokens: starting it now"),
        }
        backoff.waited();
    }
}

/// A child's process group, to end whatever it started when it goes.
type Group = Option<u32>;

/// Connects, initializes and lists every tool page, all within [`start_attempt`].
async fn connect(
    hub: &Hub,
    upstream: &Arc<Upstream>,
) -> Result<(Running, Connection, mpsc::UnboundedReceiver<()>, Group), (String, Group)> {
    let (tx, rx) = mpsc::unbounded_channel();
    let timeout = start_attempt(&hub.disco);
    let open = |endpoint| {
        client::open(
            &upstream.config.name,
            endpoint,
            Role::Main { relist: tx },
            upstream.calls.clone(),
            upstream.heard.clone(),
            timeout,
            CancellationToken::new(),
        )
    };
    let (running, direct, group) = match &upstream.config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let (child, stderr) = client::spawn(
                command,
                args,
                env,
                cwd.as_deref(),
                hub.disco.max_message_bytes,
            )
            .map_err(|e| (format!("cannot run `{command}`: {e}"), None))?;
            let group = child.id();
            *util::lock(&upstream.starting_group) = group;
            util::lock(&upstream.stderr).clear();
            if let Some(stderr) = stderr {
                tokio::spawn(read_stderr(
                    upstream.config.name.clone(),
                    stderr,
                    upstream.stderr.clone(),
                ));
            }
            let (running, direct) = open(Endpoint::Child(Box::new(child)))
                .await
                .map_err(|e| (e.detail, group))?;
            (running, direct, group)
        }
        Transport::Http { url, headers, .. } => {
            // The values are secrets: an error names the header only.
            let headers = header_map(headers).map_err(|e| (e, None))?;
            let max = hub.disco.max_message_bytes;
            let auth = signin::manager(hub, upstream)
                .await
                .map_err(|e| (e, None))?;
            let (running, _) = open(Endpoint::Http {
                url,
                headers,
                max,
                auth,
            })
            .await
            .map_err(|e| {
                let why = "the server refused the gateway's token (revoked or expired, and no \
                           refresh was accepted)";
                match upstream.refused_text(why) {
                    Some(sign_in) if e.refused => (sign_in, None),
                    _ => (e.detail, None),
                }
            })?;
            (running, None, None)
        }
    };
    let tools = match tokio::time::timeout(timeout, list_tools(running.peer(), hub.disco.max_tools))
        .await
    {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) => {
            let _ = running.cancel().await;
            return Err((e, group));
        }
        Err(_) => {
            let _ = running.cancel().await;
            return Err((
                format!("did not list its tools within {} ms", timeout.as_millis()),
                group,
            ));
        }
    };
    let tools = match review(hub, upstream, Arc::new(tools)).await {
        Ok((tools, review)) => {
            upstream.set_review(review, hub);
            tools
        }
        Err(e) => {
            let _ = running.cancel().await;
            return Err((e, group));
        }
    };
    tracing::info!(server = %upstream.config.name, tools = tools.tools.len(), left_out = tools.refused.len(), "upstream ready");
    // Before calls can find the main connection: a call then never finds the callers'
    // connections still closed from the last run.
    if let Some(forwarded) = &upstream.forwarded {
        forwarded.resume();
    }
    let conn = Connection {
        peer: running.peer().clone(),
        direct,
    };
    upstream.set_up(conn.clone(), tools);
    hub.change();
    Ok((running, conn, rx, group))
}

/// Serves one connection until it closes or the gateway shuts down; relists on list_changed.
async fn watch(
    hub: &Hub,
    upstream: &Upstream,
    running: Running,
    conn: Connection,
    mut relist: mpsc::UnboundedReceiver<()>,
    tokens: &signin::Tokens,
) -> End {
    let peer = conn.peer.clone();
    let cancel = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    // A server that is running but no longer answers (deadlocked, stopped, its event loop
    // blocked) never closes its connection: only an unanswered ping tells.
    let mut pings = hub.disco.ping_interval.and_then(|every| {
        let first = tokio::time::Instant::now().checked_add(every)?;
        let mut pings = tokio::time::interval_at(first, every);
        pings.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Some(pings)
    });
    let mut missed = 0u32;
    let mut ping: Option<Ping> = None;
    // A `login` while it is up (or since it was connecting): its connection starts again
    // with the new client and tokens. Its own refreshes are not one.
    let signed_in = tokens.signed_in_again();
    tokio::pin!(signed_in);
    loop {
        let tick = async {
            match pings.as_mut() {
                Some(pings) => pings.tick().await,
                None => std::future::pending().await,
            }
        };
        let idle = ping.is_none();
        let answer = async {
            match ping.as_mut() {
                Some(ping) => ping.await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            done = &mut waiting => {
                return End::Closed(match done {
                    Ok(reason) => format!("the connection ended ({reason:?})"),
                    Err(e) => format!("its connection task failed: {e}"),
                });
            }
            Some(()) = relist.recv() => {
                while relist.try_recv().is_ok() {}
                relist_tools(hub, upstream, &conn).await;
            }
            () = &mut signed_in => {
                cancel.cancel();
                return End::Closed("signed in again: its connection starts with the new tokens".into());
            }
            _ = tick, if idle => {
                let peer = peer.clone();
                // rmcp's own timeout: it sends `notifications/cancelled` for the ping it
                // gives up on.
                let options = PeerRequestOptions::with_timeout(hub.disco.ping_timeout);
                ping = Some(Box::pin(async move {
                    let ping = ClientRequest::PingRequest(PingRequest::default());
                    peer.send_request_with_option(ping, options).await?.await_response().await
                }));
            }
            answer = answer => {
                ping = None;
                match answer {
                    // An error answer is an answer: the server is there.
                    Ok(_) | Err(ServiceError::McpError(_)) => missed = 0,
                    Err(e) => {
                        if excused(hub, upstream) {
                            tracing::debug!(server = %upstream.config.name, error = %e, "ping unanswered while busy");
                        } else {
                            tracing::warn!(server = %upstream.config.name, error = %e, "ping unanswered");
                            missed += 1;
                        }
                    }
                }
                if missed >= MISSED_PINGS {
                    cancel.cancel();
                    let _ = tokio::time::timeout(SHUTDOWN_WAIT, &mut waiting).await;
                    return End::Closed(format!(
                        "it stopped answering: {missed} pings in a row unanswered within {} ms",
                        hub.disco.ping_timeout.as_millis()
                    ));
                }
            }
            _ = upstream.stop.cancelled() => {
                cancel.cancel();
                let _ = tokio::time::timeout(SHUTDOWN_WAIT, &mut waiting).await;
                return End::Shutdown;
            }
        }
    }
}

/// Lists the tools again after the upstream said they changed, and reviews them against the
/// pins. A listing or a review that fails leaves the previous tools serving.
async fn relist_tools(hub: &Hub, upstream: &Upstream, conn: &Connection) {
    let server = &upstream.config.name;
    let listing = list_tools(&conn.peer, hub.disco.max_tools);
    let tools = match tokio::time::timeout(hub.disco.startup_timeout, listing).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) => return tracing::warn!(server = %server, error = %e, "relisting tools failed"),
        Err(_) => return tracing::warn!(server = %server, "relisting tools timed out"),
    };
    match review(hub, upstream, Arc::new(tools)).await {
        Ok((tools, review)) => {
            tracing::info!(server = %server, tools = tools.tools.len(), left_out = tools.refused.len(), "upstream tools changed");
            upstream.set_review(review, hub);
            upstream.set_up(conn.clone(), tools);
            hub.change();
        }
        Err(e) => {
            tracing::error!(server = %server, error = %e, "the changed tools are not taken; the previous ones serve")
        }
    }
}

/// A ping on its way: the server's answer, or why there is none.
type Ping =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<ServerResult, ServiceError>> + Send>>;

/// Whether an unanswered ping says nothing: the upstream sent something within the ping's
/// wait (it is talking, only slow to answer), or calls to it are running and it has not been
/// silent for a whole call timeout (a server that serves one request at a time answers the
/// ping after the call). A hung server under steady traffic is silent for longer than that.
fn excused(hub: &Hub, upstream: &Upstream) -> bool {
    // Calls on the callers' own connections keep the same server busy.
    let calls = upstream.calls_in_flight();
    excuses(upstream.heard.silent_for(), calls, &hub.disco)
}

/// The rule of [`excused`], given how long the server has been silent and how many calls to
/// it run.
fn excuses(silent: Duration, calls: usize, disco: &DiscoConfig) -> bool {
    silent < disco.ping_timeout || (calls > 0 && silent < disco.call_timeout)
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
        let mut tail = util::lock(&tail);
        if tail.len() >= STDERR_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

mod backoff;
mod list;
mod reload;
mod review;

use backoff::Backoff;
use list::list_tools;
pub use list::MAX_LIST_PAGES;
use review::{review, watch_pins};

mod signin;

#[cfg(test)]
mod tests;
