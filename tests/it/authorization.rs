//! Authorization and leaks: callers with different visibility x every path that names
//! tools. The test is differential: for each caller, the full catalog (with tools the caller
//! may not see) must answer every probe exactly as a catalog that never had those tools —
//! same resolution, suggestions, errors and their `data`, search results and scores, list
//! pages, execute_tool results and counters. Then the same over HTTP with bearer tokens.
//!
//! Its catalogs and servers hold this module's tools alone (`common::tools_in`,
//! `common::server_in`; the binary's inventory holds every module's): the HTTP half compares the
//! server's answers with catalogs of exactly these tools.

use std::sync::Arc;

use crate::common::http::*;
use crate::common::{server_in, tools_in};
use disco_runtime::catalog::provider::{DynamicTool, JsonCatalogProvider, ScopedProvider};
use disco_runtime::catalog::{Exposure, SearchOptions};
use disco_runtime::{
    mcp_tool, BearerTokens, Caller, Catalog, CatalogTool, Context, HttpOptions, Server,
    ToolProvider,
};
use serde_json::{json, Value};

/// Lock a door of the building by its name.
#[mcp_tool(destructive)]
fn lock_door(door: String) -> String {
    format!("locked {door}")
}

/// Release the electronic bolt of a door so anyone can walk in (ZEBRAFISH).
#[mcp_tool(destructive, aliases("open_door"), keywords("entry bolt"))]
fn unlock_door(door: String) -> String {
    format!("unlocked {door}")
}

/// Export the salary ledger of every employee for one month (QUOKKA).
#[mcp_tool(
    read_only,
    aliases("payroll_export"),
    keywords("salary ledger"),
    group = "WOMBAT_hr"
)]
fn export_payroll(month: String) -> String {
    format!("payroll {month}")
}

/// Erase every record in the archive, irreversibly (NARWHAL).
#[mcp_tool(destructive)]
fn delete_all_records() -> String {
    "erased".into()
}

/// List the rooms of the building and who booked them.
#[mcp_tool(read_only)]
fn list_rooms() -> String {
    "rooms".into()
}

/// Read the weather forecast for a city.
#[mcp_tool(read_only)]
fn read_weather(city: String) -> String {
    format!("sunny in {city}")
}

/// Dump the internal state for debugging; found through search, never listed.
#[mcp_tool(read_only, hidden)]
fn debug_dump() -> String {
    "state".into()
}

/// Tools only the admin may see.
const ADMIN_ONLY: &[&str] = &[
    "unlock_door",
    "export_payroll",
    "delete_all_records",
    "vault_read",
];

/// What would give each restricted tool away: its name, aliases, keywords, a word only its
/// description has.
const SECRETS: &[(&str, &[&str])] = &[
    (
        "unlock_door",
        &["unlock_door", "open_door", "ZEBRAFISH", "bolt"],
    ),
    (
        "export_payroll",
        &[
            "export_payroll",
            "payroll_export",
            "QUOKKA",
            "salary",
            "ledger",
            "WOMBAT",
        ],
    ),
    (
        "delete_all_records",
        &["delete_all_records", "NARWHAL", "archive"],
    ),
    ("vault_read", &["vault_read", "OKAPI", "vault", "KIWI"]),
    (
        "acme_quarterly_report",
        &["acme_quarterly_report", "PANGOLIN", "quarterly", "TAPIR"],
    ),
];

/// Tools the intern may not see, and everyone else (the anonymous caller included) may.
const INTERN_DENIED: &[&str] = &["unlock_door", "export_payroll", "vault_read"];

/// Two shapes of visibility: an allow-list (only the admin sees the restricted tools, the
/// anonymous caller sees least) and a deny-list (one signed-in caller sees less than the
/// anonymous one, so no check may stand in the anonymous caller for the real one).
#[derive(Clone, Copy, Debug)]
enum Policy {
    AllowList,
    DenyList,
}

const POLICIES: [Policy; 2] = [Policy::AllowList, Policy::DenyList];

fn hidden(policy: Policy, caller: &Caller, tool: &str) -> bool {
    match policy {
        Policy::AllowList => ADMIN_ONLY.contains(&tool) && caller.id() != Some("admin"),
        Policy::DenyList => INTERN_DENIED.contains(&tool) && caller.id() == Some("intern"),
    }
}

