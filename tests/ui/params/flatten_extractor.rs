// Rule: an extractor is filled by the server, not read from the arguments: it cannot be
// flattened.
use disco_runtime::{mcp_tool, State};

struct Notes;

/// Count the notes.
#[mcp_tool]
fn count_notes(#[param(flatten)] notes: State<Notes>) -> String {
    let _ = notes;
    String::new()
}

fn main() {}
