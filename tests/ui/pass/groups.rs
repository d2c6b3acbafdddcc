// Must compile: `group = "..."` with every kind of character a group may hold, beside the other
// keys.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(group = "notes", read_only, keywords("journal"))]
fn search_notes(query: String) -> String {
    query
}

/// List the open pull requests.
#[mcp_tool(read_only, group = "Pull-Requests.v2_beta")]
fn list_pull_requests() -> String {
    String::new()
}

/// A group of one character.
#[mcp_tool(group = "x")]
fn one_letter() {}

fn main() {}
