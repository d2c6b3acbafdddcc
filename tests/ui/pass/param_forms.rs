// Must compile: `params(...)` in the tool attribute and `#[param(...)]` on the parameter, used
// together on one tool (different settings of one parameter may come from either form), plus
// `# Arguments` docs, `alias`/`aliases`, and a raw identifier whose JSON key has no `r#`.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
///
/// # Arguments
/// * `query` - what to look for
/// * `type` - the kind of note
#[mcp_tool(params(
    query(alias = "question"),
    limit(description = "how many results", alias = "max_results"),
    r#type(alias = "kind"),
))]
fn search_notes(
    #[param(alias = "search_term")] query: String,
    #[param(default = 10, aliases("count", "n"))] limit: u32,
    r#type: Option<String>,
) -> String {
    format!("{query}{limit}{type:?}", type = r#type)
}

fn main() {
    let catalog = disco_runtime::Catalog::from_inventory().unwrap();
    let tool = catalog.get("search_notes").unwrap();
    let query = tool.param("query").unwrap();
    assert_eq!(query.aliases, ["search_term", "question"]);
    assert_eq!(query.description.as_deref(), Some("what to look for"));
    let limit = tool.param("limit").unwrap();
    assert_eq!(limit.aliases, ["count", "n", "max_results"]);
    assert_eq!(limit.description.as_deref(), Some("how many results"));
    let kind = tool.param("type").unwrap();
    assert_eq!(kind.aliases, ["kind"]);
    assert_eq!(kind.description.as_deref(), Some("the kind of note"));
}