fn visibility(policy: Policy) -> impl Fn(&Caller, &CatalogTool) -> bool + Send + Sync + 'static {
    move |caller, tool| !hidden(policy, caller, tool.name())
}

fn vault_json() -> Value {
    json!({"tools": [{
        "name": "vault_read",
        "description": "Read a secret from the vault by key (OKAPI).",
        "inputSchema": {"type": "object", "properties": {
            "key": {"type": "string", "x-mcp-header": "Key"}}, "required": ["key"]},
        "annotations": {"readOnlyHint": true},
        "_meta": {"io.modelcontextprotocol/groups": ["KIWI_secrets"]}
    }]})
}

struct Acme;
impl ScopedProvider for Acme {
    fn provider_for(&self, caller: &Caller) -> Option<Arc<dyn ToolProvider>> {
        (caller.id() == Some("acme")).then(|| {
            let p = JsonCatalogProvider::from_value(&json!({"tools": [{
                "name": "acme_quarterly_report",
                "description": "Build the quarterly revenue report of the acme tenant (PANGOLIN).",
                "inputSchema": {"type": "object", "properties": {"quarter": {"type": "integer"}}},
                "_meta": {"io.modelcontextprotocol/groups": ["TAPIR_reports"]}
            }]}))
            .expect("valid");
            Arc::new(p) as Arc<dyn ToolProvider>
        })
    }
}

/// Only the vault tools a caller may see: the reference catalog's provider.
struct Filtered(Vec<DynamicTool>);
impl ToolProvider for Filtered {
    fn tools(&self) -> Vec<DynamicTool> {
        self.0.clone()
    }
    fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
        ctx: Context,
    ) -> disco_runtime::tool::BoxFuture {
        JsonCatalogProvider::from_value(&vault_json())
            .expect("valid")
            .call(name, arguments, ctx)
    }
}

fn search(exposure: Exposure) -> SearchOptions {
    SearchOptions::default().enabled(true).exposure(exposure)
}

/// The real catalog: every tool, visibility decides.
fn full(policy: Policy, exposure: Exposure) -> Catalog {
    Catalog::builder()
        .provider(JsonCatalogProvider::from_value(&vault_json()).expect("valid"))
        .scoped_provider(Acme)
        .visibility(visibility(policy))
        .search(search(exposure))
        .from_specs(tools_in(module_path!()))
        .expect("catalog builds")
}

/// The catalog `caller` would see if the tools it may not see had never existed.
fn reference(policy: Policy, caller: &Caller, exposure: Exposure) -> Catalog {
    let specs = tools_in(module_path!())
        .filter(|s| !hidden(policy, caller, s.name))
        .filter(|s| !s.name.starts_with("__"));
    let vault = JsonCatalogProvider::from_value(&vault_json())
        .expect("valid")
        .tools();
    let vault_seen = !hidden(policy, caller, "vault_read");
    Catalog::builder()
        .provider(Filtered(if vault_seen { vault } else { Vec::new() }))
        .scoped_provider(Acme)
        .search(search(exposure))
        .from_specs(specs)
        .expect("reference catalog builds")
}

fn callers() -> Vec<Caller> {
    vec![
        Caller::anonymous(),
        Caller::new("user"),
        Caller::new("acme"),
        Caller::new("admin"),
        Caller::new("intern"),
    ]
}

/// Every tool's name, hidden or not.
const NAMES: [&str; 9] = [
    "lock_door",
    "unlock_door",
    "export_payroll",
    "delete_all_records",
    "list_rooms",
    "read_weather",
    "debug_dump",
    "vault_read",
    "acme_quarterly_report",
];

/// Names, misspellings, aliases, prefixes and descriptions of every tool, hidden or not.
fn probes() -> Vec<String> {
    let mut out = Vec::new();
    for n in NAMES {
        let camel: String = n
            .split('_')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect();
        let mut dropped = n.to_string();
        dropped.remove(n.len() / 2);
        let mut swapped: Vec<char> = n.chars().collect();
        swapped.swap(1, 2);
        out.extend([
            n.to_string(),
            n.to_uppercase(),
            n.replace('_', "-"),
            n.replace('_', ""),
            camel,
            format!("{n}s"),
            dropped,
            swapped.into_iter().collect(),
            format!("mcp__disco__{n}"),
            format!("disco.{n}"),
            format!("{n}_tool"),
            n.replace("door", "gate"),
        ]);
    }
    out.extend(
        [
            "open_door",
            "payroll_export",
            "door",
            "unlock",
            "payroll",
            "records",
            "nonexistent_tool",
            "",
            " ",
            "tool_search",
            "execute_tool",
        ]
        .map(String::from),
    );
    out
}

