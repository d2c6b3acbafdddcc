// Rule: a parameter alias is given once, whichever form declares it.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(params(query(alias = "question")))]
fn search_notes(#[param(alias = "question")] query: String) -> String {
    query
}

fn main() {}
