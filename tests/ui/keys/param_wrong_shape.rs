// Rule: `#[param]` takes a list of settings, and `params(...)` takes `name(settings)` entries.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(params(limit = 5))]
fn search_notes(#[param] query: String, limit: u32) -> String {
    format!("{query}{limit}")
}

fn main() {}
