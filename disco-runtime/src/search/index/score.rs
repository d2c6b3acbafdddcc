//! Keyword scoring: BM25F over the visible tools, the name-coverage bonus, abstention, and
//! the order of results.

use std::collections::HashMap;

use super::analyze::truncate_chars;
#[cfg(feature = "semantic")]
use super::fusion::KeywordScores;
use super::ranking::NAME_COVERAGE_MIN;
use super::{EmbeddedQueries, Hit, SearchIndex, F_NAME, MAX_QUERY_CHARS, NF};

impl SearchIndex {
    /// Ranked hits, best first, ties broken by name (then position).
    ///
    /// `allowed(i)` is asked once per tool before anything is scored, and every statistic is
    /// computed over the allowed tools only (see the module docs). An empty or whitespace query
    /// lists the allowed tools in name order with score 0. A query whose best match scores
    /// below the threshold returns nothing (abstains): the caller should answer with a hint.
    /// Otherwise every matching tool may be returned, up to `max_results`.
    ///
    /// With a semantic model whose vectors are ready, the query is embedded here, on the
    /// calling thread (a transformer's forward pass takes milliseconds of CPU).
    pub fn search(
        &self,
        query: &str,
        max_results: usize,
        allowed: &dyn Fn(usize) -> bool,
    ) -> Vec<Hit> {
        self.search_embedded(query, max_results, allowed, None)
    }

    /// The text of `query` that is searched (and embedded): its first
    /// [`MAX_QUERY_CHARS`] characters.
    pub(crate) fn query_text(query: &str) -> &str {
        truncate_chars(query, MAX_QUERY_CHARS)
    }

