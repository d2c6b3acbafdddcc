// Rule: without `name = "..."` the function's name is the tool name, and the same rules
// apply to it: at most 128 characters.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool]
fn search_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx(query: String) -> String {
    query
}

fn main() {}
