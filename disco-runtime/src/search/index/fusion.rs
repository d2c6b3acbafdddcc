//! Semantic ranking (feature `semantic`): the tools' vectors in a model's space and their
//! reuse across indexes, and the fusion of the keyword ranking with the model's.

use super::{Hit, SearchDoc, SearchIndex};
use crate::search::semantic::SemanticModel;

/// With a semantic model, a tool that only the model finds is listed when its cosine with the
/// query is at least this (unrelated texts score about 0 to 0.1 with the evaluation's model):
/// results are not filled up with tools that have nothing to do with the query.
const SEMANTIC_FLOOR: f32 = 0.1;

/// With a semantic model, the fusion scales the keyword scores by the best one, but never by
/// less than this (in normalised units: one distinctive word matched): when only weak keyword
/// matches exist, the best of them is not counted as a full match.
const KEYWORD_SCALE_FLOOR: f32 = 1.0;

/// With a semantic model, the fusion scales the cosines from the nearest tool (1) down over
/// the spread of the nearest ones, but never over less than this: two candidates whose cosines
/// differ by 0.01 are nearly tied, not a full unit apart.
const SEMANTIC_SCALE_FLOOR: f32 = 0.2;

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

/// The tools' vectors in a semantic model's space.
pub(super) struct Semantic {
    pub(super) model: std::sync::Arc<SemanticModel>,
    /// One unit vector per tool, row by row; all zero for a tool whose text has no token.
    pub(super) vectors: Vec<f32>,
    /// A hash of the text each vector was made from: a later index reuses a vector only for
    /// the same name and text.
    pub(super) texts: Vec<u64>,
}

