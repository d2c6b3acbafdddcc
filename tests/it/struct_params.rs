//! Struct parameters as models send them: nested under the parameter's name, flat beside it
//! (put into the one object parameter they are all fields of), or as the tool's own top-level
//! parameters (`#[param(flatten)]`); keys and values repaired inside nested objects as at the
//! top level. Every case is run on the portable schema, on the full schema (the struct behind
//! a `$ref` into `$defs`), and on the same schema served by a provider whose schema cannot be
//! compiled (arguments then reach the tool without a validator).

use std::sync::Arc;

use disco_runtime::catalog::provider::DynamicTool;
use disco_runtime::resolve::args::Repair;
use disco_runtime::tool::BoxFuture;
use disco_runtime::{mcp_tool, Catalog, Context, Json, SchemaMode, ToolProvider};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::common::tools_in;

#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Priority {
    Low,
    Medium,
    High,
    Urgent,
}

/// Someone an issue is assigned to.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
struct Person {
    /// Their full name.
    display_name: String,
    /// Their address, if known.
    email: Option<String>,
}

/// A step of an issue.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
struct Task {
    /// What to do.
    text: String,
    /// Whether it is done.
    #[serde(default)]
    done: bool,
}

/// An issue to file.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
struct Issue {
    /// One line that says what is wrong.
    title: String,
    /// How soon it must be fixed.
    priority: Priority,
    /// The work it takes, in hours.
    estimate_hours: Option<u32>,
    /// Whether someone is blocked by it.
    urgent: Option<bool>,
    /// Who fixes it.
    assignee: Option<Person>,
    /// The steps.
    #[serde(default)]
    tasks: Vec<Task>,
}

/// A board issues go on.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
struct Board {
    /// The board's name.
    title: String,
    /// Whether it is closed for new issues.
    archived: Option<bool>,
}

/// File an issue and return it as filed.
#[mcp_tool(destructive = false)]
fn file_issue(issue: Issue) -> Json<Issue> {
    Json(issue)
}

/// File an issue and return it as filed (its schema in the full form).
#[mcp_tool(destructive = false, full_schema)]
fn file_issue_full(issue: Issue) -> Json<Issue> {
    Json(issue)
}

/// Put an issue on a board; both have a title.
#[mcp_tool(destructive = false)]
fn pin_issue(issue: Issue, board: Board) -> String {
    format!("{} on {}", issue.title, board.title)
}

#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    Open,
    InProgress,
    Closed,
}

/// Which issues to find.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
struct Filter {
    /// Only issues in this state.
    status: Status,
    /// Only issues assigned to this person.
    assignee: Option<String>,
    /// Only issues with all of these labels.
    #[serde(default)]
    label_names: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Found {
    filter: Filter,
    limit: u32,
}

/// Find issues by state, assignee and labels.
///
/// # Arguments
/// * `limit` - how many to return at most
#[mcp_tool(read_only)]
fn find_issues(#[param(flatten)] filter: Filter, #[param(default = 10)] limit: u32) -> Json<Found> {
    Json(Found { filter, limit })
}

/// Tools whose declarations the catalog refuses: built only by the tests that expect it to.
mod refused {
    use super::*;

    /// Find issues; `status` is both a parameter and a field of the flattened filter.
    #[mcp_tool(read_only)]
    fn find_by_status(#[param(flatten)] filter: Filter, status: String) -> String {
        format!("{filter:?} {status}")
    }

    /// Find issues; an alias of `limit` is a field of the flattened filter.
    #[mcp_tool(read_only)]
    fn find_with_alias(
        #[param(flatten)] filter: Filter,
        #[param(alias = "assignee")] limit: u32,
    ) -> String {
        format!("{filter:?} {limit}")
    }

    /// Find issues of a priority; an enum has no fields to flatten.
    #[mcp_tool(read_only)]
    fn find_by_priority(#[param(flatten)] priority: Priority) -> String {
        format!("{priority:?}")
    }
}

fn specs(names: &[&str]) -> Vec<&'static disco_runtime::ToolSpec> {
    names
        .iter()
        .map(|n| {
            tools_in(module_path!())
                .find(|s| s.name == *n)
                .unwrap_or_else(|| panic!("tool `{n}` is not registered"))
        })
        .collect()
}

