//! What a tool may return, and how it becomes an MCP tool result.

use std::fmt;

use rmcp::model::{CallToolResult, ContentBlock};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;

/// Structured output: the value is sent as `structuredContent` (checked against the tool's
/// `outputSchema`, generated from `T`) together with a text copy for clients that read only
/// text. A value that is not a JSON object is sent as `{"result": value}`, because MCP requires
/// structured content and output schemas to be objects.
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

/// An error a tool reports to the model: the call becomes a result with `isError: true` and
/// this message. Any `std::error::Error` converts into it with `?`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// An error with this message, which the model reads: say what went wrong and what to
    /// send instead.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
        }
    }
    /// The message, causes included for a converted error.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(err: E) -> Self {
        // Keep the chain: "reading notes.json: permission denied" tells a model more than
        // the outer message alone.
        let mut message = err.to_string();
        let mut source = err.source();
        while let Some(s) = source {
            message.push_str(": ");
            message.push_str(&s.to_string());
            source = s.source();
        }
        ToolError { message }
    }
}

/// A value a tool function may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "this return type is not a tool result",
    note = "return `String`, `&'static str`, `()`, `Json<T>` (T: Serialize + JsonSchema), `Content`, `Vec<Content>`, `CallToolResult`, or `Result<T, E>` of one of these with `E: Display`"
)]
pub trait IntoToolResult {
    /// The MCP result sent for this value.
    fn into_tool_result(self) -> CallToolResult;
    /// The schema of the structured content this type produces, if it produces any.
    fn output_schema(_gen: &mut SchemaGenerator) -> Option<Schema> {
        None
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(self)])
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(self)])
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(Vec::new())
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(vec![self])
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(self)
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> CallToolResult {
        self
    }
}

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> CallToolResult {
        match serde_json::to_value(&self.0) {
            Ok(value) => {
                let text = value.to_string();
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                result.structured_content = Some(value);
                result
            }
            Err(err) => CallToolResult::error(vec![ContentBlock::text(format!(
                "The tool's result could not be serialized: {err}"
            ))]),
        }
    }
    fn output_schema(gen: &mut SchemaGenerator) -> Option<Schema> {
        Some(gen.root_schema_for::<T>())
    }
}

impl<T: IntoToolResult, E: fmt::Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
        }
    }
    fn output_schema(gen: &mut SchemaGenerator) -> Option<Schema> {
        T::output_schema(gen)
    }
}

/// A tool result that is an error with one text.
pub(crate) fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}
