// Rule: a flattened parameter takes no default; its fields may be optional themselves.
use disco_runtime::mcp_tool;

/// Which notes to find.
#[derive(Default, serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    /// Words the notes contain.
    query: String,
}

/// Search the notes by meaning.
#[mcp_tool(params(filter(flatten, default)))]
fn search_notes(filter: Filter) -> String {
    filter.query
}

fn main() {}
