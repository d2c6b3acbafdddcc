// Rule: `# Arguments` documents only parameters the function has (stale docs mislead a model).
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
///
/// # Arguments
/// * `query` - what to look for
/// * `limit` - how many results to return
#[mcp_tool]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