fn queries() -> Vec<String> {
    let mut q = probes();
    q.extend(
        [
            "release the electronic bolt of a door",
            "salary ledger for March",
            "erase every record",
            "read a secret from the vault",
            "quarterly revenue report",
            "ZEBRAFISH",
            "QUOKKA NARWHAL OKAPI PANGOLIN",
            "zebrafsh",
            "weather in Paris",
            "lock the front door",
            "entry bolt",
        ]
        .map(String::from),
    );
    q
}

/// Everything one caller can observe about one probe, in one comparable value.
async fn observe(c: &Catalog, caller: &Caller, probe: &str, query: Option<&str>) -> Value {
    let ctx = Context::builder().caller(caller.clone()).build();
    let resolution = c.resolve(probe, caller);
    let resolved = json!({
        "tool": resolution.tool.as_ref().map(|t| t.name().to_string()),
        "rule": resolution.rule.map(|r| r.as_str()),
        "fuzzy": resolution.rule.map(|r| r.is_fuzzy()),
        "destructive": resolution.tool.as_ref().map(|t| t.is_destructive()),
        "suggestions": resolution.suggestions,
    });
    let call = match c
        .call_with(
            probe,
            Some(json!({"door": "front", "month": "may", "city": "Oslo", "key": "k"})),
            &ctx,
        )
        .await
    {
        Ok(r) => serde_json::to_value(&r).expect("serialisable"),
        Err(e) => json!({"error": e.to_string(), "debug": format!("{e:?}")}),
    };
    let exec = c
        .call_with(
            "execute_tool",
            Some(json!({"name": probe, "arguments": {"door": "back"}})),
            &ctx,
        )
        .await
        .map(|r| serde_json::to_value(&r).expect("serialisable"))
        .unwrap_or_else(|e| json!({"error": e.to_string()}));
    let mut out = json!({"resolve": resolved, "call": call, "execute": exec});
    if let Some(q) = query {
        let found = c
            .call_with(
                "tool_search",
                Some(json!({"query": q, "max_results": 20})),
                &ctx,
            )
            .await
            .map(|r| serde_json::to_value(&r).expect("serialisable"))
            .unwrap_or_else(|e| json!({"error": e.to_string()}));
        out["search"] = found;
        let direct: Vec<(String, f32)> = c
            .search(q, 20, caller)
            .into_iter()
            .map(|(t, s)| (t.name().to_string(), s))
            .collect();
        out["search_direct"] = json!(direct);
        // Loading by name and searching by steps: the probe alone, beside a tool everyone
        // sees, and as a step beside the query.
        let mut by_name = Vec::new();
        for args in [
            json!({"query": format!("select:{probe}")}),
            json!({"query": format!("select:{probe},list_rooms")}),
            json!({"query": format!("select:list_rooms, {probe} ,{probe}")}),
            json!({"queries": [q, probe]}),
            json!({"queries": [probe]}),
            json!({"queries": [format!("select:{probe}"), q]}),
            json!({"queries": [q, format!("select:list_rooms,{probe}"), probe]}),
        ] {
            let r = c
                .call_with("tool_search", Some(args), &ctx)
                .await
                .map(|r| serde_json::to_value(&r).expect("serialisable"))
                .unwrap_or_else(|e| json!({"error": e.to_string()}));
            by_name.push(r);
        }
        out["select_and_steps"] = json!(by_name);
        let selected: Vec<String> = c
            .select(&[probe, q], 20, caller)
            .into_iter()
            .map(|t| t.name().to_string())
            .collect();
        let stepped = c.search_steps(&[q, probe], 20, caller);
        let tools: Vec<(String, f32, usize)> = stepped
            .tools
            .into_iter()
            .map(|(t, s, step)| (t.name().to_string(), s, step))
            .collect();
        out["select_and_steps_direct"] =
            json!({"select": selected, "steps": tools, "unanswered": stepped.unanswered});
    }
    out
}

fn invisible_secrets(policy: Policy, caller: &Caller) -> Vec<&'static str> {
    SECRETS
        .iter()
        .filter(|(tool, _)| match *tool {
            "acme_quarterly_report" => caller.id() != Some("acme"),
            t => hidden(policy, caller, t),
        })
        .flat_map(|(_, words)| words.iter().copied())
        .collect()
}

