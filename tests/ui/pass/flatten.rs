// A flattened struct, in `#[param]` and in `params(...)`, beside other parameters and
// extractors; `flatten = false` is a parameter like any other.
use disco_runtime::{mcp_tool, Context, Json};

/// Which notes to find.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Filter {
    /// Words the notes contain.
    query: String,
    /// Only notes with this tag.
    tag: Option<String>,
}

/// Search the notes by meaning.
///
/// # Arguments
/// * `limit` - how many at most
#[mcp_tool(read_only)]
async fn search_notes(
    ctx: Context,
    #[param(flatten)] filter: Filter,
    #[param(default = 10)] limit: u32,
) -> Json<Filter> {
    let _ = (ctx, limit);
    Json(filter)
}

/// Search the notes by tag.
#[mcp_tool(read_only, params(filter(flatten)))]
fn search_tags(filter: Filter, #[param(flatten = false)] other: Filter) -> String {
    format!("{} {}", filter.query, other.query)
}

fn main() {}