impl Semantic {
    /// The vectors of `docs`, embedded by `model` or, for a tool of the same name and text,
    /// taken from `base` when it has the same model.
    fn of(
        model: std::sync::Arc<SemanticModel>,
        docs: &[SearchDoc],
        base: Option<&SearchIndex>,
    ) -> Semantic {
        let dim = model.dim();
        let base = base.and_then(|b| {
            let s = b.semantic.as_ref()?;
            std::sync::Arc::ptr_eq(&s.model, &model).then_some((b, s))
        });
        let mut vectors = vec![0f32; docs.len() * dim];
        let mut hashes: Vec<u64> = Vec::with_capacity(docs.len());
        // The tools to embed: their rows, and their texts in the same order.
        let mut rows: Vec<usize> = Vec::new();
        let mut texts: Vec<String> = Vec::new();
        for (i, doc) in docs.iter().enumerate() {
            let text = semantic_text(doc);
            let hash = text_hash(&text);
            hashes.push(hash);
            let known = base.and_then(|(b, s)| {
                let at = b
                    .by_name
                    .binary_search_by(|&d| b.names[d as usize].as_str().cmp(&doc.name))
                    .ok()?;
                let d = b.by_name[at] as usize;
                (s.texts[d] == hash).then(|| &s.vectors[d * dim..(d + 1) * dim])
            });
            match known {
                Some(v) => vectors[i * dim..(i + 1) * dim].copy_from_slice(v),
                None => {
                    rows.push(i);
                    texts.push(text);
                }
            }
        }
        for (&i, v) in rows.iter().zip(model.embed_all(&texts)) {
            if let Some(v) = v {
                vectors[i * dim..(i + 1) * dim].copy_from_slice(&v);
            }
        }
        Semantic {
            model,
            vectors,
            texts: hashes,
        }
    }
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
        model: std::sync::Arc<SemanticModel>,
        docs: &[SearchDoc],
        base: Option<&SearchIndex>,
    ) -> SearchIndex {
        // Whatever `docs` holds, one vector per tool of the index: a tool past its end has a
        // zero vector (keywords alone find it; its hash 0 marks no text), a doc past the
        // index's tools is left out.
        let n = self.names.len();
        if docs.len() != n {
            tracing::warn!(
                docs = docs.len(),
                tools = n,
                "semantic vectors for docs that are not the index's own"
            );
        }
        let mut semantic = Semantic::of(model, &docs[..docs.len().min(n)], base);
        semantic.vectors.resize(n * semantic.model.dim(), 0.0);
        semantic.texts.resize(n, 0);
        self.semantic = Some(semantic);
        self
    }

    /// `SearchIndex::build(docs).with_semantic(model, docs)`, the keyword index built while
    /// the tools are embedded (on the other cores) rather than before.
    pub fn build_with_semantic(
        docs: &[SearchDoc],
        model: std::sync::Arc<SemanticModel>,
    ) -> SearchIndex {
        SearchIndex::build_with_semantic_reusing(docs, model, None)
    }

    /// [`SearchIndex::build_with_semantic`], reusing `base`'s vectors as
    /// [`SearchIndex::with_semantic_reusing`] does.
    pub(crate) fn build_with_semantic_reusing(
        docs: &[SearchDoc],
        model: std::sync::Arc<SemanticModel>,
        base: Option<&SearchIndex>,
    ) -> SearchIndex {
        // A few tools are quicker done one after the other than with a thread.
        if docs.len() < SEMANTIC_THREAD_MIN_TOOLS {
            let mut index = SearchIndex::build(docs);
            index.semantic = Some(Semantic::of(model, docs, base));
            return index;
        }
        let (mut index, semantic) = std::thread::scope(|scope| {
            let embedding = std::thread::Builder::new().spawn_scoped(scope, {
                let model = model.clone();
                move || Semantic::of(model, docs, base)
            });
            let index = SearchIndex::build(docs);
            let semantic = match embedding {
                // A panic while embedding is a panic here, as it would be without the thread.
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
                // No thread to be had: embed here.
                Err(_) => Semantic::of(model, docs, base),
            };
            (index, semantic)
        });
        index.semantic = Some(semantic);
        index
    }

    /// The semantic vector of the tool named `name` (tests).
    #[cfg(test)]
    pub(crate) fn semantic_vector_mut(&mut self, name: &str) -> Option<&mut [f32]> {
        let d = self.names.iter().position(|n| n == name)?;
        let s = self.semantic.as_mut()?;
        let dim = s.model.dim();
        s.vectors.get_mut(d * dim..(d + 1) * dim)
    }

    /// The keyword ranking (`matched` with `scores`) fused with the semantic model's.
    pub(super) fn fused(
        &self,
        semantic: &Semantic,
        query: &str,
        visible: &[bool],
        keywords: KeywordScores,
        max_results: usize,
    ) -> Vec<Hit> {
        let KeywordScores {
            matched,
            scores,
            abstains: keywords_abstain,
            idf_one,
        } = keywords;
        let r = &self.ranking;
        // The tools nearest the query, each with its cosine as its score.
        let mut nearest: Vec<Hit> = Vec::new();
        if let Some(q) = semantic.model.embed(query) {
            let dim = q.len();
            nearest = semantic
                .vectors
                .chunks_exact(dim)
                .enumerate()
                .filter(|(d, _)| visible[*d])
                .map(|(index, v)| Hit {
                    index,
                    score: dot(v, &q),
                })
                .collect();
            self.keep_best(&mut nearest, SEMANTIC_CANDIDATES);
        }
        // Scores are fused, not ranks: neither list needs an order, only its extremes.
        let cosines = nearest.iter().map(|n| n.score);
        let near_hi = cosines.clone().fold(f32::NEG_INFINITY, f32::max);
        let near_lo = cosines.fold(f32::INFINITY, f32::min);
        if keywords_abstain && near_hi < r.semantic_threshold {
            return Vec::new();
        }
        let keyword: Vec<(usize, f32)> = matched
            .iter()
            .map(|&d| (d as usize, scores[d as usize]))
            .filter(|&(_, s)| s > 0.0)
            .collect();
        // Each ranking's scores scaled to [0, 1] over its own list (keywords: by the best
        // score; the model: down from the nearest tool to the farthest of its nearest), then
        // summed. Neither scale shrinks below its floor: among a few candidates, a near tie
        // of weak scores would otherwise count as a whole unit of difference.
        let keyword_best = keyword
            .iter()
            .map(|k| k.1)
            .fold(0f32, f32::max)
            .max(KEYWORD_SCALE_FLOOR * idf_one);
        let span = (near_hi - near_lo).max(SEMANTIC_SCALE_FLOOR);
        let mut fused = vec![0f32; self.names.len()];
        let mut seen = vec![false; self.names.len()];
        let mut found: Vec<usize> = Vec::with_capacity(keyword.len() + nearest.len());
        for &(d, score) in &keyword {
            seen[d] = true;
            found.push(d);
            fused[d] += score / keyword_best;
        }
        for &Hit {
            index: d,
            score: cos,
        } in &nearest
        {
            if !seen[d] {
                // Found by meaning alone: listed only when near enough to count.
                if cos < SEMANTIC_FLOOR {
                    continue;
                }
                seen[d] = true;
                found.push(d);
            }
            fused[d] += r.semantic_weight * (1.0 - (near_hi - cos) / span);
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

/// A 64-bit hash of a tool's text (std's `DefaultHasher`, whose keys are fixed: the same in
/// every index of a process, which is all a reused vector needs).
fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// What a tool is in a semantic model's space: its name's words, its title and its description
/// ("searchPapers" -> "search Papers").
fn semantic_text(doc: &SearchDoc) -> String {
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
