// Rule: a tool name uses only `A-Z a-z 0-9 _ - .` (MCP tool names).
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(name = "search notes/v2")]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
