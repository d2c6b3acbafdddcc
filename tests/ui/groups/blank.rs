// Rule: a group of spaces alone is empty too.
use disco_runtime::mcp_tool;

/// Search the notes for a phrase and return the matching notes.
#[mcp_tool(group = "   ")]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
