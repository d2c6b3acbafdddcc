//! `tool_search`'s `queries` with steps that load tools by name (`select:`) beside steps that
//! search, on generated requests: each step's results are what the same text brings as one
//! `query`, the naming steps' first and in full (up to the room for names), the searching
//! steps' in the room the limit leaves, and a tool the caller may not see is never brought nor
//! revealed by any of it.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::{Catalog, JsonCatalogProvider, SearchOptions};
use crate::search::steps::tests::lookups;
use crate::search::steps::{Step, MAX_QUERY_STEPS};
use crate::tool::{Caller, Context};

/// Only the admin sees these.
const ADMIN: &[&str] = &["admin_salary_report", "admin_delete_user"];

fn tools(with_admin: bool) -> Value {
    let tool = |name: &str, description: &str| json!({"name": name, "description": description, "inputSchema": {"type": "object"}});
    let mut tools = vec![
        tool("get_weather", "Get the weather forecast for a city"),
        tool(
            "convert_currency",
            "Convert an amount of money between currencies",
        ),
        tool("send_email", "Send an email message to a recipient"),
        tool("read_file", "Read the contents of a file from the disk"),
        tool("write_file", "Write text to a file on the disk"),
        tool("create_event", "Create a calendar event"),
        json!({"name": "purge_cache", "description": "Purge the cache of compiled templates",
               "inputSchema": {"type": "object"}, "_meta": {"disco/hidden": true}}),
    ];
    if with_admin {
        tools.push(tool(ADMIN[0], "Report the salaries of the staff"));
        tools.push(tool(ADMIN[1], "Delete a user account and its files"));
    }
    Value::Array(tools)
}

/// A catalog of [`tools`] whose admin tools only the admin sees, or one that never had them.
fn catalog(with_admin: bool, default_results: usize, max_results: usize) -> Catalog {
    Catalog::builder()
        .provider(JsonCatalogProvider::from_value(&tools(with_admin)).expect("tools"))
        .search(
            SearchOptions::default()
                .enabled(true)
                .default_results(default_results)
                .max_results(max_results),
        )
        .visibility(|caller: &Caller, tool: &super::CatalogTool| {
            !tool.name().starts_with("admin_") || caller.id() == Some("admin")
        })
        .from_specs([])
        .expect("catalog")
}

/// Names a step may ask for: every tool's (the hidden one's and the admin's too), in other
/// spellings, a typo, names no tool has, and the meta-tools'.
const NAMES: &[&str] = &[
    "get_weather",
    "convert_currency",
    "send_email",
    "read_file",
    "write_file",
    "create_event",
    "purge_cache",
    "admin_salary_report",
    "admin_delete_user",
    "READ-FILE",
    "sendEmail",
    "get_wether",
    "ADMIN-SALARY-REPORT",
    "nope_nothing",
    "tool_search",
    "execute_tool",
];

const PHRASES: &[&str] = &[
    "weather forecast",
    "convert money",
    "send an email",
    "a file",
    "write to a file",
    "calendar event",
    "zebra quantum saxophone",
    "salary report",
    "delete a user",
    "purge the template cache",
];

fn step(rng: &mut fastrand::Rng) -> String {
    if rng.bool() {
        let names: Vec<&str> = (0..rng.usize(0..5))
            .map(|_| NAMES[rng.usize(..NAMES.len())])
            .collect();
        format!("select:{}", names.join(", "))
    } else {
        PHRASES[rng.usize(..PHRASES.len())].to_string()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

async fn search(catalog: &Catalog, caller: &Caller, args: Value) -> Value {
    let ctx = Context::builder().caller(caller.clone()).build();
    let result = catalog
        .call_with("tool_search", Some(args.clone()), &ctx)
        .await
        .expect("tool_search answers");
    assert_ne!(result.is_error, Some(true), "{args}: {result:?}");
    serde_json::to_value(&result).expect("serialisable")
}

/// `(name, score, step)` of each tool a result lists.
fn listed(result: &Value) -> Vec<(String, f64, Option<u64>)> {
    result["structuredContent"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().expect("name").to_string(),
                t["score"].as_f64().expect("score"),
                t["step"].as_u64(),
            )
        })
        .collect()
}

