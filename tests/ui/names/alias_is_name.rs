// Rule: an alias must differ from the tool's own name.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(aliases("find_notes", "search_notes"))]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
