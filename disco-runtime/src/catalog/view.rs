//! The catalog as one caller sees it. Every query for a caller (listing, search, name
//! resolution, and the resolution that starts every call) is a method of [`View`], which holds
//! the caller and applies its visibility: there is no other path to the tools for a caller, so
//! a new query cannot forget to apply it.

use std::sync::Arc;

use rmcp::model::Tool;
use serde_json::Value;

use super::{Catalog, CatalogTool, Exposure};
use crate::resolve::name::{Outcome, Rule};
use crate::search::index::EmbeddedQueries;
use crate::search::steps::{Step, StepRoom};
use crate::tool::built::MetaKind;
use crate::tool::Caller;

/// Which tools a caller may see. A tool the caller may not see never appears in tools/list,
/// search results, suggestions, error texts or counts, and a call to it is refused.
pub trait Visibility: Send + Sync + 'static {
    /// Whether `caller` may see and call `tool`. Asked for every tool of every listing,
    /// search and call, so it should be quick.
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

/// What a search by steps found ([`View::search_steps`]).
#[derive(Clone, Debug, Default)]
pub struct StepHits {
    /// The tools, balanced over the steps: each with its score and the step (its position
    /// among the queries) that brought it. A tool several steps find is brought by the first.
    pub tools: Vec<(Arc<CatalogTool>, f32, usize)>,
    /// The steps none of whose tools the answer holds: the search found nothing (it
    /// abstained), or the steps before it took all the room.
    pub unanswered: Vec<usize>,
}

/// Bound on cached per-caller catalogs; past it the cache starts over.
const SCOPED_CACHE_MAX: usize = 1024;

/// The catalog as one caller sees it: the shared tools that caller may see, with its scoped
/// tools merged in. Made by [`Catalog::for_caller`]; cheap (one cache lookup when scoped
/// providers exist, nothing otherwise).
pub struct View<'a> {
    base: &'a Catalog,
    /// The catalog merged with the caller's scoped tools, when it has any.
    merged: Option<Arc<Catalog>>,
    caller: &'a Caller,
}

impl<'a> View<'a> {
    /// The catalog the caller's queries run on.
    pub(crate) fn catalog(&self) -> &Catalog {
        self.merged.as_deref().unwrap_or(self.base)
    }

