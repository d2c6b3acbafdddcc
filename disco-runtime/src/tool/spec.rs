//! The static description of a tool that `#[mcp_tool]` generates: plain data and function
//! pointers, built at compile time and collected through `inventory`.

use std::future::Future;
use std::pin::Pin;

use rmcp::model::CallToolResult;
use schemars::{Schema, SchemaGenerator};
use serde_json::Value;

use super::Invocation;

/// A boxed tool future.
pub type BoxFuture = Pin<Box<dyn Future<Output = CallToolResult> + Send + 'static>>;

/// How a tool runs.
#[derive(Clone, Copy)]
pub enum Handler {
    /// A plain `fn`: run on a blocking thread, off the async workers.
    Sync(fn(Invocation) -> CallToolResult),
    /// An `async fn`.
    Async(fn(Invocation) -> BoxFuture),
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Handler::Sync(_) => "Handler::Sync",
            Handler::Async(_) => "Handler::Async",
        })
    }
}

/// MCP tool annotations (hints to clients). `None` means "not said", and the MCP defaults
/// apply: not read-only, destructive, not idempotent, open world.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Annotations {
    /// `readOnlyHint`: the tool changes nothing (MCP default `false`).
    pub read_only: Option<bool>,
    /// `destructiveHint`: the tool may destroy data (MCP default `true`; meaningless when
    /// read-only).
    pub destructive: Option<bool>,
    /// `idempotentHint`: calling it twice does what calling it once does (MCP default
    /// `false`).
    pub idempotent: Option<bool>,
    /// `openWorldHint`: it reaches systems outside the server (MCP default `true`).
    pub open_world: Option<bool>,
}

impl Annotations {
    /// Per the MCP annotations, a tool is destructive unless it is marked read-only or
    /// `destructive = false`. Fuzzy name correction never targets a destructive tool.
    pub fn is_destructive(&self) -> bool {
        !(self.read_only == Some(true) || self.destructive == Some(false))
    }
}

/// Where a tool was declared, for error messages that name both sides of a conflict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The module path of the function (`module_path!()`).
    pub module: &'static str,
    /// The source file, as `file!()` gives it.
    pub file: &'static str,
    /// The line of the function's name.
    pub line: u32,
    /// The function's name, which may differ from the published tool name.
    pub function: &'static str,
    /// The Cargo package that declares the tool.
    pub package: Package,
}

/// A Cargo package, as `CARGO_PKG_NAME` and `CARGO_PKG_VERSION` give it; both empty for a
/// tool that no package declares (a provider's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Package {
    /// The package's name (`CARGO_PKG_NAME`).
    pub name: &'static str,
    /// Its version (`CARGO_PKG_VERSION`).
    pub version: &'static str,
}

impl std::fmt::Display for Package {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.name, self.version)
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}::{} ({}:{})",
            self.module, self.function, self.file, self.line
        )
    }
}

/// Computes a parameter's default as JSON (`None` when its type is not `Serialize`).
pub type DefaultFn = fn() -> Result<Option<Value>, String>;

/// One JSON parameter of a tool.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    /// The argument's key in the input schema (the Rust parameter's name).
    pub name: &'static str,
    /// Other keys a model may send for it (`#[param(alias = ...)]`); repair renames them.
    pub aliases: &'static [&'static str],
    /// From the `# Arguments` entry or `#[param(description = ...)]`.
    pub description: Option<&'static str>,
    /// Not an `Option` and without a default.
    pub required: bool,
    /// The parameter's schema (for `Option<T>`, the schema of `T`).
    pub schema: fn(&mut SchemaGenerator) -> Schema,
    /// The default value, as JSON when the type is `Serialize` (for the schema's `default`).
    /// An `Err` means a literal default does not fit the parameter's type: the catalog refuses
    /// to start with it.
    pub default: Option<DefaultFn>,
    /// `#[param(flatten)]`: the parameter is a struct whose fields are the tool's parameters,
    /// as serde's `#[serde(flatten)]` reads them. Its fields are listed in the input schema
    /// beside the other parameters, and the struct is read from the keys they leave.
    pub flatten: bool,
}

/// Everything `#[mcp_tool]` knows about one tool.
#[derive(Clone, Copy, Debug)]
pub struct ToolSpec {
    /// The published name (the function's name unless `name = "..."`).
    pub name: &'static str,
    /// A human-readable title for clients' UIs.
    pub title: Option<&'static str>,
    /// The doc comment without its `# Arguments` and `# Examples` sections, or
    /// `description = "..."`: what a model chooses the tool by.
    pub description: &'static str,
    /// Other names the tool answers to; a call by one is reported as corrected.
    pub aliases: &'static [&'static str],
    /// Words `tool_search` finds the tool by, besides its name and description.
    pub keywords: &'static [&'static str],
    /// `group = "..."`: the group the tool is listed under; `None`: the last segment of its
    /// module path (see [`crate::catalog::CatalogTool::group`]).
    pub group: Option<&'static str>,
    /// The MCP hints; they also decide which tools fuzzy name correction may reach.
    pub annotations: Annotations,
    /// Kept out of tools/list; found and called through the search meta-tools.
    pub hidden: bool,
    /// Keep the full JSON Schema 2020-12 form instead of the portable one.
    pub full_schema: bool,
    /// The call fails with a timeout result after this many milliseconds; `None`: the
    /// catalog's default timeout.
    pub timeout_ms: Option<u64>,
    /// The JSON parameters, in declaration order (extractors are not among them).
    pub params: &'static [ParamSpec],
    /// The output schema its return type declares (see
    /// [`IntoToolResult::output_schema`](super::IntoToolResult::output_schema): that of `T`
    /// for `Json<T>`), or `None`.
    pub output_schema: fn(&mut SchemaGenerator) -> Option<Schema>,
    /// The `State<T>` types the tool takes that `state` lacks (their type names).
    pub missing_state: fn(&super::StateMap) -> Vec<&'static str>,
    /// Runs the tool on its arguments.
    pub handler: Handler,
    /// Where the tool was declared.
    pub origin: Origin,
}

/// The `inventory` item: one per `#[mcp_tool]` in the binary.
pub struct ToolRegistration(pub &'static ToolSpec);

inventory::collect!(ToolRegistration);

/// Every tool declared with `#[mcp_tool]` anywhere in the binary, in no particular order.
pub fn registered() -> impl Iterator<Item = &'static ToolSpec> {
    inventory::iter::<ToolRegistration>.into_iter().map(|r| r.0)
}
