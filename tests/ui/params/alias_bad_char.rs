// Rule: a parameter alias uses only `A-Z a-z 0-9 _ - .`, like tool names.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(#[param(alias = "search term")] query: String) -> String {
    query
}

fn main() {}
