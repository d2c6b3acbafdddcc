//! One tool of the catalog, with everything computed once when the catalog is built: its
//! tools/list entry, its parameters, and validators for its input and output.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::Value;

use super::provider::{DynamicTool, ToolProvider};
use super::schema::{self, JsonObject, SchemaMode};
use super::{Annotations, Handler, Package, ToolSpec};

/// How a tool of the catalog runs (`call/execute.rs`). `pub` in name only, as the default of
/// [`CatalogTool`]'s parameter: the module is the crate's own.
#[derive(Clone)]
pub enum ToolHandler {
    Static(Handler),
    Provider(Arc<dyn ToolProvider>),
}

/// Which meta-tool of the catalog itself a tool is: the call pipeline runs it
/// (`call/meta.rs`), never a handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaKind {
    Search,
    Execute,
}

/// One JSON parameter of a catalog tool.
///
/// Its schema is not a copy: [`ParamInfo::schema`] reads it from the tool's input schema,
/// which the parameter shares (a provider's catalog can hold many thousands of tools, and a
/// copy of each parameter's schema would cost as much as the schemas themselves). It is
/// read under the property's key as the catalog found it, kept apart from [`ParamInfo::name`]:
/// changing `name` changes the argument's key, never which schema the parameter has.
#[derive(Clone)]
pub struct ParamInfo {
    /// The argument's key.
    pub name: String,
    /// Other keys argument repair accepts for it (declared with `#[param(alias = ...)]`;
    /// none for a provider's tool).
    pub aliases: Vec<String>,
    /// What the model is told about it.
    pub description: Option<String>,
    /// Listed in the input schema's `required`.
    pub required: bool,
    /// The schema's `default`, when it has one.
    pub default: Option<Value>,
    /// The key of the parameter's schema in the input schema's `properties`: `name` as the
    /// catalog built it, which `name` being public and mutable must not detach.
    key: Box<str>,
    /// The tool's input schema, whose `properties` hold the parameter's schema under `key`.
    input_schema: Arc<JsonObject>,
}

impl ParamInfo {
    /// The parameter's schema, read from the tool's input schema (`properties`, under the
    /// key the catalog found the parameter at) rather than kept in a copy: `true`, any value,
    /// when it has none there. Renaming the parameter (its public [`ParamInfo::name`]) keeps
    /// its schema.
    pub fn schema(&self) -> &Value {
        static ANY: Value = Value::Bool(true);
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
            .and_then(|props| props.get(&*self.key))
            .unwrap_or(&ANY)
    }
}

impl fmt::Debug for ParamInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParamInfo")
            .field("name", &self.name)
            .field("aliases", &self.aliases)
            .field("description", &self.description)
            .field("required", &self.required)
            .field("schema", self.schema())
            .field("default", &self.default)
            .finish()
    }
}

/// Two parameters are equal when everything they say is: their schemas compared, not the
/// input schemas they are read from.
impl PartialEq for ParamInfo {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.aliases == other.aliases
            && self.description == other.description
            && self.required == other.required
            && self.default == other.default
            && self.schema() == other.schema()
    }
}

