//! Discovery for large catalogs: tool_search, execute_tool, hidden tools, search-first
//! exposure, providers, request-scoped providers, and visibility on every path.

use std::sync::Arc;

use disco_runtime::catalog::provider::{DynamicTool, JsonCatalogProvider, ScopedProvider};
use disco_runtime::catalog::{Exposure, SearchOptions};
use disco_runtime::tool::BoxFuture;
use disco_runtime::{
    mcp_tool, Caller, Catalog, CatalogProblem, CatalogTool, Context, NameClaim, ToolProvider,
};
use serde_json::{json, Map, Value};

use crate::common::tools_in;

/// Convert a temperature from Celsius to Fahrenheit and return it as text.
#[mcp_tool(read_only, keywords("temperature", "weather"))]
fn celsius_to_fahrenheit(celsius: f64) -> String {
    format!("{}", celsius * 9.0 / 5.0 + 32.0)
}

/// Reset the admin password of a user account. Only administrators may see this tool.
#[mcp_tool(destructive, hidden)]
fn reset_admin_password(user: String) -> String {
    format!("reset {user}")
}

fn catalog_json() -> Value {
    json!({"tools": [
        {"name": "send_email", "description": "Send an email message to a recipient with a subject and body.",
         "_meta": {"disco/aliases": ["email_send", "mail"], "disco/keywords": ["message"]},
         "inputSchema": {"type": "object", "properties": {"to": {"type": "string", "description": "recipient address"}, "subject": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "body"]}},
        {"name": "list_files", "description": "List the files in a directory of the workspace.",
         "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
         "annotations": {"readOnlyHint": true}},
        {"name": "get_weather_forecast", "description": "Get the weather forecast for a city for the next days.",
         "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}}, "required": ["city"]},
         "annotations": {"readOnlyHint": true}},
        {"name": "delete_file", "description": "Delete a file from the workspace for good.",
         "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
    ]})
}

fn admin_only(caller: &Caller, tool: &CatalogTool) -> bool {
    tool.name() != "reset_admin_password" || caller.id() == Some("admin")
}

fn catalog(exposure: Exposure) -> Catalog {
    Catalog::builder()
        .provider(JsonCatalogProvider::from_value(&catalog_json()).unwrap())
        .visibility(admin_only)
        .search(SearchOptions::default().enabled(true).exposure(exposure))
        .from_specs(tools_in(module_path!()))
        .unwrap()
}

fn names(tools: &[disco_runtime::rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

fn text(r: &disco_runtime::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[test]
fn all_exposure_lists_visible_unhidden_tools_and_meta_tools() {
    let c = catalog(Exposure::All);
    let listed = names(&c.list(&Caller::anonymous()));
    assert_eq!(&listed[..2], ["tool_search", "execute_tool"]);
    assert!(listed.contains(&"send_email".to_string()));
    assert!(listed.contains(&"celsius_to_fahrenheit".to_string()));
    // Hidden: never listed, even for the admin.
    assert!(!listed.contains(&"reset_admin_password".to_string()));
    let admin = names(&c.list(&Caller::new("admin")));
    assert!(!admin.contains(&"reset_admin_password".to_string()));
}

#[test]
fn search_first_lists_only_meta_and_pinned_tools() {
    let c = catalog(Exposure::SearchFirst {
        pinned: vec!["list_files".into()],
    });
    let tools = c.list(&Caller::anonymous());
    assert_eq!(names(&tools), ["tool_search", "execute_tool", "list_files"]);
    let pinned = tools.iter().find(|t| t.name == "list_files").unwrap();
    assert_eq!(
        pinned.meta.as_ref().unwrap().get("anthropic/alwaysLoad"),
        Some(&Value::Bool(true))
    );
}

#[test]
fn keywords_become_search_hints() {
    let c = catalog(Exposure::All);
    let tool = c.get("celsius_to_fahrenheit").unwrap();
    assert_eq!(
        tool.entry()
            .meta
            .as_ref()
            .unwrap()
            .get("anthropic/searchHint"),
        Some(&json!("temperature, weather"))
    );
}

#[tokio::test]
async fn tool_search_ranks_and_returns_schemas() {
    let c = catalog(Exposure::All);
    let r = c
        .call(
            "tool_search",
            json!({"query": "what will the weather be in Paris"}),
        )
        .await
        .unwrap();
    let s = r.structured_content.unwrap();
    assert_eq!(s["tools"][0]["name"], "get_weather_forecast");
    assert!(s["tools"][0]["inputSchema"]["properties"]["city"].is_object());
    let r = c
        .call(
            "tool_search",
            json!({"query": "email someone", "compact": true, "max_results": 1}),
        )
        .await
        .unwrap();
    let s = r.structured_content.unwrap();
    assert_eq!(s["tools"].as_array().unwrap().len(), 1);
    assert_eq!(s["tools"][0]["name"], "send_email");
    assert!(s["tools"][0].get("inputSchema").is_none());
}

/// Scores are rounded to three decimals as they are written, in the structured result and in
/// the text that carries the same JSON (a float widened from f32 would print as
/// `0.6290000081062317`): checked for every score of a query made from each tool's words.
#[tokio::test]
async fn tool_search_scores_read_as_three_decimals() {
    let c = catalog(Exposure::All);
    let queries: Vec<String> = c
        .tools()
        .iter()
        .map(|t| format!("{} {}", t.name().replace('_', " "), t.description()))
        .collect();
    let mut seen = 0;
    for query in &queries {
        let r = c
            .call("tool_search", json!({"query": query, "max_results": 20}))
            .await
            .unwrap();
        let text = r.content[0].as_text().unwrap().text.clone();
        let structured = serde_json::to_string(&r.structured_content.unwrap()).unwrap();
        for written in [text, structured] {
            for part in written.split("\"score\":").skip(1) {
                let number: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
                assert!(decimals <= 3, "score `{number}` for {query:?}");
                seen += 1;
            }
        }
    }
    assert!(seen > queries.len(), "only {seen} scores seen");
}

#[tokio::test]
async fn tool_search_abstains_with_a_hint() {
    let c = catalog(Exposure::All);
    let r = c
        .call("tool_search", json!({"query": "zebra quantum saxophone"}))
        .await
        .unwrap();
    let s = r.structured_content.unwrap();
    assert_eq!(s["tools"], json!([]));
    assert!(s["hint"].as_str().unwrap().contains("other words"));
}

#[tokio::test]
async fn hidden_tools_are_found_and_called_only_by_those_who_may_see_them() {
    let c = catalog(Exposure::All);
    let admin = Context::for_caller(Caller::new("admin"));
    let anon = Context::for_caller(Caller::anonymous());
    let query = json!({"query": "reset the admin password"});
    let r = c
        .call_with("tool_search", Some(query.clone()), &admin)
        .await
        .unwrap();
    assert_eq!(
        r.structured_content.unwrap()["tools"][0]["name"],
        "reset_admin_password"
    );
    let r = c
        .call_with("tool_search", Some(query), &anon)
        .await
        .unwrap();
    assert!(!text(&r).contains("reset_admin_password"));

    let call = json!({"name": "reset_admin_password", "arguments": {"user": "bob"}});
    let r = c
        .call_with("execute_tool", Some(call.clone()), &admin)
        .await
        .unwrap();
    assert_eq!(text(&r), "reset bob");
    // A direct tools/call works for the admin too.
    let r = c
        .call_with("reset_admin_password", Some(json!({"user": "x"})), &admin)
        .await
        .unwrap();
    assert_eq!(text(&r), "reset x");
    // Anyone else: refused as unknown, even with the exact name, on both paths.
    let r = c
        .call_with("execute_tool", Some(call), &anon)
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).starts_with("Unknown tool: reset_admin_password"),
        "{}",
        text(&r)
    );
    let err = c
        .call_with("reset_admin_password", Some(json!({"user": "x"})), &anon)
        .await
        .unwrap_err();
    assert!(!err.to_string().contains("Did you mean"), "{err}");
    let err = c
        .call_with("reset_admin_pasword", Some(json!({})), &anon)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Unknown tool: reset_admin_pasword");
}

#[tokio::test]
async fn execute_tool_uses_the_same_repair_path() {
    let c = catalog(Exposure::All);
    let r = c
        .call(
            "execute_tool",
            json!({"name": "get_weather_forcast", "arguments": {"City": "Oslo", "days": "3"}}),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert!(text(&r).contains(r#""city":"Oslo""#), "{}", text(&r));
    let meta = r.meta.unwrap();
    assert_eq!(
        meta["disco/corrections"]["tool"]["resolved"],
        "get_weather_forecast"
    );
}

#[tokio::test]
async fn provider_tools_are_validated_against_their_schema() {
    let c = catalog(Exposure::All);
    let r = c
        .call("get_weather_forecast", json!({"city": "Oslo", "days": 0}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("`/days`"), "{}", text(&r));
}

struct TenantTools;

impl ToolProvider for TenantTools {
    fn tools(&self) -> Vec<DynamicTool> {
        let schema: Map<String, Value> =
            serde_json::from_value(json!({"type": "object", "properties": {}})).unwrap();
        let mut tool = disco_runtime::rmcp::model::Tool::new(
            "acme_invoice_report",
            "Build the ACME invoice report for this month.",
            Arc::new(schema),
        );
        let mut ann = disco_runtime::rmcp::model::ToolAnnotations::new();
        ann.read_only_hint = Some(true);
        tool.annotations = Some(ann);
        vec![DynamicTool::new(tool)]
    }
    fn call(&self, name: &str, _arguments: Map<String, Value>, ctx: Context) -> BoxFuture {
        let text = format!("{name} for {}", ctx.caller().id().unwrap_or("?"));
        Box::pin(async move {
            disco_runtime::CallToolResult::success(vec![disco_runtime::Content::text(text)])
        })
    }
}

struct PerTenant;

impl ScopedProvider for PerTenant {
    fn provider_for(&self, caller: &Caller) -> Option<Arc<dyn ToolProvider>> {
        (caller.id() == Some("acme")).then(|| Arc::new(TenantTools) as Arc<dyn ToolProvider>)
    }
}

#[tokio::test]
async fn scoped_tools_exist_only_for_their_caller() {
    let c = Catalog::builder()
        .scoped_provider(PerTenant)
        .search(SearchOptions::default().enabled(true))
        .from_specs(tools_in(module_path!()))
        .unwrap();
    let acme = Context::for_caller(Caller::new("acme"));
    let other = Context::for_caller(Caller::new("globex"));
    assert!(names(&c.list(acme.caller())).contains(&"acme_invoice_report".to_string()));
    assert!(!names(&c.list(other.caller())).contains(&"acme_invoice_report".to_string()));
    let r = c
        .call_with("acme_invoice_report", None, &acme)
        .await
        .unwrap();
    assert_eq!(text(&r), "acme_invoice_report for acme");
    assert!(c
        .call_with("acme_invoice_report", None, &other)
        .await
        .is_err());
    let hits = c.search("invoice report", 5, other.caller());
    assert!(hits.iter().all(|(t, _)| t.name() != "acme_invoice_report"));
}

#[test]
fn a_provider_tool_clashing_with_a_macro_tool_is_a_catalog_error() {
    let clash = json!([{"name": "celsius_to_fahrenheit", "description": "x", "inputSchema": {"type": "object"}}]);
    let err = Catalog::builder()
        .provider(JsonCatalogProvider::from_value(&clash).unwrap())
        .from_specs(tools_in(module_path!()))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("`celsius_to_fahrenheit` is the name of tool"),
        "{err}"
    );
}

#[test]
fn a_name_clashing_with_an_alias_names_both_sides_in_plain_words() {
    let clash = json!([
        {"name": "archive_mail", "description": "x", "inputSchema": {"type": "object"},
         "_meta": {"disco/aliases": ["stash_mail"]}},
        {"name": "stash_mail", "description": "y", "inputSchema": {"type": "object"}},
    ]);
    let err = Catalog::builder()
        .provider(JsonCatalogProvider::from_value(&clash).unwrap())
        .from_specs([])
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`stash_mail` is an alias of tool `archive_mail` at ")
            && text.contains(" and the name of tool `stash_mail` at "),
        "{text}"
    );
    // `{:?}` (what `unwrap()` and a returned error print) reads the same as `{}`.
    assert_eq!(format!("{err:?}"), text);
    // The same problem, as a value a test can match.
    match err.problems() {
        [CatalogProblem::DuplicateName {
            name,
            first: NameClaim::Alias { tool: first, .. },
            second: NameClaim::Name { tool: second, .. },
            ..
        }] => assert_eq!(
            (&name[..], &first[..], &second[..]),
            ("stash_mail", "archive_mail", "stash_mail")
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_tool_named_as_a_meta_tool_and_a_missing_pin_are_problems_of_their_kind() {
    let clash =
        json!([{"name": "tool_search", "description": "x", "inputSchema": {"type": "object"}}]);
    let err = Catalog::builder()
        .provider(JsonCatalogProvider::from_value(&clash).unwrap())
        .search(
            SearchOptions::default()
                .enabled(true)
                .exposure(Exposure::SearchFirst {
                    pinned: vec!["nowhere".to_string()],
                }),
        )
        .from_specs([])
        .unwrap_err();
    let problems = err.problems();
    assert!(
        problems.iter().any(|p| matches!(p,
            CatalogProblem::DuplicateName { name, first: NameClaim::MetaTool, second: NameClaim::Name { tool, .. }, .. }
                if name == "tool_search" && tool == "tool_search")),
        "{err}"
    );
    assert!(
        problems
            .iter()
            .any(|p| matches!(p, CatalogProblem::PinnedMissing { name, .. } if name == "nowhere")),
        "{err}"
    );
    // Each reads as its line of the error.
    for p in problems {
        assert!(err.to_string().contains(&format!("- {p}\n")), "{p}");
    }
}

#[tokio::test]
async fn json_catalog_aliases_resolve_as_declared() {
    let c = catalog(Exposure::All);
    let r = c.resolve("mail", &Caller::anonymous());
    assert_eq!(r.tool.unwrap().name(), "send_email");
    assert_eq!(r.rule, Some(disco_runtime::NameRule::Alias));
    let r = c
        .call("email_send", json!({"to": "a@b.c", "body": "hi"}))
        .await
        .unwrap();
    assert_eq!(
        r.meta.unwrap()["disco/corrections"]["tool"]["rule"],
        "alias"
    );
}

/// A provider whose tools are all out of service now, as a gateway's are while their server
/// is down: to `admin`, who could see them, every name it is asked about is "down"; to anyone
/// else, nothing.
struct OutOfService;

impl ToolProvider for OutOfService {
    fn tools(&self) -> Vec<DynamicTool> {
        Vec::new()
    }

    fn call(&self, name: &str, _: Map<String, Value>, _: Context) -> BoxFuture {
        let name = name.to_string();
        Box::pin(async move { panic!("`{name}` is served by nobody here") })
    }

    fn not_served(&self, name: &str, caller: &Caller) -> Option<String> {
        (caller.id() == Some("admin")).then(|| format!("`{name}` is down"))
    }
}

/// A name no tool has exactly is first the provider's to answer for a caller it says could see
/// it: neither "unknown" nor a correction to another tool, directly or through
/// `execute_tool`. A name some tool has exactly never asks; a caller the provider gives no
/// answer gets what the catalog says, as before.
#[tokio::test]
async fn a_provider_answers_for_its_tools_out_of_service_before_any_correction() {
    let c = Catalog::builder()
        .provider(OutOfService)
        .search(SearchOptions::default().enabled(true))
        .from_specs(tools_in(module_path!()))
        .unwrap();
    let admin = Context::for_caller(Caller::new("admin"));
    let anon = Context::for_caller(Caller::anonymous());
    let args = || Some(json!({"celsius": 100.0}));
    // Exact: the tool runs, for both.
    for who in [&admin, &anon] {
        let r = c
            .call_with("celsius_to_fahrenheit", args(), who)
            .await
            .unwrap();
        assert_eq!(text(&r), "212", "{r:?}");
    }
    // One letter off: the provider's answer for admin, the correction for anyone else.
    let r = c
        .call_with("celsius_to_farenheit", args(), &admin)
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(text(&r), "`celsius_to_farenheit` is down");
    let r = c
        .call_with("celsius_to_farenheit", args(), &anon)
        .await
        .unwrap();
    assert_eq!(text(&r), "212", "{r:?}");
    // No tool near: the provider's answer, or unknown.
    let r = c
        .call_with("mailbox_archive", Some(json!({})), &admin)
        .await
        .unwrap();
    assert_eq!(text(&r), "`mailbox_archive` is down");
    let e = c
        .call_with("mailbox_archive", Some(json!({})), &anon)
        .await
        .unwrap_err();
    assert!(e.to_string().starts_with("Unknown tool"), "{e}");
    // Through execute_tool, the same.
    let inner = json!({"name": "mailbox_archive", "arguments": {}});
    let r = c
        .call_with("execute_tool", Some(inner), &admin)
        .await
        .unwrap();
    assert!(text(&r).contains("`mailbox_archive` is down"), "{r:?}");
}
