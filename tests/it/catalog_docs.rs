//! The catalog docs: the checked-in docs of the example servers are fresh, the examples pass
//! the lint, and the Markdown and JSON say what the issue asks of them.

#[path = "../../examples/catalog/servers.rs"]
mod servers;

use std::path::{Path, PathBuf};

use disco_runtime::catalog::docs::{self, DocsError};
use disco_runtime::catalog::lint::{self, LintOptions, Severity};
use disco_runtime::{mcp_tool, Catalog};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn checked_in_docs_are_fresh() {
    for (name, catalog) in servers::catalogs().unwrap() {
        let dir = root().join("docs/catalog").join(name);
        match docs::write(&catalog, &dir, true) {
            Ok(report) => assert_eq!(report.unchanged.len(), 2),
            Err(e) => panic!("{e}\nrun `cargo run --example catalog` and commit the result"),
        }
    }
}

#[test]
fn the_examples_have_no_lint_errors_or_warnings() {
    let text = std::fs::read_to_string(root().join("examples/catalog/requests.jsonl")).unwrap();
    let requests = lint::parse_requests(&text).unwrap();
    let mut checked = 0;
    for (name, catalog) in servers::catalogs().unwrap() {
        let options = LintOptions {
            requests: requests
                .iter()
                .filter(|r| catalog.tools().iter().any(|t| t.name() == r.expected))
                .cloned()
                .collect(),
            ..LintOptions::default()
        };
        checked += options.requests.len();
        let findings = lint::lint(&catalog, &options);
        let bad: Vec<String> = findings
            .iter()
            .filter(|f| f.severity >= Severity::Warning)
            .map(|f| f.to_string())
            .collect();
        assert!(bad.is_empty(), "{name}:\n{}", bad.join("\n"));
    }
    assert!(
        checked >= requests.len(),
        "every request names an example tool"
    );
}

mod fixture {
    use super::*;

    /// Look up a word in the dictionary. Returns its meanings, most common first. Use this
    /// for single words; for phrases use `translate`.
    ///
    /// # Arguments
    /// * `word` - the word | with a pipe
    /// * `limit` - how many meanings at most
    #[mcp_tool(
        read_only,
        aliases("dict"),
        keywords("meaning"),
        params(word(alias = "term"))
    )]
    fn define(word: String, #[param(default = 3)] limit: u32) -> String {
        format!("{word} {limit}")
    }

    /// Translate between languages, for staff only. Returns the translation.
    ///
    /// # Arguments
    /// * `text` - what to translate
    #[mcp_tool(read_only, hidden, title = "Staff translator")]
    fn translate(text: String) -> String {
        text
    }
}

fn fixture() -> Catalog {
    let path = format!("{}::fixture", module_path!());
    Catalog::builder()
        .from_specs(disco_runtime::tool::registered().filter(|s| s.origin.module == path))
        .unwrap()
}

#[test]
fn markdown_has_a_section_per_tool_with_everything_a_model_sees() {
    let md = docs::markdown(&fixture());
    let define = md.find("### `define`").expect("a section for define");
    let hidden = md.find("## Hidden tools").expect("a hidden section");
    let translate = md
        .find("### `translate` (hidden)")
        .expect("translate, marked hidden");
    assert!(define < hidden && hidden < translate);
    for needle in [
        "Look up a word in the dictionary. Returns its meanings",
        "- **Aliases:** `dict`",
        "- **Keywords:** `meaning`",
        "`readOnlyHint: true`",
        "| Name | Type | Required | Default | Aliases | Description |",
        "| `word` | string | yes | — | `term` | the word \\| with a pipe |",
        "| `limit` | integer (≥ 0) | no | `3` | — | how many meanings at most |",
        "#### Input schema\n\n```json\n{",
        "#### Output schema\n\nNone",
        "**Title:** Staff translator",
        "[`translate`](#translate-hidden) (hidden)",
    ] {
        assert!(md.contains(needle), "missing {needle:?} in:\n{md}");
    }
    // The exact input schema, as JSON.
    let start = md[define..].find("```json\n").unwrap() + define + 8;
    let end = md[start..].find("\n```").unwrap() + start;
    let schema: Value = serde_json::from_str(&md[start..end]).unwrap();
    assert_eq!(
        schema,
        Value::Object((*fixture().get("define").unwrap().input_schema()).clone())
    );
}

#[test]
fn tools_json_is_the_tools_list_result_without_hidden_tools() {
    let catalog = fixture();
    let json: Value = serde_json::from_str(&docs::tools_list_json(&catalog)).unwrap();
    let tools = json["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["define"]);
    let listed = catalog.list(&disco_runtime::Caller::anonymous());
    assert_eq!(tools[0], serde_json::to_value(&listed[0]).unwrap());
    assert!(tools[0].get("inputSchema").is_some());
}

#[test]
fn output_is_deterministic() {
    assert_eq!(docs::markdown(&fixture()), docs::markdown(&fixture()));
    assert_eq!(
        docs::tools_list_json(&fixture()),
        docs::tools_list_json(&fixture())
    );
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("disco-docs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn check_mode_names_missing_and_stale_files_and_writes_nothing() {
    let catalog = fixture();
    let dir = temp_dir("check");
    match docs::write(&catalog, &dir, true) {
        Err(DocsError::Stale { files }) => assert_eq!(files.len(), 2),
        other => panic!("{other:?}"),
    }
    assert!(!dir.exists(), "check mode writes nothing");

    let report = docs::write(&catalog, &dir, false).unwrap();
    assert_eq!(report.written.len(), 2);
    let report = docs::write(&catalog, &dir, true).unwrap();
    assert_eq!(report.unchanged.len(), 2);

    // CRLF checkouts are not stale; an edit is.
    let md = dir.join(docs::MARKDOWN_FILE);
    let text = std::fs::read_to_string(&md).unwrap();
    std::fs::write(&md, text.replace('\n', "\r\n")).unwrap();
    assert!(docs::write(&catalog, &dir, true).is_ok());
    std::fs::write(&md, text.replace("dictionary", "lexicon")).unwrap();
    match docs::write(&catalog, &dir, true) {
        Err(e @ DocsError::Stale { .. }) => {
            let DocsError::Stale { files } = &e else {
                unreachable!()
            };
            assert_eq!(files.len(), 1);
            assert_eq!(files[0], md);
            assert!(e.to_string().contains(docs::MARKDOWN_FILE));
        }
        other => panic!("{other:?}"),
    }
    let report = docs::write(&catalog, &dir, false).unwrap();
    assert_eq!(report.written, [md]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unwritable_directory_is_an_io_error() {
    let file = temp_dir("file");
    std::fs::write(&file, "not a directory").unwrap();
    let err = docs::write(&fixture(), Path::new(&file).join("sub"), false).unwrap_err();
    assert!(matches!(err, DocsError::Io { .. }), "{err:?}");
    let _ = std::fs::remove_file(&file);
}