    /// Whose view this is.
    pub fn caller(&self) -> &'a Caller {
        self.caller
    }

    pub(super) fn can_see(&self, tool: &CatalogTool) -> bool {
        self.catalog()
            .config
            .visibility
            .as_ref()
            .is_none_or(|v| v.can_see(self.caller, tool))
    }

    /// The tools/list entries the caller sees, in catalog order.
    pub fn list(&self) -> Vec<Tool> {
        self.list_page(0, usize::MAX).0
    }

    /// One page of [`View::list`]: the entries from `offset`, at most `limit` of them, and how
    /// many there are in all. Only the page's entries are cloned.
    pub fn list_page(&self, offset: usize, limit: usize) -> (Vec<Tool>, usize) {
        let here = self.catalog();
        let pinned: Option<&[String]> = match &here.config.search.exposure {
            Exposure::SearchFirst { pinned } if here.config.search.enabled => Some(pinned),
            _ => None,
        };
        let listed = here
            .tools
            .iter()
            .filter(|t| match pinned {
                Some(pinned) => pinned.contains(&t.name),
                None => !t.hidden,
            })
            .filter(|t| self.can_see(t));
        // Each entry (made only for the page), and whether it is `tool_search`'s.
        let all = here
            .meta
            .iter()
            .map(|m| (Either::Meta(m), m.handler == MetaKind::Search))
            .chain(listed.map(|t| (Either::Tool(t), false)));
        let mut total = 0;
        let mut page = Vec::new();
        for (tool, is_search) in all {
            if total >= offset && page.len() < limit {
                let mut entry = match tool {
                    Either::Meta(m) => m.entry(),
                    Either::Tool(t) => t.entry(),
                };
                // `tool_search` names the groups this caller can find.
                if is_search {
                    let base = entry.description.as_deref().unwrap_or_default();
                    entry.description = Some(self.search_description(base).into());
                }
                page.push(entry);
            }
            total += 1;
        }
        (page, total)
    }

    /// The tools this caller may use: those it may see that tools/list shows, and, with
    /// search on, every one it may see (search finds hidden and unpinned tools). What the
    /// groups summarize.
    pub(super) fn usable_tools(&self) -> Vec<&CatalogTool> {
        let here = self.catalog();
        let search = here.config.search.enabled;
        here.tools
            .iter()
            .filter(|t| search || !t.hidden)
            .filter(|t| self.can_see(t))
            .map(|t| &**t)
            .collect()
    }

    /// Ranked tools for a query, among those the caller may see (hidden ones included: search
    /// is how they are found).
    ///
    /// With a semantic model whose vectors are ready, the query is embedded here, on the
    /// calling thread: a transformer's forward pass takes milliseconds of CPU. From async
    /// code, call it in `tokio::task::spawn_blocking` (`tool_search` embeds its queries on
    /// tokio's blocking threads itself).
    pub fn search(&self, query: &str, max_results: usize) -> Vec<(Arc<CatalogTool>, f32)> {
        self.search_embedded(query, max_results, None)
    }

    /// [`View::search`] with the query's vector from `embedded` (made off the runtime).
    pub(crate) fn search_embedded(
        &self,
        query: &str,
        max_results: usize,
        embedded: Option<&EmbeddedQueries>,
    ) -> Vec<(Arc<CatalogTool>, f32)> {
        let here = self.catalog();
        here.ranked(
            query,
            max_results,
            &|i| self.can_see(&here.tools[i]),
            embedded,
        )
    }

    /// The model a search of this caller's catalog embeds its query with now, if any (see
    /// [`View::search_embedded`]).
    #[cfg(feature = "semantic")]
    pub(crate) fn query_model(&self) -> Option<Arc<crate::search::SemanticModel>> {
        self.catalog().search.query_model()
    }

    /// Ranked tools for a task of several steps (one query each, at most
    /// [`MAX_QUERY_STEPS`](crate::search::MAX_QUERY_STEPS) of them; more are ignored),
    /// balanced so that every step gets its best tools before any gets its second. See
    /// [`View::search`] and [`StepHits`].
    ///
    /// Each step's query is searched as words, whatever it says (a `select:` step is
    /// `tool_search`'s), and embedded on the calling thread, as [`View::search`] says.
    pub fn search_steps(&self, queries: &[&str], max_results: usize) -> StepHits {
        self.by_steps(&words(queries), StepRoom::exactly(max_results), None)
    }

    /// `tool_search`'s `queries`: steps that name their tools (each name as [`View::select`]
    /// takes it) and steps that search (as [`View::search`]), with the room `room` gives,
    /// balanced as `search::steps::by_steps` says; the searching steps' vectors from
    /// `embedded`.
    pub(crate) fn by_steps(
        &self,
        steps: &[Step<'_>],
        room: StepRoom,
        embedded: Option<&EmbeddedQueries>,
    ) -> StepHits {
        let here = self.catalog();
        here.ranked_steps(
            steps,
            room,
            &|i| self.can_see(&here.tools[i]),
            embedded,
            |names, most| self.select(names, most),
        )
    }

    /// The tools named in `names` that the caller may see (hidden ones included, as search
    /// finds them), for `select:` in `tool_search`: those named exactly first, in the order
    /// asked, then those a name resolves to as `tools/call` would resolve it (case,
    /// separators, a client's prefix, a safe correction of a typo; see [`View::resolve`]),
    /// each once, at most `max_results`. Only the first `max_results` distinct names are
    /// looked at, so a long list costs no more than the tools it can bring. A name that is
    /// unknown to the caller brings nothing, whether or not some tool has it.
    pub fn select(&self, names: &[&str], max_results: usize) -> Vec<Arc<CatalogTool>> {
        let here = self.catalog();
        let mut out: Vec<Arc<CatalogTool>> = Vec::new();
        let mut rest = Vec::new();
        let mut distinct: Vec<&str> = Vec::new();
        for &name in names {
            if distinct.len() == max_results {
                break;
            }
            if !distinct.contains(&name) {
                distinct.push(name);
            }
        }
        for name in distinct {
            // A tool the caller may not see is as one that does not exist: its name goes
            // through the resolution, which knows only the tools the caller sees.
            match here
                .tools
                .iter()
                .find(|t| t.name == name && self.can_see(t))
            {
                Some(t) => {
                    if !out.iter().any(|o| Arc::ptr_eq(o, t)) {
                        out.push(t.clone());
                    }
                }
                None => rest.push(name),
            }
        }
        for name in rest {
            if let Some(t) = self.resolve(name).tool {
                if !out.iter().any(|o| Arc::ptr_eq(o, &t)) {
                    out.push(t);
                }
            }
        }
        out.truncate(max_results);
        out
    }

    /// Which tool `requested` names for the caller, and how; or the suggestions when none.
    /// This is the first step of every call, without running anything.
    pub fn resolve(&self, requested: &str) -> NameResolution {
        let here = self.catalog();
        let visible = |i: usize| self.can_see(&here.tools[i]);
        let resolution = here.names.resolve(
            requested,
            &visible,
            here.config.policy,
            here.config.server_name.as_deref(),
        );
        let resolution = self.learned_alias(requested, resolution);
        match resolution.outcome {
            Outcome::Resolved { index, rule } => NameResolution {
                tool: Some(here.tools[index].clone()),
                rule: Some(rule),
                suggestions: Vec::new(),
            },
            Outcome::Unknown => NameResolution {
                tool: None,
                rule: None,
                suggestions: resolution
                    .suggestions
                    .iter()
                    .map(|&i| here.tools[i].name.clone())
                    .collect(),
            },
        }
    }
}

