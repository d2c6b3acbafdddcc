// Rule: a parameter setting is given once, even when `#[param]` and `params(...)` are mixed.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(params(query(description = "what to look for")))]
fn search_notes(#[param(description = "the query")] query: String) -> String {
    query
}

fn main() {}
