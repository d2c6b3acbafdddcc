// Rule: `#[mcp_tool(...)]` takes only known keys; the error lists them and suggests the closest.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(readonly)]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
