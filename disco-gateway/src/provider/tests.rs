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
    rule_of(http, entry, server, server == "remote")
}

/// The rule, with whether `server` acts as the user signed in to it given.
fn rule_of(http: bool, entry: Option<&TokenConfig>, server: &str, signed_in: bool) -> bool {
    let oauth = http && signed_in;
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

/// Every caller of `provider`'s tokens, and the anonymous one and one without an entry.
fn callers(provider: &GatewayProvider) -> Vec<(Caller, Option<TokenConfig>)> {
    let mut callers: Vec<(Caller, Option<TokenConfig>)> =
        vec![(Caller::anonymous(), None), (Caller::new("no-entry"), None)];
    callers.extend(
        provider
            .hub
            .disco
            .tokens
            .iter()
            .map(|t| (Caller::new(t.caller.clone()), Some(t.clone()))),
    );
    callers
}

/// A server acts as the signed-in user when its entry asks for OAuth, or when it has no
/// credentials of its own and its connection found the tokens of a `login` for its URL; and
/// then, over HTTP, only the callers whose token entry names it see it. Over every kind of
/// entry (config/tests/kinds.rs), with and without a token file (its URL's, another URL's),
/// before and after a connection, every caller, over stdio and over HTTP.
#[tokio::test]
async fn who_sees_a_server_follows_whether_it_acts_as_the_signed_in_user() {
    use crate::config::tests::kinds::{kinds, Expected, URL};
    let base = serde_json::json!({
        "mcpServers": {
            "remote": {"type": "http", "url": URL},
            "plain": {"type": "http", "url": "http://127.0.0.1:9/other", "oauth": false},
            "local": {"command": "true"}
        },
        "disco": {"tokens": entries()}
    })
    .to_string();
    let base = Config::parse(&base, &|_| None).unwrap();
    let mut tried = 0;
    for kind in kinds() {
        let want = kind.expected();
        if want == Expected::Refused {
            continue;
        }
        let remote = kind.read().unwrap().servers.remove(0);
        for file in [None, Some(URL), Some("http://127.0.0.1:9/elsewhere")] {
            let state = std::env::temp_dir().join(format!(
                "disco-sees-{}-{}",
                std::process::id(),
                fastrand::u64(..)
            ));
            if let Some(resource) = file {
                let path = crate::oauth::token_file(&state, "remote");
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                let kept = serde_json::json!({"resource": resource, "grant": "g",
                    "client_id": "c", "token_response": null});
                std::fs::write(&path, kept.to_string()).unwrap();
            }
            let signed_in = match want {
                Expected::Configured => true,
                Expected::WhenSignedIn => file == Some(URL),
                _ => false,
            };
            let mut servers = base.servers.clone();
            for s in servers.iter_mut().filter(|s| s.name == "remote") {
                *s = remote.clone();
            }
            for http in [false, true] {
                // A hub of its own: a sign-in, once found, stays for the upstream's run.
                let pins = crate::pins::Pins::new(state.clone(), false);
                let hub = Hub::pinned(servers.clone(), base.disco.clone(), Some(pins));
                for u in hub.upstreams().iter() {
                    let tool = serde_json::from_value(serde_json::json!({
                        "name": "t", "inputSchema": {"type": "object"}
                    }))
                    .unwrap();
                    u.set_listed(vec![tool]);
                }
                let provider = GatewayProvider::new(hub.clone());
                let provider = if http { provider.over_http() } else { provider };
                provider.current();
                // Before its connection, and after it (which reads the token file).
                for connected in [false, true] {
                    if connected {
                        for u in hub.upstreams().iter() {
                            let _ = u.signs_in_with(&hub);
                        }
                    }
                    let acts = hub
                        .upstreams()
                        .iter()
                        .any(|u| u.config.name == "remote" && u.acts_as_user());
                    let expect = signed_in && (connected || want == Expected::Configured);
                    assert_eq!(acts, expect, "{} {file:?} {connected}", kind.label);
                    for (caller, entry) in callers(&provider) {
                        for server in SERVERS {
                            let tool = format!("{server}.t");
                            let remote = server == "remote" && expect;
                            assert_eq!(
                                provider.can_see(&caller, &tool),
                                rule_of(http, entry.as_ref(), server, remote),
                                "{}: http {http}, {file:?}, connected {connected}, {caller:?}, \
                                 {tool}",
                                kind.label
                            );
                        }
                    }
                }
            }
            let _ = std::fs::remove_dir_all(&state);
            tried += 1;
        }
    }
    assert!(tried >= 3 * 80, "{tried}");
}
