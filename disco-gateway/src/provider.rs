//! The upstreams' tools as one disco [`ToolProvider`]: named `server.tool` (or as the upstream
//! names them, with `"namespace": "none"`), with the operator's aliases and keywords, and each
//! call forwarded to the upstream that owns the tool. Everything else (resolution, repair,
//! validation, visibility, search, paging) is the catalog's, unchanged.
//!
//! While a server is down its tools leave the catalog (tools/list, search, suggestions), and a
//! call to one is answered with the outage (since when, why, the next start), but only for a
//! caller who could see the tool while it served: to anyone else the name stays unknown.
//! `disco://status` tells each caller which of its servers are down.
//!
//! A tool whose definition waits for approval (pins.rs) is held the same way under
//! `disco.onChange: "hold"`, the default: out of the catalog, and a call answers how to approve
//! it.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use std::time::Instant;

use disco_runtime::catalog::{DynamicTool, SearchOptions};
use disco_runtime::rmcp::model::{Resource, ResourceContents};
use disco_runtime::tool::BoxFuture;
use disco_runtime::util;
use disco_runtime::{CallToolResult, Caller, Context, Resources, ToolProvider};
use serde_json::{json, Map, Value};

use crate::admit;
use crate::config::{Namespace, OnChange};
use crate::metrics::Metrics;
use crate::pins::Why;
use crate::upstream::{Hub, Status, Upstream};

/// The resource that tells a caller which of its servers are down.
pub const STATUS_URI: &str = "disco://status";

/// The gateway's tools. Cheap to clone.
#[derive(Clone)]
pub struct GatewayProvider {
    hub: Arc<Hub>,
    /// Downstream name -> (its upstream, the upstream's own name). Grows while the servers
    /// stay: a catalog built a moment ago may still route a tool whose server has since gone
    /// down, and the call then gets the outage from the upstream itself. The routes of a
    /// server a reload removed or replaced go with the next catalog.
    routes: Arc<RwLock<HashMap<String, Route>>>,
    /// The calls, errors and latency of each tool (metrics.rs).
    metrics: Option<Arc<Metrics>>,
    /// Served over HTTP: a caller without a token entry sees no OAuth server's tools.
    http: bool,
}

/// An upstream tool the catalog cannot take under its downstream name: another server's tool
/// already has that name (or one that reads the same) under `"namespace": "none"`, or the name
/// is the gateway's own (a meta-tool's, a configured alias). The tool is left out and the rest
/// of the catalog serves; the log and `lint` say which.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    /// The server whose tool is left out.
    pub server: String,
    /// Its downstream name, as it may be shown (admit.rs, `shown`).
    pub tool: String,
    pub why: String,
}

impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tool `{}` of server `{}` is left out: {}",
            self.tool, self.server, self.why
        )
    }
}

/// The upstream that serves a downstream name, and the name it listed.
type Route = (Arc<Upstream>, String);

/// Who holds a downstream name, by the name's key (`same_name_key`) under `"namespace":
/// "none"`, by the name itself otherwise.
enum Holder {
    /// The gateway itself: a meta-tool, or the alias the configuration gives a tool.
    Gateway(String),
    /// The server of this name, with the name as it listed it.
    Server(String, String),
}

impl GatewayProvider {
    pub fn new(hub: Arc<Hub>) -> Self {
        GatewayProvider {
            hub,
            routes: Arc::new(RwLock::new(HashMap::new())),
            metrics: None,
            http: false,
        }
    }

    /// Served over HTTP: an OAuth server acts as the user who signed in to it, so only
    /// callers whose token entry names it (in `servers`, or one of its tools in `tools`) see
    /// it; over stdio the one caller is that user. An OAuth server is one configured so, or
    /// one without credentials of its own from the first connection that used the tokens of
    /// its `disco-gateway login` ([`Upstream::acts_as_user`]).
    pub fn over_http(mut self) -> Self {
        self.http = true;
        self
    }

