use rmcp::model::CallToolResult;
use serde_json::json;

use crate::catalog::CatalogTool;
use crate::tool::result::error_result;

/// Wraps non-object structured content as declared, and refuses output that breaks the tool's
/// own output schema (clients reject such results).
pub(super) fn check_output(tool: &CatalogTool, result: &mut CallToolResult) {
    if result.is_error == Some(true) {
        return;
    }
    let Some(validator) = tool.output_validator.as_ref().and_then(|v| v.get()) else {
        return;
    };
    let Some(value) = result.structured_content.take() else {
        // A tool with an output schema must return structured content (MCP).
        *result = error_result(format!(
            "Tool `{}` declares an output schema but returned no structured content.",
            tool.name
        ));
        return;
    };
    let value = if tool.wrap_output {
        json!({ "result": value })
    } else {
        value
    };
    let errors: Vec<String> = if validator.is_valid(&value) {
        Vec::new()
    } else {
        validator
            .iter_errors(&value)
            .take(5)
            .map(|e| format!("{} at `{}`", e, e.instance_path()))
            .collect()
    };
    if errors.is_empty() {
        result.structured_content = Some(value);
    } else {
        tracing::error!(tool = %tool.name, errors = ?errors, "structured output breaks the output schema");
        *result = error_result(format!(
            "Tool `{}` produced output that does not match its output schema: {}",
            tool.name,
            errors.join("; ")
        ));
    }
}
