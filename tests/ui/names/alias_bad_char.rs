// Rule: a tool alias follows the same charset as a tool name: `A-Z a-z 0-9 _ - .`.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(aliases("find_notes", "find notes"))]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
