// Rule: a parameter alias must not be the name of another parameter: the key would be ambiguous.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(query: String, #[param(alias = "query")] text: Option<String>) -> String {
    format!("{query}{text:?}")
}

fn main() {}
