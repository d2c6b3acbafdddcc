//! Tool names real clients and models got wrong (tests/corpus/field-reports: a copy of the
//! field reports with their NOTES; each row links the issue thread it comes from), as
//! regression tests. Each `name` row is resolved against the smallest catalog that holds the
//! name it meant (for `no_fix`, the names the thread mentions), every tool read-only so that
//! only the name rules decide:
//!
//! - `fix`: corrected to the intended tool, except where a rule forbids it (`REFUSED`, each
//!   with its reason): then refused, with the intended tool among the suggestions;
//! - `no_fix` and `ambiguous`: never corrected, to any tool.
//!
//! The `key` rows are argument keys: each is sent to a tool whose only other parameter is
//! `query`, beside the parameter it meant (for `ambiguous`, the parameter the report names):
//! `fix` is repaired into it, or, where a rule forbids it (`KEYS_REFUSED`), refused with the
//! parameter named in the message; `ambiguous` is never repaired.
//!
//! `cargo test --test it field_reports -- --nocapture` prints each row's outcome and how many
//! `fix` rows are corrected.

use std::path::Path;

use disco_runtime::catalog::JsonCatalogProvider;
use disco_runtime::resolve::args::{prepare, Repair};
use disco_runtime::{Caller, Catalog, CatalogTool};
use serde_json::{json, Map, Value};

const PAIRS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/corpus/field-reports/pairs.jsonl"
);

/// `fix` rows that a rule keeps from being corrected, with the rule.
const REFUSED: &[(&str, &str)] = &[
    (
        "ProxyRead",
        "a prefix glued to the name without a separator is no namespace, and one word in \
         common (`read`) is too little for the fuzzy tier to name a tool: suggested",
    ),
    ("ProxyGlob", "as `ProxyRead`: suggested"),
];

/// Placeholders of the reports, instantiated: `*` and `<tool>` stand for any tool of the
/// server, here one it has (automem's `store_memory`; context-mode's `execute`).
fn instantiate(name: &str) -> String {
    name.replace('*', "store_memory")
        .replace("<tool>", "execute")
}

/// The catalog of a row, and the name requested. Rows whose `intended` is not a tool name (a
/// note in parentheses, a meta-tool call, a question mark) get the names their thread
/// mentions; the three `no_fix` rows whose thread names no tool at all get a tool that shares
/// the request's words, the catalog where a guess would be tempting.
fn case(row: &Value) -> (String, Vec<String>) {
    let field = |k: &str| row[k].as_str().unwrap();
    let wrong = instantiate(field("wrong"));
    let names: Vec<&str> = match field("wrong") {
        // The thread: the model wrapped `read_file` in a code tool; the client suggested
        // `get_service` and `list_projects`.
        "run_code" => vec!["read_file", "get_service", "list_projects"],
        "multi_tool_use.parallel" => vec!["search_joke", "search_image"],
        // The search tool was disabled: it is there, hidden (`HIDDEN`), beside `handoff`.
        "search" => vec!["handoff", "search"],
        // No arithmetic tool exists (instantiated: a tool with the same verb).
        "add" => vec!["add_contact"],
        // A meta-tool stands between the model and the server's tools.
        "giphy__image_search_tool" => vec!["run_tool"],
        "prometheus.execute_query" => vec!["use_tool_from_server"],
        // Hallucinated (instantiated: a tool with the same object).
        "run_repo_file" => vec!["read_repo_file"],
        // An empty name, sent with a `filePath`.
        "''" => vec!["read_file"],
        _ => vec![],
    };
    let catalog = if names.is_empty() {
        vec![instantiate(field("intended"))]
    } else {
        names.into_iter().map(String::from).collect()
    };
    let request = if wrong == "''" { String::new() } else { wrong };
    (request, catalog)
}

/// Tools the caller may not see: a disabled tool is never remapped to, nor suggested.
const HIDDEN: &[&str] = &["search"];

fn catalog(names: &[String]) -> Catalog {
    Catalog::builder()
        .provider(crate::common::read_only_tools(names))
        .visibility(|_: &Caller, t: &CatalogTool| !HIDDEN.contains(&t.name()))
        .from_specs([])
        .unwrap()
}