/// The parts of an observation the caller did not write: what the server disclosed.
fn disclosed(v: &Value) -> String {
    let mut v = v.clone();
    // Error texts echo the requested name (the caller's own input): compare the rest.
    if let Some(call) = v.get_mut("call") {
        if let Some(e) = call.get("error").and_then(Value::as_str) {
            let without = e.split(". Did you mean:").nth(1).unwrap_or("").to_string();
            call["error"] = json!(without);
            call["debug"] = Value::Null;
        }
    }
    for k in ["execute"] {
        if let Some(content) = v.get_mut(k).and_then(|e| e.get_mut("content")) {
            let text = content.to_string();
            let without = text
                .split(". Did you mean:")
                .nth(1)
                .unwrap_or("")
                .to_string();
            *content = json!(without);
        }
    }
    v.to_string()
}

#[tokio::test]
async fn every_path_answers_as_if_hidden_tools_did_not_exist() {
    let mut checked = 0usize;
    for (policy, exposure) in POLICIES.into_iter().flat_map(|p| {
        [
            (p, Exposure::All),
            (
                p,
                Exposure::SearchFirst {
                    pinned: vec!["list_rooms".into()],
                },
            ),
        ]
    }) {
        for caller in callers() {
            // Fresh catalogs per caller, so their counters compare too.
            let a = full(policy, exposure.clone());
            let b = reference(policy, &caller, exposure.clone());
            assert_eq!(
                serde_json::to_value(a.list(&caller)).unwrap(),
                serde_json::to_value(b.list(&caller)).unwrap(),
                "tools/list for {caller:?}"
            );
            let secrets = invisible_secrets(policy, &caller);
            let listed = serde_json::to_string(&a.list(&caller)).unwrap();
            for s in &secrets {
                assert!(!listed.contains(s), "{s} listed for {caller:?}");
            }
            // The instructions (and `tool_search`'s description, in tools/list above) are
            // those of a catalog without the tools the caller may not see.
            let told = a.for_caller(&caller).instructions();
            assert_eq!(
                told,
                b.for_caller(&caller).instructions(),
                "{policy:?} {caller:?}: instructions"
            );
            assert_eq!(
                a.for_caller(&caller).groups(),
                b.for_caller(&caller).groups(),
                "{policy:?} {caller:?}: groups"
            );
            let told = told.expect("every caller may use some tool");
            for s in &secrets {
                assert!(!told.contains(s), "{policy:?} {caller:?}: {s} in {told}");
            }
            let probes = probes();
            let queries = queries();
            for (i, q) in queries.iter().enumerate() {
                let probe = probes.get(i).map(String::as_str).unwrap_or(q);
                let seen_a = observe(&a, &caller, probe, Some(q)).await;
                let seen_b = observe(&b, &caller, probe, Some(q)).await;
                assert_eq!(
                    seen_a, seen_b,
                    "{policy:?} {caller:?} probe {probe:?} query {q:?}: the full catalog answers differently"
                );
                let shown = disclosed(&seen_a);
                for s in &secrets {
                    assert!(
                        !shown.contains(s),
                        "{policy:?} {caller:?} probe {probe:?} query {q:?} discloses {s}: {shown}"
                    );
                }
                // A destructive tool is never reached by a fuzzy correction.
                let r = &seen_a["resolve"];
                assert!(
                    !(r["fuzzy"] == true && r["destructive"] == true),
                    "{probe:?} reached a destructive tool by a fuzzy rule: {r}"
                );
                checked += 1;
            }
            assert_eq!(a.stats(), b.stats(), "counters for {caller:?}");
        }
    }
    eprintln!(
        "{checked} probes x (resolve, tools/call, execute_tool, tool_search x2, select: x4, \
         queries x5, two with select: steps) compared"
    );
}

