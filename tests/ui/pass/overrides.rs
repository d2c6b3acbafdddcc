// Must compile: `name`, `title` and `description` overrides (a `description` makes doc comments
// optional), and a raw-identifier function name published without `r#`.
use disco_runtime::mcp_tool;

/// The doc comment, replaced by `description`.
#[mcp_tool(
    name = "notes.search-v2",
    title = "Search notes",
    description = "Search the notes by meaning and return the best matches."
)]
fn search_notes(query: String) -> String {
    query
}

#[mcp_tool(description = "Match a text against a pattern.")]
fn r#match(text: String) -> String {
    text
}

fn main() {
    let catalog = disco_runtime::Catalog::from_inventory().unwrap();
    let tool = catalog.get("notes.search-v2").unwrap();
    assert_eq!(tool.title(), Some("Search notes"));
    assert_eq!(
        tool.description(),
        "Search the notes by meaning and return the best matches."
    );
    assert!(catalog.get("search_notes").is_none());
    assert!(catalog.get("match").is_some());
}
