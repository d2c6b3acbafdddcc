// Rule: a literal default fits a parameter type the macro can read (integers, floats, `bool`,
// `String`): the wrong kind of literal, or an integer out of range, is an error at the literal.
use disco_runtime::mcp_tool;

/// Search the notes by meaning.
#[mcp_tool]
fn search_notes(
    #[param(default = "notes")] query: String,
    #[param(default = "five")] limit: u32,
    #[param(default = 300)] depth: u8,
    #[param(default = 0.5)] page: usize,
    #[param(default = 1)] exact: bool,
    #[param(default = 7)] tag: String,
    #[param(default = "high")] weight: f64,
) -> String {
    format!("{query}{limit}{depth}{page}{exact}{tag}{weight}")
}

fn main() {}
