//! Semantic ranking (feature `semantic`): the tools' vectors in a model's space and their
//! reuse across indexes, and the fusion of the keyword ranking with the model's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, Weak};

use super::{Hit, SearchDoc, SearchIndex};
use crate::search::semantic::cache::{self, text_key, TextKey};
use crate::search::semantic::store::{Found, Job};
use crate::search::semantic::SemanticModel;

/// With a semantic model, catalogs of fewer tools than this are embedded before the keyword
/// index is built rather than beside it, on a thread of their own.
pub(super) const SEMANTIC_THREAD_MIN_TOOLS: usize = 64;

/// With a semantic model (feature `semantic`): how many of the tools nearest the query in the
/// model's space take part in the fused ranking.
const SEMANTIC_CANDIDATES: usize = 50;

/// The keyword ranking as the fusion takes it: the tools it matched (in the order found), the
/// score of every tool by position, whether it abstains on its own, and the idf of a word found
/// in one visible tool (the unit of normalised scores).
pub(super) struct KeywordScores {
    pub(super) matched: Vec<u32>,
    pub(super) scores: Vec<f32>,
    pub(super) abstains: bool,
    pub(super) idf_one: f32,
}

/// Queries embedded ahead of a search, off the async runtime (`call/meta.rs`): the vector of
/// each query text as the index cuts it ([`SearchIndex::query_text`]), `None` for a text
/// without a token. A search handed these never embeds: a query that is not here is ranked
/// by keywords alone (its vectors were not ready when the call began, or embedding it
/// failed), so that no forward pass runs where the search runs.
#[derive(Debug, Default)]
pub(crate) struct QueryVectors(HashMap<String, Option<Vec<f32>>>);

impl QueryVectors {
    fn get(&self, query: &str) -> Option<&Option<Vec<f32>>> {
        self.0.get(query)
    }

    /// `queries` embedded by `model` in one batch, each distinct text once, as the index will
    /// look them up.
    pub(crate) fn embed(model: &SemanticModel, queries: &[String]) -> QueryVectors {
        let mut texts: Vec<String> = Vec::with_capacity(queries.len());
        for q in queries {
            let text = SearchIndex::query_text(q);
            if !text.trim().is_empty() && !texts.iter().any(|t| t == text) {
                texts.push(text.to_string());
            }
        }
        if texts.is_empty() {
            return QueryVectors::default();
        }
        let vectors = model.embed_all(&texts);
        // An encoder is a public trait: a text it gave no answer for has no vector.
        let mut vectors = vectors.into_iter();
        QueryVectors(
            texts
                .into_iter()
                .map(|t| (t, vectors.next().flatten()))
                .collect(),
        )
    }

    /// Whether a search of `query` is to rank by meaning: its vector (or its lack of a
    /// token) is here.
    pub(super) fn has(&self, query: &str) -> bool {
        self.0.contains_key(query)
    }
}

/// The tools' vectors in a semantic model's space.
pub(super) struct Semantic {
    pub(super) model: Arc<SemanticModel>,
    /// One unit vector per tool, row by row (all zero for a tool whose text has no token),
    /// once they are ready: set at once, or by the thread that embeds them; `None` when
    /// embedding failed (keywords alone rank, as before the vectors were ready).
    vectors: Arc<OnceLock<Option<Vec<f32>>>>,
    /// The key of the text each vector was made from: a later index reuses a vector only for
    /// the same name and text, the disk cache only for the same text.
    pub(super) texts: Vec<TextKey>,
}

/// How an index's vectors are made (the catalog's options).
#[derive(Clone, Debug, Default)]
pub(crate) struct SemanticBuild {
    /// The directory of the vector cache, if any.
    pub(crate) cache: Option<PathBuf>,
    /// Embed on a thread of its own and search by keywords until the vectors are ready.
    pub(crate) background: bool,
}

/// An index's place among those being made with the same model: its job, what the model's
/// store had for each text still to make (in the order of `Plan::rows`), and their keys.
struct Started {
    job: Job,
    found: Vec<Found>,
    wanted: Vec<TextKey>,
}

