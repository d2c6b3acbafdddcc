//! Tools that are not declared with the macro: from configuration, scripts, a database or
//! another server. A provider lists definitions and runs calls; the catalog merges its tools
//! with the inventory's and treats them alike (resolution, repair, validation, visibility).

use std::sync::Arc;

use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::{BoxFuture, Caller, Context};

/// One tool a provider offers. Made with [`DynamicTool::new`], then its fields set: more
/// fields may come, each with a default.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DynamicTool {
    /// The tools/list entry: name, title, description, schemas, annotations.
    pub tool: Tool,
    /// Other names the tool answers to, as `aliases(...)` of `#[mcp_tool]` (default none).
    pub aliases: Vec<String>,
    /// Words `tool_search` finds the tool by, as `keywords(...)` (default none).
    pub keywords: Vec<String>,
    /// The group the tool is listed under, as `group = "..."` (default: the provider's
    /// [`ToolProvider::name`], else none).
    pub group: Option<String>,
    /// Kept out of tools/list, found through search, as `hidden` (default `false`).
    pub hidden: bool,
    /// What was wrong with the definition as received and how it was made usable (a schema
    /// that is not an object, say): reported with the tool's schema problems, by the log and
    /// `lint`.
    pub problems: Vec<String>,
}

impl DynamicTool {
    /// A tool with this entry and nothing else: no aliases, no keywords, listed.
    pub fn new(tool: Tool) -> Self {
        DynamicTool {
            tool,
            aliases: Vec::new(),
            keywords: Vec::new(),
            group: None,
            hidden: false,
            problems: Vec::new(),
        }
    }
}

/// A source of tools besides `#[mcp_tool]`.
pub trait ToolProvider: Send + Sync + 'static {
    /// The provider's name: the group of its tools that do not name their own
    /// ([`DynamicTool::group`]). A group name follows the rule of `#[mcp_tool(group = "...")]`
    /// (1 to 64 characters of `A-Z a-z 0-9 _ - .`); the catalog refuses to build with
    /// another. Default: none, and such tools have no group.
    fn name(&self) -> Option<String> {
        None
    }
    /// The tools this provider offers now. Called when the catalog is built or reloaded.
    fn tools(&self) -> Vec<DynamicTool>;
    /// Runs one of its tools with arguments already repaired and validated against the
    /// tool's input schema.
    fn call(&self, name: &str, arguments: Map<String, Value>, ctx: Context) -> BoxFuture;
    /// Why a tool this provider offers is not served now (its source is down, say), for a call
    /// to `name`, the exact name it had, that resolved to no tool or only by a correction: the
    /// call is answered with this text as a tool error, instead of "unknown tool" or of a
    /// correction to some other tool. Answer only for a tool `caller` could see while it was
    /// served: to anyone else the name must stay unknown. Default: `None`, never.
    fn not_served(&self, name: &str, caller: &Caller) -> Option<String> {
        let _ = (name, caller);
        None
    }
}

/// Tools that exist only for some callers (a tenant's own tools, chosen from the caller's
/// identity). They are merged into that caller's catalog for listing, search and calls.
pub trait ScopedProvider: Send + Sync + 'static {
    /// The provider for `caller`, or `None` when the caller has no tools of its own.
    fn provider_for(&self, caller: &Caller) -> Option<Arc<dyn ToolProvider>>;
}