#[test]
fn field_reports_of_tool_names() {
    let text = std::fs::read_to_string(Path::new(PAIRS)).unwrap();
    let caller = Caller::anonymous();
    let (mut fixes, mut corrected, mut refused_seen) = (0, 0, 0);
    let mut failures = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let row: Value = serde_json::from_str(line).unwrap();
        if row["kind"] != "name" {
            continue;
        }
        let label = row["label"].as_str().unwrap();
        let (request, names) = case(&row);
        let c = catalog(&names);
        let r = c.resolve(&request, &caller);
        let to = r.tool.as_ref().map(|t| t.name().to_string());
        let what = format!(
            "[{label}] {request:?} in {names:?} -> {to:?} by {:?}, suggests {:?} ({})",
            r.rule.map(|r| r.as_str()),
            r.suggestions,
            row["url"].as_str().unwrap()
        );
        println!("{what}");
        if r.suggestions.iter().any(|s| HIDDEN.contains(&s.as_str())) {
            failures.push(what.clone());
        }
        match label {
            "fix" => {
                fixes += 1;
                let intended = &names[0];
                corrected += usize::from(to.as_ref() == Some(intended));
                let ok = if REFUSED.iter().any(|(w, _)| *w == request) {
                    refused_seen += 1;
                    to.is_none() && r.suggestions.contains(intended)
                } else {
                    to.as_ref() == Some(intended)
                };
                if !ok {
                    failures.push(what);
                }
            }
            "no_fix" | "ambiguous" => {
                if to.is_some() {
                    failures.push(what);
                }
            }
            other => panic!("unknown label {other}"),
        }
    }
    println!("field reports: {corrected} of {fixes} `fix` rows corrected");
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(refused_seen, REFUSED.len());
    assert!(fixes >= 16, "{fixes} fix rows");
}

/// `fix` key rows that a rule keeps from being repaired, with the rule.
const KEYS_REFUSED: &[(&str, &str)] = &[
    (
        "uri",
        "`uri` is a word of APIs, never a misspelling of `url`: refused, `url` named",
    ),
    (
        "names",
        "`names` is a word, and `stationNames` has a word more: no near miss, refused with \
         `stationNames` among the expected parameters",
    ),
];

#[test]
fn field_reports_of_argument_keys() {
    let text = std::fs::read_to_string(Path::new(PAIRS)).unwrap();
    let mut failures = Vec::new();
    let (mut fixes, mut repaired) = (0, 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let row: Value = serde_json::from_str(line).unwrap();
        if row["kind"] != "key" {
            continue;
        }
        let (wrong, intended) = (
            row["wrong"].as_str().unwrap(),
            row["intended"].as_str().unwrap(),
        );
        let label = row["label"].as_str().unwrap();
        let value = json!({"tools": [{"name": "t", "description": "",
            "inputSchema": {"type": "object", "properties": {
                intended: {"type": "string"}, "query": {"type": "string"}}},
            "annotations": {"readOnlyHint": true}}]});
        let catalog = Catalog::builder()
            .provider(JsonCatalogProvider::from_value(&value).unwrap())
            .from_specs([])
            .unwrap();
        let tool = catalog.get("t").unwrap();
        let args: Map<String, Value> = [(wrong.to_string(), json!("x"))].into_iter().collect();
        let outcome = prepare(tool, args, Repair::Safe);
        let into = outcome
            .as_ref()
            .ok()
            .filter(|p| p.arguments.contains_key(intended));
        println!(
            "{label:9} key {wrong} -> {intended}: {:?}",
            outcome.as_ref().map(|p| &p.arguments)
        );
        match label {
            "fix" => {
                fixes += 1;
                let refused = KEYS_REFUSED.iter().any(|(w, _)| *w == wrong);
                match (&outcome, refused) {
                    (Ok(_), false) if into.is_some() => repaired += 1,
                    (Err(message), true) if message.contains(&format!("`{intended}`")) => {}
                    _ => failures.push(format!("{wrong} -> {intended}: {outcome:?}")),
                }
            }
            _ => {
                if into.is_some() {
                    failures.push(format!("{label} {wrong} repaired into {intended}"));
                }
            }
        }
    }
    println!("key fix rows repaired: {repaired} of {fixes}");
    assert!(failures.is_empty(), "{failures:#?}");
}