impl Started {
    /// Claims the texts of `plan` (at once, before any thread: an index made after this one
    /// finds its claims).
    fn of(model: &SemanticModel, plan: &Plan, keys: &[TextKey]) -> Started {
        let wanted: Vec<TextKey> = plan.rows.iter().map(|&i| keys[i]).collect();
        let (job, found) = model.store().start(&wanted);
        Started { job, found, wanted }
    }
}

/// The vectors of an index before the missing ones are embedded.
struct Plan {
    vectors: Vec<f32>,
    /// The tools still to embed: their rows, and their texts in the same order.
    rows: Vec<usize>,
    texts: Vec<String>,
}

impl Semantic {
    /// The vectors, once ready.
    pub(super) fn ready(&self) -> Option<&[f32]> {
        self.vectors.get().and_then(|v| v.as_deref())
    }

    /// Blocks until the vectors are ready or have failed.
    pub(crate) fn wait(&self) {
        self.vectors.wait();
    }

    /// The vectors of `docs`, those of a tool of the same name and text taken from `base`
    /// when it has the same model and its vectors are ready; the others embedded by `model`
    /// at once (`build.background` false) or on a thread of their own, after a look in the
    /// cache directory.
    /// `rows`: the index's tools (at least `docs.len()`); a tool past the docs has a zero
    /// vector.
    fn of(
        model: Arc<SemanticModel>,
        docs: &[SearchDoc],
        rows: usize,
        base: Option<&SearchIndex>,
        build: &SemanticBuild,
    ) -> Semantic {
        let base = base.and_then(|b| {
            let s = b.semantic.as_ref()?;
            let vectors = s.ready()?;
            Arc::ptr_eq(&s.model, &model).then_some(Reusable {
                index: b,
                texts: &s.texts,
                vectors,
            })
        });
        let (plan, keys) = Plan::new(model.dim(), docs, rows, base);
        let cell: Arc<OnceLock<Option<Vec<f32>>>> = Arc::new(OnceLock::new());
        let semantic = Semantic {
            model: model.clone(),
            vectors: cell.clone(),
            texts: keys.clone(),
        };
        if plan.rows.is_empty() {
            let _ = cell.set(Some(plan.vectors));
            return semantic;
        }
        let cache = build.cache.clone();
        let claims = Started::of(&model, &plan, &keys);
        if !build.background {
            let vectors = finish(&model, plan, claims, &keys, cache.as_deref(), None);
            let _ = cell.set(Some(vectors));
            return semantic;
        }
        tracing::info!(
            tools = docs.len(),
            to_embed = plan.rows.len(),
            kind = model.kind(),
            "semantic vectors are being made in the background; tool_search ranks by keywords \
             alone until they are ready"
        );
        let weak = Arc::downgrade(&cell);
        let thread_model = model.clone();
        let spawned = std::thread::Builder::new()
            .name("disco-embed".into())
            .spawn(move || finish_in_background(&thread_model, plan, claims, &keys, cache, &weak));
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "no thread for embedding: the tools are embedded now");
            // The closure was not run: embed here (the plan went with it, so start again).
            return Semantic::of(
                model,
                docs,
                rows,
                None,
                &SemanticBuild {
                    background: false,
                    ..build.clone()
                },
            );
        }
        semantic
    }
}

/// An earlier index whose vectors a new one of the same model may take: its names, the key
/// of the text each vector was made from, and the vectors.
#[derive(Clone, Copy)]
struct Reusable<'a> {
    index: &'a SearchIndex,
    texts: &'a [TextKey],
    vectors: &'a [f32],
}

impl<'a> Reusable<'a> {
    /// The vector of the tool named `name`, when it was made from the text `key`.
    fn vector(self, name: &str, key: TextKey, dim: usize) -> Option<&'a [f32]> {
        let b = self.index;
        let at = b
            .by_name
            .binary_search_by(|&d| b.names[d as usize].as_str().cmp(name))
            .ok()?;
        let d = b.by_name[at] as usize;
        (self.texts[d] == key).then(|| &self.vectors[d * dim..(d + 1) * dim])
    }
}

