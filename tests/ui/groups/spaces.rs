// Rule: a group is made of `A-Z a-z 0-9 _ - .`; spaces get a suggestion.
use disco_runtime::mcp_tool;

/// Search the notes for a phrase and return the matching notes.
#[mcp_tool(group = "user notes")]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
