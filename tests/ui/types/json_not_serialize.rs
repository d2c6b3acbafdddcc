// Rule: `Json<T>` needs `T: Serialize + JsonSchema`; the error names `T` and underlines it,
// alone or inside a `Result`.
use disco_runtime::{mcp_tool, Json, ToolError};

#[derive(schemars::JsonSchema)]
struct Stats {
    notes: u32,
}

/// Count the notes.
#[mcp_tool]
fn count_notes() -> Json<Stats> {
    Json(Stats { notes: 3 })
}

#[derive(serde::Serialize)]
struct Tags {
    tags: Vec<String>,
}

/// List the tags of the notes.
#[mcp_tool]
fn list_tags() -> Result<Json<Tags>, ToolError> {
    Ok(Json(Tags { tags: Vec::new() }))
}

fn main() {}