impl Plan {
    /// The vectors `base` has for `docs` in place, and the tools still to embed; with the
    /// key of each tool's text (0 for a row past the docs: no text).
    fn new(
        dim: usize,
        docs: &[SearchDoc],
        rows: usize,
        base: Option<Reusable<'_>>,
    ) -> (Plan, Vec<TextKey>) {
        let mut plan = Plan {
            vectors: vec![0f32; rows.max(docs.len()) * dim],
            rows: Vec::new(),
            texts: Vec::new(),
        };
        let mut keys: Vec<TextKey> = Vec::with_capacity(docs.len());
        for (i, doc) in docs.iter().enumerate() {
            let text = semantic_text(doc);
            let key = text_key(&text);
            keys.push(key);
            match base.and_then(|b| b.vector(&doc.name, key, dim)) {
                Some(v) => plan.vectors[i * dim..(i + 1) * dim].copy_from_slice(v),
                None => {
                    plan.rows.push(i);
                    plan.texts.push(text);
                }
            }
        }
        keys.resize(rows.max(docs.len()), [0u8; 16]);
        (plan, keys)
    }
}

/// [`finish`] on the embedding thread: the vectors go to the index's cell, unless the index
/// was replaced meanwhile; a panic while embedding leaves the index to keywords alone.
fn finish_in_background(
    model: &SemanticModel,
    plan: Plan,
    claims: Started,
    keys: &[TextKey],
    cache: Option<PathBuf>,
    weak: &Weak<OnceLock<Option<Vec<f32>>>>,
) {
    let started = std::time::Instant::now();
    let tools = keys.len();
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        finish(model, plan, claims, keys, cache.as_deref(), Some(weak))
    }));
    let Some(cell) = weak.upgrade() else {
        tracing::debug!("semantic vectors no longer needed: the index was replaced");
        return;
    };
    match done {
        Ok(vectors) => {
            let _ = cell.set(Some(vectors));
            tracing::info!(
                tools,
                ms = started.elapsed().as_millis() as u64,
                "semantic vectors ready: tool_search fuses keywords with the model"
            );
        }
        Err(_) => {
            let _ = cell.set(None);
            tracing::error!("embedding the tools failed; tool_search ranks by keywords alone");
        }
    }
}

/// Texts are embedded in blocks of this many, so that a replaced index's thread stops soon.
pub(crate) const EMBED_BLOCK: usize = 256;

/// `plan`'s vectors with the missing ones taken from the model's shared store (waiting for
/// those another index is embedding now), from the cache in `cache`, or embedded (and the
/// cache written when anything was embedded). `alive`: the cell of the index they are for;
/// when it is gone, embedding stops (what was embedded is still cached and shared).
fn finish(
    model: &SemanticModel,
    plan: Plan,
    started: Started,
    keys: &[TextKey],
    cache: Option<&Path>,
    alive: Option<&Weak<OnceLock<Option<Vec<f32>>>>>,
) -> Vec<f32> {
    let gone = || alive.is_some_and(|w| w.strong_count() == 0);
    let Started {
        mut job,
        found,
        wanted,
    } = started;
    let mut made = Making {
        dim: model.dim(),
        vectors: plan.vectors,
        rows: plan.rows,
        texts: plan.texts,
        wanted,
    };
    let (mine, theirs, mut shared) = made.take_found(found);
    let file = cache.map(|dir| cache::file_of(dir, model.id()));
    let (missing, from_cache) = made.take_cached(model, file.as_deref(), &mine, &mut job);
    let mut embedded = 0usize;
    for block in missing.chunks(EMBED_BLOCK) {
        if gone() {
            break;
        }
        embedded += made.embed(model, block, &mut job);
    }
    // What is still claimed (embedding stopped) is let go before waiting for the others: an
    // index never waits while holding a claim, so no two wait for each other.
    job.release();
    if !theirs.is_empty() {
        let (waited, again) = made.take_waited(&theirs, &job);
        shared += waited;
        if !again.is_empty() && !gone() {
            embedded += made.embed(model, &again, &mut job);
        }
    }
    tracing::debug!(shared, from_cache, embedded, "semantic vectors made");
    if let (Some(file), true) = (&file, embedded > 0) {
        write_cache(model, file, keys, &made.vectors);
    }
    made.vectors
}

