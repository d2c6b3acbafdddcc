// Rule: `# Arguments` does not document an extractor: a model never sends it.
use disco_runtime::{mcp_tool, State};

struct Notes;

/// Search the notes by meaning.
///
/// # Arguments
/// * `notes` - the note store
/// * `query` - what to look for
#[mcp_tool]
fn search_notes(notes: State<Notes>, query: String) -> String {
    let _ = notes;
    query
}

fn main() {}