/// Serves `file_issue`'s input schema as a provider's tool, with one more (optional) property
/// whose pattern no validator compiles, and answers with the arguments it received.
struct Uncompiled(Map<String, Value>);

impl ToolProvider for Uncompiled {
    fn tools(&self) -> Vec<DynamicTool> {
        let mut schema = self.0.clone();
        schema["properties"]["note"] = json!({"type": "string", "pattern": "("});
        vec![DynamicTool::new(disco_runtime::rmcp::model::Tool::new(
            "file_issue_unchecked",
            "File an issue (schema not compiled).",
            Arc::new(schema),
        ))]
    }
    fn call(&self, _: &str, arguments: Map<String, Value>, _: Context) -> BoxFuture {
        Box::pin(async move {
            let mut r = disco_runtime::CallToolResult::success(vec![]);
            r.structured_content = arguments.get("issue").cloned();
            r
        })
    }
}

/// The three ways the issue tool is served, each with its name.
fn issue_catalogs(repair: Repair) -> Vec<(Catalog, &'static str)> {
    let catalog = || {
        Catalog::builder()
            .arg_repair(repair)
            .from_specs(specs(&["file_issue", "file_issue_full", "pin_issue"]))
            .expect("catalog builds")
    };
    let portable = catalog();
    let schema = (*portable.get("file_issue").unwrap().input_schema()).clone();
    let unchecked = Catalog::builder()
        .arg_repair(repair)
        .provider(Uncompiled(schema))
        .from_specs([])
        .expect("catalog builds");
    assert!(
        !unchecked
            .get("file_issue_unchecked")
            .unwrap()
            .schema_problems()
            .is_empty(),
        "the provider's schema must not compile"
    );
    vec![
        (portable, "file_issue"),
        (catalog(), "file_issue_full"),
        (unchecked, "file_issue_unchecked"),
    ]
}