/// One tool of the catalog, with everything computed once at build time. Made by the
/// catalog only, and read through its methods, so that how it is kept can change.
///
/// `H` is how it runs: a `ToolHandler` for the catalog's tools, a `MetaKind` for its
/// meta-tools (`tool_search`, `execute_tool`), so that neither can reach the other's runner.
pub struct CatalogTool<H = ToolHandler> {
    /// The published name, which calls resolve to.
    pub(crate) name: String,
    /// A human-readable title for clients' UIs.
    pub(crate) title: Option<String>,
    /// What a model chooses the tool by.
    pub(crate) description: String,
    /// Other names the tool answers to.
    pub(crate) aliases: Vec<String>,
    /// Words search finds the tool by, besides its name and description.
    pub(crate) keywords: Vec<String>,
    /// The group the tool is listed under in the server's instructions, in `tool_search`'s
    /// description and in tools/list's `_meta` (`io.modelcontextprotocol/groups`): a
    /// `#[mcp_tool]`'s `group = "..."`, else the last segment of its module path; a provider's
    /// [`DynamicTool::group`], else the provider's [`ToolProvider::name`]. `None` for a
    /// provider's tool with neither, and for the meta-tools.
    pub(crate) group: Option<String>,
    /// The MCP hints, as declared (`None` fields: not said).
    pub(crate) annotations: Annotations,
    /// Kept out of tools/list; found and called through search.
    pub(crate) hidden: bool,
    /// How long a call may run before it is stopped: the tool's own `timeout_ms`, else the
    /// catalog's default timeout; `None`: no limit.
    pub(crate) timeout: Option<Duration>,
    /// The JSON parameters: in declaration order for a `#[mcp_tool]` function, as the input
    /// schema lists them for a provider's tool.
    pub(crate) params: Vec<ParamInfo>,
    /// The input schema as served in tools/list.
    pub(crate) input_schema: Arc<JsonObject>,
    /// The output schema as served, for a tool with structured output.
    pub(crate) output_schema: Option<Arc<JsonObject>>,
    /// A recursive parameter or output type kept `$defs` in a portable schema.
    pub(crate) recursive_schema: bool,
    /// What could not be done with the tool's schemas as received (a schema that does not
    /// compile: its arguments then reach the tool unchecked, and the tool itself decides).
    /// Reported by the log and by `lint`; empty for `#[mcp_tool]` functions.
    pub(crate) schema_problems: Vec<String>,
    /// How older schema forms were read (the draft used when a schema declares none but is
    /// written in an older one). Reported by `lint` as information.
    pub(crate) schema_notes: Vec<String>,
    /// Where the tool was declared (`module::function (file:line)`).
    pub(crate) origin: String,
    /// The Cargo package that declares the tool; empty strings for a provider's tool.
    pub(crate) package: Package,
    /// The definition as given: the tools/list entry without the catalog's hints, which
    /// [`CatalogTool::entry`] adds.
    pub(crate) tool: Tool,
    /// Pinned by the catalog it was first indexed in: always loaded by a client-side search.
    pub(crate) always_load: bool,
    pub(crate) wrap_output: bool,
    /// Compiled from the full-form input schema: the exact contract of the parameter types
    /// (portable schemas drop `null` from nested optional fields, which serde accepts).
    input_validator: Option<Validator>,
    pub(crate) output_validator: Option<Validator>,
    pub(crate) handler: H,
    /// `name`, shared with every call's [`crate::tool::Context`].
    pub(crate) shared_name: Arc<str>,
}

impl<H> fmt::Debug for CatalogTool<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CatalogTool")
            .field("name", &self.name)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// A schema's validator. A provider's tools can be many thousands, most never called, and a
/// compiled validator takes kilobytes: theirs is compiled when the catalog is built (to know
/// whether it compiles, and how), dropped, and compiled again at the first call that needs it.
pub(crate) enum Validator {
    /// Compiled with the catalog, kept (a `#[mcp_tool]`'s: few, and called).
    Ready(Arc<jsonschema::Validator>),
    /// Compiled at the first use from this schema, which compiled when the catalog was built.
    Lazy(
        Arc<JsonObject>,
        std::sync::OnceLock<Option<jsonschema::Validator>>,
    ),
}

impl Validator {
    /// The compiled validator (`None` only if a schema that compiled once no longer does).
    pub(crate) fn get(&self) -> Option<&jsonschema::Validator> {
        match self {
            Validator::Ready(v) => Some(v),
            Validator::Lazy(schema, cell) => cell
                .get_or_init(|| compile_schema(schema).ok().map(|(v, _)| v))
                .as_ref(),
        }
    }
}

/// Arguments with more values than this get the first schema error alone (see
/// [`CatalogTool::validate_input`]).
const MAX_VALUES_FOR_ALL_ERRORS: usize = 1_000;

/// `` `/path`: `` before an error's message, or nothing at the top level.
fn at(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("`{path}`: ")
    }
}

