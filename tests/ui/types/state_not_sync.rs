// Rule: the `T` of `State<T>` is shared across calls on several threads: `Send + Sync + 'static`.
use std::cell::RefCell;

use disco_runtime::{mcp_tool, State};

/// Count the notes.
#[mcp_tool]
fn count_notes(notes: State<RefCell<Vec<String>>>) -> String {
    notes.borrow().len().to_string()
}

fn main() {}
