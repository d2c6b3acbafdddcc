//! The set of tools a server offers: every `#[mcp_tool]` in the binary, checked once at
//! start-up, with their schemas built once, and a transport-free way to call them.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations};
use serde_json::{Map, Value};

use crate::resolve::args;
use crate::tool::schema::{self, JsonObject, SchemaMode};
use crate::tool::{Annotations, Context, Handler, Invocation, StateMap, ToolSpec};

/// One JSON parameter of a catalog tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    pub name: String,
    pub aliases: Vec<String>,
    pub description: Option<String>,
    pub required: bool,
    /// The parameter's schema as it appears in the input schema.
    pub schema: Value,
    pub default: Option<Value>,
}

/// One tool of the catalog, with everything computed once at build time.
pub struct CatalogTool {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub aliases: Vec<String>,
    pub keywords: Vec<String>,
    pub annotations: Annotations,
    pub hidden: bool,
    pub timeout: Option<Duration>,
    pub params: Vec<ParamInfo>,
    pub input_schema: Arc<JsonObject>,
    pub output_schema: Option<Arc<JsonObject>>,
    /// A recursive parameter or output type kept `$defs` in a portable schema.
    pub recursive_schema: bool,
    /// Where the tool was declared (`module::function (file:line)`).
    pub origin: String,
    /// The Cargo package (name, version) that declares the tool.
    pub package: (&'static str, &'static str),
    /// The tools/list entry.
    pub tool: Tool,
    wrap_output: bool,
    /// Compiled from the full-form input schema: the exact contract of the parameter types
    /// (portable schemas drop `null` from nested optional fields, which serde accepts).
    input_validator: Option<Arc<jsonschema::Validator>>,
    output_validator: Option<Arc<jsonschema::Validator>>,
    handler: Handler,
}

impl fmt::Debug for CatalogTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CatalogTool")
            .field("name", &self.name)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl CatalogTool {
    pub fn param(&self, name: &str) -> Option<&ParamInfo> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Per the MCP annotations, a tool is destructive unless it is marked read-only or
    /// `destructive = false`.
    pub fn is_destructive(&self) -> bool {
        self.annotations.is_destructive()
    }

    /// JSON Schema validation of prepared arguments: one line per error, with its path.
    pub fn validate_input(&self, arguments: &Value) -> Vec<String> {
        let Some(validator) = &self.input_validator else {
            return Vec::new();
        };
        validator
            .iter_errors(arguments)
            .take(10)
            .map(|e| {
                let path = e.instance_path().to_string();
                if path.is_empty() {
                    e.to_string()
                } else {
                    format!("`{path}`: {e}")
                }
            })
            .collect()
    }

    fn from_spec(spec: &'static ToolSpec, default_mode: SchemaMode) -> Result<Self, String> {
        let mode = if spec.full_schema {
            SchemaMode::Full
        } else {
            default_mode
        };
        let input = schema::input_schema(spec.params, mode)?;
        let properties = input.schema.get("properties").and_then(Value::as_object);
        let params = spec
            .params
            .iter()
            .map(|p| {
                let schema = properties
                    .and_then(|props| props.get(p.name))
                    .cloned()
                    .unwrap_or(Value::Bool(true));
                let default = schema.get("default").cloned();
                ParamInfo {
                    name: p.name.to_string(),
                    aliases: p.aliases.iter().map(|a| a.to_string()).collect(),
                    description: p.description.map(str::to_string),
                    required: p.required,
                    schema,
                    default,
                }
            })
            .collect();
        let mut gen = schema::generator(mode);
        let (output, wrap_output) = match (spec.output_schema)(&mut gen) {
            Some(s) => {
                let (built, wrap) = schema::output_schema(s, mode);
                (Some(built), wrap)
            }
            None => (None, false),
        };
        let full_input = schema::input_schema(spec.params, SchemaMode::Full)?;
        let input_validator = Some(Arc::new(
            jsonschema::validator_for(&Value::Object(full_input.schema))
                .map_err(|e| format!("its input schema is not valid JSON Schema: {e}"))?,
        ));
        let output_validator = match &output {
            Some(o) => Some(Arc::new(
                jsonschema::validator_for(&Value::Object(o.schema.clone()))
                    .map_err(|e| format!("its output schema is not valid JSON Schema: {e}"))?,
            )),
            None => None,
        };
        let recursive_schema = input.recursive || output.as_ref().is_some_and(|o| o.recursive);
        let input_schema = Arc::new(input.schema);
        let output_schema = output.map(|o| Arc::new(o.schema));

        let mut tool = Tool::new(
            spec.name.to_string(),
            spec.description.to_string(),
            input_schema.clone(),
        );
        tool.title = spec.title.map(str::to_string);
        tool.output_schema = output_schema.clone();
        let a = spec.annotations;
        if a != Annotations::default() {
            let mut ann = ToolAnnotations::new();
            ann.read_only_hint = a.read_only;
            ann.destructive_hint = a.destructive;
            ann.idempotent_hint = a.idempotent;
            ann.open_world_hint = a.open_world;
            tool.annotations = Some(ann);
        }

        Ok(CatalogTool {
            name: spec.name.to_string(),
            title: spec.title.map(str::to_string),
            description: spec.description.to_string(),
            aliases: spec.aliases.iter().map(|a| a.to_string()).collect(),
            keywords: spec.keywords.iter().map(|k| k.to_string()).collect(),
            annotations: spec.annotations,
            hidden: spec.hidden,
            timeout: spec.timeout_ms.map(Duration::from_millis),
            params,
            input_schema,
            output_schema,
            recursive_schema,
            origin: spec.origin.to_string(),
            package: spec.origin.package,
            tool,
            wrap_output,
            input_validator,
            output_validator,
            handler: spec.handler,
        })
    }
}