/// One schema error as a line, with its path.
fn error_line(e: &jsonschema::ValidationError<'_>) -> String {
    let path = e.instance_path().to_string();
    // The validator names two allowed values and "N other candidates": a model needs them all.
    let message = match e.kind() {
        jsonschema::error::ValidationErrorKind::Enum { options } => match options.as_array() {
            Some(values) => {
                // The catalog's own values, all of them up to a bound; the sent value clipped.
                const SHOWN: usize = 50;
                let mut shown: Vec<String> =
                    values.iter().take(SHOWN).map(Value::to_string).collect();
                if values.len() > SHOWN {
                    shown.push(format!("… ({} in all)", values.len()));
                }
                let sent = crate::util::clip(&e.instance().to_string(), 100);
                return crate::util::clip(
                    &format!("{}{sent} is not one of {}", at(&path), shown.join(", ")),
                    4_000,
                );
            }
            None => e.to_string(),
        },
        _ => e.to_string(),
    };
    let line = format!("{}{message}", at(&path));
    // The validator quotes the offending value whole: a 4 MB string must not come back in
    // the error.
    crate::util::clip(&line, 300)
}

impl<H> CatalogTool<H> {
    /// The published name, which calls resolve to.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A human-readable title for clients' UIs.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// What a model chooses the tool by.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Other names the tool answers to.
    pub fn aliases(&self) -> &[String] {
        &self.aliases
    }

    /// Words search finds the tool by, besides its name and description.
    pub fn keywords(&self) -> &[String] {
        &self.keywords
    }

    /// The group the tool is listed under in the server's instructions, in `tool_search`'s
    /// description and in tools/list's `_meta` (`io.modelcontextprotocol/groups`): a
    /// `#[mcp_tool]`'s `group = "..."`, else the last segment of its module path; a provider's
    /// [`DynamicTool::group`], else the provider's [`ToolProvider::name`]. `None` for a
    /// provider's tool with neither, and for the meta-tools.
    pub fn group(&self) -> Option<&str> {
        self.group.as_deref()
    }

    /// The MCP hints, as declared (`None` fields: not said).
    pub fn annotations(&self) -> &Annotations {
        &self.annotations
    }

    /// Kept out of tools/list; found and called through search.
    pub fn hidden(&self) -> bool {
        self.hidden
    }

    /// How long a call may run before it is stopped: the tool's own `timeout_ms`, else the
    /// catalog's default timeout; `None`: no limit.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The JSON parameters: in declaration order for a `#[mcp_tool]` function, as the input
    /// schema lists them for a provider's tool.
    pub fn params(&self) -> &[ParamInfo] {
        &self.params
    }

    /// The input schema as served in tools/list.
    pub fn input_schema(&self) -> &JsonObject {
        &self.input_schema
    }

    /// The output schema as served, for a tool with structured output.
    pub fn output_schema(&self) -> Option<&JsonObject> {
        self.output_schema.as_deref()
    }

    /// A recursive parameter or output type kept `$defs` in a portable schema.
    pub fn recursive_schema(&self) -> bool {
        self.recursive_schema
    }

    /// What could not be done with the tool's schemas as received (a schema that does not
    /// compile: its arguments then reach the tool unchecked, and the tool itself decides).
    /// Reported by the log and by `lint`; empty for `#[mcp_tool]` functions.
    pub fn schema_problems(&self) -> &[String] {
        &self.schema_problems
    }

    /// How older schema forms were read (the draft used when a schema declares none but is
    /// written in an older one). Reported by `lint` as information.
    pub fn schema_notes(&self) -> &[String] {
        &self.schema_notes
    }

    /// Where the tool was declared (`module::function (file:line)`).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The Cargo package that declares the tool; empty strings for a provider's tool.
    pub fn package(&self) -> &Package {
        &self.package
    }

    /// The tool's definition as given, without the hints the catalog adds to its tools/list
    /// entry: no `anthropic/alwaysLoad`, `anthropic/searchHint` or disco's group in `_meta`
    /// (only what the definition declared there). The catalog makes those at listing time;
    /// [`CatalogTool::entry`] is the definition with them, as tools/list and
    /// [`Tools::get_tool`](crate::Tools::get_tool) show it.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// The parameter with this exact key (aliases are not looked at).
    pub fn param(&self, name: &str) -> Option<&ParamInfo> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Per the MCP annotations, a tool is destructive unless it is marked read-only or
    /// `destructive = false`.
    pub fn is_destructive(&self) -> bool {
        self.annotations.is_destructive()
    }

    /// Whether arguments are checked against an input schema (not when the schema could not
    /// be compiled: see `schema_problems`).
    pub(crate) fn validates_input(&self) -> bool {
        self.input_validator.is_some()
    }

