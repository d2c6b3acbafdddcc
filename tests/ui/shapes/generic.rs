// Rule: a tool function is not generic: its parameter types must be known to build a schema.
use disco_runtime::mcp_tool;

/// Echo a value back.
#[mcp_tool]
fn echo<T: serde::de::DeserializeOwned + schemars::JsonSchema + ToString>(value: T) -> String {
    value.to_string()
}

fn main() {}
