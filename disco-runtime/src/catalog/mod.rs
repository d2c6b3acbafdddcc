//! The set of tools a server offers: every `#[mcp_tool]` in the binary plus the tools of
//! providers, checked once at start-up, with schemas, name index and search index built once,
//! and a transport-free way to call them.
//!
//! One call, one direction: visibility for the caller -> name resolution -> argument repair
//! and validation -> handler (panics, timeouts, cancellation contained) -> output check.

pub mod provider;
pub mod stats;

pub mod docs;
pub mod lint;

use std::collections::HashMap;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt as _;
use rmcp::model::{CallToolResult, Tool};
use serde_json::{json, Map, Value};

use crate::resolve::args::{self, Repair};
use crate::resolve::name::{NameEntry, NameIndex, Outcome, Policy, Rule};
use crate::search::{meta, SearchIndex};
use crate::tool::result::error_result;
use crate::tool::schema::SchemaMode;
use crate::tool::{Caller, Context, Invocation, StateMap, ToolSpec};
use crate::util::{clip, json_kind};

pub use crate::resolve::name::{Policy as NamePolicy, Rule as NameRule};
pub use crate::tool::built::{CatalogTool, ParamInfo};
use crate::tool::built::{MetaKind, ToolHandler};
pub use provider::{DynamicTool, JsonCatalogProvider, ScopedProvider, ToolProvider};
use stats::Event;
pub use stats::{Stats, StatsSnapshot};

/// Problems found while building the catalog; each names the definitions involved.
///
/// Its `Debug` form is its `Display` form, one problem a line, so that `check().unwrap()` and
/// a `main` that returns the error print the problems as they read.
#[derive(Clone, PartialEq)]
pub struct CatalogError {
    pub problems: Vec<String>,
}

impl fmt::Debug for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
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
    /// No visible tool has this name (after every safe correction).
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

/// Which tools a caller may see. A tool the caller may not see never appears in tools/list,
/// search results, suggestions, error texts or counts, and a call to it is refused.
pub trait Visibility: Send + Sync + 'static {
    fn can_see(&self, caller: &Caller, tool: &CatalogTool) -> bool;
}

impl<F> Visibility for F
where
    F: Fn(&Caller, &CatalogTool) -> bool + Send + Sync + 'static,
{
    fn can_see(&self, caller: &Caller, tool: &CatalogTool) -> bool {
        self(caller, tool)
    }
}

/// What tools/list shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Exposure {
    /// Every tool that is not hidden (and the search meta-tools when search is on).
    #[default]
    All,
    /// Only the search meta-tools and the pinned tools: the model searches for the rest.
    SearchFirst { pinned: Vec<String> },
}

/// The search meta-tools.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// Offer `tool_search` and `execute_tool`.
    pub enabled: bool,
    pub exposure: Exposure,
    pub search_name: String,
    pub execute_name: String,
    /// Results per query when the caller does not say.
    pub default_results: usize,
    /// The most results a caller may ask for.
    pub max_results: usize,
    /// Below this keyword score a query finds nothing (abstention); 0 never abstains. With a
    /// semantic model, a query abstains only when, besides, no tool is near it in the model's
    /// space (`Ranking::semantic_threshold`), and the scores returned are the fused ones.
    pub threshold: f32,
    /// The ranking's weights, when not the defaults (evaluation and tuning); `threshold`
    /// above still decides abstention.
    pub ranking: Option<crate::search::index::Ranking>,
    /// A semantic model ranked together with the keywords (feature `semantic`; see
    /// [`crate::search::SemanticModel`]).
    #[cfg(feature = "semantic")]
    pub semantic: Option<Arc<crate::search::SemanticModel>>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            enabled: false,
            exposure: Exposure::All,
            search_name: "tool_search".into(),
            execute_name: "execute_tool".into(),
            default_results: 5,
            max_results: 20,
            threshold: crate::search::index::DEFAULT_THRESHOLD,
            ranking: None,
            #[cfg(feature = "semantic")]
            semantic: None,
        }
    }
}

/// Everything a catalog is built from; kept so that it can be rebuilt when providers change.
struct Config {
    schema_mode: SchemaMode,
    state: Arc<StateMap>,
    default_timeout: Option<Duration>,
    repair: Repair,
    max_argument_values: usize,
    policy: Policy,
    server_name: Option<String>,
    visibility: Option<Arc<dyn Visibility>>,
    providers: Vec<Arc<dyn ToolProvider>>,
    scoped: Vec<Arc<dyn ScopedProvider>>,
    search: SearchOptions,
    specs: Option<Vec<&'static ToolSpec>>,
    stats: Arc<Stats>,
    /// Every `State<T>` a tool takes must be registered (a server that will run the tools);
    /// off for a catalog built to be read (docs, lint, [`crate::check`]).
    require_state: bool,
}

