// Rule: a parameter alias must differ from the parameter's own name.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(#[param(alias = "query")] query: String) -> String {
    query
}

fn main() {}
