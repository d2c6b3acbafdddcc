// Rule: a doc comment that holds only a `# Arguments` section leaves the tool without a
// description (that section describes the parameters, not the tool).
use disco_runtime::mcp_tool;

/// # Arguments
/// * `text` - the text to echo
#[mcp_tool]
fn echo(text: String) -> String {
    text
}

fn main() {}
