// Rule: `description = ""` is no description: it must say what the tool does.
use disco_runtime::mcp_tool;

#[mcp_tool(description = "")]
fn blank(text: String) -> String {
    text
}

fn main() {}
