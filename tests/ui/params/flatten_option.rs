// Rule: a flattened parameter cannot be an `Option`: its fields are optional or not.
use disco_runtime::mcp_tool;

/// Which notes to find.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    /// Words the notes contain.
    query: Option<String>,
}

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(#[param(flatten)] filter: Option<Filter>) -> String {
    filter.and_then(|f| f.query).unwrap_or_default()
}

fn main() {}