/// The vectors of an index being made, and the tools still to make: their rows, texts and
/// keys (`rows[n]`, `texts[n]`, `wanted[n]` are one tool's).
struct Making {
    dim: usize,
    vectors: Vec<f32>,
    rows: Vec<usize>,
    texts: Vec<String>,
    wanted: Vec<TextKey>,
}

impl Making {
    /// Takes what the model's store had ready; the positions this index embeds and those
    /// another one is embedding, and how many were ready.
    fn take_found(&mut self, found: Vec<Found>) -> (Vec<usize>, Vec<usize>, usize) {
        let mut mine: Vec<usize> = Vec::new();
        let mut theirs: Vec<usize> = Vec::new();
        let mut shared = 0usize;
        for (n, found) in found.into_iter().enumerate() {
            match found {
                Found::Ready(v) => {
                    put_row(&mut self.vectors, self.rows[n], self.dim, &v);
                    shared += 1;
                }
                Found::Mine => mine.push(n),
                Found::Theirs => theirs.push(n),
            }
        }
        (mine, theirs, shared)
    }

    /// Takes the vectors of `mine` that the cache `file` holds (read only when there is
    /// something to look for), shared with the other indexes; the positions still missing,
    /// and how many were cached.
    fn take_cached(
        &mut self,
        model: &SemanticModel,
        file: Option<&Path>,
        mine: &[usize],
        job: &mut Job,
    ) -> (Vec<usize>, usize) {
        let stored = match (file, mine.is_empty()) {
            (Some(f), false) => cache::read(f, model.id(), self.dim),
            _ => HashMap::new(),
        };
        let mut missing: Vec<usize> = Vec::new();
        let mut from_cache = 0usize;
        for &n in mine {
            match stored.get(&self.wanted[n]) {
                Some(v) => {
                    put_row(&mut self.vectors, self.rows[n], self.dim, v);
                    from_cache += 1;
                }
                None => missing.push(n),
            }
        }
        job.put(
            mine.iter()
                .filter(|&&n| stored.contains_key(&self.wanted[n]))
                .map(|&n| (self.wanted[n], row(&self.vectors, self.rows[n], self.dim))),
        );
        (missing, from_cache)
    }

    /// Embeds the texts at positions `which` into their rows, shared with the other indexes;
    /// how many.
    fn embed(&mut self, model: &SemanticModel, which: &[usize], job: &mut Job) -> usize {
        let n = embed_rows(model, which, &self.rows, &self.texts, &mut self.vectors);
        job.put(
            which
                .iter()
                .map(|&n| (self.wanted[n], row(&self.vectors, self.rows[n], self.dim))),
        );
        n
    }

    /// Waits for the positions `theirs` that other indexes are embedding and takes their
    /// vectors; how many came, and the positions whose index stopped (to embed here).
    fn take_waited(&mut self, theirs: &[usize], job: &Job) -> (usize, Vec<usize>) {
        let waited: Vec<TextKey> = theirs.iter().map(|&n| self.wanted[n]).collect();
        let mut again: Vec<usize> = Vec::new();
        let mut shared = 0usize;
        for (&n, v) in theirs.iter().zip(job.wait(&waited)) {
            match v {
                Some(v) => {
                    put_row(&mut self.vectors, self.rows[n], self.dim, &v);
                    shared += 1;
                }
                None => again.push(n),
            }
        }
        (shared, again)
    }
}

/// Writes the vector cache `file`: `vectors` (the rows of `keys`) merged with the file as it
/// is now, not as it was read when this index started: another index of this process (a
/// scoped caller's, a rebuild) may have written it since, and an index that embedded none of
/// its own texts at first never read it. One writer at a time in this process; across
/// processes the last rename wins.
fn write_cache(model: &SemanticModel, file: &Path, keys: &[TextKey], vectors: &[f32]) {
    let dim = model.dim();
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = crate::util::lock(&WRITING);
    let current = cache::read(file, model.id(), dim);
    let rows_of =
        (0..keys.len()).filter(|&i| vectors[i * dim..(i + 1) * dim].iter().any(|&x| x != 0.0));
    let bytes = cache::serialize(
        model.id(),
        dim,
        rows_of.map(|i| (&keys[i], &vectors[i * dim..(i + 1) * dim])),
        &current,
    );
    if let Err(e) = cache::write(file, &bytes) {
        tracing::warn!(file = %file.display(), error = %e, "cannot write the vector cache");
    }
}

