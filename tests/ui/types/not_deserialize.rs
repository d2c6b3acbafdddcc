// Rule: a parameter type implements `serde::Deserialize`; the error underlines the type.
use disco_runtime::mcp_tool;

#[derive(schemars::JsonSchema)]
struct Filter {
    tag: String,
}

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(query: String, filter: Filter) -> String {
    format!("{query}{}", filter.tag)
}

fn main() {}
