// Rule: every mistake is reported in one compile (here: no description, an alias outside the
// charset, and `params(...)` naming a missing parameter), and the function is still emitted
// unchanged, so `main` below can call it without a "cannot find function" error.
use disco_runtime::mcp_tool;

#[mcp_tool(aliases("find notes"), params(qurey(alias = "question")))]
fn search_notes(query: String) -> String {
    query
}

fn main() {
    let _ = search_notes("ideas".to_string());
}