/// The vector in row `i`.
fn row(vectors: &[f32], i: usize, dim: usize) -> &[f32] {
    &vectors[i * dim..(i + 1) * dim]
}

/// Sets row `i` to `v` when it has the right length (a stored vector always has).
fn put_row(vectors: &mut [f32], i: usize, dim: usize, v: &[f32]) {
    if v.len() == dim {
        vectors[i * dim..(i + 1) * dim].copy_from_slice(v);
    }
}

/// Embeds the texts at positions `which` (of `rows` and `texts`) into their rows; how many.
fn embed_rows(
    model: &SemanticModel,
    which: &[usize],
    rows: &[usize],
    texts: &[String],
    vectors: &mut [f32],
) -> usize {
    let dim = model.dim();
    let block_texts: Vec<String> = which.iter().map(|&n| texts[n].clone()).collect();
    for (&n, v) in which.iter().zip(model.embed_all(&block_texts)) {
        // An encoder is a public trait: a vector of another length is no vector.
        if let Some(v) = v {
            put_row(vectors, rows[n], dim, &v);
        }
    }
    which.len()
}

impl SearchIndex {
    /// Adds semantic ranking: every tool of `docs` (the same slice, in the same order, that
    /// the index was built from) is placed in `model`'s space by its name's words, title and
    /// description, and queries are ranked by fusing the keyword ranking with the model's (see
    /// [`Ranking`]). [`SearchIndex::build_with_semantic`] does both steps at once, faster.
    ///
    /// [`Ranking`]: super::Ranking
    pub fn with_semantic(
        self,
        model: std::sync::Arc<SemanticModel>,
        docs: &[SearchDoc],
    ) -> SearchIndex {
        self.with_semantic_reusing(model, docs, None)
    }

    /// [`SearchIndex::with_semantic`], taking the vector of a tool of the same name and text
    /// from `base` (an index of the same model) instead of embedding it again: a caller's own
    /// catalog shares every other tool with the base catalog, and a rebuilt catalog most of
    /// its tools with the one before.
    pub(crate) fn with_semantic_reusing(
        mut self,
        model: Arc<SemanticModel>,
        docs: &[SearchDoc],
        base: Option<&SearchIndex>,
    ) -> SearchIndex {
        // Whatever `docs` holds, one vector per tool of the index: a tool past its end has a
        // zero vector (keywords alone find it; its key 0 marks no text), a doc past the
        // index's tools is left out.
        let n = self.names.len();
        if docs.len() != n {
            tracing::warn!(
                docs = docs.len(),
                tools = n,
                "semantic vectors for docs that are not the index's own"
            );
        }
        let docs = &docs[..docs.len().min(n)];
        self.semantic = Some(Semantic::of(
            model,
            docs,
            n,
            base,
            &SemanticBuild::default(),
        ));
        self
    }

    /// `SearchIndex::build(docs).with_semantic(model, docs)`, the keyword index built while
    /// the tools are embedded (on the other cores) rather than before.
    pub fn build_with_semantic(docs: &[SearchDoc], model: Arc<SemanticModel>) -> SearchIndex {
        SearchIndex::build_with_semantic_reusing(docs, model, None, &SemanticBuild::default())
    }

    /// [`SearchIndex::build_with_semantic`], reusing `base`'s vectors as
    /// [`SearchIndex::with_semantic_reusing`] does, and making the others as `build` says: in
    /// the background, the index searches by keywords until they are ready.
    pub(crate) fn build_with_semantic_reusing(
        docs: &[SearchDoc],
        model: Arc<SemanticModel>,
        base: Option<&SearchIndex>,
        build: &SemanticBuild,
    ) -> SearchIndex {
        let n = docs.len();
        // A few tools are quicker done one after the other than with a thread.
        if build.background || n < SEMANTIC_THREAD_MIN_TOOLS {
            let mut index = SearchIndex::build(docs);
            index.semantic = Some(Semantic::of(model, docs, n, base, build));
            return index;
        }
        let (mut index, semantic) = std::thread::scope(|scope| {
            let embedding = std::thread::Builder::new().spawn_scoped(scope, {
                let model = model.clone();
                move || Semantic::of(model, docs, n, base, build)
            });
            let index = SearchIndex::build(docs);
            let semantic = match embedding {
                // A panic while embedding is a panic here, as it would be without the thread.
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
                // No thread to be had: embed here.
                Err(_) => Semantic::of(model, docs, n, base, build),
            };
            (index, semantic)
        });
        index.semantic = Some(semantic);
        index
    }