/// `select:` loads a tool by its exact name for exactly the callers who may see it, on every
/// visibility path: the allow- and deny-lists, a tenant's own tools, a hidden tool (found by
/// search, so by name too), in both exposures; and the answer for a tool the caller may not see
/// is the answer for a name no tool has.
#[tokio::test]
async fn select_loads_a_tool_for_exactly_those_who_may_see_it() {
    let names = NAMES;
    let mut loaded = 0;
    for policy in POLICIES {
        for exposure in [
            Exposure::All,
            Exposure::SearchFirst {
                pinned: vec!["list_rooms".into()],
            },
        ] {
            let c = full(policy, exposure);
            for caller in callers() {
                let ctx = Context::builder().caller(caller.clone()).build();
                let nobody = c
                    .call_with(
                        "tool_search",
                        Some(json!({"query": "select:no_such_tool"})),
                        &ctx,
                    )
                    .await
                    .unwrap();
                for name in names {
                    let sees = match name {
                        "acme_quarterly_report" => caller.id() == Some("acme"),
                        n => !hidden(policy, &caller, n),
                    };
                    let r = c
                        .call_with(
                            "tool_search",
                            Some(json!({"query": format!("select:{name}")})),
                            &ctx,
                        )
                        .await
                        .unwrap();
                    let s = r.structured_content.clone().unwrap();
                    let got: Vec<&str> = s["tools"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t["name"].as_str().unwrap())
                        .collect();
                    if sees {
                        assert_eq!(got, [name], "{policy:?} {caller:?}");
                        loaded += 1;
                    } else {
                        // What a catalog without the tool answers is the differential test's
                        // (every_path_answers_as_if_hidden_tools_did_not_exist); here: nothing.
                        assert_eq!(
                            serde_json::to_value(&r).unwrap(),
                            serde_json::to_value(&nobody).unwrap(),
                            "{policy:?} {caller:?} select:{name}"
                        );
                    }
                }
            }
        }
    }
    assert!(loaded > 40, "only {loaded} tools loaded");
}

#[tokio::test]
async fn guessed_exact_names_are_refused_for_those_who_may_not_see_them() {
    let c = full(Policy::AllowList, Exposure::All);
    let user = Caller::new("user");
    let ctx = Context::builder().caller(user.clone()).build();
    for name in [
        "unlock_door",
        "export_payroll",
        "delete_all_records",
        "vault_read",
        "acme_quarterly_report",
        "open_door",
    ] {
        let err = c
            .call_with(name, Some(json!({"door": "front"})), &ctx)
            .await
            .expect_err("refused");
        assert_eq!(
            err.to_string().split(". Did you mean").next().unwrap(),
            format!("Unknown tool: {name}")
        );
        let r = c
            .call_with(
                "execute_tool",
                Some(json!({"name": name, "arguments": {}})),
                &ctx,
            )
            .await
            .unwrap();
        assert_eq!(r.is_error, Some(true), "{r:?}");
    }
    // The user's `unlock_door` never becomes `lock_door`, and the admin's misspelling of a
    // destructive tool is not corrected by the fuzzy tier.
    assert!(c.resolve("unlock_door", &user).tool.is_none());
    let admin = Caller::new("admin");
    assert_eq!(
        c.resolve("unlock_door", &admin).tool.unwrap().name(),
        "unlock_door"
    );
    assert!(c.resolve("unlok_door", &admin).tool.is_none());
    assert!(c.resolve("delete_all_recrds", &admin).tool.is_none());
    // Counted as unknown, never as reached; the six `exact` are the execute_tool meta-tool.
    let s = c.stats();
    assert_eq!(s.exact, 6, "{s:?}");
    assert_eq!((s.alias, s.equivalent, s.fuzzy), (0, 0, 0), "{s:?}");
    assert_eq!(s.unknown + s.unknown_suggested, 12, "{s:?}");
}

fn tokens() -> BearerTokens {
    BearerTokens::new()
        .token("tok-user-7f3a", Caller::new("user"))
        .token("tok-admin-91c2", Caller::new("admin"))
        .token("tok-acme-5d0e", Caller::new("acme"))
        .token("tok-intern-2b8d", Caller::new("intern"))
        .token("tok-anonymous-0000", Caller::anonymous())
}

/// The token of each of [`callers`].
fn token_of(caller: &Caller) -> &'static str {
    match caller.id() {
        None => "tok-anonymous-0000",
        Some("user") => "tok-user-7f3a",
        Some("admin") => "tok-admin-91c2",
        Some("acme") => "tok-acme-5d0e",
        Some("intern") => "tok-intern-2b8d",
        Some(other) => panic!("no token for {other}"),
    }
}

fn http_server(stateless: bool) -> Server {
    http_server_with(Policy::AllowList, stateless)
}

