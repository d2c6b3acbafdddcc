// Rule: only one parameter can be flattened: the fields of one struct are the top level.
use disco_runtime::mcp_tool;

/// Which notes to find.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    /// Words the notes contain.
    query: String,
}

/// How many notes to return.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Paging {
    /// At most this many.
    limit: u32,
}

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(#[param(flatten)] filter: Filter, #[param(flatten)] paging: Paging) -> String {
    format!("{} {}", filter.query, paging.limit)
}

fn main() {}