impl Catalog {
    /// The catalog as `caller` sees it: the only way to list, search, resolve or call for a
    /// caller.
    pub fn for_caller<'a>(&'a self, caller: &'a Caller) -> View<'a> {
        View {
            base: self,
            merged: self.merged_for(caller),
            caller,
        }
    }

    /// The catalog as `caller` sees it: this one, or this one merged with the caller's scoped
    /// tools.
    fn merged_for(&self, caller: &Caller) -> Option<Arc<Catalog>> {
        if self.config.scoped.is_empty() {
            return None;
        }
        let key = caller.id().map(str::to_string);
        let mut cache = crate::util::lock(&self.scoped_cache);
        if let Some(found) = cache.get(&key) {
            return found.clone();
        }
        let mut extra = Vec::new();
        let mut problems = Vec::new();
        for scoped in &self.config.scoped {
            if let Some(provider) = scoped.provider_for(caller) {
                super::assemble::add_provider_tools(
                    &provider,
                    &self.config,
                    &mut extra,
                    &mut problems,
                );
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
                    problems.extend(e.into_problems());
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
        crate::util::lock(&self.scoped_cache).clear();
    }

    /// [`View::list`] for `caller`.
    pub fn list(&self, caller: &Caller) -> Vec<Tool> {
        self.for_caller(caller).list()
    }

    /// [`View::list_page`] for `caller`.
    pub fn list_page(&self, caller: &Caller, offset: usize, limit: usize) -> (Vec<Tool>, usize) {
        self.for_caller(caller).list_page(offset, limit)
    }

    /// [`View::search`] for `caller`; the query is embedded on the calling thread, as there.
    pub fn search(
        &self,
        query: &str,
        max_results: usize,
        caller: &Caller,
    ) -> Vec<(Arc<CatalogTool>, f32)> {
        self.for_caller(caller).search(query, max_results)
    }

    /// [`View::search_steps`] for `caller`; the queries are embedded on the calling thread.
    pub fn search_steps(&self, queries: &[&str], max_results: usize, caller: &Caller) -> StepHits {
        self.for_caller(caller).search_steps(queries, max_results)
    }

    /// [`View::select`] for `caller`.
    pub fn select(
        &self,
        names: &[&str],
        max_results: usize,
        caller: &Caller,
    ) -> Vec<Arc<CatalogTool>> {
        self.for_caller(caller).select(names, max_results)
    }

    /// [`View::resolve`] for `caller`.
    pub fn resolve(&self, requested: &str, caller: &Caller) -> NameResolution {
        self.for_caller(caller).resolve(requested)
    }

    /// Ranked tools for a query among those `filter` accepts (and ignoring visibility): for
    /// evaluation and tooling.
    /// The query is embedded on the calling thread, as [`View::search`] says.
    pub fn search_where(
        &self,
        query: &str,
        max_results: usize,
        filter: &dyn Fn(&CatalogTool) -> bool,
    ) -> Vec<(Arc<CatalogTool>, f32)> {
        self.ranked(query, max_results, &|i| filter(&self.tools[i]), None)
    }

    /// [`Catalog::search_where`] for a task of several steps (see [`View::search_steps`]); the
    /// queries are embedded on the calling thread.
    pub fn search_steps_where(
        &self,
        queries: &[&str],
        max_results: usize,
        filter: &dyn Fn(&CatalogTool) -> bool,
    ) -> StepHits {
        self.ranked_steps(
            &words(queries),
            StepRoom::exactly(max_results),
            &|i| filter(&self.tools[i]),
            None,
            // Steps of words name no tools.
            |_, _| Vec::new(),
        )
    }

    /// One ranking per searching step and the tools `select` finds for each naming step,
    /// balanced (`search::steps::by_steps`), each tool named by `select` scored 1.
    fn ranked_steps(
        &self,
        steps: &[Step<'_>],
        room: StepRoom,
        allowed: &dyn Fn(usize) -> bool,
        embedded: Option<&EmbeddedQueries>,
        select: impl Fn(&[&str], usize) -> Vec<Arc<CatalogTool>>,
    ) -> StepHits {
        let found = crate::search::steps::by_steps(
            steps,
            room,
            |names, most| select(names, most).into_iter().map(|t| (t, 1.0)).collect(),
            |query, k| self.ranked(query, k, allowed, embedded),
            |(tool, _): &(Arc<CatalogTool>, f32)| Arc::as_ptr(tool),
        );
        StepHits {
            tools: found
                .tools
                .into_iter()
                .map(|((tool, score), step)| (tool, score, step))
                .collect(),
            unanswered: found.unanswered,
        }
    }

    /// The search index's hits among the tools `allowed` accepts, as tools with their scores.
    fn ranked(
        &self,
        query: &str,
        max_results: usize,
        allowed: &dyn Fn(usize) -> bool,
        embedded: Option<&EmbeddedQueries>,
    ) -> Vec<(Arc<CatalogTool>, f32)> {
        self.search
            .search_embedded(query, max_results, allowed, embedded)
            .into_iter()
            .map(|hit| (self.tools[hit.index].clone(), hit.score))
            .collect()
    }
}

/// Queries that are all words (the public searches by steps name no tools, whatever a query
/// says).
fn words<'q>(queries: &[&'q str]) -> Vec<Step<'q>> {
    queries.iter().map(|q| Step::Words(q)).collect()
}

