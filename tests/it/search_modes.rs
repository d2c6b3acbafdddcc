//! `tool_search` over JSON-RPC (stateless Streamable HTTP) in its three modes: one `query`,
//! `queries` (one per step of a task, balanced so that every step gets its best tools first)
//! and `select:` (tools loaded by name), and the input it refuses.
//!
//! Its server serves this module's tools alone (`common::server_in`): the tests below generate
//! their cases from exactly these tools.

use crate::common::http::*;
use crate::common::server_in;
use disco_runtime::catalog::SearchOptions;
use disco_runtime::search::MAX_QUERY_STEPS;
use disco_runtime::{mcp_tool, HttpOptions};
use serde_json::{json, Value};

/// Search academic papers by topic and return their titles and abstracts.
#[mcp_tool(read_only)]
fn search_papers(topic: String) -> String {
    format!("papers on {topic}")
}

/// Save a text note to a markdown file in the notes folder.
#[mcp_tool]
fn write_note(file: String, text: String) -> String {
    format!("{} bytes to {file}", text.len())
}

/// Get the weather forecast for a city.
#[mcp_tool(read_only)]
fn get_weather(city: String) -> String {
    format!("sunny in {city}")
}

/// Send an email message to a recipient.
#[mcp_tool]
fn send_email(to: String, body: String) -> String {
    format!("sent {} bytes to {to}", body.len())
}

/// Convert an amount of money between two currencies at today's exchange rate.
#[mcp_tool(read_only)]
fn convert_currency(amount: f64, from: String, to: String) -> String {
    format!("{amount} {from} in {to}")
}

/// Purge the cache of compiled templates; found by search, not listed.
#[mcp_tool(destructive, hidden)]
fn purge_template_cache() -> String {
    "purged".into()
}

/// The tools of this file and a query each that names what it does in other words than its
/// name.
const TASKS: &[(&str, &str)] = &[
    ("search_papers", "academic papers about protein folding"),
    ("write_note", "save a note to a markdown file"),
    ("get_weather", "weather forecast for Oslo"),
    ("send_email", "email a message to Ana"),
    (
        "convert_currency",
        "exchange rate to convert euros to dollars",
    ),
    ("purge_template_cache", "purge the compiled template cache"),
];

async fn server() -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    start(
        server_in(module_path!())
            .search(SearchOptions::default().enabled(true))
            .http_options(HttpOptions::default().stateless(true)),
    )
    .await
}

/// `tool_search` with `arguments`: the JSON-RPC result.
async fn search(addr: std::net::SocketAddr, arguments: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "tool_search", "arguments": arguments}});
    let r = post(addr, &[], body.to_string().as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert!(v.get("error").is_none(), "{v}");
    v["result"].clone()
}

fn found(result: &Value) -> Vec<(String, Option<u64>)> {
    result["structuredContent"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {result}"))
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t["step"].as_u64()))
        .collect()
}