    /// Blocks until the index's semantic vectors are ready (or have failed); at once without
    /// a model.
    pub fn wait_semantic(&self) {
        if let Some(s) = &self.semantic {
            s.wait();
        }
    }

    /// The model that a search would embed its query with now: the index's, once its vectors
    /// are ready (before, search ranks by keywords alone and embeds nothing).
    pub(crate) fn query_model(&self) -> Option<Arc<SemanticModel>> {
        let s = self.semantic.as_ref()?;
        s.ready().map(|_| s.model.clone())
    }

    /// Whether the index ranks with its semantic model now (it has one and its vectors are
    /// ready).
    pub fn semantic_ready(&self) -> bool {
        self.semantic.as_ref().is_some_and(|s| s.ready().is_some())
    }

    /// The semantic vector of the tool named `name` (tests), once the vectors are ready.
    #[cfg(test)]
    pub(crate) fn semantic_vector_mut(&mut self, name: &str) -> Option<&mut [f32]> {
        let d = self.names.iter().position(|n| n == name)?;
        let s = self.semantic.as_mut()?;
        s.wait();
        let dim = s.model.dim();
        if Arc::get_mut(&mut s.vectors).is_none() {
            // Still shared with the thread that made them: a copy of its own.
            let copy = s.ready().map(<[f32]>::to_vec);
            s.vectors = Arc::new(OnceLock::from(copy));
        }
        let cell = Arc::get_mut(&mut s.vectors)?;
        cell.get_mut()?.as_mut()?.get_mut(d * dim..(d + 1) * dim)
    }

    /// The keyword ranking (`matched` with `scores`) fused with the semantic model's; the
    /// query's vector from `embedded` when it was made ahead.
    // The search's own state, passed on from `search_embedded`; a struct for it would only
    // be unpacked again here.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fused(
        &self,
        semantic: &Semantic,
        vectors: &[f32],
        query: &str,
        visible: &[bool],
        keywords: KeywordScores,
        max_results: usize,
        embedded: Option<&QueryVectors>,
    ) -> Vec<Hit> {
        let r = &self.ranking;
        let nearest = self.nearest(semantic, vectors, query, visible, embedded);
        // Scores are fused, not ranks: neither list needs an order, only its extremes.
        let cosines = nearest.iter().map(|n| n.score);
        let near_hi = cosines.clone().fold(f32::NEG_INFINITY, f32::max);
        let near_lo = cosines.fold(f32::INFINITY, f32::min);
        if keywords.abstains && near_hi < r.semantic_threshold {
            return Vec::new();
        }
        let keyword: Vec<(usize, f32)> = keywords
            .matched
            .iter()
            .map(|&d| (d as usize, keywords.scores[d as usize]))
            .filter(|&(_, s)| s > 0.0)
            .collect();
        let scales = Scales::new(r, &keyword, keywords.idf_one, near_hi, near_lo);
        let mut fused = vec![0f32; self.names.len()];
        let mut seen = vec![false; self.names.len()];
        let mut found: Vec<usize> = Vec::with_capacity(keyword.len() + nearest.len());
        for &(d, score) in &keyword {
            seen[d] = true;
            found.push(d);
            fused[d] += scales.keyword(score);
        }
        for &Hit {
            index: d,
            score: cos,
        } in &nearest
        {
            if !seen[d] {
                // Found by meaning alone: listed only when near enough to count.
                if cos < r.semantic_floor {
                    continue;
                }
                seen[d] = true;
                found.push(d);
            }
            fused[d] += scales.semantic(r.semantic_weight, cos);
        }
        // First in both rankings, with a keyword score of at least its floor, scores 1.
        let top = 1.0 + r.semantic_weight;
        let mut hits: Vec<Hit> = found
            .into_iter()
            .map(|index| Hit {
                index,
                score: fused[index] / top,
            })
            .filter(|h| h.score > 0.0)
            .collect();
        self.keep_best(&mut hits, max_results);
        hits.sort_unstable_by(|a, b| self.best_first(a, b));
        hits
    }

    /// The [`SEMANTIC_CANDIDATES`] visible tools nearest the query in the model's space,
    /// each with its cosine as its score; none when the query has no vector. Without
    /// `embedded`, the query is embedded here, on the caller's thread (the public search
    /// methods say so); with it, only a query it holds gets here.
    fn nearest(
        &self,
        semantic: &Semantic,
        vectors: &[f32],
        query: &str,
        visible: &[bool],
        embedded: Option<&QueryVectors>,
    ) -> Vec<Hit> {
        let dim = semantic.model.dim();
        let q = match embedded.and_then(|e| e.get(query)) {
            Some(q) => q.clone(),
            None => semantic.model.embed(query),
        };
        let Some(q) = q.filter(|q| dim > 0 && q.len() == dim) else {
            return Vec::new();
        };
        let mut nearest: Vec<Hit> = vectors
            .chunks_exact(dim)
            .enumerate()
            .filter(|(d, _)| visible[*d])
            .map(|(index, v)| Hit {
                index,
                score: dot(v, &q),
            })
            .collect();
        self.keep_best(&mut nearest, SEMANTIC_CANDIDATES);
        nearest
    }
}

