// Rule: a tool must have a description, from doc comments or `description = "..."`.
use disco_runtime::mcp_tool;

#[mcp_tool]
fn undocumented(text: String) -> String {
    text
}

fn main() {}
