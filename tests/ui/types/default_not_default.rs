// Rule: `default` alone uses the parameter type's `Default`, so the type must implement it.
use disco_runtime::mcp_tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    tag: String,
}

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(query: String, #[param(default)] filter: Filter) -> String {
    format!("{query}{}", filter.tag)
}

fn main() {}
