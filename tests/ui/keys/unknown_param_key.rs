// Rule: `#[param(...)]` takes only known keys; the error lists them and suggests the closest.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(#[param(alais = "question")] query: String) -> String {
    query
}

fn main() {}