/// Random mixes of naming and searching steps, with and without `max_results`, on catalogs
/// of several default and most results, for the admin and for a caller who may not see the
/// admin's tools; each answer checked against the rule (see the module), and for the caller
/// without the admin's tools, the whole answer the same as from a catalog that never had them.
#[test]
fn naming_steps_bring_their_tools_beside_the_searching_steps() {
    let mut rng = fastrand::Rng::with_seed(0x05E1_EC75_7E95);
    let runtime = runtime();
    let shapes = [(1, 3), (2, 5), (3, 8), (5, 20)];
    let catalogs: Vec<_> = shapes
        .iter()
        .map(|&(d, m)| ((d, m), catalog(true, d, m), catalog(false, d, m)))
        .collect();
    let (mut named, mut searched, mut unanswered) = (0usize, 0usize, 0usize);
    for case in 0..240 {
        let ((default, most), full, without) = &catalogs[case % catalogs.len()];
        let (default, most) = (*default, *most);
        let texts: Vec<String> = (0..rng.usize(1..=MAX_QUERY_STEPS))
            .map(|_| step(&mut rng))
            .collect();
        let given = rng.bool().then(|| rng.usize(1..=most));
        let mut args = json!({"queries": texts, "compact": true});
        if let Some(k) = given {
            args["max_results"] = json!(k);
        }
        let caller = if rng.bool() {
            Caller::new("admin")
        } else {
            Caller::new("guest")
        };
        let why = format!("case {case} ({default}, {most}) {caller:?}: {args}");
        let (answer, alone, answer_without) = runtime.block_on(async {
            let answer = search(full, &caller, args.clone()).await;
            let answer_without = search(without, &caller, args.clone()).await;
            // Each step's text as one query, with the room the rule gives that step.
            // A naming step looks up its share of the names the room allows.
            let steps: Vec<Step<'_>> = texts.iter().map(|t| Step::of(t)).collect();
            let lookups = lookups(&steps, given.unwrap_or(most));
            let mut alone: Vec<Vec<(String, f64, Option<u64>)>> = Vec::new();
            for (text, &n) in texts.iter().zip(&lookups) {
                if !matches!(Step::of(text), Step::Names(_)) {
                    continue;
                }
                if n == 0 {
                    alone.push(Vec::new());
                    continue;
                }
                let one = json!({"query": text, "max_results": n, "compact": true});
                alone.push(listed(&search(full, &caller, one).await));
            }
            (answer, alone, answer_without)
        });
        let tools = listed(&answer);
        let naming = |i: usize| matches!(Step::of(&texts[i]), Step::Names(_));
        for (name, _, _) in &tools {
            if caller.id() != Some("admin") {
                assert!(!ADMIN.contains(&name.as_str()), "{why}: {tools:?}");
            }
        }
        if caller.id() != Some("admin") {
            assert_eq!(answer, answer_without, "{why}");
        }
        let distinct: HashSet<&str> = tools.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(
            distinct.len(),
            tools.len(),
            "no tool twice: {why}: {tools:?}"
        );
        let step_of = |t: &(String, f64, Option<u64>)| t.2.expect("a step") as usize;
        let first_searching = tools
            .iter()
            .position(|t| !naming(step_of(t)))
            .unwrap_or(tools.len());
        assert!(
            tools[first_searching..].iter().all(|t| !naming(step_of(t))),
            "naming steps first: {why}: {tools:?}"
        );
        // The naming steps: each result is its step's as one query, score 1; as many as
        // their names bring together, up to the room for names.
        let mut alone_by_step = vec![Vec::new(); texts.len()];
        for (i, list) in (0..texts.len()).filter(|&i| naming(i)).zip(&alone) {
            alone_by_step[i] = list.iter().map(|t| t.0.clone()).collect::<Vec<_>>();
        }
        let by_names: HashSet<&String> = alone_by_step.iter().flatten().collect();
        assert_eq!(
            first_searching,
            by_names.len().min(given.unwrap_or(most)),
            "{why}: {tools:?}"
        );
        // The searching steps: the room the limit leaves, a limit made from their number.
        let searching = (0..texts.len()).filter(|&i| !naming(i)).count();
        let limit = given.unwrap_or((first_searching + default.max(searching)).min(most));
        let brought: Vec<String> = tools[..first_searching]
            .iter()
            .map(|t| t.0.clone())
            .collect();
        let word_lists = runtime.block_on(async {
            let mut out = Vec::new();
            for (i, text) in texts.iter().enumerate().filter(|(i, _)| !naming(*i)) {
                let one = json!({"query": text, "max_results": limit, "compact": true});
                out.push((i, listed(&search(full, &caller, one).await)));
            }
            out
        });
        let mut found_by_words: HashSet<&String> = HashSet::new();
        for (i, list) in &word_lists {
            alone_by_step[*i] = list.iter().map(|t| t.0.clone()).collect();
            found_by_words.extend(list.iter().map(|t| &t.0).filter(|n| !brought.contains(n)));
        }
        assert_eq!(
            tools.len() - first_searching,
            found_by_words.len().min(limit - first_searching),
            "{why}: {tools:?}"
        );
        // Each step's results are its own text's, in its order, with the same scores.
        let scores: Vec<(String, f64)> = alone
            .iter()
            .chain(word_lists.iter().map(|(_, l)| l))
            .flatten()
            .map(|t| (t.0.clone(), t.1))
            .collect();
        for (i, own) in alone_by_step.iter().enumerate() {
            let mut rest = own.iter();
            for t in tools.iter().filter(|t| step_of(t) == i) {
                assert!(rest.any(|n| *n == t.0), "step {i} brought {t:?}: {why}");
                assert!(scores.contains(&(t.0.clone(), t.1)), "{t:?}: {why}");
                if naming(i) {
                    assert_eq!(t.1, 1.0, "{why}");
                }
            }
        }
        // Unanswered: the steps none of whose tools the answer holds (none found, or no
        // room left).
        let empty: Vec<usize> = (0..texts.len())
            .filter(|&i| {
                !alone_by_step[i]
                    .iter()
                    .any(|n| distinct.contains(n.as_str()))
            })
            .collect();
        let said: Vec<usize> = answer["structuredContent"]["unanswered_steps"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_u64)
                    .map(|s| s as usize)
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(said, empty, "{why}: {answer}");
        named += first_searching;
        searched += tools.len() - first_searching;
        unanswered += empty.len();
    }
    // The generator reaches every part of the rule.
    assert!(
        named > 100 && searched > 100 && unanswered > 20,
        "{named} {searched} {unanswered}"
    );
}