    /// [`SearchIndex::search`], with the query's vector taken from `embedded` (feature
    /// `semantic`; made off the async runtime): given `embedded`, nothing is embedded here,
    /// and a query it does not hold is ranked by keywords alone.
    pub(crate) fn search_embedded(
        &self,
        query: &str,
        max_results: usize,
        allowed: &dyn Fn(usize) -> bool,
        embedded: Option<&EmbeddedQueries>,
    ) -> Vec<Hit> {
        #[cfg(not(feature = "semantic"))]
        let _ = embedded;
        if max_results == 0 || self.names.is_empty() {
            return Vec::new();
        }
        let visible: Vec<bool> = (0..self.names.len()).map(allowed).collect();
        let query = SearchIndex::query_text(query);
        if query.trim().is_empty() {
            return self
                .by_name
                .iter()
                .filter(|&&d| visible[d as usize])
                .take(max_results)
                .map(|&d| Hit {
                    index: d as usize,
                    score: 0.0,
                })
                .collect();
        }

        let n_visible = visible.iter().filter(|v| **v).count();
        if n_visible == 0 {
            return Vec::new();
        }
        let r = &self.ranking;
        let avg_len = self.avg_len(&visible, n_visible);
        // Per field: W_f / (1 - b_f + b_f * len / avg) = W_f / (c0 + c1 * len).
        let mut norm_c0 = [0f32; NF];
        let mut norm_c1 = [0f32; NF];
        for f in 0..NF {
            norm_c0[f] = 1.0 - r.field_b[f];
            norm_c1[f] = if avg_len[f] > 0.0 {
                r.field_b[f] / avg_len[f]
            } else {
                0.0
            };
        }

        let words = self.query_words(query);
        let n = n_visible as f32;
        // The idf of a word found in exactly one visible tool: the most a word can weigh here.
        let idf_one = (1.0 + (n - 0.5) / 1.5).ln();
        let mut scores = vec![0f32; self.names.len()];
        let mut best = vec![0f32; self.names.len()];
        let mut name_best = vec![0f32; self.names.len()];
        let mut name_cover = vec![0f32; self.names.len()];
        let mut name_strong = vec![0f32; self.names.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut matched: Vec<u32> = Vec::new();
        let mut reaching = 0usize;
        let mut df_cache: HashMap<u32, f32> = HashMap::new();
        for w in &words {
            for (&(term, vweight), &claims) in w.variants.iter().zip(&w.claims) {
                let postings = &self.postings[term as usize];
                let idf = *df_cache.entry(term).or_insert_with(|| {
                    let df = postings.iter().filter(|p| visible[p.doc as usize]).count() as f32;
                    if df == 0.0 {
                        0.0
                    } else {
                        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
                    }
                });
                if idf == 0.0 {
                    continue;
                }
                for p in postings {
                    let d = p.doc as usize;
                    if !visible[d] {
                        continue;
                    }
                    let lens = &self.field_len[d];
                    let mut tf = 0f32;
                    for f in 0..NF {
                        if p.tf[f] != 0 {
                            tf += r.field_weight[f] * f32::from(p.tf[f])
                                / (norm_c0[f] + norm_c1[f] * f32::from(lens[f]));
                        }
                    }
                    let s = vweight * idf * tf / (r.k1 + tf);
                    if best[d] == 0.0 {
                        touched.push(p.doc);
                    }
                    if s > best[d] {
                        best[d] = s;
                    }
                    if claims && p.tf[F_NAME] != 0 && vweight > name_best[d] {
                        name_best[d] = vweight;
                    }
                }
            }
            for &d in &touched {
                let d = d as usize;
                if scores[d] == 0.0 {
                    matched.push(d as u32);
                }
                scores[d] += w.weight * best[d];
                name_cover[d] += name_best[d];
                if w.weight >= 1.0 {
                    name_strong[d] += name_best[d];
                }
                best[d] = 0.0;
                name_best[d] = 0.0;
            }
            // Only words that reached a tool the caller may see count towards the query's
            // length: what hidden tools contain must not change a visible score.
            if !touched.is_empty() {
                reaching += 1;
            }
            touched.clear();
        }

        // A tool whose name the query spells out nearly word for word is very likely the one
        // meant, even when its words are common in the catalog ("list servers" among many
        // server tools): add a bonus for the share of the name's words the query matched. One
        // word is not enough: a one-word name ("search", "news") would win every query using it,
        // nor are generic words alone ("help", "find"); one word and a synonym of another are
        // ("find issues" for `search_issues`). The more words a query has, the likelier
        // two of them meet some name by chance, so a long query's bonus is scaled down.
        let damping = (r.name_coverage_words / reaching.max(1) as f32).min(1.0);
        for &d in &matched {
            let d = d as usize;
            let len = f32::from(self.name_len[d].max(1));
            if name_cover[d] >= NAME_COVERAGE_MIN && name_strong[d] >= 1.0 {
                scores[d] += r.name_coverage * idf_one * (name_cover[d] / len).min(1.0) * damping;
            }
        }
        // Keywords learned from traffic: a capped addition, as a field of its own would be.
        for (d, add) in self.learned_scores(query, &visible) {
            if scores[d] == 0.0 {
                matched.push(d as u32);
            }
            scores[d] += add * idf_one;
        }
        // Abstain on the best score alone: when the best tool is a clear enough match, weaker
        // ones are still worth showing (the gold tool is often second or third); when it is
        // not, showing any would only mislead. Cutting each hit at the threshold instead costs
        // far more recall for the same abstention (measured: tests/corpus/search/README.md).
        let best = matched
            .iter()
            .map(|&d| scores[d as usize])
            .fold(0f32, f32::max);
        let abstains = best <= 0.0 || best < r.threshold * idf_one;
        #[cfg(feature = "semantic")]
        if let Some((semantic, vectors)) = self
            .semantic
            .as_ref()
            .and_then(|s| Some((s, s.ready()?)))
            .filter(|_| embedded.is_none_or(|e| e.has(query)))
        {
            let keywords = KeywordScores {
                matched,
                scores,
                abstains,
                idf_one,
            };
            return self.fused(
                semantic,
                vectors,
                query,
                &visible,
                keywords,
                max_results,
                embedded,
            );
        }
        if abstains {
            return Vec::new();
        }
        let mut hits: Vec<Hit> = matched
            .into_iter()
            .filter(|&d| scores[d as usize] > 0.0)
            .map(|d| Hit {
                index: d as usize,
                score: scores[d as usize] / idf_one,
            })
            .collect();
        self.keep_best(&mut hits, max_results);
        hits.sort_unstable_by(|a, b| self.best_first(a, b));
        hits
    }

    /// The order of results: higher score first, then by name, then by position (ties are
    /// deterministic).
    pub(super) fn best_first(&self, a: &Hit, b: &Hit) -> std::cmp::Ordering {
        b.score
            .total_cmp(&a.score)
            .then_with(|| self.names[a.index].cmp(&self.names[b.index]))
            .then(a.index.cmp(&b.index))
    }

    /// Keeps the `k` first of `hits` in [`SearchIndex::best_first`] order, in no order.
    pub(super) fn keep_best(&self, hits: &mut Vec<Hit>, k: usize) {
        if k == 0 {
            hits.clear();
        } else if hits.len() > k {
            hits.select_nth_unstable_by(k - 1, |a, b| self.best_first(a, b));
            hits.truncate(k);
        }
    }

    fn avg_len(&self, visible: &[bool], n_visible: usize) -> [f32; NF] {
        let totals = if n_visible == self.names.len() {
            self.total_len
        } else {
            let mut t = [0u64; NF];
            for (lens, _) in self.field_len.iter().zip(visible).filter(|(_, v)| **v) {
                for f in 0..NF {
                    t[f] += u64::from(lens[f]);
                }
            }
            t
        };
        let mut avg = [0f32; NF];
        for f in 0..NF {
            avg[f] = totals[f] as f32 / n_visible as f32;
        }
        avg
    }
}
