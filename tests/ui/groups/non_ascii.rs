// Rule: a group is ASCII: a model copies it into queries, clients show it in lists.
use disco_runtime::mcp_tool;

/// Search the notes for a phrase and return the matching notes.
#[mcp_tool(group = "notizbücher")]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
