//! Who sees what: every shape of token entry against every kind of server, over stdio and
//! over HTTP, with the expected answer computed from the rule (`can_see`'s documentation),
//! and `servers_of` (the servers `disco://status`, `tool_search` and the answers name)
//! agreeing with the tools a caller sees.

use super::*;
use crate::config::{Config, TokenConfig};

/// The servers, one of each kind, each listing one tool `t`.
const SERVERS: [&str; 3] = ["remote", "plain", "local"];

/// Every shape of token entry, by caller: no `servers` (every server), an empty list, some,
/// all; with and without tools named in `tools` (an OAuth server's, another's, an unknown
/// one).
fn entries() -> serde_json::Value {
    let shapes = [
        (None, vec![]),
        (None, vec!["remote.t"]),
        (None, vec!["plain.t"]),
        (Some(vec![]), vec![]),
        (Some(vec![]), vec!["remote.t"]),
        (Some(vec!["remote"]), vec![]),
        (Some(vec!["plain"]), vec![]),
        (Some(vec!["plain"]), vec!["remote.t"]),
        (Some(vec!["plain", "local"]), vec!["nowhere.t"]),
        (Some(vec!["remote", "plain", "local"]), vec![]),
    ];
    let entries: Vec<serde_json::Value> = shapes
        .iter()
        .enumerate()
        .map(|(i, (servers, tools))| {
            let mut e = serde_json::json!({"token": format!("t{i}"), "caller": format!("c{i}")});
            if let Some(servers) = servers {
                e["servers"] = serde_json::json!(servers);
            }
            if !tools.is_empty() {
                e["tools"] = serde_json::json!(tools);
            }
            e
        })
        .collect();
    serde_json::json!(entries)
}

fn provider(http: bool) -> GatewayProvider {
    let text = serde_json::json!({
        "mcpServers": {
            "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp", "oauth": true},
            "plain": {"type": "http", "url": "http://127.0.0.1:9/other"},
            "local": {"command": "true"}
        },
        "disco": {"tokens": entries()}
    })
    .to_string();
    let config = Config::parse(&text, &|_| None).unwrap();
    let hub = Hub::new(config.servers, config.disco);
    for u in hub.upstreams().iter() {
        let tool = serde_json::from_value(serde_json::json!({
            "name": "t",
            "inputSchema": {"type": "object"}
        }))
        .unwrap();
        u.set_listed(vec![tool]);
    }
    let provider = GatewayProvider::new(hub);
    let provider = if http { provider.over_http() } else { provider };
    provider.current();
    provider
}

/// The rule, written out: what `entry` (none: no token entry) sees of `server`'s tool.
fn rule(http: bool, entry: Option<&TokenConfig>, server: &str) -> bool {
    let oauth = http && server == "remote";
    let tool = format!("{server}.t");
    match entry {
        None => !oauth,
        Some(e) if e.tools.contains(&tool) => true,
        Some(e) => match &e.servers {
            None => !oauth,
            Some(servers) => servers.iter().any(|s| s == server),
        },
    }
}

#[tokio::test]
async fn who_sees_an_oauth_servers_tools_and_the_others() {
    for http in [false, true] {
        let provider = provider(http);
        let tokens = provider.hub.disco.tokens.clone();
        assert!(tokens.len() >= 10);
        let mut callers: Vec<(Caller, Option<&TokenConfig>)> =
            vec![(Caller::anonymous(), None), (Caller::new("no-entry"), None)];
        callers.extend(
            tokens
                .iter()
                .map(|t| (Caller::new(t.caller.clone()), Some(t))),
        );
        for (caller, entry) in &callers {
            let mut seen_servers = Vec::new();
            for server in SERVERS {
                let tool = format!("{server}.t");
                let want = rule(http, *entry, server);
                assert_eq!(
                    provider.can_see(caller, &tool),
                    want,
                    "http {http}, {caller:?}, {tool}"
                );
                if want {
                    seen_servers.push(server.to_string());
                }
            }
            let mut of: Vec<String> = provider
                .servers_of(caller)
                .iter()
                .map(|u| u.config.name.clone())
                .collect();
            of.sort();
            seen_servers.sort();
            assert_eq!(of, seen_servers, "http {http}, {caller:?}");
        }
    }
}
