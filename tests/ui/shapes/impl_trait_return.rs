// Rule: the return type is concrete (not `impl Trait`): the output schema is built from it.
use disco_runtime::{mcp_tool, IntoToolResult};

/// Echo a text back.
#[mcp_tool]
fn echo(text: String) -> impl IntoToolResult {
    text
}

fn main() {}
