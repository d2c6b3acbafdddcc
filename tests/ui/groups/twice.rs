// Rule: a group is given once: a tool is in one group.
use disco_runtime::mcp_tool;

/// Search the notes for a phrase and return the matching notes.
#[mcp_tool(group = "notes", read_only, group = "journal")]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