/// What a requested tool name resolved to.
#[derive(Clone, Debug)]
pub struct NameResolution {
    /// The tool, when the name resolved.
    pub tool: Option<Arc<CatalogTool>>,
    /// How it resolved (exact, alias, a spelling rule, fuzzy).
    pub rule: Option<Rule>,
    /// When it did not: visible tools it may have meant, best first.
    pub suggestions: Vec<String>,
}

/// Options for building a [`Catalog`].
pub struct CatalogBuilder {
    config: Config,
    state: StateMap,
}

impl Default for CatalogBuilder {
    fn default() -> Self {
        CatalogBuilder {
            config: Config {
                schema_mode: SchemaMode::default(),
                state: Arc::new(StateMap::default()),
                default_timeout: None,
                repair: Repair::default(),
                max_argument_values: crate::tool::budget::DEFAULT_MAX_ARGUMENT_VALUES,
                policy: Policy::default(),
                server_name: None,
                visibility: None,
                providers: Vec::new(),
                scoped: Vec::new(),
                search: SearchOptions::default(),
                specs: None,
                stats: Arc::new(Stats::default()),
                require_state: false,
            },
            state: StateMap::default(),
        }
    }
}

impl CatalogBuilder {
    /// The server-wide schema form (a tool's `full_schema` overrides it).
    pub fn schema_mode(mut self, mode: SchemaMode) -> Self {
        self.config.schema_mode = mode;
        self
    }
    /// Application state for `State<T>` parameters.
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }
    /// A timeout for tools that do not set `timeout_ms`.
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.config.default_timeout = Some(timeout);
        self
    }
    /// How far argument repair goes (default: every safe repair).
    pub fn arg_repair(mut self, repair: Repair) -> Self {
        self.config.repair = repair;
        self
    }
    /// The most JSON values one call's arguments may hold, at every depth (default 100,000).
    /// Arguments over it get a tool error (`isError`) before any repair or validation runs:
    /// the work and memory those spend grow with the number of values.
    pub fn max_argument_values(mut self, values: usize) -> Self {
        self.config.max_argument_values = values;
        self
    }
    /// How far tool-name correction goes: `Off` (exact names), `Strict` (and declared
    /// aliases) or `Safe` (default: and spelling-equivalent names and guarded fuzzy matches).
    pub fn name_policy(mut self, policy: Policy) -> Self {
        self.config.policy = policy;
        self
    }
    /// The server's own name, so `server__tool`-style prefixes are recognised exactly.
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.config.server_name = Some(name.into());
        self
    }
    /// Which tools each caller may see.
    pub fn visibility(mut self, policy: impl Visibility) -> Self {
        self.config.visibility = Some(Arc::new(policy));
        self
    }
    /// Tools from a provider, merged with the inventory's.
    pub fn provider(mut self, provider: impl ToolProvider) -> Self {
        self.config.providers.push(Arc::new(provider));
        self
    }
    /// Tools that exist only for some callers.
    pub fn scoped_provider(mut self, provider: impl ScopedProvider) -> Self {
        self.config.scoped.push(Arc::new(provider));
        self
    }
    /// The search meta-tools and what tools/list shows.
    pub fn search(mut self, options: SearchOptions) -> Self {
        self.config.search = options;
        self
    }
    /// Refuse to build when a tool takes a `State<T>` that was not registered with
    /// [`CatalogBuilder::with_state`], naming the tool, where it is declared and the type. A
    /// [`crate::Server`] always asks for this; a catalog built only to be read (docs, lint)
    /// does not need its state.
    pub fn require_state(mut self, yes: bool) -> Self {
        self.config.require_state = yes;
        self
    }
    /// Every `#[mcp_tool]` in the binary, plus the providers' tools.
    pub fn from_inventory(mut self) -> Result<Catalog, CatalogError> {
        self.config.specs = None;
        self.build()
    }
    /// The given tools only (no inventory), plus the providers' tools.
    pub fn from_specs(
        mut self,
        specs: impl IntoIterator<Item = &'static ToolSpec>,
    ) -> Result<Catalog, CatalogError> {
        self.config.specs = Some(specs.into_iter().collect());
        self.build()
    }

    fn build(mut self) -> Result<Catalog, CatalogError> {
        self.config.state = Arc::new(self.state);
        Catalog::assemble(Arc::new(self.config), Vec::new(), None)
    }
}

/// The tools a server offers.
pub struct Catalog {
    config: Arc<Config>,
    tools: Vec<Arc<CatalogTool>>,
    /// Exact names.
    lookup: HashMap<String, usize>,
    names: NameIndex,
    search: SearchIndex,
    meta: Vec<Arc<CatalogTool>>,
    /// Catalogs merged with a caller's scoped tools, by caller id.
    scoped_cache: Mutex<HashMap<Option<String>, Option<Arc<Catalog>>>>,
}

