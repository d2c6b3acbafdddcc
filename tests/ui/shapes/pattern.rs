// Rule: a parameter is a plain name, because the name is the JSON argument's key.
use disco_runtime::mcp_tool;

/// Add two numbers.
#[mcp_tool]
fn add((a, b): (u32, u32)) -> String {
    (a + b).to_string()
}

fn main() {}
