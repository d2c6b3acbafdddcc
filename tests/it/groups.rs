//! Groups: where a tool's group comes from (`group = "..."`, its module, its provider), what
//! tools/list says of it in `_meta`, and the instructions the guide shows, which are these
//! tools' own.

use std::sync::Arc;

use disco_runtime::catalog::provider::DynamicTool;
use disco_runtime::catalog::{SearchOptions, GROUPS_META_KEY};
use disco_runtime::rmcp::model::Tool;
use disco_runtime::tool::BoxFuture;
use disco_runtime::{CallToolResult, Caller, Catalog, Context, ToolProvider};
use serde_json::{json, Map, Value};

use crate::common::tools_in;

/// Tools grouped by their module, `calendar`.
mod calendar {
    use disco_runtime::mcp_tool;

    /// Create a calendar event at a time, with invitees.
    #[mcp_tool(destructive = false)]
    fn create_event(title: String, at: String, invitees: Vec<String>) -> String {
        format!("{title} at {at} with {}", invitees.join(", "))
    }

    /// List the events of a day, with their invitees.
    #[mcp_tool(read_only)]
    fn list_events(day: String) -> String {
        day
    }

    /// Cancel an event and tell its invitees.
    #[mcp_tool(destructive)]
    fn cancel_event(id: u32) -> String {
        id.to_string()
    }

    /// Find a free time for a meeting with everyone invited.
    #[mcp_tool(read_only, keywords("meeting"))]
    fn find_free_time(invitees: Vec<String>) -> String {
        invitees.join(", ")
    }
}

/// Tools of one module, in the group they name.
mod journal {
    use disco_runtime::mcp_tool;

    /// Add a note to the journal, with tags.
    #[mcp_tool(destructive = false, group = "notes")]
    fn add_note(text: String, tags: Vec<String>) -> String {
        format!("{text} {tags:?}")
    }

    /// Search the journal for a phrase.
    #[mcp_tool(read_only, group = "notes")]
    fn search_notes(phrase: String) -> String {
        phrase
    }

    /// Tag a note of the journal.
    #[mcp_tool(destructive = false, group = "notes")]
    fn tag_note(id: u32, tag: String) -> String {
        format!("{id} {tag}")
    }
}

/// Invoices and refunds, from a provider named `billing`.
struct Billing;

impl ToolProvider for Billing {
    fn name(&self) -> Option<String> {
        Some("billing".into())
    }

    fn tools(&self) -> Vec<DynamicTool> {
        let schema = Arc::new(Map::new());
        let mut refund = DynamicTool::new(Tool::new(
            "refund_invoice",
            "Refund an invoice, whole or in part.",
            schema.clone(),
        ));
        refund.keywords = vec!["payment".into()];
        let send = DynamicTool::new(Tool::new(
            "send_invoice",
            "Send an invoice for the month to a customer.",
            schema.clone(),
        ));
        // A tool of the provider may name a group of its own.
        let mut ledger = DynamicTool::new(Tool::new(
            "export_ledger",
            "Export the ledger of a month.",
            schema,
        ));
        ledger.group = Some("accounting".into());
        vec![refund, send, ledger]
    }

    fn call(&self, name: &str, _: Map<String, Value>, _: Context) -> BoxFuture {
        let text = name.to_string();
        Box::pin(async move { CallToolResult::success(vec![disco_runtime::Content::text(text)]) })
    }
}

fn catalog(search: bool) -> Catalog {
    Catalog::builder()
        .provider(Billing)
        .search(SearchOptions::default().enabled(search))
        .from_specs(tools_in(module_path!()))
        .expect("catalog builds")
}

fn group_of(tools: &[Tool], name: &str) -> Value {
    let tool = tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{name} listed"));
    tool.meta
        .as_ref()
        .and_then(|m| m.get(GROUPS_META_KEY))
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn a_tools_group_is_its_own_its_modules_or_its_providers() {
    let c = catalog(true);
    let listed = c.list(&Caller::anonymous());
    for (tool, group) in [
        ("create_event", "calendar"),
        ("find_free_time", "calendar"),
        ("add_note", "notes"),
        ("search_notes", "notes"),
        ("refund_invoice", "billing"),
        ("export_ledger", "accounting"),
    ] {
        assert_eq!(group_of(&listed, tool), json!([group]), "{tool}");
        assert_eq!(c.get(tool).unwrap().group(), Some(group));
    }
    // The meta-tools are in no group.
    assert_eq!(group_of(&listed, "tool_search"), Value::Null);
    // The keywords' hint and the group live side by side.
    let find = listed.iter().find(|t| t.name == "find_free_time").unwrap();
    assert_eq!(
        find.meta.as_ref().unwrap().get("anthropic/searchHint"),
        Some(&json!("meeting"))
    );
}

/// The guide's example is what these tools give, word for word.
#[test]
fn the_guide_shows_these_tools_instructions() {
    let c = catalog(true);
    let text = c
        .for_caller(&Caller::anonymous())
        .instructions()
        .expect("instructions");
    let chapter = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/guide/src/search.md"
    ))
    .unwrap();
    let section = &chapter[chapter.find("## Groups").expect("a Groups section")..];
    let start = section.find("```text\n").expect("a text block") + "```text\n".len();
    let block = &section[start..start + section[start..].find("```\n").unwrap()];
    assert_eq!(
        block.trim_end(),
        text,
        "docs/guide/src/search.md, ## Groups"
    );
}

#[test]
fn tool_search_names_the_groups_and_their_counts() {
    let c = catalog(true);
    let listed = c.list(&Caller::anonymous());
    let search = listed.iter().find(|t| t.name == "tool_search").unwrap();
    let description = search.description.as_deref().unwrap();
    assert!(
        description.ends_with(
            "Tool groups (tools): calendar (4), notes (3), billing (2), accounting (1)."
        ),
        "{description}"
    );
}

/// A provider's group must follow the rule the macro applies: the catalog names the tool.
#[test]
fn an_invalid_provider_group_stops_the_catalog() {
    struct Bad;
    impl ToolProvider for Bad {
        fn name(&self) -> Option<String> {
            Some("user tools".into())
        }
        fn tools(&self) -> Vec<DynamicTool> {
            vec![DynamicTool::new(Tool::new(
                "whoami",
                "Say who the caller is.",
                Arc::new(Map::new()),
            ))]
        }
        fn call(&self, _: &str, _: Map<String, Value>, _: Context) -> BoxFuture {
            Box::pin(async { CallToolResult::success(Vec::new()) })
        }
    }
    let err = Catalog::builder()
        .provider(Bad)
        .from_specs([])
        .expect_err("refused");
    let problem = err.to_string();
    assert!(problem.contains("whoami"), "{problem}");
    assert!(problem.contains("user tools"), "{problem}");
}