impl fmt::Debug for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Catalog")
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

/// Bound on cached per-caller catalogs; past it the cache starts over.
const SCOPED_CACHE_MAX: usize = 1024;

impl Catalog {
    pub fn builder() -> CatalogBuilder {
        CatalogBuilder::default()
    }

    /// Every `#[mcp_tool]` in the binary, with the default options.
    pub fn from_inventory() -> Result<Catalog, CatalogError> {
        CatalogBuilder::default().from_inventory()
    }

    /// Builds the catalog again from the inventory and the providers' current tools (after a
    /// provider changed). Counters carry over, and so do the semantic vectors of the tools
    /// whose text did not change.
    pub fn rebuild(&self) -> Result<Catalog, CatalogError> {
        Catalog::assemble(self.config.clone(), Vec::new(), Some(&self.search))
    }

    /// Builds every tool, checks names and aliases across all of them, and indexes them.
    /// `before`: the catalog this one replaces, whose semantic vectors are reused.
    fn assemble(
        config: Arc<Config>,
        extra: Vec<Arc<CatalogTool>>,
        before: Option<&SearchIndex>,
    ) -> Result<Catalog, CatalogError> {
        let mut problems = Vec::new();
        let mut specs: Vec<&'static ToolSpec> = match &config.specs {
            Some(specs) => specs.clone(),
            None => crate::tool::registered().collect(),
        };
        // Deterministic order whatever the link order.
        specs.sort_by(|a, b| {
            (a.name, a.origin.module, a.origin.line).cmp(&(b.name, b.origin.module, b.origin.line))
        });
        let mut tools: Vec<Arc<CatalogTool>> = Vec::with_capacity(specs.len());
        for spec in specs {
            if config.require_state {
                for ty in (spec.missing_state)(&config.state) {
                    problems.push(format!(
                        "tool `{}` at {} takes `State<{ty}>`, but the server has no state of \
                         type `{ty}`: register it with `.with_state(...)`",
                        spec.name, spec.origin
                    ));
                }
            }
            match CatalogTool::from_spec(spec, config.schema_mode) {
                Ok(mut tool) => {
                    if tool.timeout.is_none() {
                        tool.timeout = config.default_timeout;
                    }
                    tools.push(Arc::new(tool));
                }
                Err(err) => {
                    problems.push(format!("tool `{}` at {}: {err}", spec.name, spec.origin))
                }
            }
        }
        for provider in &config.providers {
            add_provider_tools(provider, &config, &mut tools, &mut problems);
        }
        tools.extend(extra);
        Catalog::index(config, tools, problems, before)
    }

    /// Checks names and aliases across `tools` (built already) and indexes them: what a
    /// scoped caller's catalog needs on top of the tools every caller shares.
    /// `base`: the catalog whose tools these extend or replace, whose semantic vectors are
    /// reused for the tools of the same name and text.
    fn index(
        config: Arc<Config>,
        mut tools: Vec<Arc<CatalogTool>>,
        mut problems: Vec<String>,
        base: Option<&SearchIndex>,
    ) -> Result<Catalog, CatalogError> {
        tools.sort_by(|a, b| a.name.cmp(&b.name));

        let meta = if config.search.enabled {
            meta::definitions(&config.search)
                .into_iter()
                .map(|(def, kind)| {
                    CatalogTool::from_dynamic(def, ToolHandler::Meta(kind)).map(Arc::new)
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| CatalogError {
                    problems: vec![format!("a search meta-tool: {e}")],
                })?
        } else {
            Vec::new()
        };

        // Every name and alias must lead to exactly one tool, across all crates and providers.
        let mut seen: HashMap<&str, (usize, bool)> = HashMap::new();
        for m in &meta {
            seen.insert(m.name.as_str(), (usize::MAX, true));
        }
        for (i, tool) in tools.iter().enumerate() {
            let forms = std::iter::once((tool.name.as_str(), true))
                .chain(tool.aliases.iter().map(|a| (a.as_str(), false)));
            for (form, is_name) in forms {
                if let Some(&(j, other_is_name)) = seen.get(form) {
                    let other = match tools.get(j) {
                        Some(t) => format!(
                            "{} of tool `{}` at {}",
                            if other_is_name {
                                "the name"
                            } else {
                                "an alias"
                            },
                            t.name,
                            t.origin
                        ),
                        None => "the name of a search meta-tool".to_string(),
                    };
                    problems.push(format!(
                        "`{form}` is {other} and {} of tool `{}` at {}",
                        if is_name { "the name" } else { "an alias" },
                        tool.name,
                        tool.origin
                    ));
                } else {
                    seen.insert(form, (i, is_name));
                }
            }
        }
        if let Exposure::SearchFirst { pinned } = &config.search.exposure {
            for p in pinned {
                if !tools.iter().any(|t| &t.name == p) {
                    problems.push(format!("pinned tool `{p}` is not in the catalog"));
                }
            }
        }
        if !problems.is_empty() {
            return Err(CatalogError { problems });
        }

        let lookup = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        let names = NameIndex::new(tools.iter().map(|t| NameEntry {
            name: &t.name,
            aliases: &t.aliases,
            destructive: t.is_destructive(),
        }));
        let docs: Vec<_> = tools.iter().map(|t| search_doc(t)).collect();
        #[cfg(feature = "semantic")]
        let mut search = match &config.search.semantic {
            Some(model) => SearchIndex::build_with_semantic_reusing(&docs, model.clone(), base),
            None => SearchIndex::build(&docs),
        };
        #[cfg(not(feature = "semantic"))]
        let mut search = {
            let _ = base;
            SearchIndex::build(&docs)
        };
        if let Some(ranking) = &config.search.ranking {
            search = search.with_ranking(ranking.clone());
        }
        let search = search.with_threshold(config.search.threshold);
        let mut catalog = Catalog {
            config,
            tools,
            lookup,
            names,
            search,
            meta,
            scoped_cache: Mutex::new(HashMap::new()),
        };
        catalog.add_list_hints();
        Ok(catalog)
    }

    /// `_meta` hints that Claude's client-side tool search reads: pinned tools are always
    /// loaded; keywords become the search hint.
    fn add_list_hints(&mut self) {
        let pinned: &[String] = match &self.config.search.exposure {
            Exposure::SearchFirst { pinned } => pinned,
            Exposure::All => &[],
        };
        for tool in &mut self.tools {
            let always = pinned.contains(&tool.name);
            if !always && tool.keywords.is_empty() {
                continue;
            }
            // Shared tools (a scoped caller's catalog reuses the base one's) carry their
            // hints already; only tools built for this catalog are unique here.
            let Some(t) = Arc::get_mut(tool) else {
                continue;
            };
            let meta = t.tool.meta.get_or_insert_with(Default::default);
            if always {
                meta.insert("anthropic/alwaysLoad".into(), Value::Bool(true));
            }
            if !t.keywords.is_empty() {
                meta.insert(
                    "anthropic/searchHint".into(),
                    Value::String(t.keywords.join(", ")),
                );
            }
        }
    }

    /// All tools, sorted by name (hidden ones included), whoever the caller.
    pub fn tools(&self) -> &[Arc<CatalogTool>] {
        &self.tools
    }

    /// A tool by its exact name.
    pub fn get(&self, name: &str) -> Option<&CatalogTool> {
        self.lookup.get(name).map(|&i| &*self.tools[i])
    }

    /// The most JSON values one call's arguments may hold.
    pub(crate) fn max_argument_values(&self) -> usize {
        self.config.max_argument_values
    }

    /// Live counters of resolution, repair and failures.
    pub fn stats(&self) -> StatsSnapshot {
        self.config.stats.snapshot()
    }

    pub(crate) fn search_options(&self) -> &SearchOptions {
        &self.config.search
    }

    fn can_see(&self, caller: &Caller, tool: &CatalogTool) -> bool {
        self.config
            .visibility
            .as_ref()
            .is_none_or(|v| v.can_see(caller, tool))
    }

    /// The catalog as `caller` sees it: this one, or this one merged with the caller's scoped
    /// tools.
    fn view(&self, caller: &Caller) -> Option<Arc<Catalog>> {
        if self.config.scoped.is_empty() {
            return None;
        }
        let key = caller.id().map(str::to_string);
        let mut cache = self.scoped_cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = cache.get(&key) {
            return found.clone();
        }
        let mut extra = Vec::new();
        let mut problems = Vec::new();
        for scoped in &self.config.scoped {
            if let Some(provider) = scoped.provider_for(caller) {
                add_provider_tools(&provider, &self.config, &mut extra, &mut problems);
            }
        }
        let merged = if extra.is_empty() && problems.is_empty() {
            None
        } else {
            // The shared tools are reused as built (schemas, validators, list hints): only
            // the indexes are made again, over them and the caller's own tools.
            let tools = self.tools.iter().cloned().chain(extra).collect();
            match Catalog::index(self.config.clone(), tools, Vec::new(), Some(&self.search)) {
                Ok(c) => Some(Arc::new(c)),
                Err(e) => {
                    problems.extend(e.problems);
                    None
                }
            }
        };
        for p in &problems {
            tracing::error!(caller = ?caller.id(), problem = %p, "scoped tools left out");
        }
        if cache.len() >= SCOPED_CACHE_MAX {
            cache.clear();
        }
        cache.insert(key, merged.clone());
        merged
    }

    /// Forgets the merged catalogs of scoped callers (after their providers changed).
    pub fn invalidate_scoped(&self) {
        self.scoped_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// The tools/list entries `caller` sees, in catalog order.
    pub fn list(&self, caller: &Caller) -> Vec<Tool> {
        self.list_page(caller, 0, usize::MAX).0
    }

    /// One page of [`Catalog::list`]: the entries from `offset`, at most `limit` of them, and
    /// how many there are in all. Only the page's entries are cloned.
    pub fn list_page(&self, caller: &Caller, offset: usize, limit: usize) -> (Vec<Tool>, usize) {
        if let Some(view) = self.view(caller) {
            return view.list_page_here(caller, offset, limit);
        }
        self.list_page_here(caller, offset, limit)
    }

    fn list_page_here(&self, caller: &Caller, offset: usize, limit: usize) -> (Vec<Tool>, usize) {
        let pinned: Option<&[String]> = match &self.config.search.exposure {
            Exposure::SearchFirst { pinned } if self.config.search.enabled => Some(pinned),
            _ => None,
        };
        let listed = self
            .tools
            .iter()
            .filter(|t| match pinned {
                Some(pinned) => pinned.contains(&t.name),
                None => !t.hidden,
            })
            .filter(|t| self.can_see(caller, t));
        let all = self.meta.iter().chain(listed);
        let mut total = 0;
        let mut page = Vec::new();
        for t in all {
            if total >= offset && page.len() < limit {
                page.push(t.tool.clone());
            }
            total += 1;
        }
        (page, total)
    }

    /// Ranked tools for a query, among those `caller` may see (hidden ones included: search is
    /// how they are found).
    pub fn search(
        &self,
        query: &str,
        max_results: usize,
        caller: &Caller,
    ) -> Vec<(Arc<CatalogTool>, f32)> {
        if let Some(view) = self.view(caller) {
            return view.search_here(query, max_results, caller);
        }
        self.search_here(query, max_results, caller)
    }

    fn search_here(
        &self,
        query: &str,
        max_results: usize,
        caller: &Caller,
    ) -> Vec<(Arc<CatalogTool>, f32)> {
        let visible = |i: usize| self.can_see(caller, &self.tools[i]);
        self.search
            .search(query, max_results, &visible)
            .into_iter()
            .map(|hit| (self.tools[hit.index].clone(), hit.score))
            .collect()
    }

    /// Ranked tools for a query among those `filter` accepts (and ignoring visibility): for
    /// evaluation and tooling.
    pub fn search_where(
        &self,
        query: &str,
        max_results: usize,
        filter: &dyn Fn(&CatalogTool) -> bool,
    ) -> Vec<(Arc<CatalogTool>, f32)> {
        let allowed = |i: usize| filter(&self.tools[i]);
        self.search
            .search(query, max_results, &allowed)
            .into_iter()
            .map(|hit| (self.tools[hit.index].clone(), hit.score))
            .collect()
    }

    /// Which tool `requested` names for `caller`, and how; or the suggestions when none.
    /// This is the first step of every call, without running anything.
    pub fn resolve(&self, requested: &str, caller: &Caller) -> NameResolution {
        if let Some(view) = self.view(caller) {
            return view.resolve_here(requested, caller);
        }
        self.resolve_here(requested, caller)
    }

    fn resolve_here(&self, requested: &str, caller: &Caller) -> NameResolution {
        let visible = |i: usize| self.can_see(caller, &self.tools[i]);
        let resolution = self.names.resolve(
            requested,
            &visible,
            self.config.policy,
            self.config.server_name.as_deref(),
        );
        match resolution.outcome {
            Outcome::Resolved { index, rule } => NameResolution {
                tool: Some(self.tools[index].clone()),
                rule: Some(rule),
                suggestions: Vec::new(),
            },
            Outcome::Unknown => NameResolution {
                tool: None,
                rule: None,
                suggestions: resolution
                    .suggestions
                    .iter()
                    .map(|&i| self.tools[i].name.clone())
                    .collect(),
            },
        }
    }

    /// Calls a tool without any transport, as an anonymous caller: what tests and benchmarks
    /// use.
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
        if let Some(view) = self.view(ctx.caller()) {
            return view.call_here(name, arguments, ctx, true).await;
        }
        self.call_here(name, arguments, ctx, true).await
    }

    async fn call_here(
        &self,
        name: &str,
        arguments: Option<Value>,
        ctx: &Context,
        allow_meta: bool,
    ) -> Result<CallToolResult, CallError> {
        let stats = &self.config.stats;
        stats.count(Event::Call);
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
        // Before repair and validation, for every tool and meta-tool alike (execute_tool's
        // inner arguments are among its own).
        if let Some(message) =
            crate::tool::budget::over_budget(&arguments, self.config.max_argument_values)
        {
            stats.count(Event::ArgsRejected);
            tracing::info!(requested = %clip(name, 128), "arguments over the budget");
            return Ok(error_result(message));
        }
        if allow_meta {
            if let Some(m) = self.meta.iter().find(|m| m.name == name) {
                stats.count(Event::Exact);
                return Ok(self.run_meta(m, arguments, ctx).await);
            }
        }

        let resolution = self.resolve_here(name, ctx.caller());
        let (tool, rule) = match (resolution.tool, resolution.rule) {
            (Some(tool), Some(rule)) => (tool, rule),
            _ => {
                let suggestions = resolution.suggestions;
                stats.count(if suggestions.is_empty() {
                    Event::Unknown
                } else {
                    Event::UnknownSuggested
                });
                let requested = clip(name, 128);
                tracing::info!(requested = %requested, suggestions = ?suggestions, "unknown tool");
                return Err(CallError::UnknownTool {
                    requested,
                    suggestions,
                });
            }
        };
        stats.count(match rule {
            Rule::Exact => Event::Exact,
            Rule::Alias => Event::Alias,
            r if r.is_fuzzy() => Event::Fuzzy,
            _ => Event::Equivalent,
        });
        if rule != Rule::Exact {
            tracing::info!(requested = %clip(name, 128), resolved = %tool.name, rule = rule.as_str(), "tool name corrected");
        }

        let mut fixed = Map::new();
        if rule != Rule::Exact {
            fixed.insert(
                "tool".into(),
                json!({"requested": clip(name, 128), "resolved": tool.name, "rule": rule.as_str()}),
            );
        }
        let mut result = match args::prepare(&tool, arguments, self.config.repair) {
            Ok(prepared) => {
                if !prepared.fixes.is_empty() {
                    stats.count(Event::ArgsRepaired);
                    tracing::info!(tool = %tool.name, fixes = prepared.fixes.len(), "arguments repaired");
                }
                let result = self.execute(&tool, prepared.arguments, ctx).await;
                if !prepared.fixes.is_empty() {
                    let fixes: Vec<Value> =
                        prepared.fixes.iter().map(args::ArgFix::to_json).collect();
                    fixed.insert("arguments".into(), Value::Array(fixes));
                }
                result
            }
            Err(message) => {
                stats.count(Event::ArgsRejected);
                tracing::info!(tool = %tool.name, "arguments rejected");
                error_result(message)
            }
        };
        add_corrections(&mut result, fixed);
        Ok(result)
    }

    async fn run_meta(
        &self,
        meta_tool: &CatalogTool,
        arguments: Map<String, Value>,
        ctx: &Context,
    ) -> CallToolResult {
        let prepared = match args::prepare(meta_tool, arguments, self.config.repair) {
            Ok(p) => p,
            Err(message) => return error_result(message),
        };
        let ToolHandler::Meta(kind) = meta_tool.handler else {
            return error_result("internal error: not a meta-tool".into());
        };
        match kind {
            MetaKind::Search => {
                self.config.stats.count(Event::Search);
                let result = meta::run_search(self, &prepared.arguments, ctx.caller());
                if result
                    .structured_content
                    .as_ref()
                    .and_then(|s| s.get("tools"))
                    .and_then(Value::as_array)
                    .is_some_and(Vec::is_empty)
                {
                    self.config.stats.count(Event::SearchEmpty);
                }
                result
            }
            MetaKind::Execute => {
                let name = prepared
                    .arguments
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let inner = prepared.arguments.get("arguments").cloned();
                // The same path as tools/call, without recursion into the meta-tools.
                match Box::pin(self.call_here(&name, inner, ctx, false)).await {
                    Ok(result) => result,
                    Err(err) => error_result(err.to_string()),
                }
            }
        }
    }

    /// Runs a tool's handler with arguments already prepared: panics, timeouts and cancellation
    /// become error results, and structured output is checked against the output schema.
    async fn execute(
        &self,
        tool: &CatalogTool,
        arguments: Map<String, Value>,
        ctx: &Context,
    ) -> CallToolResult {
        let stats = &self.config.stats;
        let ctx = ctx.with_tool(&tool.shared_name);
        let cancel = ctx.cancellation_token();
        // Async tools run inline in the request's own task (rmcp gives every request one):
        // dropping the future is the abort, and `catch_unwind` contains a panic, without the
        // cost of a second task per call. Sync tools go to the blocking pool, off the async
        // workers.
        type Run = std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<CallToolResult, Panic>> + Send>,
        >;
        let invocation = |arguments, context| Invocation {
            arguments,
            context,
            state: self.config.state.clone(),
        };
        let run: Run = match &tool.handler {
            ToolHandler::Static(crate::tool::Handler::Async(f)) => {
                let f = *f;
                let inv = invocation(arguments, ctx);
                match std::panic::catch_unwind(AssertUnwindSafe(move || f(inv))) {
                    Ok(fut) => Box::pin(AssertUnwindSafe(fut).catch_unwind()),
                    Err(panic) => Box::pin(std::future::ready(Err(panic))),
                }
            }
            ToolHandler::Static(crate::tool::Handler::Sync(f))
                if tool.timeout.is_none() && multi_thread_runtime() =>
            {
                // Without a timeout to honour, the worker hands its other tasks to its peers
                // and runs the tool itself: no thread hop there and back.
                let f = *f;
                let inv = invocation(arguments, ctx);
                let done = tokio::task::block_in_place(move || {
                    std::panic::catch_unwind(AssertUnwindSafe(move || f(inv)))
                });
                Box::pin(std::future::ready(done))
            }
            ToolHandler::Static(crate::tool::Handler::Sync(f)) => {
                let f = *f;
                let inv = invocation(arguments, ctx);
                let task = tokio::task::spawn_blocking(move || f(inv));
                Box::pin(async move {
                    task.await.map_err(|e| match e.try_into_panic() {
                        Ok(panic) => panic,
                        Err(_) => Box::new("the blocking task was cancelled") as Panic,
                    })
                })
            }
            ToolHandler::Provider(p) => {
                let fut = p.call(&tool.name, arguments, ctx);
                Box::pin(AssertUnwindSafe(fut).catch_unwind())
            }
            ToolHandler::Meta(_) => {
                return error_result("internal error: meta-tool in execute".into())
            }
        };
        let timeout = async {
            match tool.timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let outcome = tokio::select! {
            done = run => done,
            _ = cancel.cancelled() => {
                stats.count(Event::Cancelled);
                return error_result(format!("Tool `{}` was cancelled.", tool.name));
            }
            _ = timeout => {
                // The tool's context is cancelled too, for work it started elsewhere.
                cancel.cancel();
                stats.count(Event::Timeout);
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
            Err(panic) => {
                stats.count(Event::Panic);
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
        };
        check_output(tool, &mut result);
        if result.is_error == Some(true) {
            stats.count(Event::ToolError);
        }
        result
    }
}

/// What the search index knows of a tool.
fn search_doc(tool: &CatalogTool) -> crate::search::SearchDoc {
    crate::search::SearchDoc {
        name: tool.name.clone(),
        title: tool.title.clone(),
        description: tool.description.clone(),
        keywords: tool.keywords.clone(),
        aliases: tool.aliases.clone(),
        params: tool
            .params
            .iter()
            .map(|p| (p.name.clone(), p.description.clone().unwrap_or_default()))
            .collect(),
    }
}

fn add_provider_tools(
    provider: &Arc<dyn ToolProvider>,
    config: &Config,
    tools: &mut Vec<Arc<CatalogTool>>,
    problems: &mut Vec<String>,
) {
    for def in provider.tools() {
        let name = def.tool.name.to_string();
        match CatalogTool::from_dynamic(def, ToolHandler::Provider(provider.clone())) {
            Ok(mut tool) => {
                tool.timeout = config.default_timeout;
                for problem in &tool.schema_problems {
                    tracing::warn!(tool = %clip(&name, 128), problem = %problem, "tool kept with a schema problem");
                }
                tools.push(Arc::new(tool));
            }
            Err(err) => problems.push(format!("provider tool `{name}`: {err}")),
        }
    }
}

/// Records what was corrected in the result's `_meta`, for the client to see.
fn add_corrections(result: &mut CallToolResult, corrections: Map<String, Value>) {
    if corrections.is_empty() {
        return;
    }
    result
        .meta
        .get_or_insert_with(Default::default)
        .insert("disco/corrections".to_string(), Value::Object(corrections));
}

/// Wraps non-object structured content as declared, and refuses output that breaks the tool's
/// own output schema (clients reject such results).
fn check_output(tool: &CatalogTool, result: &mut CallToolResult) {
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

fn multi_thread_runtime() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// What a panicking tool left behind.
type Panic = Box<dyn std::any::Any + Send + 'static>;

#[cfg(all(test, feature = "semantic"))]
mod semantic_tests {
    use super::*;

    /// Alice's own tools; nobody else has any.
    struct AliceOnly(Arc<dyn ToolProvider>);

    impl ScopedProvider for AliceOnly {
        fn provider_for(&self, caller: &Caller) -> Option<Arc<dyn ToolProvider>> {
            (caller.id() == Some("alice")).then(|| self.0.clone())
        }
    }

    fn provider(tools: Value) -> JsonCatalogProvider {
        JsonCatalogProvider::from_value(&tools).expect("a valid catalog")
    }

    fn tool(name: &str, description: &str) -> Value {
        json!({"name": name, "description": description, "inputSchema": {"type": "object"}})
    }

    fn searching_by_meaning() -> SearchOptions {
        SearchOptions {
            enabled: true,
            semantic: Some(Arc::new(model())),
            ..SearchOptions::default()
        }
    }

    /// Three directions: the zodiac, money, the weather.
    fn model() -> crate::search::SemanticModel {
        crate::search::semantic::word_model(
            &[
                "<unk>",
                "horoscope",
                "astrology",
                "daily",
                "currency",
                "convert",
                "money",
                "weather",
            ],
            &[
                &[0.0, 0.0, 0.0],
                &[1.0, 0.1, 0.0],
                &[1.0, 0.0, 0.0],
                &[0.9, 0.0, 0.1],
                &[0.0, 1.0, 0.0],
                &[0.0, 1.0, 0.0],
                &[0.1, 1.0, 0.0],
                &[0.0, 0.0, 1.0],
            ],
        )
    }

    /// The catalog hands its model to its index and to a scoped caller's, whose own tools are
    /// found by meaning next to the shared ones.
    #[test]
    fn catalogs_and_their_scoped_views_search_by_meaning() {
        let shared = provider(json!([
            tool("StrologyTool", "Provides astrology services"),
            tool("ExchangeTool", "Convert currency"),
            tool("get_weather", "Weather"),
        ]));
        let alice = provider(json!([tool("zodiac_daily", "Daily astrology")]));
        let catalog = Catalog::builder()
            .provider(shared)
            .scoped_provider(AliceOnly(Arc::new(alice)))
            .search(searching_by_meaning())
            .from_specs([])
            .expect("a valid catalog");
        let names = |hits: Vec<(Arc<CatalogTool>, f32)>| {
            hits.into_iter()
                .map(|(t, _)| t.name.clone())
                .collect::<Vec<_>>()
        };
        let anyone = names(catalog.search("horoscope", 5, &Caller::anonymous()));
        assert_eq!(anyone, ["StrologyTool"]);
        let hers = names(catalog.search("horoscope", 5, &Caller::new("alice")));
        assert_eq!(hers.len(), 2, "{hers:?}");
        assert!(
            hers.contains(&"zodiac_daily".to_string())
                && hers.contains(&"StrologyTool".to_string())
        );
        assert_eq!(
            names(catalog.search("horoscope", 5, &Caller::new("bob"))),
            anyone
        );
    }

    /// A provider whose one tool changes its description between builds.
    struct Changing(std::sync::Mutex<&'static str>);

    impl ToolProvider for Arc<Changing> {
        fn tools(&self) -> Vec<DynamicTool> {
            let description = *self.0.lock().unwrap();
            provider(json!([
                tool("service_a", description),
                tool("service_b", "Weather"),
            ]))
            .tools()
        }

        fn call(&self, _: &str, _: Map<String, Value>, _: Context) -> crate::tool::BoxFuture {
            Box::pin(async { CallToolResult::success(Vec::new()) })
        }
    }

    /// A rebuilt catalog embeds a tool whose text changed again, and finds it by its new
    /// meaning; its unchanged tools keep their vectors.
    #[test]
    fn a_rebuilt_catalog_searches_the_new_texts_by_meaning() {
        let changing = Arc::new(Changing(std::sync::Mutex::new("Astrology")));
        let mut catalog = Catalog::builder()
            .provider(changing.clone())
            .search(searching_by_meaning())
            .from_specs([])
            .expect("a valid catalog");
        let top = |c: &Catalog, q: &str| {
            c.search(q, 5, &Caller::anonymous())
                .first()
                .map(|(t, _)| t.name.clone())
        };
        assert_eq!(top(&catalog, "horoscope").as_deref(), Some("service_a"));
        assert_eq!(top(&catalog, "money"), None);

        // Marks in the vectors show which ones the rebuild takes over: the unchanged tool's.
        // (The marked vectors rank nothing below: the searches run on fresh ones.)
        let marked = |c: &mut Catalog, name: &str| {
            let v = c.search.semantic_vector_mut(name).unwrap();
            v.iter().all(|&x| x == 0.125)
        };
        let fresh = catalog.rebuild().expect("a valid catalog");
        for name in ["service_a", "service_b"] {
            catalog
                .search
                .semantic_vector_mut(name)
                .unwrap()
                .fill(0.125);
        }
        *changing.0.lock().unwrap() = "Currency";
        let mut rebuilt = catalog.rebuild().expect("a valid catalog");
        assert!(marked(&mut rebuilt, "service_b"));
        assert!(!marked(&mut rebuilt, "service_a"));
        let rebuilt = fresh.rebuild().expect("a valid catalog");
        assert_eq!(top(&rebuilt, "money").as_deref(), Some("service_a"));
        assert_eq!(top(&rebuilt, "horoscope"), None);
        assert_eq!(top(&rebuilt, "weather").as_deref(), Some("service_b"));
    }
}
