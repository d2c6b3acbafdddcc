//! The code of the guide's chapter on tools (`docs/guide/src/tools.md`), which includes the
//! parts between the `ANCHOR` lines; the tests below hold what the chapter says of it.

// `LoggingLevel`: logging is deprecated by SEP-2577 and still used by every client era (the
// chapter says so).
#![allow(deprecated)]

use disco_runtime::{mcp_tool, Catalog, Context, LoggingLevel, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::common::tools_in;

// ANCHOR: flatten
#[derive(Deserialize, JsonSchema)]
struct Filter {
    status: String,
    assignee: Option<String>,
}

/// Find issues by state and assignee.
#[mcp_tool(read_only)]
fn find_issues(#[param(flatten)] filter: Filter, #[param(default = 10)] limit: u32) -> String {
    // inputSchema: `status` (required), `assignee`, `limit`
    let who = filter.assignee.as_deref().unwrap_or("anyone");
    format!("up to {limit} {} issues of {who}", filter.status)
}
// ANCHOR_END: flatten

// ANCHOR: context
/// Import the rows of a file into the database and return how many were imported.
///
/// # Arguments
/// * `rows` - how many rows the file has
#[mcp_tool(destructive = false, timeout_ms = 60_000)]
async fn import_rows(ctx: Context, rows: u32) -> Result<String, ToolError> {
    for done in 0..rows {
        if ctx.is_cancelled() {
            // the client cancelled, or the timeout hit
            return Err(ToolError::new(format!("cancelled after {done} rows")));
        }
        // notifications/progress, sent only if the client asked for progress on this call
        let _ = ctx.progress(done as f64, Some(rows as f64), None).await;
        // ... import one row ...
    }
    // notifications/message, sent only if the client's logging/setLevel allows it
    let _ = ctx
        .log(LoggingLevel::Info, format!("imported {rows} rows"))
        .await;
    Ok(format!("{rows} rows imported"))
}
// ANCHOR_END: context

#[test]
fn a_flattened_struct_s_fields_are_the_tool_s_parameters() {
    let catalog = Catalog::builder()
        .from_specs(tools_in(module_path!()))
        .expect("catalog");
    let schema = catalog
        .get("find_issues")
        .expect("find_issues")
        .input_schema();
    let mut names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    names.sort();
    assert_eq!(names, ["assignee", "limit", "status"]);
    assert_eq!(schema["required"], json!(["status"]));
}
