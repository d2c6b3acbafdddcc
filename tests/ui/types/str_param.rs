// Rule: parameters are owned values read from JSON: `&str` is not a parameter type (`String` is).
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(query: &str) -> String {
    query.to_string()
}

fn main() {}
