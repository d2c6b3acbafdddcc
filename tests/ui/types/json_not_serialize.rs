// Rule: `Json<T>` needs `T: Serialize + JsonSchema`; the error underlines the return type.
use disco_runtime::{mcp_tool, Json};

#[derive(schemars::JsonSchema)]
struct Stats {
    notes: u32,
}

/// Count the notes.
#[mcp_tool]
fn count_notes() -> Json<Stats> {
    Json(Stats { notes: 3 })
}

fn main() {}
