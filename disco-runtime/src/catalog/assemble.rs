//! Assembling a catalog: every tool built, names and aliases checked across all of them, the
//! indexes made.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::builder::Config;
use super::conflicts;
use super::{Catalog, CatalogError, CatalogProblem, CatalogTool, Exposure, ToolProvider};
use crate::resolve::name::{NameEntry, NameIndex};
use crate::search::{meta, SearchIndex};
use crate::tool::built::ToolHandler;
use crate::tool::ToolSpec;
use crate::util::clip_quoted;

impl Catalog {
    /// Builds every tool, checks names and aliases across all of them, and indexes them.
    /// `before`: the catalog this one replaces, whose semantic vectors are reused.
    pub(super) fn assemble(
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
        let registered: Vec<String> = config
            .state
            .type_names()
            .into_iter()
            .map(str::to_string)
            .collect();
        for spec in specs {
            if config.require_state {
                for ty in (spec.missing_state)(&config.state) {
                    problems.push(CatalogProblem::MissingState {
                        tool: spec.name.to_string(),
                        origin: spec.origin.to_string(),
                        state: ty.to_string(),
                        registered: registered.clone(),
                    });
                }
            }
            match CatalogTool::from_spec(spec, config.schema_mode) {
                Ok(mut tool) => {
                    if tool.timeout.is_none() {
                        tool.timeout = config.default_timeout;
                    }
                    tools.push(Arc::new(tool));
                }
                Err(error) => problems.push(CatalogProblem::InvalidTool {
                    tool: spec.name.to_string(),
                    origin: spec.origin.to_string(),
                    error,
                }),
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
    pub(super) fn index(
        config: Arc<Config>,
        mut tools: Vec<Arc<CatalogTool>>,
        mut problems: Vec<CatalogProblem>,
        base: Option<&SearchIndex>,
    ) -> Result<Catalog, CatalogError> {
        tools.sort_by(|a, b| a.name.cmp(&b.name));

        if let Some(error) = config.search.problem().filter(|_| config.search.enabled) {
            return Err(CatalogError::new(vec![CatalogProblem::MetaTool { error }]));
        }
        let meta = if config.search.enabled {
            meta::definitions(&config.search)
                .into_iter()
                .map(|(def, kind)| CatalogTool::from_dynamic(def, kind).map(Arc::new))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|error| CatalogError::new(vec![CatalogProblem::MetaTool { error }]))?
        } else {
            Vec::new()
        };

        problems.extend(conflicts::problems(&tools, &meta, &config.search.exposure));
        if !problems.is_empty() {
            return Err(CatalogError::new(problems));
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
            Some(model) => {
                let build = crate::search::index::SemanticBuild {
                    cache: config.search.semantic_cache.dir(),
                    background: config.search.semantic_background,
                };
                SearchIndex::build_with_semantic_reusing(&docs, model.clone(), base, &build)
            }
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
        search.set_learned(&config.learned_keywords());
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

    /// Marks the pinned tools, which their tools/list entries say are always loaded
    /// ([`CatalogTool::entry`]).
    fn add_list_hints(&mut self) {
        let pinned: &[String] = match &self.config.search.exposure {
            Exposure::SearchFirst { pinned } => pinned,
            Exposure::All => &[],
        };
        for tool in &mut self.tools {
            if !pinned.contains(&tool.name) {
                continue;
            }
            // Shared tools (a scoped caller's catalog reuses the base one's) carry their
            // mark already; only tools built for this catalog are unique here.
            if let Some(t) = Arc::get_mut(tool) {
                t.always_load = true;
            }
        }
    }
}

/// What the search index knows of a tool. Its group is one of its keywords: `tool_search`'s
/// description and the instructions name the groups, so a model searches by them.
fn search_doc(tool: &CatalogTool) -> crate::search::SearchDoc {
    let mut keywords = tool.keywords.clone();
    if let Some(group) = &tool.group {
        if !keywords.iter().any(|k| k.eq_ignore_ascii_case(group)) {
            keywords.push(group.clone());
        }
    }
    crate::search::SearchDoc {
        name: tool.name.clone(),
        title: tool.title.clone(),
        description: tool.description.clone(),
        keywords,
        aliases: tool.aliases.clone(),
        params: tool
            .params
            .iter()
            .map(|p| (p.name.clone(), p.description.clone().unwrap_or_default()))
            .collect(),
    }
}

pub(super) fn add_provider_tools(
    provider: &Arc<dyn ToolProvider>,
    config: &Config,
    tools: &mut Vec<Arc<CatalogTool>>,
    problems: &mut Vec<CatalogProblem>,
) {
    let provider_name = provider.name();
    for mut def in provider.tools() {
        let name = def.tool.name.to_string();
        if def.group.is_none() {
            def.group = provider_name.clone();
        }
        if let Some(problem) = def.group.as_deref().and_then(super::group_problem) {
            problems.push(CatalogProblem::InvalidProviderTool {
                tool: clip_quoted(&name),
                error: problem,
            });
            continue;
        }
        match CatalogTool::from_dynamic(def, ToolHandler::Provider(provider.clone())) {
            Ok(mut tool) => {
                tool.timeout = config.default_timeout;
                for problem in &tool.schema_problems {
                    tracing::warn!(tool = %clip_quoted(&name), problem = %problem, "tool kept with a schema problem");
                }
                tools.push(Arc::new(tool));
            }
            Err(error) => problems.push(CatalogProblem::InvalidProviderTool {
                tool: clip_quoted(&name),
                error,
            }),
        }
    }
}