/// `tool_search` with `arguments`, which must list exactly the tools `expected` (name, step):
/// the JSON-RPC result.
async fn finds(
    addr: std::net::SocketAddr,
    arguments: Value,
    expected: &[(&str, Option<u64>)],
) -> Value {
    let r = search(addr, arguments.clone()).await;
    let expected: Vec<(String, Option<u64>)> =
        expected.iter().map(|(n, s)| (n.to_string(), *s)).collect();
    assert_eq!(found(&r), expected, "{arguments}: {}", text(&r));
    r
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Every ordered pair of tasks as two steps, with room for two results: each step gets its
/// own tool, in step order, each result naming its step; with room for more, the first two
/// are still one per step. The same steps as one query find them too.
#[tokio::test]
async fn every_step_gets_its_best_tool_first() {
    let (addr, _stop) = server().await;
    for &(a, qa) in TASKS {
        for &(b, qb) in TASKS.iter().filter(|(b, _)| *b != a) {
            let two = json!({"queries": [qa, qb], "max_results": 2});
            finds(addr, two, &[(a, Some(0)), (b, Some(1))]).await;
            let r = search(addr, json!({"queries": [qa, qb], "max_results": 5})).await;
            assert_eq!(
                &found(&r)[..2],
                [(a.to_string(), Some(0)), (b.to_string(), Some(1))],
                "{}",
                text(&r)
            );
            // The text the model reads carries the same JSON as the structured content.
            let parsed: Value = serde_json::from_str(&text(&r)).unwrap();
            assert_eq!(parsed, r["structuredContent"]);
        }
    }
}

/// A tool two steps both find comes once, for the first of them; a step that finds nothing
/// is named in `unanswered_steps`, and the others get its room.
#[tokio::test]
async fn balancing_deduplicates_and_names_unanswered_steps() {
    let (addr, _stop) = server().await;
    let r = search(
        addr,
        json!({"queries": ["weather forecast", "forecast of the weather in Rome", "email Ana"], "max_results": 3}),
    )
    .await;
    let names = found(&r);
    assert_eq!(
        names[0],
        ("get_weather".to_string(), Some(0)),
        "{}",
        text(&r)
    );
    assert_eq!(
        names.iter().filter(|(n, _)| n == "get_weather").count(),
        1,
        "{names:?}"
    );
    assert!(
        names.contains(&("send_email".to_string(), Some(2))),
        "{names:?}"
    );
    assert!(r["structuredContent"].get("unanswered_steps").is_none());

    let r = search(
        addr,
        json!({"queries": ["zebra quantum saxophone", "send an email"], "max_results": 3}),
    )
    .await;
    assert_eq!(r["structuredContent"]["unanswered_steps"], json!([0]));
    assert_eq!(found(&r)[0], ("send_email".to_string(), Some(1)));
    assert!(found(&r).iter().all(|(_, step)| *step == Some(1)));

    let r = search(addr, json!({"queries": ["zebra quantum", "saxophone"]})).await;
    assert_eq!(found(&r), []);
    assert_eq!(r["structuredContent"]["unanswered_steps"], json!([0, 1]));
    assert!(text(&r).contains("hint"));
}

/// A single query answers as it always did: no `step` on results, no `unanswered_steps`.
#[tokio::test]
async fn every_step_has_room_for_its_best_tool_unless_the_caller_limits_it() {
    // One step per tool of this file, more steps than the default number of results: each
    // step still brings its own tool, and names itself once.
    let (addr, _stop) = server().await;
    let steps: Vec<&str> = TASKS.iter().map(|(_, q)| *q).collect();
    let r = search(addr, json!({ "queries": steps })).await;
    let hits = found(&r);
    for (i, (tool, _)) in TASKS.iter().enumerate() {
        assert!(
            hits.iter()
                .any(|(name, step)| name == tool && *step == Some(i as u64)),
            "step {i} ({tool}) has no result: {hits:?}"
        );
    }
    // A caller who says how many gets that many.
    let r = search(addr, json!({ "queries": steps, "max_results": 2 })).await;
    assert_eq!(found(&r).len(), 2, "{r}");
}

#[tokio::test]
async fn a_single_query_keeps_its_answer_shape() {
    let (addr, _stop) = server().await;
    for &(tool, query) in TASKS {
        let r = search(addr, json!({"query": query})).await;
        let s = &r["structuredContent"];
        assert_eq!(s["tools"][0]["name"], tool, "{s}");
        assert!(s.get("unanswered_steps").is_none());
        for t in s["tools"].as_array().unwrap() {
            assert!(t.get("step").is_none(), "{t}");
            assert!(t["score"].is_number());
        }
    }
}

/// `select:` returns the tools named, exactly named ones first in the order asked, then names
/// that resolve by the catalog's rules; each once; the hidden tool too (search finds it);
/// unknown names bring nothing and, alone, a hint.
#[tokio::test]
async fn select_loads_tools_by_name_exact_names_first() {
    let (addr, _stop) = server().await;
    let names: Vec<&str> = TASKS.iter().map(|(n, _)| *n).collect();
    // Every ordered pair, and every tool alone with its name in another spelling.
    for &a in &names {
        for &b in names.iter().filter(|b| **b != a) {
            let r = search(addr, json!({"query": format!("select:{a},{b}")})).await;
            assert_eq!(
                found(&r),
                [(a.to_string(), None), (b.to_string(), None)],
                "{}",
                text(&r)
            );
            let spelled = b.to_uppercase().replace('_', "-");
            let r = search(
                addr,
                json!({"query": format!("select: {spelled} , {a},{a}, nope_nothing")}),
            )
            .await;
            assert_eq!(
                found(&r),
                [(a.to_string(), None), (b.to_string(), None)],
                "{spelled}: {}",
                text(&r)
            );
        }
    }
    // More names than the default number of results: all of them, unless max_results says.
    let all = format!("select:{}", names.join(","));
    let r = search(addr, json!({"query": all, "max_results": 2})).await;
    assert_eq!(found(&r).len(), 2);
    let r = search(addr, json!({"query": all})).await;
    assert_eq!(found(&r).len(), names.len());
    let r = search(addr, json!({"query": "select:purge_template_cache"})).await;
    assert_eq!(found(&r), [("purge_template_cache".to_string(), None)]);
    assert_eq!(r["structuredContent"]["tools"][0]["score"], 1.0);
    assert!(r["structuredContent"]["tools"][0]["inputSchema"].is_object());
    for unknown in [
        "select:nope_nothing",
        "select:",
        "select: , ,",
        "select:tool_search",
    ] {
        let r = search(addr, json!({"query": unknown})).await;
        assert_eq!(found(&r), [], "{unknown}: {}", text(&r));
        assert!(
            r["structuredContent"]["hint"]
                .as_str()
                .unwrap()
                .contains("names"),
            "{unknown}"
        );
    }
}

/// A step of `queries` may load tools by name: every ordered pair of tasks, one step naming
/// its tool and one searching for the other's, in both orders, with room for two and with
/// room for one: the named tool first, for its step, then the searched one for its step (the
/// room the named tools leave); a step that names a tool no one has is unanswered, and the
/// hidden tool comes by name.
#[tokio::test]
async fn a_step_may_load_tools_by_name_and_the_others_share_the_rest() {
    let (addr, _stop) = server().await;
    for &(a, _) in TASKS {
        for &(b, qb) in TASKS.iter().filter(|(b, _)| *b != a) {
            let select = format!("select:{a}");
            let first = json!({"queries": [select, qb], "max_results": 2});
            finds(addr, first, &[(a, Some(0)), (b, Some(1))]).await;
            let second = json!({"queries": [qb, select], "max_results": 2});
            let r = finds(addr, second, &[(a, Some(1)), (b, Some(0))]).await;
            assert_eq!(r["structuredContent"]["tools"][0]["score"], 1.0);
            let one = json!({"queries": [qb, select], "max_results": 1});
            finds(addr, one, &[(a, Some(1))]).await;
        }
    }
    let r = search(
        addr,
        json!({"queries": ["select:nope_nothing", "send an email"]}),
    )
    .await;
    assert_eq!(r["structuredContent"]["unanswered_steps"], json!([0]));
    assert_eq!(found(&r)[0], ("send_email".to_string(), Some(1)));
}

/// Input `tool_search` refuses, each with a result the model can act on (`isError`, a text
/// that names the field), and the server serving on after it.
#[tokio::test]
async fn bad_input_gets_an_error_that_says_what_to_send() {
    let (addr, _stop) = server().await;
    let too_many: Vec<String> = (0..=MAX_QUERY_STEPS).map(|i| format!("step {i}")).collect();
    let cases = [
        (
            json!({"query": "weather", "queries": ["weather"]}),
            "not both",
        ),
        (json!({}), "needs `query`"),
        (json!({"max_results": 3}), "needs `query`"),
        (json!({"queries": []}), "queries"),
        (json!({"queries": too_many}), "queries"),
        (json!({"queries": ["weather", 7]}), "queries"),
        (json!({"queries": ["weather", {"q": "x"}]}), "queries"),
        (json!({"queries": ["weather", ""]}), "queries"),
        (json!({"queries": ["weather", "   "]}), "queries"),
        (json!({"queries": {"0": "weather"}}), "queries"),
        (json!({"queries": null}), "queries"),
        (json!({"query": {"text": "weather"}}), "query"),
        (json!({"query": ["weather"]}), "query"),
    ];
    for (arguments, says) in cases {
        let r = search(addr, arguments.clone()).await;
        assert_eq!(r["isError"], true, "{arguments}: {r}");
        let message = text(&r);
        assert!(message.contains(says), "{arguments}: {message}");
    }
    // Exactly the most steps there may be is fine.
    let most: Vec<String> = (0..MAX_QUERY_STEPS)
        .map(|i| format!("weather {i}"))
        .collect();
    let r = search(addr, json!({"queries": most})).await;
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(found(&r)[0].0, "get_weather");
}
