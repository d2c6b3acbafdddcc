// Rule: a literal default is JSON: a string, a number or a boolean (not bytes or a char).
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(#[param(default = b"notes")] query: String) -> String {
    query
}

fn main() {}
