// Rule: a flattened parameter's own name is never a key (its fields are the parameters), so
// it takes no alias.
use disco_runtime::mcp_tool;

/// Which notes to find.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    /// Words the notes contain.
    query: String,
}

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(#[param(flatten, alias = "criteria")] filter: Filter) -> String {
    filter.query
}

fn main() {}
