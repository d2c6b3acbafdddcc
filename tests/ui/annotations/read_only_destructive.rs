// Rule: a tool cannot be both `read_only` and `destructive` (contradictory MCP annotations).
use disco_runtime::mcp_tool;

/// Delete a note.
#[mcp_tool(read_only, destructive)]
fn delete_note(id: u32) -> String {
    id.to_string()
}

fn main() {}
