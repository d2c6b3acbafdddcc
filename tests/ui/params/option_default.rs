// Rule: an `Option` parameter is already optional (absent = `None`), so it takes no default.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(query: String, #[param(default = 10)] limit: Option<u32>) -> String {
    format!("{query}{limit:?}")
}

fn main() {}
