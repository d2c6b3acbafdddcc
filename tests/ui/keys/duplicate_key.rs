// Rule: a key is given once.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(name = "notes_search", read_only, name = "search")]
fn search_notes(#[param(default = "x", default = "y")] query: String) -> String {
    query
}

fn main() {}
