// Rule: a flattened parameter is described by its fields' doc comments, not by a description
// of its own, in `#[param]` or in `# Arguments`; nor are its fields described in `# Arguments`.
use disco_runtime::mcp_tool;

/// Which notes to find.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    /// Words the notes contain.
    query: String,
}

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(#[param(flatten, description = "what to find")] filter: Filter) -> String {
    filter.query
}

/// Search the notes by tag.
///
/// # Arguments
/// * `filter` - what to find
#[mcp_tool]
fn search_tags(#[param(flatten)] filter: Filter) -> String {
    filter.query
}

/// Search the notes by words.
///
/// # Arguments
/// * `query` - words the notes contain
#[mcp_tool]
fn search_words(#[param(flatten)] filter: Filter) -> String {
    filter.query
}

fn main() {}
