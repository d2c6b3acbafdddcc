// Rule: a group is a string literal.
use disco_runtime::mcp_tool;

/// Search the notes for a phrase and return the matching notes.
#[mcp_tool(group = notes)]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