fn http_server_with(policy: Policy, stateless: bool) -> Server {
    server_in(module_path!())
        .name("disco")
        .provider(JsonCatalogProvider::from_value(&vault_json()).expect("valid"))
        .scoped_provider(Acme)
        .visibility(visibility(policy))
        .search(search(Exposure::All))
        .page_size(2)
        .http_options(
            HttpOptions::default()
                .stateless(stateless)
                .bearer_auth(tokens()),
        )
}

fn body(id: i64, method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

#[tokio::test]
async fn over_http_tokens_decide_the_caller_and_nothing_leaks() {
    let (addr, _stop) = start(http_server(true)).await;
    // No token, a wrong one, a near miss, another scheme: 401 and nothing else.
    for auth in [
        None,
        Some("Bearer nope"),
        Some("Bearer tok-user-7f3"),
        Some("Bearer tok-user-7f3aa"),
        Some("Bearer "),
        Some("Basic dG9rLXVzZXItN2YzYQ=="),
        Some("tok-user-7f3a"),
    ] {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
        let r = post(addr, &headers, &body(1, "tools/list", json!({}))).await;
        assert_eq!(r.status, 401, "{auth:?}");
        assert_eq!(r.header("www-authenticate"), Some("Bearer"));
        assert!(!r.text().contains("tools"));
    }
    for (token, caller) in [
        ("tok-user-7f3a", Caller::new("user")),
        ("bearer tok-acme-5d0e", Caller::new("acme")),
        ("tok-admin-91c2", Caller::new("admin")),
    ] {
        let auth = if token.starts_with("bearer ") {
            token.to_string()
        } else {
            format!("Bearer {token}")
        };
        let h = [("Authorization", auth.as_str())];
        // Every page of tools/list.
        let mut names = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let r = post(addr, &h, &body(2, "tools/list", params)).await;
            assert_eq!(r.status, 200, "{}", r.text());
            let v = r.json();
            for t in v["result"]["tools"].as_array().unwrap() {
                names.push(t["name"].as_str().unwrap().to_string());
            }
            pages += 1;
            cursor = v["result"]["nextCursor"].as_str().map(String::from);
            if cursor.is_none() || pages > 20 {
                break;
            }
        }
        let expected: Vec<String> = full(Policy::AllowList, Exposure::All)
            .list(&caller)
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(names, expected, "{caller:?}");
        let mut transcript = String::new();
        for name in [
            "unlock_door",
            "unlok_door",
            "payroll_export",
            "vault_read",
            "acme_quarterly_report",
            "lock_dor",
        ] {
            let r = post(
                addr,
                &h,
                &body(
                    3,
                    "tools/call",
                    json!({"name": name, "arguments": {"door": "x", "key": "k"}}),
                ),
            )
            .await;
            let v = r.json();
            if let Some(e) = v.get("error") {
                assert_eq!(e["code"], -32602);
                transcript.push_str(&e["data"]["suggestions"].to_string());
                transcript.push_str(
                    e["message"]
                        .as_str()
                        .unwrap()
                        .split(". Did you mean")
                        .nth(1)
                        .unwrap_or(""),
                );
            } else {
                transcript.push_str(&v.to_string());
            }
            let r = post(
                addr,
                &h,
                &body(
                    4,
                    "tools/call",
                    json!({"name": "tool_search", "arguments": {"query": name}}),
                ),
            )
            .await;
            transcript.push_str(&r.text());
            for arguments in [
                json!({"query": format!("select:{name},list_rooms")}),
                json!({"queries": [name, "list the rooms"]}),
                json!({"queries": [format!("select:{name}"), "list the rooms"]}),
            ] {
                let call = json!({"name": "tool_search", "arguments": arguments});
                let r = post(addr, &h, &body(4, "tools/call", call)).await;
                assert_eq!(r.status, 200, "{}", r.text());
                transcript.push_str(&r.text());
            }
        }
        let r = post(addr, &h, &body(5, "tools/call", json!({"name": "tool_search", "arguments": {"query": "ZEBRAFISH salary vault quarterly erase archive bolt"}}))).await;
        transcript.push_str(&r.text());
        for s in invisible_secrets(Policy::AllowList, &caller) {
            assert!(!transcript.contains(s), "{caller:?} sees {s}: {transcript}");
        }
        if caller.id() == Some("admin") {
            assert!(
                transcript.contains("ZEBRAFISH"),
                "the admin finds its tools"
            );
        }
    }
}

