// Rule: only a struct with named fields can be flattened; a number, a string, a list, a map or
// a tuple has none.
use std::collections::HashMap;

use disco_runtime::mcp_tool;

/// Count the notes.
#[mcp_tool]
fn count_notes(#[param(flatten)] limit: u32) -> String {
    limit.to_string()
}

/// Tag the notes.
#[mcp_tool]
fn tag_notes(#[param(flatten)] tags: Vec<String>) -> String {
    tags.join(",")
}

/// Label the notes.
#[mcp_tool]
fn label_notes(#[param(flatten)] labels: HashMap<String, String>) -> String {
    labels.len().to_string()
}

/// Show some of the notes.
#[mcp_tool]
fn show_notes(#[param(flatten)] range: (u32, u32)) -> String {
    format!("{range:?}")
}

fn main() {}
