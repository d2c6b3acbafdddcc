//! A provider of tools described by JSON (a tools/list result), for evaluating resolution and
//! search on other servers' catalogs. The provider traits themselves are in
//! [`crate::tool::provider`], re-exported here.

use std::path::Path;

use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Map, Value};

pub use crate::tool::provider::{DynamicTool, ScopedProvider, ToolProvider};
use crate::tool::{BoxFuture, Context};

/// The tools of a tools/list result (`{"tools": [...]}` or a bare array), as descriptions
/// only: a call validates its arguments and answers with them, without doing anything. Used
/// to evaluate resolution and search on other servers' catalogs. A tool's `_meta` may declare
/// `"disco/aliases"` and `"disco/keywords"` (arrays of strings) and `"disco/hidden": true`;
/// its group is the first valid name of its `"io.modelcontextprotocol/groups"`, if any.
pub struct JsonCatalogProvider {
    tools: Vec<DynamicTool>,
}

const NOT_A_LIST: &str = "expected {\"tools\": [...]} or an array of tools";

impl JsonCatalogProvider {
    /// The tools of a parsed tools/list result. A tool whose schema is not an object is kept
    /// with a schema that accepts any arguments, and the problem is reported with it; a tool
    /// that is not a valid MCP tool at all fails the whole list, naming its index.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        // Each tool is changed in place on its way to a `Tool`: a copy of the whole value
        // costs what a copy of each tool would.
        Self::from_owned(value.clone())
    }

    /// [`JsonCatalogProvider::from_value`] of a value it may take apart: each tool is moved
    /// out of it rather than copied (a catalog read from a file).
    fn from_owned(value: Value) -> Result<Self, String> {
        let list = match value {
            Value::Array(items) => items,
            Value::Object(mut obj) => match obj.remove("tools") {
                Some(Value::Array(items)) => items,
                _ => return Err(NOT_A_LIST.into()),
            },
            _ => return Err(NOT_A_LIST.into()),
        };
        let mut tools = Vec::with_capacity(list.len());
        for (i, mut item) in list.into_iter().enumerate() {
            let mut problems = Vec::new();
            if let Value::Object(obj) = &mut item {
                // Some catalogs omit the schema of tools without parameters.
                let input = obj
                    .entry("inputSchema")
                    .or_insert_with(|| serde_json::json!({"type": "object"}));
                // A schema that is not even an object cannot be served as MCP requires; the
                // tool stays, with the schema that accepts any arguments.
                if !input.is_object() {
                    problems.push(format!(
                        "its inputSchema is {}, not an object: served as `{{\"type\": \"object\"}}`, \
                         so arguments are not validated against a schema",
                        crate::util::json_kind(input)
                    ));
                    *input = serde_json::json!({"type": "object"});
                }
                if obj
                    .get("outputSchema")
                    .is_some_and(|o| !o.is_object() && !o.is_null())
                {
                    let kind = obj
                        .get("outputSchema")
                        .map(crate::util::json_kind)
                        .unwrap_or("");
                    problems.push(format!(
                        "its outputSchema is {kind}, not an object: left out, so structured \
                         output is not validated"
                    ));
                    obj.remove("outputSchema");
                }
            }
            let tool: Tool = serde_json::from_value(item)
                .map_err(|e| format!("tool #{i} is not a valid MCP tool: {e}"))?;
            let strings = |key: &str| -> Vec<String> {
                tool.meta
                    .as_ref()
                    .and_then(|m| m.get(key))
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let aliases = strings("disco/aliases");
            let keywords = strings("disco/keywords");
            let group = strings(super::GROUPS_META_KEY)
                .into_iter()
                .find(|g| super::group_problem(g).is_none());
            let hidden = tool
                .meta
                .as_ref()
                .and_then(|m| m.get("disco/hidden"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let mut def = DynamicTool::new(tool);
            def.problems = problems;
            def.aliases = aliases;
            def.keywords = keywords;
            def.group = group;
            def.hidden = hidden;
            tools.push(def);
        }
        Ok(JsonCatalogProvider { tools })
    }

    /// [`JsonCatalogProvider::from_value`] of a JSON file; errors name the file.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
        Self::from_owned(value)
    }
}

impl ToolProvider for JsonCatalogProvider {
    fn tools(&self) -> Vec<DynamicTool> {
        self.tools.clone()
    }

    fn call(&self, name: &str, arguments: Map<String, Value>, _ctx: Context) -> BoxFuture {
        let text = format!(
            "`{name}` is a description-only tool; it would have been called with {}",
            Value::Object(arguments)
        );
        Box::pin(async move { CallToolResult::success(vec![ContentBlock::text(text)]) })
    }
}