    /// JSON Schema validation of prepared arguments: one line per error, with its path.
    pub fn validate_input(&self, arguments: &Value) -> Vec<String> {
        let Some(validator) = self.input_validator.as_ref().and_then(Validator::get) else {
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
}

impl CatalogTool {
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
        let input_recursive = input.recursive;
        let input_schema = Arc::new(input.schema);
        let properties = input_schema.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let info = |name: &str, spec: Option<&super::ParamSpec>| {
            let schema = properties.and_then(|props| props.get(name));
            let default = schema.and_then(|s| s.get("default")).cloned();
            ParamInfo {
                name: name.to_string(),
                key: name.into(),
                aliases: spec
                    .map(|p| p.aliases.iter().map(|a| a.to_string()).collect())
                    .unwrap_or_default(),
                description: match spec {
                    Some(p) => p.description.map(str::to_string),
                    None => schema
                        .and_then(|s| s.get("description"))
                        .and_then(Value::as_str)
                        .map(str::to_string),
                },
                required: match spec {
                    Some(p) => p.required,
                    None => required.contains(&name),
                },
                default,
                input_schema: input_schema.clone(),
            }
        };
        let mut params = Vec::new();
        for p in spec.params {
            if p.flatten {
                // The struct's fields, in its schema's order: every property no other
                // parameter declares (the schema refuses a second flattened parameter and a
                // field that has another parameter's name).
                let declared = |k: &str| spec.params.iter().any(|o| !o.flatten && o.name == k);
                params.extend(
                    properties
                        .into_iter()
                        .flat_map(|props| props.keys())
                        .filter(|k| !declared(k))
                        .map(|k| info(k, None)),
                );
            } else {
                params.push(info(p.name, Some(p)));
            }
        }
        let mut gen = schema::generator(mode);
        let (output, wrap_output) = match (spec.output_schema)(&mut gen) {
            Some(s) => {
                let (built, wrap) = schema::output_schema(s, mode);
                (Some(built), wrap)
            }
            None => (None, false),
        };
        let full_input = schema::input_schema(spec.params, SchemaMode::Full)?;
        let input_validator = Some(Validator::Ready(Arc::new(
            jsonschema::validator_for(&Value::Object(full_input.schema))
                .map_err(|e| format!("its input schema is not valid JSON Schema: {e}"))?,
        )));
        let output_validator = match &output {
            Some(o) => Some(Validator::Ready(Arc::new(
                jsonschema::validator_for(&Value::Object(o.schema.clone()))
                    .map_err(|e| format!("its output schema is not valid JSON Schema: {e}"))?,
            ))),
            None => None,
        };
        let recursive_schema = input_recursive || output.as_ref().is_some_and(|o| o.recursive);
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
            group: Some(match spec.group {
                Some(group) => group.to_string(),
                None => super::group::module_group(spec.origin.module),
            }),
            annotations: spec.annotations,
            hidden: spec.hidden,
            timeout: spec.timeout_ms.map(Duration::from_millis),
            params,
            input_schema,
            output_schema,
            recursive_schema,
            schema_problems: Vec::new(),
            schema_notes: Vec::new(),
            origin: spec.origin.to_string(),
            package: spec.origin.package,
            tool,
            always_load: false,
            wrap_output,
            input_validator,
            output_validator,
            handler: ToolHandler::Static(spec.handler),
            shared_name: Arc::from(spec.name),
        })
    }
}

