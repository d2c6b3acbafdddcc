// Rule: an alias is given once.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(aliases("find_notes", "lookup_notes"), aliases("find_notes"))]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