    /// Whether `server`'s calls act as the user signed in to it with OAuth.
    fn is_oauth(&self, server: &str) -> bool {
        self.hub
            .upstreams()
            .iter()
            .any(|u| u.config.name == server && u.acts_as_user())
    }

    /// Counts each forwarded call in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The downstream name of an upstream tool.
    pub fn downstream_name(&self, server: &str, tool: &str) -> String {
        match &self.hub.disco.namespace {
            Namespace::Separator(sep) => format!("{server}{sep}{tool}"),
            Namespace::None => tool.to_string(),
        }
    }

    /// Logs each key of `disco.aliases` and `disco.keywords` in force that names no tool of the
    /// catalog now (a server still starting lists its tools later: "yet").
    pub fn warn_unknown_labels(&self) {
        for key in self.unknown_labels() {
            tracing::warn!(key = %key, "no such tool (yet)");
        }
    }

    /// The keys of `disco.aliases` and `disco.keywords` in force (`disco.aliases.<tool>`) that
    /// name no tool the catalog serves now, by the rules of [`current`](Self::current): the
    /// first server that lists the tool under that downstream name is down, or the tool waits
    /// for approval under `disco.onChange: "hold"`, or no server lists it, or the name is the
    /// gateway's own (a meta-tool's, an alias). Read from the servers' listings, key by key,
    /// without building the catalog (a tool left out for a look-alike of another server's name
    /// under `"namespace": "none"` is not told apart here: `lint` names it).
    fn unknown_labels(&self) -> Vec<String> {
        let labels = self.hub.labels();
        let upstreams = self.hub.upstreams();
        let hold = self.hub.disco.on_change == OnChange::Hold;
        let none = self.hub.disco.namespace == Namespace::None;
        let key = |name: &str| {
            if none {
                admit::same_name_key(name)
            } else {
                name.to_string()
            }
        };
        let reserved = reserved_names();
        let gateways = reserved
            .iter()
            .chain(labels.aliases.values().flatten())
            .map(|name| key(name))
            .collect::<std::collections::HashSet<_>>();
        // The first server (in the configuration's order) that lists the name holds it, as in
        // `current`; it serves the tool while it is up and the tool is not held.
        let served = |name: &str| {
            if gateways.contains(&key(name)) {
                return false;
            }
            for u in upstreams.iter() {
                let Some(own) = self.upstream_name(&u.config.name, name) else {
                    continue;
                };
                let (listed, up) = u.tools();
                if listed.tools.iter().any(|t| t.name == own) {
                    return up && !(hold && u.waiting().contains_key(own));
                }
            }
            false
        };
        let mut out = Vec::new();
        for (what, map) in [("aliases", &labels.aliases), ("keywords", &labels.keywords)] {
            for tool in map.keys().filter(|tool| !served(tool)) {
                out.push(format!("disco.{what}.{tool}"));
            }
        }
        out
    }