/// Problems found while building the catalog; each names the definitions involved.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogError {
    pub problems: Vec<String>,
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "the tool catalog has {} problem(s):",
            self.problems.len()
        )?;
        for p in &self.problems {
            writeln!(f, "- {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CatalogError {}

/// Why a call could not reach a tool: these become JSON-RPC errors (-32602), not tool results.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// No visible tool has this name.
    UnknownTool {
        requested: String,
        suggestions: Vec<String>,
    },
    /// The request's `arguments` is not a JSON object.
    InvalidParams(String),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::UnknownTool {
                requested,
                suggestions,
            } => {
                write!(f, "Unknown tool: {requested}")?;
                if suggestions.is_empty() {
                    Ok(())
                } else {
                    write!(f, ". Did you mean: {}?", suggestions.join(", "))
                }
            }
            CallError::InvalidParams(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for CallError {}

/// Options for building a [`Catalog`].
#[derive(Default)]
pub struct CatalogBuilder {
    schema_mode: SchemaMode,
    state: StateMap,
    default_timeout: Option<Duration>,
    repair: args::Repair,
}

impl CatalogBuilder {
    /// How far argument repair goes (default: every safe repair).
    pub fn arg_repair(mut self, repair: args::Repair) -> Self {
        self.repair = repair;
        self
    }
    /// The server-wide schema form (a tool's `full_schema` overrides it).
    pub fn schema_mode(mut self, mode: SchemaMode) -> Self {
        self.schema_mode = mode;
        self
    }
    /// Application state for `State<T>` parameters.
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }
    /// A timeout for tools that do not set `timeout_ms`.
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = Some(timeout);
        self
    }
    /// Every `#[mcp_tool]` in the binary.
    pub fn from_inventory(self) -> Result<Catalog, CatalogError> {
        self.from_specs(crate::tool::registered())
    }
    /// The given tools only.
    pub fn from_specs(
        self,
        specs: impl IntoIterator<Item = &'static ToolSpec>,
    ) -> Result<Catalog, CatalogError> {
        let mut specs: Vec<&'static ToolSpec> = specs.into_iter().collect();
        // Deterministic order whatever the link order: by name, then by origin.
        specs.sort_by(|a, b| {
            (a.name, a.origin.module, a.origin.line).cmp(&(b.name, b.origin.module, b.origin.line))
        });
        let mut problems = Vec::new();
        let mut tools = Vec::with_capacity(specs.len());
        let mut origins = Vec::with_capacity(specs.len());
        for spec in specs {
            match CatalogTool::from_spec(spec, self.schema_mode) {
                Ok(mut tool) => {
                    if tool.timeout.is_none() {
                        tool.timeout = self.default_timeout;
                    }
                    tools.push(tool);
                    origins.push(spec.origin);
                }
                Err(err) => {
                    problems.push(format!("tool `{}` at {}: {err}", spec.name, spec.origin))
                }
            }
        }
        // Every name and alias must lead to exactly one tool, across all crates.
        let mut lookup: HashMap<String, usize> = HashMap::new();
        for (i, tool) in tools.iter().enumerate() {
            let names = std::iter::once((&tool.name, "name"))
                .chain(tool.aliases.iter().map(|a| (a, "alias")));
            for (n, kind) in names {
                if let Some(&j) = lookup.get(n) {
                    let other = &tools[j];
                    let other_kind = if other.name == *n { "name" } else { "an alias" };
                    let this_kind = if kind == "name" { "name" } else { "an alias" };
                    problems.push(format!(
                        "`{n}` is the {other_kind_article} of tool `{}` at {} and {this_kind_article} of tool `{}` at {}",
                        other.name,
                        origins[j],
                        tool.name,
                        origins[i],
                        other_kind_article = if other_kind == "name" { "name" } else { "alias" },
                        this_kind_article = if this_kind == "name" { "the name" } else { "an alias" },
                    ));
                } else {
                    lookup.insert(n.clone(), i);
                }
            }
        }
        if !problems.is_empty() {
            return Err(CatalogError { problems });
        }
        Ok(Catalog {
            tools,
            lookup,
            state: Arc::new(self.state),
            repair: self.repair,
        })
    }
}

/// The tools a server offers.
pub struct Catalog {
    tools: Vec<CatalogTool>,
    /// Names and declared aliases.
    lookup: HashMap<String, usize>,
    state: Arc<StateMap>,
    repair: args::Repair,
}

impl fmt::Debug for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Catalog")
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl Catalog {
    pub fn builder() -> CatalogBuilder {
        CatalogBuilder::default()
    }

    /// Every `#[mcp_tool]` in the binary, with the default options.
    pub fn from_inventory() -> Result<Catalog, CatalogError> {
        CatalogBuilder::default().from_inventory()
    }

    /// All tools, sorted by name (hidden ones included).
    pub fn tools(&self) -> &[CatalogTool] {
        &self.tools
    }

    pub fn get(&self, name: &str) -> Option<&CatalogTool> {
        self.lookup
            .get(name)
            .map(|&i| &self.tools[i])
            .filter(|t| t.name == name)
    }

    /// The tools/list entries of the tools that are not hidden, in catalog order.
    pub fn listed(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter().filter(|t| !t.hidden).map(|t| &t.tool)
    }

    /// The tool a name or declared alias stands for.
    pub fn lookup(&self, name: &str) -> Option<&CatalogTool> {
        self.lookup.get(name).map(|&i| &self.tools[i])
    }

    /// Calls a tool without any transport: what tests and benchmarks use.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, CallError> {
        self.call_with(name, Some(arguments), &Context::default())
            .await
    }

    /// Calls a tool as `ctx`'s caller. `arguments` absent or `null` means `{}`.
    pub async fn call_with(
        &self,
        name: &str,
        arguments: Option<Value>,
        ctx: &Context,
    ) -> Result<CallToolResult, CallError> {
        let tool = self.lookup(name).ok_or_else(|| CallError::UnknownTool {
            requested: name.to_string(),
            suggestions: Vec::new(),
        })?;
        let arguments = match arguments {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map,
            Some(other) => {
                return Err(CallError::InvalidParams(format!(
                    "`arguments` must be a JSON object, not {}",
                    json_kind(&other)
                )))
            }
        };
        let prepared = match args::prepare(tool, arguments, self.repair) {
            Ok(p) => p,
            Err(message) => return Ok(error_result(message)),
        };
        let mut result = self.execute(tool, prepared.arguments, ctx).await;
        if !prepared.fixes.is_empty() {
            let fixes: Vec<Value> = prepared.fixes.iter().map(args::ArgFix::to_json).collect();
            let meta = result.meta.get_or_insert_with(Default::default);
            meta.insert(
                "disco/corrections".into(),
                serde_json::json!({ "arguments": fixes }),
            );
        }
        Ok(result)
    }

    /// Runs a tool's handler with arguments already prepared: panics, timeouts and cancellation
    /// become error results, and structured output is checked against the output schema.
    async fn execute(
        &self,
        tool: &CatalogTool,
        arguments: Map<String, Value>,
        ctx: &Context,
    ) -> CallToolResult {
        let ctx = ctx.with_tool(&tool.name);
        let cancel = ctx.cancellation_token();
        let inv = Invocation {
            arguments,
            context: ctx,
            state: self.state.clone(),
        };
        let task = match tool.handler {
            Handler::Async(f) => tokio::spawn(f(inv)),
            Handler::Sync(f) => tokio::task::spawn_blocking(move || f(inv)),
        };
        let abort = task.abort_handle();
        let timeout = async {
            match tool.timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let outcome = tokio::select! {
            joined = task => joined,
            _ = cancel.cancelled() => {
                abort.abort();
                return error_result(format!("Tool `{}` was cancelled.", tool.name));
            }
            _ = timeout => {
                abort.abort();
                cancel.cancel();
                let ms = tool.timeout.map(|t| t.as_millis()).unwrap_or_default();
                tracing::warn!(tool = %tool.name, timeout_ms = %ms, "tool timed out");
                return error_result(format!(
                    "Tool `{}` did not finish within {ms} ms and was stopped.",
                    tool.name
                ));
            }
        };
        let mut result = match outcome {
            Ok(result) => result,
            Err(err) if err.is_panic() => {
                let panic = err.into_panic();
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a non-string panic payload".to_string());
                tracing::error!(tool = %tool.name, panic = %message, "tool panicked");
                return error_result(format!(
                    "Tool `{}` failed with an internal error.",
                    tool.name
                ));
            }
            Err(_) => return error_result(format!("Tool `{}` was cancelled.", tool.name)),
        };
        self.check_output(tool, &mut result);
        result
    }

    /// Wraps non-object structured content as declared, and refuses output that breaks the
    /// tool's own output schema (clients reject such results).
    fn check_output(&self, tool: &CatalogTool, result: &mut CallToolResult) {
        if result.is_error == Some(true) {
            return;
        }
        let Some(validator) = &tool.output_validator else {
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
            serde_json::json!({ "result": value })
        } else {
            value
        };
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .take(5)
            .map(|e| format!("{} at `{}`", e, e.instance_path()))
            .collect();
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
}

pub(crate) fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
