// Rule: a search keyword is given once (compared without case) and is not empty.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(keywords("notes", "Notes", " "))]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