/// `initialize` (a session of the 2025 era) and `server/discover` (the stateless protocol)
/// answer each token's caller the instructions written for that caller, on every policy: the
/// groups it may use, none of another caller's.
#[tokio::test]
async fn over_http_each_caller_is_told_its_own_groups() {
    for policy in POLICIES {
        let (session_addr, _stop) = start(http_server_with(policy, false)).await;
        let (stateless_addr, _stop2) = start(http_server_with(policy, true)).await;
        let catalog = full(policy, Exposure::All);
        for caller in callers() {
            let auth = format!("Bearer {}", token_of(&caller));
            let h = [("Authorization", auth.as_str())];
            let expected = catalog.for_caller(&caller).instructions();
            let expected = expected.expect("every caller may use some tool");
            let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}});
            let r = post(session_addr, &h, init.to_string().as_bytes()).await;
            assert_eq!(r.status, 200, "{}", r.text());
            let initialized = r.json()["result"]["instructions"].clone();
            let discover_headers = [h[0], ("Mcp-Method", "server/discover")];
            let r = post_modern(
                stateless_addr,
                &discover_headers,
                &modern_request(2, "server/discover", json!({})),
            )
            .await;
            assert_eq!(r.status, 200, "{}", r.text());
            let discovered = r.json()["result"]["instructions"].clone();
            for (how, told) in [("initialize", initialized), ("discover", discovered)] {
                assert_eq!(told, json!(expected), "{policy:?} {caller:?} {how}");
                let told = told.as_str().unwrap_or_default();
                assert!(told.contains("tool_search"), "{told}");
                for s in invisible_secrets(policy, &caller) {
                    assert!(
                        !told.contains(s),
                        "{policy:?} {caller:?} {how}: {s} in {told}"
                    );
                }
            }
        }
    }
}

/// Instructions the author gives are sent as given, to every caller, on every policy, by
/// `initialize` and by `server/discover`; an empty text sends none at all.
#[tokio::test]
async fn the_authors_instructions_replace_the_written_ones() {
    for policy in POLICIES {
        for (given, sent) in [
            ("Ask for a room first.", json!("Ask for a room first.")),
            ("", Value::Null),
        ] {
            let (session_addr, _stop) =
                start(http_server_with(policy, false).instructions(given)).await;
            let (stateless_addr, _stop2) =
                start(http_server_with(policy, true).instructions(given)).await;
            for caller in callers() {
                let auth = format!("Bearer {}", token_of(&caller));
                let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}}});
                let r = post(
                    session_addr,
                    &[("Authorization", auth.as_str())],
                    init.to_string().as_bytes(),
                )
                .await;
                assert_eq!(r.status, 200, "{}", r.text());
                let result = r.json()["result"].clone();
                assert_eq!(
                    result["instructions"], sent,
                    "{policy:?} {caller:?} {given:?}"
                );
                let r = post_modern(
                    stateless_addr,
                    &[
                        ("Authorization", auth.as_str()),
                        ("Mcp-Method", "server/discover"),
                    ],
                    &modern_request(2, "server/discover", json!({})),
                )
                .await;
                assert_eq!(r.status, 200, "{}", r.text());
                let result = r.json()["result"].clone();
                assert_eq!(
                    result["instructions"], sent,
                    "{policy:?} {caller:?} {given:?} discover"
                );
            }
        }
    }
}

