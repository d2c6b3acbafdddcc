// Rule: a group is not empty (leave the key out to group a tool by its module).
use disco_runtime::mcp_tool;

/// Search the notes for a phrase and return the matching notes.
#[mcp_tool(group = "")]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
