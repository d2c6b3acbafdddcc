//! The upstreams' tools as one disco [`ToolProvider`]: named `server.tool` (or as the upstream
//! names them, with `"namespace": "none"`), with the operator's aliases and keywords, and each
//! call forwarded to the upstream that owns the tool. Everything else (resolution, repair,
//! validation, visibility, search, paging) is the catalog's, unchanged.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use disco_runtime::catalog::{DynamicTool, SearchOptions};
use disco_runtime::tool::BoxFuture;
use disco_runtime::{CallToolResult, Context, ToolProvider};
use serde_json::{Map, Value};

use crate::admit;
use crate::config::Namespace;
use crate::upstream::Hub;

/// The gateway's tools. Cheap to clone.
#[derive(Clone)]
pub struct GatewayProvider {
    hub: Arc<Hub>,
    /// Downstream name -> (upstream index, the upstream's own name). Only ever grows: a
    /// catalog built a moment ago may still route a tool whose server has since gone, and the
    /// call then gets that server's own "not available" answer.
    routes: Arc<RwLock<HashMap<String, (usize, String)>>>,
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

/// Who holds a downstream name, by the name's key (`same_name_key`) under `"namespace":
/// "none"`, by the name itself otherwise.
enum Holder {
    /// The gateway itself: a meta-tool, or the alias the configuration gives a tool.
    Gateway(String),
    /// The server at this index, with the name as it listed it.
    Server(usize, String),
}

impl GatewayProvider {
    pub fn new(hub: Arc<Hub>) -> Self {
        GatewayProvider {
            hub,
            routes: Arc::new(RwLock::new(HashMap::new())),
        }
    }

    /// The downstream name of an upstream tool.
    pub fn downstream_name(&self, server: &str, tool: &str) -> String {
        match &self.hub.disco.namespace {
            Namespace::Separator(sep) => format!("{server}{sep}{tool}"),
            Namespace::None => tool.to_string(),
        }
    }

    /// The server a downstream tool name belongs to.
    pub fn server_of(&self, tool: &str) -> Option<String> {
        let routes = self.routes.read().unwrap_or_else(|e| e.into_inner());
        routes
            .get(tool)
            .map(|(i, _)| self.hub.upstreams[*i].config.name.clone())
    }

    /// The tools now (those of servers that are down, hidden), with the tools left out (see
    /// [`LeftOut`]). Of two servers offering one name, the one listed first in the
    /// configuration keeps it, whichever started first: a server's tools stay its own while it
    /// is down, so a restart never hands its names to another.
    pub fn current(&self) -> (Vec<DynamicTool>, Vec<LeftOut>) {
        let disco = &self.hub.disco;
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
        for (tool, aliases) in &disco.aliases {
            for alias in aliases {
                holders.insert(
                    key(alias),
                    Holder::Gateway(format!("the alias the configuration gives `{tool}`")),
                );
            }
        }
        let mut left_out = Vec::new();
        let mut routes = self.routes.write().unwrap_or_else(|e| e.into_inner());
        for (i, upstream) in self.hub.upstreams.iter().enumerate() {
            let server = &upstream.config.name;
            let (listed, up) = upstream.tools();
            for tool in listed.tools.iter() {
                let name = self.downstream_name(server, &tool.name);
                let name_key = key(&name);
                if let Some(holder) = holders.get(&name_key) {
                    let why = match holder {
                        Holder::Gateway(what) => format!("its name is {what}"),
                        Holder::Server(j, theirs) => {
                            let other = &self.hub.upstreams[*j].config.name;
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
                holders.insert(name_key, Holder::Server(i, name.clone()));
                routes.insert(name.clone(), (i, tool.name.to_string()));
                let mut entry = tool.clone();
                entry.name = name.clone().into();
                let mut def = DynamicTool::new(entry);
                if let Some(note) = listed.notes.get(&*tool.name) {
                    def.problems.push(note.clone());
                }
                // While its server is down a tool leaves tools/list, but a call to it still
                // resolves, and is answered with what happened to the server.
                def.hidden = !up;
                def.aliases = disco.aliases.get(&name).cloned().unwrap_or_default();
                // The server is a searchable field of each of its tools.
                def.keywords = disco.keywords.get(&name).cloned().unwrap_or_default();
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

/// The names of the gateway's own tools (`tool_search`, `execute_tool`): no upstream tool
/// takes them, whether or not search is on.
pub fn reserved_names() -> [String; 2] {
    let search = SearchOptions::default();
    [search.search_name, search.execute_name]
}

impl ToolProvider for GatewayProvider {
    fn tools(&self) -> Vec<DynamicTool> {
        let (tools, left_out) = self.current();
        for l in left_out {
            tracing::error!(server = %l.server, tool = %l.tool, reason = %l.why, "upstream tool left out; the rest of the catalog serves");
        }
        tools
    }

    fn call(&self, name: &str, arguments: Map<String, Value>, ctx: Context) -> BoxFuture {
        let route = self
            .routes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned();
        let hub = self.hub.clone();
        let name = name.to_string();
        Box::pin(async move {
            match route {
                Some((i, upstream_name)) => {
                    hub.upstreams[i].call(&upstream_name, arguments, ctx).await
                }
                None => CallToolResult::error(vec![disco_runtime::Content::text(format!(
                    "No server offers `{name}` any more."
                ))]),
            }
        })
    }
}