/// A tools/list entry's tool: a meta-tool or one of the catalog's.
enum Either<'a> {
    Meta(&'a CatalogTool<MetaKind>),
    Tool(&'a CatalogTool),
}

impl<H> CatalogTool<H> {
    /// The tools/list entry: the definition, with in `_meta` the hints Claude's client-side
    /// tool search reads (pinned tools are always loaded, keywords become the search hint)
    /// and the tool's group under [`super::GROUPS_META_KEY`], before the groups the
    /// definition declared there itself. Made at each call rather than kept: the hints are
    /// the same few words for many tools, and a kept `_meta` map cost each tool most of a
    /// kilobyte.
    pub fn entry(&self) -> Tool {
        let mut entry = self.tool.clone();
        if !self.always_load && self.keywords.is_empty() && self.group.is_none() {
            return entry;
        }
        let meta = entry.meta.get_or_insert_with(Default::default);
        if self.always_load {
            meta.insert("anthropic/alwaysLoad".into(), Value::Bool(true));
        }
        if !self.keywords.is_empty() {
            meta.insert(
                "anthropic/searchHint".into(),
                Value::String(self.keywords.join(", ")),
            );
        }
        if let Some(group) = &self.group {
            // disco's group first; the group names the tool declared itself (a gateway's
            // upstream, a JSON catalog) follow, as declared, each once.
            let key = super::GROUPS_META_KEY;
            let mut groups = vec![Value::String(group.clone())];
            if let Some(Value::Array(declared)) = meta.get(key) {
                for g in declared.iter().filter(|g| g.is_string()) {
                    if !groups.contains(g) {
                        groups.push(g.clone());
                    }
                }
            }
            meta.insert(key.into(), Value::Array(groups));
        }
        entry
    }
}