fn text(r: &disco_runtime::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn fixes(r: &disco_runtime::CallToolResult) -> Vec<Value> {
    r.meta
        .as_ref()
        .and_then(|m| m.get("disco/corrections"))
        .and_then(|c| c.get("arguments"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// `estimate_hours` in the styles models write keys in.
fn styles(key: &str) -> Vec<(&'static str, String)> {
    let words: Vec<&str> = key.split('_').collect();
    let camel: String = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i == 0 {
                w.to_string()
            } else {
                w[..1].to_uppercase() + &w[1..]
            }
        })
        .collect();
    let pascal = key[..1].to_uppercase() + &camel[1..];
    vec![
        ("as declared", key.to_string()),
        ("camelCase", camel),
        ("PascalCase", pascal),
        ("UPPER", key.to_uppercase()),
        ("kebab", words.join("-")),
    ]
}

/// The issue's flat fields with a value each (as JSON text), which the handler must receive.
const FIELDS: [(&str, &str); 5] = [
    ("title", r#""Login fails""#),
    ("priority", r#""high""#),
    ("estimate_hours", "3"),
    ("urgent", "true"),
    (
        "assignee",
        r#"{"display_name": "Ada", "email": "ada@example.com"}"#,
    ),
];

fn value(json: &str) -> Value {
    serde_json::from_str(json).expect("a JSON value")
}

/// Every subset of the issue's fields, sent flat in every key style, on every schema form:
/// put into `issue` when the subset holds its required fields (and reported as wrapped, with
/// each renamed key under its path), refused as a missing field of `issue` otherwise.
#[tokio::test]
async fn fields_sent_flat_are_put_into_the_one_object_they_belong_to() {
    for (catalog, tool) in issue_catalogs(Repair::Safe) {
        for subset in 1u32..(1 << FIELDS.len()) {
            for style in 0..styles("estimate_hours").len() {
                let mut sent = Map::new();
                let mut expected = Map::new();
                let mut renamed = Vec::new();
                for (i, (field, json)) in FIELDS.iter().enumerate() {
                    if subset & (1 << i) == 0 {
                        continue;
                    }
                    let (_, key) = &styles(field)[style];
                    sent.insert(key.clone(), value(json));
                    expected.insert(field.to_string(), value(json));
                    if key != field {
                        renamed.push((format!("issue.{key}"), format!("issue.{field}")));
                    }
                }
                let complete = subset & 0b11 == 0b11;
                let r = catalog
                    .call(tool, Value::Object(sent.clone()))
                    .await
                    .unwrap();
                let what = format!("{tool}: {}", Value::Object(sent.clone()));
                // Without a validator, a missing field is for the tool to find.
                if !complete && tool != "file_issue_unchecked" {
                    assert_eq!(r.is_error, Some(true), "{what}");
                    let t = text(&r);
                    assert!(t.contains("issue"), "{what}: {t}");
                    continue;
                }
                assert_ne!(r.is_error, Some(true), "{what}: {}", text(&r));
                let got = r.structured_content.clone().unwrap();
                for (field, value) in &expected {
                    assert_eq!(&got[field], value, "{what}: {got}");
                }
                let fixes = fixes(&r);
                let mut keys: Vec<&str> = sent.keys().map(String::as_str).collect();
                keys.sort();
                let mut wrapped: Vec<&str> = fixes[0]["from"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                wrapped.sort();
                assert_eq!(fixes[0]["kind"], "wrapped", "{what}: {fixes:?}");
                assert_eq!(fixes[0]["to"], "issue", "{what}: {fixes:?}");
                assert_eq!(fixes[0]["rule"], "fields_sent_flat", "{what}: {fixes:?}");
                assert_eq!(wrapped, keys, "{what}: {fixes:?}");
                for (from, to) in &renamed {
                    assert!(
                        fixes.iter().any(|f| f["kind"] == "renamed"
                            && f["from"] == json!(from)
                            && f["to"] == json!(to)
                            && f["rule"] == "spelling"),
                        "{what}: {from} -> {to} not in {fixes:?}"
                    );
                }
            }
        }
    }
}

/// Flat keys are never put into an object when it could be either of two, when one of them
/// is no field, when one states the opposite of a field, or when repair is off.
#[tokio::test]
async fn flat_fields_are_refused_when_the_object_is_not_certain() {
    let complete = || json!({"title": "Login fails", "priority": "high"});
    // An extra key that is no field of `issue`: refused, and the model told where the fields go.
    for (catalog, tool) in issue_catalogs(Repair::Safe) {
        for extra in ["colour", "board", "titles_of_tasks"] {
            let mut sent = complete();
            sent[extra] = json!("x");
            let r = catalog.call(tool, sent.clone()).await.unwrap();
            let t = text(&r);
            assert_eq!(r.is_error, Some(true), "{tool} {sent}: {t}");
            assert!(t.contains(&format!("`{extra}`")), "{t}");
            assert!(t.contains("are fields of `issue`"), "{t}");
            assert!(t.contains("missing required parameter(s) `issue`"), "{t}");
        }
        // A negated field, in every form the key repair knows, beside the complete fields.
        for negated in [
            "no_urgent",
            "not_urgent",
            "urgent_off",
            "nonurgent",
            "NoUrgent",
        ] {
            for value in [json!(true), json!(false), json!("true")] {
                let mut sent = complete();
                sent[negated] = value;
                let r = catalog.call(tool, sent.clone()).await.unwrap();
                let t = text(&r);
                assert_eq!(r.is_error, Some(true), "{tool} {sent}: {t}");
                assert!(
                    t.contains(&format!(
                        "`{negated}` states the opposite of the boolean parameter `issue.urgent`"
                    )),
                    "{t}"
                );
                assert!(fixes(&r).is_empty(), "{t}");
            }
        }
    }
    // Two object parameters not given that both have `title`: which one is meant is unknown.
    let (catalog, _) = issue_catalogs(Repair::Safe).remove(0);
    for sent in [
        json!({"title": "x"}),
        json!({"title": "x", "priority": "high"}),
        json!({"Title": "x", "archived": true}),
    ] {
        let r = catalog.call("pin_issue", sent.clone()).await.unwrap();
        let t = text(&r);
        assert_eq!(r.is_error, Some(true), "{sent}: {t}");
        assert!(t.contains("unknown parameter(s)"), "{sent}: {t}");
        assert!(fixes(&r).iter().all(|f| f["kind"] != "wrapped"), "{t}");
    }
    // Strict repair checks only.
    for (catalog, tool) in issue_catalogs(Repair::Strict) {
        let r = catalog.call(tool, complete()).await.unwrap();
        assert_eq!(r.is_error, Some(true), "{tool}: {}", text(&r));
        assert!(text(&r).contains("unknown parameter(s)"), "{}", text(&r));
    }
}

/// Inside a nested object, keys in another style, near-misses, `null`s for optional fields,
/// values of the wrong type and allowed values in another case are repaired as they are at the
/// top level, down to objects in lists, and reported under their path.
#[tokio::test]
async fn keys_and_values_are_repaired_inside_nested_objects() {
    for (catalog, tool) in issue_catalogs(Repair::Safe) {
        for style in 0..styles("estimate_hours").len() {
            let key = |k: &str| styles(k)[style].1.clone();
            let mut issue = Map::new();
            issue.insert(key("title"), json!("Login fails"));
            issue.insert(key("priority"), json!("HIGH"));
            issue.insert(key("estimate_hours"), json!("5"));
            issue.insert(key("urgent"), json!(null));
            issue.insert(
                key("assignee"),
                json!({key("display_name"): "Ada", key("email"): 12}),
            );
            issue.insert(
                key("tasks"),
                json!([{key("text"): "reproduce", key("done"): "true"}, {"txet": "fix"}]),
            );
            let sent = json!({ "issue": issue });
            let r = catalog.call(tool, sent.clone()).await.unwrap();
            let what = format!("{tool}: {sent}");
            assert_ne!(r.is_error, Some(true), "{what}: {}", text(&r));
            let got = r.structured_content.clone().unwrap();
            assert_eq!(got["title"], "Login fails", "{what}: {got}");
            assert_eq!(got["priority"], "high", "{what}: {got}");
            assert_eq!(got["estimate_hours"], 5, "{what}: {got}");
            assert_eq!(got["urgent"], Value::Null, "{what}: {got}");
            assert_eq!(
                got["assignee"],
                json!({"display_name": "Ada", "email": "12"}),
                "{what}: {got}"
            );
            assert_eq!(got["tasks"][0], json!({"text": "reproduce", "done": true}));
            assert_eq!(got["tasks"][1]["text"], "fix", "{what}: {got}");
            let fixes = fixes(&r);
            let has = |fix: Value| {
                assert!(fixes.contains(&fix), "{what}: {fix} not in {fixes:?}");
            };
            has(
                json!({"kind": "coerced", "param": "issue.priority", "from": "HIGH", "to": "high", "rule": "enum_case"}),
            );
            has(
                json!({"kind": "coerced", "param": "issue.estimate_hours", "from": "5", "to": 5, "rule": "string_to_integer"}),
            );
            has(json!({"kind": "dropped_null", "param": "issue.urgent"}));
            has(
                json!({"kind": "coerced", "param": "issue.assignee.email", "from": 12, "to": "12", "rule": "number_to_string"}),
            );
            has(
                json!({"kind": "coerced", "param": "issue.tasks[0].done", "from": "true", "to": true, "rule": "string_to_boolean"}),
            );
            has(
                json!({"kind": "renamed", "from": "issue.tasks[1].txet", "to": "issue.tasks[1].text", "rule": "near_miss"}),
            );
            if style != 0 {
                has(
                    json!({"kind": "renamed", "from": format!("issue.{}", key("estimate_hours")), "to": "issue.estimate_hours", "rule": "spelling"}),
                );
                has(
                    json!({"kind": "renamed", "from": format!("issue.assignee.{}", key("display_name")), "to": "issue.assignee.display_name", "rule": "spelling"}),
                );
            }
        }
        // Never across opposites, inside an object as outside.
        let r = catalog
            .call(
                tool,
                json!({"issue": {"title": "x", "priority": "low", "no_urgent": true}}),
            )
            .await
            .unwrap();
        let t = text(&r);
        assert_eq!(r.is_error, Some(true), "{tool}: {t}");
        assert!(
            t.contains(
                "`issue.no_urgent` states the opposite of the boolean parameter `issue.urgent`"
            ),
            "{t}"
        );
        // An object sent as declared is not touched.
        let r = catalog
            .call(tool, json!({"issue": {"title": "x", "priority": "low"}}))
            .await
            .unwrap();
        assert_ne!(r.is_error, Some(true), "{tool}: {}", text(&r));
        assert!(fixes(&r).is_empty(), "{tool}: {:?}", fixes(&r));
    }
}

/// The refusal lists the fields of an object parameter under its name, with type and
/// whether each is required.
#[tokio::test]
async fn a_refusal_lists_the_nested_fields() {
    for (catalog, tool) in issue_catalogs(Repair::Safe) {
        let r = catalog.call(tool, json!({"colour": "red"})).await.unwrap();
        let t = text(&r);
        for line in [
            "- `issue` (object, required)",
            "- `issue.title` (string, required): One line that says what is wrong.",
            "- `issue.priority` (one of \"low\", \"medium\", \"high\", \"urgent\", required)",
            "- `issue.estimate_hours` (integer",
            "- `issue.assignee` (object, optional): Who fixes it.",
            "- `issue.assignee.display_name` (string, required): Their full name.",
            "- `issue.tasks` (array",
        ] {
            assert!(t.contains(line), "{tool}: `{line}` not in:\n{t}");
        }
    }
}

/// `#[param(flatten)]`: the struct's fields are the tool's parameters in its schema (required
/// ones required), in the portable and the full form, and the handler gets the struct.
#[tokio::test]
async fn a_flattened_struct_s_fields_are_the_tool_s_parameters() {
    for mode in [SchemaMode::Portable, SchemaMode::Full] {
        let catalog = Catalog::builder()
            .schema_mode(mode)
            .from_specs(specs(&["find_issues"]))
            .expect("catalog builds");
        let tool = catalog.get("find_issues").unwrap();
        let schema = &tool.input_schema();
        let props = schema["properties"].as_object().unwrap();
        let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
        names.sort();
        assert_eq!(
            names,
            ["assignee", "label_names", "limit", "status"],
            "{mode:?}"
        );
        assert_eq!(schema["required"], json!(["status"]), "{mode:?}");
        assert_eq!(
            props["status"]["description"], "Only issues in this state.",
            "{mode:?}"
        );
        assert!(
            props["status"].get("enum").is_some() || props["status"].get("$ref").is_some(),
            "{mode:?}: {}",
            props["status"]
        );
        // The struct's own definition is not left behind.
        let defs = schema.get("$defs").and_then(Value::as_object);
        assert!(
            defs.is_none_or(|d| !d.contains_key("Filter")),
            "{mode:?}: {defs:?}"
        );
        let params: Vec<(&str, bool)> = tool
            .params()
            .iter()
            .map(|p| (p.name.as_str(), p.required))
            .collect();
        assert_eq!(params.len(), 4, "{params:?}");
        assert!(params.contains(&("status", true)) && params.contains(&("limit", false)));

        let r = catalog
            .call(
                "find_issues",
                json!({"status": "in_progress", "labelNames": "bug", "limit": "3"}),
            )
            .await
            .unwrap();
        assert_ne!(r.is_error, Some(true), "{mode:?}: {}", text(&r));
        assert_eq!(
            r.structured_content.unwrap(),
            json!({"filter": {"status": "in_progress", "assignee": null, "label_names": ["bug"]}, "limit": 3})
        );
        let r = catalog
            .call("find_issues", json!({"assignee": "ada"}))
            .await
            .unwrap();
        let t = text(&r);
        assert_eq!(r.is_error, Some(true), "{t}");
        assert!(t.contains("missing required parameter(s) `status`"), "{t}");
        let r = catalog
            .call("find_issues", json!({"status": "open", "filter": {}}))
            .await
            .unwrap();
        assert_eq!(r.is_error, Some(true), "{}", text(&r));
    }
}

/// A flattened field that is also another parameter's name or alias, and a flattened type that
/// is not a struct, stop the catalog at start-up, naming the tool and both names.
#[test]
fn flattened_fields_that_collide_stop_the_catalog() {
    for (tool, words) in [
        (
            "find_by_status",
            &["find_by_status", "struct_params.rs", "`status`", "`filter`"][..],
        ),
        (
            "find_with_alias",
            &["find_with_alias", "`assignee`", "`limit`", "`filter`"][..],
        ),
        (
            "find_by_priority",
            &["find_by_priority", "`priority`", "not a struct"][..],
        ),
    ] {
        let err = Catalog::builder()
            .from_specs(specs(&[tool, "find_issues"]))
            .unwrap_err();
        assert_eq!(err.problems().len(), 1, "{err}");
        for word in words {
            assert!(
                err.problems()[0].to_string().contains(word),
                "{word}: {err}"
            );
        }
    }
}
