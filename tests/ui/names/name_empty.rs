// Rule: a tool name has at least one character.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(name = "")]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