    /// The name `server` would list for the downstream name `name`, if `name` can be one of
    /// its tools' (the inverse of [`downstream_name`](Self::downstream_name)).
    fn upstream_name<'a>(&self, server: &str, name: &'a str) -> Option<&'a str> {
        match &self.hub.disco.namespace {
            Namespace::Separator(sep) => name.strip_prefix(server)?.strip_prefix(sep.as_str()),
            Namespace::None => Some(name),
        }
    }

    /// The hub the tools come from.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// The server a downstream tool name belongs to.
    pub fn server_of(&self, tool: &str) -> Option<String> {
        let routes = util::read(&self.routes);
        routes.get(tool).map(|(u, _)| u.config.name.clone())
    }

    /// Whether `caller` may see the tool named `tool` downstream: a caller with a token entry
    /// sees its servers' tools and the tools it names; any other (stdio, the local user, a
    /// token without an entry) sees everything. The catalog's visibility and the answers
    /// about tools out of service both ask this.
    /// An OAuth server's tools are the exception: over HTTP they are seen only by a caller
    /// whose entry names the server in `servers` or the tool in `tools`.
    pub fn can_see(&self, caller: &Caller, tool: &str) -> bool {
        let oauth = || self.http && self.server_of(tool).is_some_and(|s| self.is_oauth(&s));
        self.sees(caller, tool, oauth)
    }

    /// [`can_see`](Self::can_see), with whether `tool`'s server acts as the signed-in user
    /// given (asked only when the caller's entry does not decide alone).
    fn sees(&self, caller: &Caller, tool: &str, oauth: impl Fn() -> bool) -> bool {
        let Some(token) = self.token_of(caller) else {
            return !oauth();
        };
        if token.tools.iter().any(|n| n == tool) {
            return true;
        }
        match &token.servers {
            None => !oauth(),
            Some(servers) => self.server_of(tool).is_some_and(|s| servers.contains(&s)),
        }
    }

    fn token_of(&self, caller: &Caller) -> Option<&crate::config::TokenConfig> {
        let id = caller.id()?;
        self.hub.disco.tokens.iter().find(|t| t.caller == id)
    }

    /// The servers `caller` may use: those of its token entry and those of the tools it
    /// names, or every one.
    fn servers_of(&self, caller: &Caller) -> Vec<Arc<Upstream>> {
        let token = self.token_of(caller);
        let routes = util::read(&self.routes);
        let names_a_tool = |u: &Arc<Upstream>| {
            token.is_some_and(|t| {
                t.tools
                    .iter()
                    .any(|n| routes.get(n).is_some_and(|(r, _)| Arc::ptr_eq(r, u)))
            })
        };
        self.hub
            .upstreams()
            .iter()
            .filter(|u| {
                let name = &u.config.name;
                match token.and_then(|t| t.servers.as_ref()) {
                    Some(servers) => servers.contains(name) || names_a_tool(u),
                    // Every server but, over HTTP, those that sign in with OAuth (`can_see`).
                    None => !(self.http && self.is_oauth(name)) || names_a_tool(u),
                }
            })
            .cloned()
            .collect()
    }

    /// What `disco://status` says to `caller`: each of its servers, whether it is up, and of
    /// those down since when, why and when they are next started.
    pub fn status(&self, caller: &Caller) -> Value {
        let now = Instant::now();
        let servers: Vec<Value> = self
            .servers_of(caller)
            .into_iter()
            .map(|u| {
                let name = &u.config.name;
                match u.status() {
                    Status::Starting => json!({"name": name, "state": "starting"}),
                    Status::Ready => json!({"name": name, "state": "up"}),
                    Status::Down(outage) => {
                        // Whole seconds, rounded up: a wait is never shorter than said.
                        let next = match outage.next_start {
                            Some(at) if at > now => {
                                at.saturating_duration_since(now).as_secs_f64().ceil() as u64
                            }
                            _ => 0,
                        };
                        json!({
                            "name": name,
                            "state": "down",
                            "since": outage.since_utc.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                            "downForSeconds": now.saturating_duration_since(outage.since).as_secs(),
                            "reason": crate::text::clip(&outage.reason, 300),
                            "nextStartInSeconds": next,
                            "message": outage.message(name, now),
                        })
                    }
                }
            })
            .collect();
        let down: Vec<&Value> = servers
            .iter()
            .filter(|s| s["state"] == "down")
            .map(|s| &s["name"])
            .collect();
        json!({"down": down, "servers": servers})
    }

    /// The tools now (those of servers that are down, hidden), with the tools left out (see
    /// [`LeftOut`]). Of two servers offering one name, the one listed first in the
    /// configuration keeps it, whichever started first: a server's tools stay its own while it
    /// is down, so a restart never hands its names to another.
    pub fn current(&self) -> (Vec<DynamicTool>, Vec<LeftOut>) {
        let disco = &self.hub.disco;
        let labels = self.hub.labels();
        let none = disco.namespace == Namespace::None;
        // Under "namespace": "none" two names a reader cannot tell apart are one name.
        let key = |name: &str| {
            if none {
                admit::same_name_key(name)
            } else {
                name.to_string()
            }
        };
        let mut out = Vec::new();
        let mut holders: HashMap<String, Holder> = HashMap::new();
        for reserved in reserved_names() {
            holders.insert(
                key(&reserved),
                Holder::Gateway(format!("the gateway's `{reserved}`")),
            );
        }
        for (tool, aliases) in &labels.aliases {
            for alias in aliases {
                holders.insert(
                    key(alias),
                    Holder::Gateway(format!("the alias the configuration gives `{tool}`")),
                );
            }
        }
        let mut left_out = Vec::new();
        let mut routes = util::write(&self.routes);
        let upstreams = self.hub.upstreams();
        // A server a reload removed or replaced routes nothing any more.
        routes.retain(|_, (u, _)| upstreams.iter().any(|now| Arc::ptr_eq(now, u)));
        let hold = disco.on_change == OnChange::Hold;
        for upstream in upstreams.iter() {
            let server = &upstream.config.name;
            let (listed, up) = upstream.tools();
            let waiting = upstream.waiting();
            for tool in listed.tools.iter() {
                let name = self.downstream_name(server, &tool.name);
                let name_key = key(&name);
                if let Some(holder) = holders.get(&name_key) {
                    let why = match holder {
                        Holder::Gateway(what) => format!("its name is {what}"),
                        Holder::Server(other, theirs) => {
                            if *theirs == name {
                                format!(
                                    "server `{other}` offers the same name and is listed first \
                                     in the configuration"
                                )
                            } else {
                                format!(
                                    "it reads as `{}` of server `{other}` (the same letters under \
                                     Unicode folding or look-alike characters), which is listed \
                                     first in the configuration",
                                    admit::shown(theirs)
                                )
                            }
                        }
                    };
                    left_out.push(LeftOut {
                        server: server.clone(),
                        tool: admit::shown(&name),
                        why,
                    });
                    continue;
                }
                holders.insert(name_key, Holder::Server(server.clone(), name.clone()));
                routes.insert(name.clone(), (upstream.clone(), tool.name.to_string()));
                // While its server is down, or while its definition waits for approval, a
                // tool keeps its name (no other server takes it) and leaves the catalog: a
                // call to it is answered by `not_served`.
                if !up || (hold && waiting.contains_key(&*tool.name)) {
                    continue;
                }
                let mut entry = tool.clone();
                entry.name = name.clone().into();
                let mut def = DynamicTool::new(entry);
                if let Some(note) = listed.notes.get(&*tool.name) {
                    def.problems.push(note.clone());
                }
                def.aliases = labels.aliases.get(&name).cloned().unwrap_or_default();
                // The server is a searchable field of each of its tools.
                def.keywords = labels.keywords.get(&name).cloned().unwrap_or_default();
                if !def.keywords.iter().any(|k| k == server) {
                    def.keywords.push(server.clone());
                }
                // Each server is a group, when its name is a valid group name.
                if disco_runtime::catalog::group_problem(server).is_none() {
                    def.group = Some(server.clone());
                }
                out.push(def);
            }
        }
        (out, left_out)
    }
}