/// Compiles a schema as found in the wild, with the draft it declares (`$schema`). One that
/// declares none, or a URL no draft has, is read as 2020-12 and, when it does not compile so,
/// as the older drafts in turn (draft-07, then draft-04: `definitions`, tuple `items`, boolean
/// `exclusiveMinimum` are older forms that 2020-12 refuses or reads differently). Returns the
/// validator and, when an older draft was used, a note saying which.
pub(crate) fn compile_schema(
    schema: &JsonObject,
) -> Result<(jsonschema::Validator, Option<String>), String> {
    use jsonschema::Draft;
    let declared = schema.get("$schema");
    let draft = declared
        .and_then(Value::as_str)
        .map(Draft::from_schema_uri)
        .filter(|d| *d != Draft::Unknown);
    let build = |draft: Draft, value: &Value| {
        jsonschema::options()
            .with_draft(draft)
            .build(value)
            .map_err(|e| crate::util::clip(&e.to_string(), 300))
    };
    if let Some(draft) = draft {
        return build(draft, &Value::Object(schema.clone())).map(|v| (v, None));
    }
    // An unknown `$schema` would send the validator looking for a meta-schema it cannot have.
    let mut value = schema.clone();
    let unknown = value.remove("$schema");
    let value = Value::Object(value);
    let unknown_note = unknown.map(|u| {
        format!(
            "`$schema` {} names no JSON Schema draft; read as the drafts below allow",
            crate::util::clip(&u.to_string(), 100)
        )
    });
    let first = match build(Draft::Draft202012, &value) {
        Ok(v) => return Ok((v, unknown_note)),
        Err(e) => e,
    };
    for (older, label) in [(Draft::Draft7, "draft-07"), (Draft::Draft4, "draft-04")] {
        if let Ok(v) = build(older, &value) {
            let note = format!(
                "written in an older form that 2020-12 refuses ({first}); validated as {label}"
            );
            let note = match &unknown_note {
                Some(u) => format!("{u}; {note}"),
                None => note,
            };
            return Ok((v, Some(note)));
        }
    }
    Err(first)
}

