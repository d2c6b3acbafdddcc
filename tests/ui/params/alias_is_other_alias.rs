// Rule: a parameter alias must not be an alias of another parameter: the key would be ambiguous.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(params(query(alias = "q"), tag(alias = "q")))]
fn search_notes(query: String, tag: Option<String>) -> String {
    format!("{query}{tag:?}")
}

fn main() {}
