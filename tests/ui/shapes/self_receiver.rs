// Rule: a tool is a free function, not a method: `self` cannot come from JSON.
use disco_runtime::mcp_tool;

struct Notes;

impl Notes {
    /// Search the notes by meaning.
    #[mcp_tool]
    fn search(&self, query: String) -> String {
        query
    }
}

fn main() {}