/// Each ranking's scores scaled to [0, 1] over its own list (keywords: by the best score;
/// the model: down from the nearest tool to the farthest of its nearest), then summed.
/// Neither scale shrinks below its floor: among a few candidates, a near tie of weak scores
/// would otherwise count as a whole unit of difference.
struct Scales {
    /// The best keyword score, at least `keyword_scale_floor` distinctive words.
    keyword_best: f32,
    /// The cosine of the nearest tool.
    near_hi: f32,
    /// The spread of the nearest tools' cosines, at least `semantic_spread_floor`.
    span: f32,
}

impl Scales {
    fn new(
        r: &super::Ranking,
        keyword: &[(usize, f32)],
        idf_one: f32,
        near_hi: f32,
        near_lo: f32,
    ) -> Self {
        let keyword_best = keyword
            .iter()
            .map(|k| k.1)
            .fold(0f32, f32::max)
            .max(r.keyword_scale_floor * idf_one);
        Scales {
            keyword_best,
            near_hi,
            span: (near_hi - near_lo).max(r.semantic_spread_floor),
        }
    }

    /// A keyword score's share of the fused score.
    fn keyword(&self, score: f32) -> f32 {
        score / self.keyword_best
    }

    /// A cosine's share of the fused score, weighed by `weight`.
    fn semantic(&self, weight: f32, cos: f32) -> f32 {
        weight * (1.0 - (self.near_hi - cos) / self.span)
    }
}

/// The dot product of two vectors of the same length, in eight independent sums that the
/// compiler turns into vector instructions.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let whole = n / 8 * 8;
    let mut sums = [0f32; 8];
    for (x, y) in a[..whole].chunks_exact(8).zip(b[..whole].chunks_exact(8)) {
        for i in 0..8 {
            sums[i] += x[i] * y[i];
        }
    }
    let rest: f32 = a[whole..n]
        .iter()
        .zip(&b[whole..n])
        .map(|(x, y)| x * y)
        .sum();
    sums.iter().sum::<f32>() + rest
}

/// What a tool is in a semantic model's space: its name's words, its title and its description
/// ("searchPapers" -> "search Papers").
pub(crate) fn semantic_text(doc: &SearchDoc) -> String {
    let mut name = String::with_capacity(doc.name.len() + 4);
    let mut prev: Option<char> = None;
    for c in doc.name.chars() {
        if matches!(c, '_' | '-' | '.' | '/' | ':') {
            if !name.ends_with(' ') {
                name.push(' ');
            }
        } else {
            if c.is_uppercase() && prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()) {
                name.push(' ');
            }
            name.push(c);
        }
        prev = Some(c);
    }
    format!(
        "{}. {}. {}",
        name.trim(),
        doc.title.as_deref().unwrap_or_default(),
        doc.description
    )
}