impl Resources for GatewayProvider {
    fn list(&self, _caller: &Caller) -> Vec<Resource> {
        vec![Resource::new(STATUS_URI, "status")
            .with_title("The gateway's servers")
            .with_description(
                "Each server whose tools you may use, and which of them are down: since when, \
                 why, and when each is next started. A down server's tools are out of \
                 tools/list and search until it is back.",
            )
            .with_mime_type("application/json")]
    }

    fn read(&self, uri: &str, caller: &Caller) -> Option<Vec<ResourceContents>> {
        (uri == STATUS_URI).then(|| {
            let text = serde_json::to_string_pretty(&self.status(caller)).unwrap_or_default();
            vec![ResourceContents::text(text, STATUS_URI).with_mime_type("application/json")]
        })
    }
}

/// The names of the gateway's own tools (`tool_search`, `execute_tool`): no upstream tool
/// takes them, whether or not search is on.
pub fn reserved_names() -> [String; 2] {
    let search = SearchOptions::default();
    [search.search_name, search.execute_name]
}

impl GatewayProvider {
    /// How to approve the tool `name` (the upstream's `upstream_name` of server `i`) when its
    /// definition waits for approval and is held; `None` when it is served.
    fn held(&self, name: &str, upstream: &Upstream, upstream_name: &str) -> Option<String> {
        if self.hub.disco.on_change != OnChange::Hold {
            return None;
        }
        let why = upstream.waiting().get(upstream_name)?.why;
        let server = &upstream.config.name;
        let approve = format!("run `disco-gateway approve {server}.{upstream_name}`");
        Some(match why {
            Why::Changed => {
                format!("Tool `{name}` changed since approved: {approve} to serve it as it is now.")
            }
            Why::New => format!(
                "Tool `{name}` is new since server `{server}` was approved: {approve} to serve it."
            ),
        })
    }
}