/// The names of the meta-tools, of tools the caller may not see and of no tool bring
/// nothing, as a step or as a query; the hidden tool, which search finds, comes by name.
#[test]
fn a_naming_step_brings_what_the_caller_may_see_and_nothing_else() {
    let runtime = runtime();
    let full = catalog(true, 5, 20);
    let guest = Caller::new("guest");
    let answer = runtime.block_on(search(
        &full,
        &guest,
        json!({"queries": ["select:admin_salary_report,ADMIN-SALARY-REPORT,tool_search,nope_nothing",
                           "select:purge_cache,READ-FILE", "send an email"]}),
    ));
    let tools = listed(&answer);
    assert_eq!(
        tools[..2],
        [
            ("purge_cache".into(), 1.0, Some(1)),
            ("read_file".into(), 1.0, Some(1))
        ],
        "{answer}"
    );
    assert_eq!(tools[2].0, "send_email", "{answer}");
    assert!(tools[2..].iter().all(|t| t.2 == Some(2)), "{answer}");
    assert_eq!(answer["structuredContent"]["unanswered_steps"], json!([0]));
    let admin = runtime.block_on(search(
        &full,
        &Caller::new("admin"),
        json!({"queries": ["select:ADMIN-SALARY-REPORT", "weather"]}),
    ));
    assert_eq!(
        listed(&admin)[0],
        ("admin_salary_report".into(), 1.0, Some(0))
    );
    // Steps that all name nothing get the hint for names.
    let none = runtime.block_on(search(
        &full,
        &guest,
        json!({"queries": ["select:nope_nothing", "select:admin_delete_user"]}),
    ));
    assert_eq!(listed(&none), []);
    assert!(none["structuredContent"]["hint"]
        .as_str()
        .is_some_and(|h| h.contains("names")));
}

/// Options a search cannot answer with are refused when the catalog is built; the largest
/// there are answer a mix of naming and searching steps.
#[test]
fn search_options_are_checked_when_the_catalog_is_built() {
    let build = |default_results: usize, max_results: usize| {
        Catalog::builder()
            .provider(JsonCatalogProvider::from_value(&tools(false)).expect("tools"))
            .search(
                SearchOptions::default()
                    .enabled(true)
                    .default_results(default_results)
                    .max_results(max_results),
            )
            .from_specs([])
    };
    for (default, most, said) in [
        (
            1,
            0,
            "`max_results` of `tool_search` is 0; it must be at least 1",
        ),
        (
            0,
            0,
            "`max_results` of `tool_search` is 0; it must be at least 1",
        ),
        (
            6,
            5,
            "`default_results` of `tool_search` (6) is above its `max_results` (5)",
        ),
    ] {
        let Err(error) = build(default, most) else {
            panic!("({default}, {most}) built")
        };
        assert_eq!(
            error.problems(),
            [super::CatalogProblem::MetaTool { error: said.into() }]
        );
    }
    let largest = build(usize::MAX, usize::MAX).expect("built");
    let answer = runtime().block_on(search(
        &largest,
        &Caller::anonymous(),
        json!({"queries": ["select:read_file", "send an email"]}),
    ));
    let tools = listed(&answer);
    assert_eq!(tools[0], ("read_file".into(), 1.0, Some(0)), "{answer}");
    assert_eq!(tools[1].0, "send_email", "{answer}");
}
