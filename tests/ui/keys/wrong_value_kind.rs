// Rule: each key takes one kind of value: `name = "..."`, `aliases("...")`, `read_only` or
// `read_only = true|false`.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool(name = 5, aliases = "x", read_only = "yes")]
fn search_notes(query: String) -> String {
    query
}

fn main() {}
