// Rule: `State<T>` and `Context` are extractors, not JSON parameters: they take no
// description, alias or default, in either form.
use disco_runtime::{mcp_tool, Context, State};

struct Notes;

/// Search the notes by meaning.
#[mcp_tool(params(ctx(alias = "context")))]
fn search_notes(
    #[param(description = "the note store")] notes: State<Notes>,
    ctx: Context,
    query: String,
) -> String {
    let _ = (notes, ctx);
    query
}

fn main() {}
