// Rule: `timeout_ms` is a whole number of milliseconds, at least 1.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(timeout_ms = 0)]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
