//! The upstreams' tools as one disco [`ToolProvider`]: named `server.tool` (or as the upstream
//! names them, with `"namespace": "none"`), with the operator's aliases and keywords, and each
//! call forwarded to the upstream that owns the tool. Everything else (resolution, repair,
//! validation, visibility, search, paging) is the catalog's, unchanged.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use disco_runtime::catalog::DynamicTool;
use disco_runtime::tool::BoxFuture;
use disco_runtime::{CallToolResult, Context, ToolProvider};
use serde_json::{Map, Value};

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

/// Two servers offering one name under `"namespace": "none"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collision {
    pub tool: String,
    pub kept: String,
    pub dropped: String,
}

impl std::fmt::Display for Collision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tool `{}` is offered by both server `{}` and server `{}` (with \"namespace\": \"none\" names must not collide)",
            self.tool, self.kept, self.dropped
        )
    }
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

    /// The tools now (those of servers that are down, hidden), with the collisions found
    /// (the later server's tool is left out).
    pub fn current(&self) -> (Vec<DynamicTool>, Vec<Collision>) {
        let disco = &self.hub.disco;
        let mut out = Vec::new();
        let mut owner: BTreeMap<String, usize> = BTreeMap::new();
        let mut collisions = Vec::new();
        let mut routes = self.routes.write().unwrap_or_else(|e| e.into_inner());
        for (i, upstream) in self.hub.upstreams.iter().enumerate() {
            let server = &upstream.config.name;
            let (tools, up) = upstream.tools();
            for tool in tools.iter() {
                let name = self.downstream_name(server, &tool.name);
                if let Some(&j) = owner.get(&name) {
                    collisions.push(Collision {
                        tool: name,
                        kept: self.hub.upstreams[j].config.name.clone(),
                        dropped: server.clone(),
                    });
                    continue;
                }
                owner.insert(name.clone(), i);
                routes.insert(name.clone(), (i, tool.name.to_string()));
                let mut entry = tool.clone();
                entry.name = name.clone().into();
                let mut def = DynamicTool::new(entry);
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
        (out, collisions)
    }
}

impl ToolProvider for GatewayProvider {
    fn tools(&self) -> Vec<DynamicTool> {
        let (tools, collisions) = self.current();
        for c in collisions {
            tracing::error!(collision = %c, "tool left out");
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