#[tokio::test]
async fn http_header_validation_does_not_reveal_hidden_tools() {
    // A stateless-protocol call names the tool in `Mcp-Name`; rmcp checks `Mcp-Param-*`
    // headers against the tool's schema. A caller who may not see `vault_read` must get the
    // same answer as for a tool that does not exist.
    let (addr, _stop) = start(http_server(true)).await;
    let user = [("Authorization", "Bearer tok-user-7f3a")];
    let mut answers = Vec::new();
    for name in ["vault_read", "vault_reed"] {
        let body = modern_call(1, name, json!({"key": "k"}));
        let mut headers = user.to_vec();
        headers.push(("Mcp-Method", "tools/call"));
        headers.push(("Mcp-Name", name));
        let r = post_modern(addr, &headers, &body).await;
        let v = r.json();
        let message = v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .replace(name, "NAME");
        answers.push((r.status, v["error"]["code"].clone(), message));
    }
    assert_eq!(
        answers[0], answers[1],
        "hidden vs unknown tool: {answers:?}"
    );
    // The admin's call with the right header works.
    let mut headers = vec![
        ("Authorization", "Bearer tok-admin-91c2"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "vault_read"),
        ("Mcp-Param-Key", "k"),
    ];
    let r = post_modern(
        addr,
        &headers,
        &modern_call(2, "vault_read", json!({"key": "k"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    headers.pop();
}

#[test]
fn http_defaults_accept_only_loopback() {
    let o = HttpOptions::default();
    assert_eq!(o.allowed_hosts, ["localhost", "127.0.0.1", "::1"]);
    assert!(o
        .allowed_origins
        .iter()
        .all(|h| h.contains("localhost") || h.contains("127.0.0.1") || h.contains("[::1]")));
    assert!(o.auth.is_none());
    assert!(!o.stateless);
}

/// A stateless caller (protocol 2026-07-28, `Mcp-Name` naming the tool, no `Mcp-Param-*`
/// headers) over every probe of the matrix, under both policies: each tools/call answers as
/// the catalog without the caller's hidden tools answers the same call (the error, its
/// `data`, or the result), and tools/list shows what that catalog lists. The only other
/// answer allowed is the header check's, for a tool the caller may see by its exact name.
#[tokio::test]
async fn stateless_callers_get_the_answers_of_a_catalog_without_their_hidden_tools() {
    let arguments = json!({"door": "front", "month": "may", "city": "Oslo", "key": "k"});
    let mut checked = 0usize;
    for policy in POLICIES {
        let (addr, _stop) = start(http_server_with(policy, true)).await;
        for caller in callers() {
            let reference = reference(policy, &caller, Exposure::All);
            let ctx = Context::builder().caller(caller.clone()).build();
            let auth = format!("Bearer {}", token_of(&caller));
            let r = post_modern(
                addr,
                &[
                    ("Authorization", auth.as_str()),
                    ("Mcp-Method", "tools/list"),
                ],
                &modern_request(1, "tools/list", json!({})),
            )
            .await;
            let listed: Vec<String> = r.json()["result"]["tools"]
                .as_array()
                .unwrap_or_else(|| panic!("{policy:?} {caller:?}: {}", r.text()))
                .iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_string())
                .collect();
            let expected: Vec<String> = reference
                .list(&caller)
                .iter()
                .take(2)
                .map(|t| t.name.to_string())
                .collect();
            assert_eq!(
                listed, expected,
                "{policy:?} {caller:?}: first tools/list page"
            );
            for probe in probes() {
                if probe.trim().is_empty() {
                    continue; // not a valid Mcp-Name header
                }
                let r = post_modern(
                    addr,
                    &[
                        ("Authorization", auth.as_str()),
                        ("Mcp-Method", "tools/call"),
                        ("Mcp-Name", probe.as_str()),
                    ],
                    &modern_call(2, &probe, arguments.clone()),
                )
                .await;
                let v = r.json();
                let expected = reference
                    .call_with(&probe, Some(arguments.clone()), &ctx)
                    .await;
                let seen_by_exact_name = reference.get(&probe).is_some();
                match (&v["error"], expected) {
                    (e, _) if e["code"] == -32020 && seen_by_exact_name => {}
                    (e, Err(err)) => {
                        assert_eq!(e["code"], -32602, "{policy:?} {caller:?} {probe:?}: {v}");
                        assert_eq!(
                            e["message"].as_str(),
                            Some(err.to_string().as_str()),
                            "{policy:?} {caller:?} {probe:?}: {v}"
                        );
                    }
                    (Value::Null, Ok(result)) => {
                        let result = serde_json::to_value(&result).unwrap();
                        assert_eq!(
                            v["result"]["content"], result["content"],
                            "{policy:?} {caller:?} {probe:?}"
                        );
                        assert_eq!(v["result"]["isError"], result["isError"]);
                    }
                    (e, Ok(result)) => panic!(
                        "{policy:?} {caller:?} {probe:?}: error {e} where the reference answers {result:?}"
                    ),
                }
                for s in invisible_secrets(policy, &caller) {
                    let shown = r.text().replace(probe.as_str(), "");
                    assert!(
                        !shown.contains(s),
                        "{policy:?} {caller:?} {probe:?} discloses {s}: {shown}"
                    );
                }
                checked += 1;
            }
        }
    }
    eprintln!("{checked} stateless tools/call probes compared over HTTP");
}
