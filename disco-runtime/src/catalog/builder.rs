//! How a catalog is configured and built.

use std::sync::Arc;
use std::time::Duration;

use super::{
    Catalog, CatalogError, DiscoverySink, ScopedProvider, SearchOptions, Stats, ToolProvider,
    Visibility,
};
use crate::resolve::args::Repair;
use crate::resolve::name::Policy;
use crate::tool::schema::SchemaMode;
use crate::tool::{StateMap, ToolSpec};

/// Everything a catalog is built from; kept so that it can be rebuilt when providers change.
pub(crate) struct Config {
    pub(crate) schema_mode: SchemaMode,
    pub(crate) state: Arc<StateMap>,
    pub(crate) default_timeout: Option<Duration>,
    pub(crate) repair: Repair,
    pub(crate) max_argument_values: usize,
    pub(crate) policy: Policy,
    pub(crate) server_name: Option<String>,
    pub(crate) visibility: Option<Arc<dyn Visibility>>,
    pub(crate) providers: Vec<Arc<dyn ToolProvider>>,
    pub(crate) scoped: Vec<Arc<dyn ScopedProvider>>,
    pub(crate) search: SearchOptions,
    pub(crate) specs: Option<Vec<&'static ToolSpec>>,
    pub(crate) stats: Arc<Stats>,
    /// Every `State<T>` a tool takes must be registered (a server that will run the tools);
    /// off for a catalog built to be read (docs, lint, [`crate::check`]).
    pub(crate) require_state: bool,
    /// Where discovery events go; `None` (the default): nothing is recorded, and the call
    /// path does no work for it.
    pub(crate) discovery: Option<Arc<dyn DiscoverySink>>,
    /// Keywords learned from traffic, `(tool, word, weight)`: set by
    /// [`Catalog::set_learned_keywords`], kept here so that a rebuilt catalog ranks with them.
    pub(crate) learned_keywords: std::sync::RwLock<Arc<Vec<(String, String, f32)>>>,
    /// Aliases learned from traffic (`learned.rs`), set by [`Catalog::set_learned_aliases`].
    pub(crate) learned_aliases: std::sync::RwLock<Arc<super::learned::LearnedAliases>>,
}

impl Config {
    pub(crate) fn learned_keywords(&self) -> Arc<Vec<(String, String, f32)>> {
        crate::util::read(&self.learned_keywords).clone()
    }
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
                discovery: None,
                learned_keywords: Default::default(),
                learned_aliases: Default::default(),
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
    /// Records discovery events (unknown and corrected names, searches and the calls that
    /// follow them) into `sink`: off by default. See [`crate::learn`].
    pub fn discovery(mut self, sink: Arc<dyn DiscoverySink>) -> Self {
        self.config.discovery = Some(sink);
        self
    }
    /// Only these tools of the inventory's kind, instead of every `#[mcp_tool]` in the
    /// binary (an empty list: the providers' tools only).
    pub fn specs(mut self, specs: impl IntoIterator<Item = &'static ToolSpec>) -> Self {
        self.config.specs = Some(specs.into_iter().collect());
        self
    }
    /// The `#[mcp_tool]`s this builder will build: the chosen ones, or the inventory's.
    pub(crate) fn chosen_specs(&self) -> Vec<&'static ToolSpec> {
        match &self.config.specs {
            Some(chosen) => chosen.clone(),
            None => crate::tool::registered().collect(),
        }
    }
    /// Every `#[mcp_tool]` in the binary, plus the providers' tools.
    pub fn from_inventory(mut self) -> Result<Catalog, CatalogError> {
        self.config.specs = None;
        self.build()
    }
    /// The given tools only (no inventory), plus the providers' tools: `specs(..).build()`.
    pub fn from_specs(
        self,
        specs: impl IntoIterator<Item = &'static ToolSpec>,
    ) -> Result<Catalog, CatalogError> {
        self.specs(specs).build()
    }

    /// Builds the catalog: the tools given to [`CatalogBuilder::specs`], or every
    /// `#[mcp_tool]` in the binary, plus the providers' tools.
    pub fn build(mut self) -> Result<Catalog, CatalogError> {
        self.config.state = Arc::new(self.state);
        Catalog::assemble(Arc::new(self.config), Vec::new(), None)
    }
}
