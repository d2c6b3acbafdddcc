//! One tool of the catalog, with everything computed once when the catalog is built: its
//! tools/list entry, its parameters, and validators for its input and output.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::Value;

use super::provider::{DynamicTool, ToolProvider};
use crate::tool::schema::{self, JsonObject, SchemaMode};
use crate::tool::{Annotations, Handler, ToolSpec};

/// How a tool runs.
#[derive(Clone)]
pub(crate) enum ToolHandler {
    Static(Handler),
    Provider(Arc<dyn ToolProvider>),
    /// A meta-tool of the catalog itself (`tool_search`, `execute_tool`).
    Meta(MetaKind),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MetaKind {
    Search,
    Execute,
}

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
    pub(crate) wrap_output: bool,
    /// Compiled from the full-form input schema: the exact contract of the parameter types
    /// (portable schemas drop `null` from nested optional fields, which serde accepts).
    input_validator: Option<Arc<jsonschema::Validator>>,
    pub(crate) output_validator: Option<Arc<jsonschema::Validator>>,
    pub(crate) handler: ToolHandler,
    /// `name`, shared with every call's [`crate::tool::Context`].
    pub(crate) shared_name: Arc<str>,
}

impl fmt::Debug for CatalogTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CatalogTool")
            .field("name", &self.name)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// Arguments with more values than this get the first schema error alone (see
/// [`CatalogTool::validate_input`]).
const MAX_VALUES_FOR_ALL_ERRORS: usize = 1_000;

/// One schema error as a line, with its path.
fn error_line(e: &jsonschema::ValidationError<'_>) -> String {
    let path = e.instance_path().to_string();
    let line = if path.is_empty() {
        e.to_string()
    } else {
        format!("`{path}`: {e}")
    };
    // The validator quotes the offending value whole: a 4 MB string must not come back in
    // the error.
    super::clip(&line, 300)
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
        // Valid arguments are the common case, and the yes/no check is the validator's fast
        // path: the errors are collected only for arguments it refuses.
        if validator.is_valid(arguments) {
            return Vec::new();
        }
        // `iter_errors` collects every error before the first is read, one per bad item of
        // an array: for large arguments, report the first alone.
        let large = match arguments {
            Value::Object(map) => {
                super::budget::count_values(map, MAX_VALUES_FOR_ALL_ERRORS)
                    > MAX_VALUES_FOR_ALL_ERRORS
            }
            _ => false,
        };
        if large {
            return match validator.validate(arguments) {
                Ok(()) => Vec::new(),
                Err(e) => vec![error_line(&e)],
            };
        }
        validator
            .iter_errors(arguments)
            .take(10)
            .map(|e| error_line(&e))
            .collect()
    }

    pub(crate) fn from_spec(
        spec: &'static ToolSpec,
        default_mode: SchemaMode,
    ) -> Result<Self, String> {
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

        // Borrowed from the static spec: cloning the entry (every tools/list page, every
        // header check of a stateless request) then copies no text.
        let mut tool = Tool::new(spec.name, spec.description, input_schema.clone());
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
            handler: ToolHandler::Static(spec.handler),
            shared_name: Arc::from(spec.name),
        })
    }
}

impl CatalogTool {
    /// A tool defined at run time (a provider's, or a meta-tool): parameters, validators and
    /// the search text come from its JSON Schema.
    pub(crate) fn from_dynamic(def: DynamicTool, handler: ToolHandler) -> Result<Self, String> {
        let tool = def.tool;
        let input: JsonObject = (*tool.input_schema).clone();
        let required: Vec<&str> = input
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let params = input
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(name, schema)| ParamInfo {
                        name: name.clone(),
                        aliases: Vec::new(),
                        description: schema
                            .get("description")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        required: required.contains(&name.as_str()),
                        schema: schema.clone(),
                        default: schema.get("default").cloned(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let compile = |schema: &JsonObject, what: &str| {
            jsonschema::validator_for(&Value::Object(schema.clone()))
                .map(Arc::new)
                .map_err(|e| format!("its {what} schema is not valid JSON Schema: {e}"))
        };
        let input_validator = Some(compile(&input, "input")?);
        let output_validator = match &tool.output_schema {
            Some(schema) => Some(compile(schema, "output")?),
            None => None,
        };
        let annotations = tool
            .annotations
            .as_ref()
            .map(|a| Annotations {
                read_only: a.read_only_hint,
                destructive: a.destructive_hint,
                idempotent: a.idempotent_hint,
                open_world: a.open_world_hint,
            })
            .unwrap_or_default();
        let recursive_schema = input.contains_key("$defs") || input.contains_key("definitions");
        Ok(CatalogTool {
            shared_name: Arc::from(&*tool.name),
            name: tool.name.to_string(),
            title: tool
                .title
                .clone()
                .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone())),
            description: tool.description.as_deref().unwrap_or_default().to_string(),
            aliases: def.aliases,
            keywords: def.keywords,
            annotations,
            hidden: def.hidden,
            timeout: None,
            params,
            input_schema: tool.input_schema.clone(),
            output_schema: tool.output_schema.clone(),
            recursive_schema,
            origin: "a tool provider".to_string(),
            package: ("", ""),
            tool,
            wrap_output: false,
            input_validator,
            output_validator,
            handler,
        })
    }

    /// What the search index knows of this tool.
    pub(crate) fn search_doc(&self) -> crate::search::SearchDoc {
        crate::search::SearchDoc {
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            keywords: self.keywords.clone(),
            aliases: self.aliases.clone(),
            params: self
                .params
                .iter()
                .map(|p| (p.name.clone(), p.description.clone().unwrap_or_default()))
                .collect(),
        }
    }
}
