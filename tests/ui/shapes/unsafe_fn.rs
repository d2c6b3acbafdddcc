// Rule: a tool function is not `unsafe`: a model chooses its arguments.
use disco_runtime::mcp_tool;

/// Echo a text back.
#[mcp_tool]
unsafe fn echo(text: String) -> String {
    text
}

fn main() {}