impl ToolProvider for GatewayProvider {
    /// A tool of a server that is down, which `caller` could see: the outage; a tool held
    /// for approval: how to approve it. The tool must be in what the server listed last (a
    /// route is kept for every name ever routed).
    fn not_served(&self, name: &str, caller: &Caller) -> Option<String> {
        let (upstream, upstream_name) = util::read(&self.routes).get(name).cloned()?;
        let (listed, _) = upstream.tools();
        if !listed.tools.iter().any(|t| *t.name == *upstream_name) || !self.can_see(caller, name) {
            return None;
        }
        let server = &upstream.config.name;
        if let Status::Down(outage) = upstream.status() {
            return Some(outage.message(server, Instant::now()));
        }
        self.held(name, &upstream, &upstream_name)
    }

    fn tools(&self) -> Vec<DynamicTool> {
        let (tools, left_out) = self.current();
        for l in left_out {
            tracing::error!(server = %l.server, tool = %l.tool, reason = %l.why, "upstream tool left out; the rest of the catalog serves");
        }
        tools
    }

    fn call(&self, name: &str, arguments: Map<String, Value>, ctx: Context) -> BoxFuture {
        let route = util::read(&self.routes).get(name).cloned();
        let held = route
            .as_ref()
            .and_then(|(u, upstream_name)| self.held(name, u, upstream_name));
        let metrics = self.metrics.clone();
        // Whether this caller could see the tool were its server acting as the signed-in
        // user: checked by the upstream against the connection the call goes over, so that a
        // sign-in since the call was routed cannot carry it (upstream.rs, `call`).
        let as_user = !self.http || self.sees(ctx.caller(), name, || true);
        let name = name.to_string();
        Box::pin(async move {
            match route {
                // A catalog built before the definition changed still lists it: the call is
                // held all the same.
                Some((upstream, upstream_name)) => match held {
                    Some(text) => CallToolResult::error(vec![disco_runtime::Content::text(text)]),
                    None => {
                        let started = Instant::now();
                        let result = upstream.call(&upstream_name, arguments, ctx, as_user).await;
                        if let Some(m) = &metrics {
                            let failed = result.is_error == Some(true);
                            m.call(&upstream.config.name, &name, failed, started.elapsed());
                        }
                        result
                    }
                },
                None => CallToolResult::error(vec![disco_runtime::Content::text(format!(
                    "No server offers `{name}` any more."
                ))]),
            }
        })
    }
}

#[cfg(test)]
mod tests;
