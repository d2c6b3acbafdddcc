// Rule: a tool name is at most 128 characters long.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(name = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
