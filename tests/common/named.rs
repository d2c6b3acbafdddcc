//! A provider whose tools are a list of names that a test changes while the server runs.

use std::sync::{Arc, Mutex};

use disco_runtime::catalog::DynamicTool;
use disco_runtime::rmcp::model::{CallToolResult, JsonObject, Tool};
use disco_runtime::tool::BoxFuture;
use disco_runtime::{Content, Context, ToolProvider};
use serde_json::{Map, Value};

/// One tool per name, taking no arguments; a call answers "ran NAME".
#[derive(Clone, Default)]
pub struct NamedTools {
    pub names: Arc<Mutex<Vec<String>>>,
}

impl NamedTools {
    pub fn add(&self, name: &str) {
        self.names.lock().unwrap().push(name.to_owned());
    }
}

impl ToolProvider for NamedTools {
    fn tools(&self) -> Vec<DynamicTool> {
        let schema: JsonObject =
            serde_json::from_value(serde_json::json!({"type": "object"})).unwrap();
        let schema = Arc::new(schema);
        self.names
            .lock()
            .unwrap()
            .iter()
            .map(|n| DynamicTool::new(Tool::new(n.clone(), format!("Tool {n}."), schema.clone())))
            .collect()
    }
    fn call(&self, name: &str, _args: Map<String, Value>, _ctx: Context) -> BoxFuture {
        let text = format!("ran {name}");
        Box::pin(async move { CallToolResult::success(vec![Content::text(text)]) })
    }
}
