// Rule: a group begins and ends with a letter or a digit.
use disco_runtime::mcp_tool;

/// Search the notes for a phrase and return the matching notes.
#[mcp_tool(group = "_notes.")]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
