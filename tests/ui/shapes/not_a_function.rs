// Rule: `#[mcp_tool]` goes on a function.
use disco_runtime::mcp_tool;

/// Notes.
#[mcp_tool]
struct Notes {
    text: String,
}

fn main() {}
