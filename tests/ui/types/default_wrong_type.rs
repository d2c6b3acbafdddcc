// Rule: an expression default is a value of the parameter's type (checked by the compiler, at
// the expression). A literal default is JSON and is checked when the catalog starts instead
// (see tests/it/catalog_errors.rs).
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(query: String, #[param(default = String::from("ten"))] limit: u32) -> String {
    format!("{query}{limit}")
}

fn main() {}
