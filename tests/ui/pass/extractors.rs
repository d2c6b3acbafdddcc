// Must compile: `State<T>` and `Context` extractors (with any path prefix), beside arguments and
// an `Option` argument.
use disco_runtime::{mcp_tool, Context, State};

struct Notes {
    lines: Vec<String>,
}

/// Count the notes that contain a piece of text.
#[mcp_tool]
fn count_notes(notes: State<Notes>, text: String, limit: Option<u32>) -> String {
    let n = notes.lines.iter().filter(|l| l.contains(&text)).count();
    format!("{n} {limit:?}")
}

/// Say who is calling.
#[mcp_tool]
async fn whoami(ctx: Context) -> String {
    ctx.caller().id().unwrap_or("anonymous").to_string()
}

/// Both extractors, written with full paths, in any order.
#[mcp_tool]
fn both(ctx: disco_runtime::Context, text: String, notes: disco_runtime::State<Notes>) -> String {
    format!("{} {} {text}", ctx.tool_name(), notes.lines.len())
}

fn main() {
    let catalog = disco_runtime::Catalog::from_inventory().unwrap();
    let tool = catalog.get("count_notes").unwrap();
    // Extractors are not part of the input schema.
    let names: Vec<&str> = tool.params().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["text", "limit"]);
    assert!(tool.param("text").unwrap().required);
    assert!(!tool.param("limit").unwrap().required);
    assert!(catalog.get("whoami").unwrap().params().is_empty());
}
