// Rule: `impl Trait` is not a parameter type: the argument needs one concrete type.
use disco_runtime::mcp_tool;

/// Echo a text back.
#[mcp_tool]
fn echo(text: impl Into<String>) -> String {
    text.into()
}

fn main() {}
