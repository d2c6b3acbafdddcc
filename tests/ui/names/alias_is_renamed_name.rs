// Rule: an alias must differ from the tool's name, which is `name = "..."` when given.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(name = "notes.search", aliases("notes.search"))]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
