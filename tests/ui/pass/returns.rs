// Must compile: every supported return type.
use disco_runtime::{mcp_tool, CallToolResult, Content, Json, ToolError};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Stats {
    notes: u32,
}

/// Returns `String`.
#[mcp_tool]
fn r_string() -> String {
    String::new()
}

/// Returns `&'static str`.
#[mcp_tool]
fn r_static_str() -> &'static str {
    ""
}

/// Returns `()`.
#[mcp_tool]
fn r_unit() {}

/// Returns `()` written out.
#[mcp_tool]
fn r_unit_explicit() -> () {}

/// Returns `Json<T>`.
#[mcp_tool]
fn r_json() -> Json<Stats> {
    Json(Stats { notes: 1 })
}

/// Returns `Vec<Content>`.
#[mcp_tool]
fn r_contents() -> Vec<Content> {
    vec![Content::text("a"), Content::text("b")]
}

/// Returns one `Content`.
#[mcp_tool]
fn r_content() -> Content {
    Content::text("a")
}

/// Returns a `CallToolResult`.
#[mcp_tool]
fn r_call_tool_result() -> CallToolResult {
    CallToolResult::success(vec![Content::text("a")])
}

/// Returns `Result<T, ToolError>`.
#[mcp_tool]
fn r_result_tool_error() -> Result<Json<Stats>, ToolError> {
    Err(ToolError::new("no notes"))
}

/// Returns `Result<T, std::io::Error>`.
#[mcp_tool]
async fn r_result_io_error() -> Result<String, std::io::Error> {
    std::fs::read_to_string("/nonexistent")
}

fn main() {
    let catalog = disco_runtime::Catalog::from_inventory().unwrap();
    for name in [
        "r_string",
        "r_static_str",
        "r_unit",
        "r_unit_explicit",
        "r_json",
        "r_contents",
        "r_content",
        "r_call_tool_result",
        "r_result_tool_error",
        "r_result_io_error",
    ] {
        assert!(catalog.get(name).is_some(), "{name}");
    }
    assert!(catalog.get("r_json").unwrap().output_schema().is_some());
    assert!(catalog
        .get("r_result_tool_error")
        .unwrap()
        .output_schema()
        .is_some());
    assert!(catalog.get("r_string").unwrap().output_schema().is_none());
}
