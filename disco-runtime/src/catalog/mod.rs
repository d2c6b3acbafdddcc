//! The set of tools a server offers: every `#[mcp_tool]` in the binary plus the tools of
//! providers, checked once at start-up, with schemas, name index and search index built once,
//! and viewed per caller ([`View`]). A call runs through `call`, above it.

mod assemble;
mod builder;
mod conflicts;
pub mod discovery;
mod error;
pub mod groups;
mod learned;
pub mod provider;
pub mod stats;
mod view;

pub mod docs;
pub mod lint;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use crate::resolve::name::NameIndex;
use crate::search::SearchIndex;

pub use crate::resolve::name::{Policy as NamePolicy, Rule as NameRule};
pub use crate::search::{Exposure, SearchOptions};
use crate::tool::built::MetaKind;
pub use crate::tool::built::{CatalogTool, ParamInfo};
pub use builder::CatalogBuilder;
pub(crate) use builder::Config;
pub use discovery::{bounded_text, Discovery, DiscoverySink};
pub use error::{CatalogError, CatalogProblem, NameClaim};
pub use groups::{group_problem, GroupSummary, GROUPS_META_KEY};
pub use provider::{DynamicTool, JsonCatalogProvider, ScopedProvider, ToolProvider};
pub use stats::{Stats, StatsSnapshot};
pub use view::{NameResolution, StepHits, View, Visibility};

/// The tools a server offers.
pub struct Catalog {
    pub(crate) config: Arc<Config>,
    tools: Vec<Arc<CatalogTool>>,
    /// Exact names.
    lookup: HashMap<String, usize>,
    names: NameIndex,
    search: SearchIndex,
    /// The meta-tools (`tool_search`, `execute_tool`) when search is on: found by their
    /// exact names only, before any other tool, and run by the call pipeline itself.
    pub(crate) meta: Vec<Arc<CatalogTool<MetaKind>>>,
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

impl Catalog {
    /// A catalog with other options than the defaults: policies, search, providers, state,
    /// visibility.
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

    /// Whether `tool_search` ranks with the semantic model now (feature `semantic`): the
    /// catalog has a model and its tools' vectors are in. With
    /// [`SearchOptions::semantic_background`] (the default) they are made after the catalog
    /// is built, and search ranks by keywords alone until then. A server's catalog is
    /// `DiscoTools::catalog` (or `McpHandler::catalog`); a scoped caller's own tools are
    /// embedded when its catalog is first made, after this says true.
    #[cfg(feature = "semantic")]
    pub fn semantic_ready(&self) -> bool {
        self.search.semantic_ready()
    }

    /// Blocks the calling thread until the tools' semantic vectors are in or embedding failed
    /// (feature `semantic`); returns at once without a model. From async code, call it in
    /// `tokio::task::spawn_blocking`.
    #[cfg(feature = "semantic")]
    pub fn wait_semantic(&self) {
        self.search.wait_semantic()
    }

    /// Sets the keywords learned from traffic, `(tool name, word, weight)` each (see
    /// [`crate::learn`]): they weigh in `tool_search`'s ranking, capped
    /// ([`crate::search::index::MAX_LEARNED_WEIGHT`] each,
    /// [`crate::search::index::MAX_LEARNED_SCORE`] per tool), for callers who can see the
    /// tool, and are never published (not in hints, instructions, descriptions, docs or
    /// lint). Replaces the previous set; catalogs rebuilt from this one keep it.
    pub fn set_learned_keywords(&self, keywords: Vec<(String, String, f32)>) {
        self.search.set_learned(&keywords);
        *crate::util::write(&self.config.learned_keywords) = Arc::new(keywords);
        // Catalogs merged with a caller's scoped tools are made again, with them.
        crate::util::lock(&self.scoped_cache).clear();
    }

    pub(crate) fn search_options(&self) -> &SearchOptions {
        &self.config.search
    }
}

#[cfg(all(test, feature = "semantic"))]
mod tests_embedding;
#[cfg(all(test, feature = "semantic"))]
mod tests_queries;
#[cfg(test)]
mod tests_steps;

#[cfg(all(test, feature = "semantic"))]
mod semantic_tests {
    use super::*;
    use crate::tool::{Caller, Context};
    use rmcp::model::CallToolResult;
    use serde_json::{json, Map, Value};

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
            semantic_cache: crate::search::VectorCache::Off,
            semantic_background: false,
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