impl<H> CatalogTool<H> {
    /// A tool defined at run time (a provider's, or a meta-tool): parameters, validators and
    /// the search text come from its JSON Schema.
    pub(crate) fn from_dynamic(def: DynamicTool, handler: H) -> Result<Self, String> {
        let tool = def.tool;
        let input: &JsonObject = &tool.input_schema;
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
                        key: name.as_str().into(),
                        aliases: Vec::new(),
                        description: schema
                            .get("description")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        required: required.contains(&name.as_str()),
                        default: schema.get("default").cloned(),
                        input_schema: tool.input_schema.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        // One tool's schema never sinks the catalog: a schema that cannot be compiled leaves
        // the tool in, its arguments unchecked here (the tool, or the server behind it, checks
        // them), and says so.
        let mut schema_problems = def.problems;
        let mut schema_notes = Vec::new();
        let mut compile = |schema: &Arc<JsonObject>, what: &str| match compile_schema(schema) {
            Ok((_, note)) => {
                if let Some(note) = note {
                    schema_notes.push(format!("{what} schema: {note}"));
                }
                Some(Validator::Lazy(schema.clone(), std::sync::OnceLock::new()))
            }
            Err(e) => {
                schema_problems.push(format!(
                    "its {what} schema cannot be compiled ({e}), so {}",
                    if what == "input" {
                        "arguments are not validated against it"
                    } else {
                        "structured output is not validated against it"
                    }
                ));
                None
            }
        };
        let input_validator = compile(&tool.input_schema, "input");
        let output_validator = match &tool.output_schema {
            Some(schema) => compile(schema, "output"),
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
            group: def.group,
            annotations,
            hidden: def.hidden,
            timeout: None,
            params,
            input_schema: tool.input_schema.clone(),
            output_schema: tool.output_schema.clone(),
            recursive_schema,
            schema_problems,
            schema_notes,
            origin: "a tool provider".to_string(),
            package: Package::default(),
            tool,
            always_load: false,
            wrap_output: false,
            input_validator,
            output_validator,
            handler,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const DRAFTS: [(&str, bool); 5] = [
        ("http://json-schema.org/draft-04/schema#", true),
        ("http://json-schema.org/draft-06/schema#", false),
        ("http://json-schema.org/draft-07/schema#", false),
        ("https://json-schema.org/draft/2019-09/schema", false),
        ("https://json-schema.org/draft/2020-12/schema", false),
    ];

    /// "Above zero" in the form of draft-04 (a boolean beside `minimum`) or of its successors
    /// (a number).
    fn above_zero(draft04_form: bool, declared: Option<&str>) -> JsonObject {
        let bound = if draft04_form {
            json!({"type": "number", "minimum": 0, "exclusiveMinimum": true})
        } else {
            json!({"type": "number", "exclusiveMinimum": 0})
        };
        let mut schema = json!({"type": "object", "properties": {"n": bound}});
        if let Some(uri) = declared {
            schema["$schema"] = json!(uri);
        }
        match schema {
            Value::Object(o) => o,
            _ => unreachable!(),
        }
    }

    /// Every declared draft with the exclusive bound in its own form compiles and means what
    /// that draft says; in the other form, the declared draft refuses it.
    #[test]
    fn each_declared_draft_reads_its_own_form_and_refuses_the_other() {
        for (uri, draft04) in DRAFTS {
            let (v, note) = compile_schema(&above_zero(draft04, Some(uri)))
                .unwrap_or_else(|e| panic!("{uri}: {e}"));
            assert!(note.is_none(), "{uri}: {note:?}");
            assert!(!v.is_valid(&json!({"n": 0})), "{uri}: 0 accepted");
            assert!(v.is_valid(&json!({"n": 0.5})), "{uri}: 0.5 refused");
            assert!(
                compile_schema(&above_zero(!draft04, Some(uri))).is_err(),
                "{uri} accepted the other draft's form"
            );
        }
    }

    /// Undeclared, or declared with a URL that names no draft: either form is read by the
    /// draft it belongs to, and the older one is noted.
    #[test]
    fn an_undeclared_draft_is_read_from_the_form() {
        for declared in [None, Some("https://example.com/meta")] {
            for draft04 in [false, true] {
                let (v, note) = compile_schema(&above_zero(draft04, declared))
                    .unwrap_or_else(|e| panic!("{declared:?} {draft04}: {e}"));
                assert!(!v.is_valid(&json!({"n": 0})));
                assert!(v.is_valid(&json!({"n": 0.5})));
                let noted = note.as_deref().unwrap_or_default();
                assert_eq!(noted.contains("draft-04"), draft04, "{noted}");
                assert_eq!(
                    noted.contains("names no JSON Schema draft"),
                    declared.is_some()
                );
            }
        }
    }

    /// What no draft can compile is an error, whatever is declared.
    #[test]
    fn a_schema_no_draft_compiles_is_an_error() {
        let broken = [
            json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "(["}}}),
            json!({"type": "object", "properties": {"w": {"type": "integr"}}}),
            json!({"type": "object", "required": "name"}),
        ];
        for schema in broken {
            for declared in [None, Some(DRAFTS[0].0), Some(DRAFTS[4].0)] {
                let mut schema = schema.clone();
                if let Some(uri) = declared {
                    schema["$schema"] = json!(uri);
                }
                let Value::Object(o) = &schema else {
                    unreachable!()
                };
                assert!(compile_schema(o).is_err(), "{schema} compiled");
            }
        }
    }

    /// A provider tool with a broken schema is built, without a validator, its problem said.
    #[test]
    fn a_provider_tool_with_a_broken_schema_is_kept() {
        let schema = json!({"type": "object", "properties": {"w": {"type": "integr"}}});
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        let def = DynamicTool::new(Tool::new("t", "a tool", Arc::new(schema)));
        let tool = CatalogTool::from_dynamic(def, MetaKind::Search).expect("the tool is kept");
        assert_eq!(tool.schema_problems.len(), 1);
        assert!(tool.validate_input(&json!({"w": "wide"})).is_empty());
    }

    /// A provider tool's schemas are compiled when it is built (its notes said then) and
    /// kept uncompiled until a call needs them; then they validate as an eager one would.
    #[test]
    fn a_provider_tools_validators_are_compiled_at_first_use() {
        let def = DynamicTool::new(Tool::new("t", "a tool", Arc::new(above_zero(true, None))));
        let tool = CatalogTool::from_dynamic(def, MetaKind::Search).expect("the tool is built");
        assert!(
            tool.schema_notes[0].contains("draft-04"),
            "{:?}",
            tool.schema_notes
        );
        assert!(tool.validates_input());
        let compiled = |t: &CatalogTool<MetaKind>| match &t.input_validator {
            Some(Validator::Lazy(_, cell)) => cell.get().is_some(),
            _ => panic!("not compiled lazily"),
        };
        assert!(!compiled(&tool), "compiled before any call");
        assert_eq!(
            tool.validate_input(&json!({"n": 0.5})),
            Vec::<String>::new()
        );
        assert!(compiled(&tool));
        assert_eq!(tool.validate_input(&json!({"n": 0})).len(), 1);
    }
}
