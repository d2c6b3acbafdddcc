// Rule: in `Result<T, E>`, `E` implements `Display`: its message is what the model reads.
use disco_runtime::mcp_tool;

#[derive(Debug)]
struct Oops;

/// Count the notes.
#[mcp_tool]
fn count_notes() -> Result<String, Oops> {
    Err(Oops)
}

fn main() {}
