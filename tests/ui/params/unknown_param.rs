// Rule: `params(...)` names parameters of the function; a misspelt one gets a suggestion.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(params(qurey(alias = "question")))]
fn search_notes(query: String, limit: Option<u32>) -> String {
    format!("{query}{limit:?}")
}

fn main() {}
