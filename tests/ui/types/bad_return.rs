// Rule: the return type is a tool result (text, `()`, `Json<T>`, content, `Result` of those).
use disco_runtime::mcp_tool;

/// Count the notes.
#[mcp_tool]
fn count_notes() -> u32 {
    3
}

fn main() {}
