// Rule: without `name = "..."` the function's name is the tool name, and the same rules apply
// to it: a Rust identifier may hold letters outside ASCII, a tool name may not.
use disco_runtime::mcp_tool;

/// Say hello in French.
#[mcp_tool]
fn salut_café(name: String) -> String {
    name
}

fn main() {}
