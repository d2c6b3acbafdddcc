//! What the search meta-tools offer and what tools/list shows: options read by the catalog
//! and the meta-tools, with no catalog of their own.

#[cfg(feature = "semantic")]
use std::sync::Arc;

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
///
/// Build it from [`SearchOptions::default`] (search off) with the setters:
/// `SearchOptions::default().enabled(true)`. Fields may be added in any release.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SearchOptions {
    /// Offer `tool_search` and `execute_tool`.
    pub enabled: bool,
    pub exposure: Exposure,
    pub search_name: String,
    pub execute_name: String,
    /// Results per query when the caller does not say; at most [`max_results`](Self::max_results)
    /// (else the catalog is not built).
    pub default_results: usize,
    /// The most results a caller may ask for; at least 1 (else the catalog is not built).
    pub max_results: usize,
    /// Below this keyword score a query finds nothing (abstention); 0 never abstains. With a
    /// semantic model, a query abstains only when, besides, no tool is near it in the model's
    /// space (`Ranking::semantic_threshold`), and the scores returned are the fused ones.
    pub threshold: f32,
    /// The ranking's weights, when not the defaults (evaluation and tuning); `threshold`
    /// above still decides abstention.
    pub ranking: Option<super::index::Ranking>,
    /// A semantic model ranked together with the keywords (feature `semantic`; see
    /// [`super::SemanticModel`]).
    #[cfg(feature = "semantic")]
    pub semantic: Option<Arc<super::SemanticModel>>,
    /// Where the tools' semantic vectors are kept between runs (feature `semantic`). By
    /// default ([`VectorCache::UserDir`](super::VectorCache::UserDir)) the server writes one
    /// file per model in `disco/` under the user's cache directory (`~/.cache/disco` on
    /// Linux); [`VectorCache::Off`](super::VectorCache::Off) keeps nothing on disk.
    #[cfg(feature = "semantic")]
    pub semantic_cache: super::VectorCache,
    /// Make the tools' semantic vectors on a thread of their own (the default): the server
    /// starts at once and `tool_search` ranks by keywords until they are ready. `false`: a
    /// catalog is built with its vectors (evaluation, tests).
    #[cfg(feature = "semantic")]
    pub semantic_background: bool,
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
            threshold: super::index::DEFAULT_THRESHOLD,
            ranking: None,
            #[cfg(feature = "semantic")]
            semantic: None,
            #[cfg(feature = "semantic")]
            semantic_cache: super::VectorCache::default(),
            #[cfg(feature = "semantic")]
            semantic_background: true,
        }
    }
}

impl SearchOptions {
    /// Why these options cannot make `tool_search`, if they cannot: a search returns at least
    /// one tool, and by default no more than a caller may ask for.
    pub(crate) fn problem(&self) -> Option<String> {
        if self.max_results == 0 {
            Some(format!(
                "`max_results` of `{}` is 0; it must be at least 1",
                self.search_name
            ))
        } else if self.default_results > self.max_results {
            Some(format!(
                "`default_results` of `{}` ({}) is above its `max_results` ({})",
                self.search_name, self.default_results, self.max_results
            ))
        } else {
            None
        }
    }

    /// Sets [`enabled`](Self::enabled).
    pub fn enabled(mut self, yes: bool) -> Self {
        self.enabled = yes;
        self
    }
    /// Sets [`exposure`](Self::exposure).
    pub fn exposure(mut self, exposure: Exposure) -> Self {
        self.exposure = exposure;
        self
    }
    /// Sets [`search_name`](Self::search_name) (default `tool_search`).
    pub fn search_name(mut self, name: impl Into<String>) -> Self {
        self.search_name = name.into();
        self
    }
    /// Sets [`execute_name`](Self::execute_name) (default `execute_tool`).
    pub fn execute_name(mut self, name: impl Into<String>) -> Self {
        self.execute_name = name.into();
        self
    }
    /// Sets [`default_results`](Self::default_results) (default 5).
    pub fn default_results(mut self, results: usize) -> Self {
        self.default_results = results;
        self
    }
    /// Sets [`max_results`](Self::max_results) (default 20).
    pub fn max_results(mut self, results: usize) -> Self {
        self.max_results = results;
        self
    }
    /// Sets [`threshold`](Self::threshold).
    pub fn threshold(mut self, threshold: f32) -> Self {
        self.threshold = threshold;
        self
    }
    /// Sets [`ranking`](Self::ranking).
    pub fn ranking(mut self, ranking: super::index::Ranking) -> Self {
        self.ranking = Some(ranking);
        self
    }
    /// Sets [`semantic`](Self::semantic).
    #[cfg(feature = "semantic")]
    pub fn semantic(mut self, model: Arc<super::SemanticModel>) -> Self {
        self.semantic = Some(model);
        self
    }
    /// Sets [`semantic_cache`](Self::semantic_cache).
    #[cfg(feature = "semantic")]
    pub fn semantic_cache(mut self, cache: super::VectorCache) -> Self {
        self.semantic_cache = cache;
        self
    }
    /// Sets [`semantic_background`](Self::semantic_background).
    #[cfg(feature = "semantic")]
    pub fn semantic_background(mut self, yes: bool) -> Self {
        self.semantic_background = yes;
        self
    }
}
