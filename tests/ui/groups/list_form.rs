// Rule: a group is one name, not a list.
use disco_runtime::mcp_tool;

/// Search the notes for a phrase and return the matching notes.
#[mcp_tool(group("notes", "journal"))]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
