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
        let visible = self.visible(allowed);
        let query = SearchIndex::query_text(query);
        if query.trim().is_empty() {
            return self.listed_by_name(&visible, max_results);
        }
        let n_visible = visible.iter().filter(|v| **v).count();
        if n_visible == 0 {
            return Vec::new();
        }
        // The idf of a word found in exactly one visible tool: the most a word can weigh here,
        // and the unit scores are expressed in.
        let idf_one = idf(n_visible as f32, 1.0);
        let mut tally = self.bm25f(query, &visible, n_visible);
        self.add_name_coverage(&mut tally, idf_one);
        // Keywords learned from traffic: a capped addition, as a field of its own would be.
        for (d, add) in self.learned_scores(query, &visible) {
            tally.add(d, add * idf_one);
        }
        let abstains = abstains(tally.best(), self.ranking.threshold, idf_one);
        #[cfg(feature = "semantic")]
        if let Some((semantic, vectors)) = self
            .semantic
            .as_ref()
            .and_then(|s| Some((s, s.ready()?)))
            .filter(|_| embedded.is_none_or(|e| e.has(query)))
        {
            let keywords = KeywordScores {
                matched: tally.matched,
                scores: tally.scores,
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
        self.keyword_hits(tally, idf_one, max_results)
    }

    /// Whether the caller may see each tool: `allowed`, asked once per tool.
    ///
    /// Not inlined: as a loop of its own it calls `allowed` in 7 instructions a tool, inlined
    /// into [`SearchIndex::search_embedded`] in 10 (BENCHMARKS.md, "The engine's named
    /// steps").
    #[inline(never)]
    fn visible(&self, allowed: &dyn Fn(usize) -> bool) -> Vec<bool> {
        (0..self.names.len()).map(allowed).collect()
    }

    /// What an empty query lists: the visible tools in name order, with score 0.
    fn listed_by_name(&self, visible: &[bool], max_results: usize) -> Vec<Hit> {
        self.by_name
            .iter()
            .filter(|&&d| visible[d as usize])
            .take(max_results)
            .map(|&d| Hit {
                index: d as usize,
                score: 0.0,
            })
            .collect()
    }

    /// Each query word's BM25F score in each visible tool it reaches (the best of its
    /// variants), weighted by the word and summed; with the name words each word matched,
    /// which the name-coverage bonus reads.
    fn bm25f(&self, query: &str, visible: &[bool], n_visible: usize) -> Tally {
        let r = &self.ranking;
        let norms = FieldNorms::new(&r.field_b, &self.avg_len(visible, n_visible));
        let n = n_visible as f32;
        let mut tally = Tally::new(self.names.len());
        let mut df_cache: HashMap<u32, f32> = HashMap::new();
        for w in &self.query_words(query) {
            for (&(term, vweight), &claims) in w.variants.iter().zip(&w.claims) {
                let postings = &self.postings[term as usize];
                let idf = *df_cache.entry(term).or_insert_with(|| {
                    let df = postings.iter().filter(|p| visible[p.doc as usize]).count() as f32;
                    if df == 0.0 {
                        0.0
                    } else {
                        idf(n, df)
                    }
                });
                if idf == 0.0 {
                    continue;
                }
                for p in postings.iter().filter(|p| visible[p.doc as usize]) {
                    let tf = norms.tf(&r.field_weight, &p.tf, &self.field_len[p.doc as usize]);
                    let in_name = claims && p.tf[F_NAME] != 0;
                    tally.reach(
                        p.doc,
                        term_score(vweight, idf, tf, r.k1),
                        in_name.then_some(vweight),
                    );
                }
            }
            tally.end_word(w.weight);
        }
        tally
    }

    /// A tool whose name the query spells out nearly word for word is very likely the one
    /// meant, even when its words are common in the catalog ("list servers" among many
    /// server tools): a bonus for the share of the name's words the query matched. One word
    /// is not enough: a one-word name ("search", "news") would win every query using it, nor
    /// are generic words alone ("help", "find"); one word and a synonym of another are ("find
    /// issues" for `search_issues`). The more words a query has, the likelier two of them
    /// meet some name by chance, so a long query's bonus is scaled down.
    fn add_name_coverage(&self, tally: &mut Tally, idf_one: f32) {
        let r = &self.ranking;
        let damping = (r.name_coverage_words / tally.reaching.max(1) as f32).min(1.0);
        for &d in &tally.matched {
            let d = d as usize;
            let len = f32::from(self.name_len[d].max(1));
            if tally.name_cover[d] >= NAME_COVERAGE_MIN && tally.name_strong[d] >= 1.0 {
                tally.scores[d] +=
                    r.name_coverage * idf_one * (tally.name_cover[d] / len).min(1.0) * damping;
            }
        }
    }

    /// The keyword ranking's hits: every matched tool, its score in distinctive words, the
    /// `max_results` best in [`SearchIndex::best_first`] order.
    fn keyword_hits(&self, tally: Tally, idf_one: f32, max_results: usize) -> Vec<Hit> {
        let scores = tally.scores;
        let mut hits: Vec<Hit> = tally
            .matched
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

/// BM25's inverse document frequency of a word found in `df` of `n` tools (the form that is
/// never negative).
fn idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// One variant of a query word in one tool: its BM25 saturation of the tool's field-weighted
/// term frequency `tf`, times the word's idf and the variant's weight (a synonym or a typo
/// counts for less than the word itself).
fn term_score(variant_weight: f32, idf: f32, tf: f32, k1: f32) -> f32 {
    variant_weight * idf * tf / (k1 + tf)
}

/// Abstain on the best score alone: when the best tool is a clear enough match, weaker ones
/// are still worth showing (the gold tool is often second or third); when it is not, showing
/// any would only mislead. Cutting each hit at the threshold instead costs far more recall for
/// the same abstention (measured: tests/corpus/search/README.md).
fn abstains(best: f32, threshold: f32, idf_one: f32) -> bool {
    best <= 0.0 || best < threshold * idf_one
}

/// BM25F's length normalisation, per field: `W_f / (1 - b_f + b_f * len / avg)`, kept as
/// `W_f / (c0 + c1 * len)`.
struct FieldNorms {
    c0: [f32; NF],
    c1: [f32; NF],
}

impl FieldNorms {
    fn new(field_b: &[f32; NF], avg_len: &[f32; NF]) -> Self {
        let mut c0 = [0f32; NF];
        let mut c1 = [0f32; NF];
        for f in 0..NF {
            c0[f] = 1.0 - field_b[f];
            c1[f] = if avg_len[f] > 0.0 {
                field_b[f] / avg_len[f]
            } else {
                0.0
            };
        }
        FieldNorms { c0, c1 }
    }

    /// A term's frequency in one tool over all its fields, each occurrence weighted by its
    /// field and normalised by the field's length.
    fn tf(&self, field_weight: &[f32; NF], tf: &[u8; NF], lens: &[u16; NF]) -> f32 {
        let mut sum = 0f32;
        for f in 0..NF {
            if tf[f] != 0 {
                sum += field_weight[f] * f32::from(tf[f])
                    / (self.c0[f] + self.c1[f] * f32::from(lens[f]));
            }
        }
        sum
    }
}

/// What the words of a query add up to, per tool (indexed by position in the index).
struct Tally {
    /// The keyword score: each word's best variant, weighted by the word, summed.
    scores: Vec<f32>,
    /// The word being read: its best variant's score in each tool it reached.
    best: Vec<f32>,
    /// The word being read: the weight of its best variant found in each tool's name, among
    /// the variants that claim their term for name coverage.
    name_best: Vec<f32>,
    /// The name words the query matched, summed over its words (as weights).
    name_cover: Vec<f32>,
    /// The same, over the query's full-weight (not generic) words.
    name_strong: Vec<f32>,
    /// The tools the word being read reached.
    touched: Vec<u32>,
    /// The tools with a score, in the order they were first reached.
    matched: Vec<u32>,
    /// How many words reached a tool the caller may see: the query's length as ranking
    /// counts it, so that what hidden tools contain does not change a visible score.
    reaching: usize,
}

impl Tally {
    fn new(tools: usize) -> Self {
        Tally {
            scores: vec![0f32; tools],
            best: vec![0f32; tools],
            name_best: vec![0f32; tools],
            name_cover: vec![0f32; tools],
            name_strong: vec![0f32; tools],
            touched: Vec::new(),
            matched: Vec::new(),
            reaching: 0,
        }
    }

    /// One variant of the word being read reached tool `doc` with `score`; `in_name`: the
    /// variant's weight when it matched a word of the tool's name and claims it.
    ///
    /// Inlined: it runs once per posting of every query word, and as a call of its own it
    /// cost search 3% of its instructions among 10,000 tools (BENCHMARKS.md, "The engine's
    /// named steps"). The tool's best so far is found once (one bounds check), before the
    /// push that would otherwise make it be looked up again.
    #[inline]
    fn reach(&mut self, doc: u32, score: f32, in_name: Option<f32>) {
        let d = doc as usize;
        let best = &mut self.best[d];
        if *best == 0.0 {
            self.touched.push(doc);
        }
        if score > *best {
            *best = score;
        }
        if let Some(weight) = in_name {
            if weight > self.name_best[d] {
                self.name_best[d] = weight;
            }
        }
    }

    /// The word being read is done: its best variants are added, with its `weight`.
    ///
    /// The per-tool columns are cut to one length first: each tool is then checked against
    /// that length once, not once per column, and each column's start and length are read once
    /// a word, not again after every write to another column (read as fields of `self` they
    /// cost about 6% of a search among 10,000 tools; BENCHMARKS.md, "The engine's named
    /// steps").
    #[inline]
    fn end_word(&mut self, weight: f32) {
        let n = self.scores.len();
        let scores = &mut self.scores[..];
        let best = &mut self.best[..n];
        let name_best = &mut self.name_best[..n];
        let name_cover = &mut self.name_cover[..n];
        let name_strong = &mut self.name_strong[..n];
        for &d in &self.touched {
            let d = d as usize;
            if scores[d] == 0.0 {
                self.matched.push(d as u32);
            }
            scores[d] += weight * best[d];
            name_cover[d] += name_best[d];
            if weight >= 1.0 {
                name_strong[d] += name_best[d];
            }
            best[d] = 0.0;
            name_best[d] = 0.0;
        }
        if !self.touched.is_empty() {
            self.reaching += 1;
        }
        self.touched.clear();
    }

    /// Adds `score` to tool `d` outside of the words (learned keywords).
    fn add(&mut self, d: usize, score: f32) {
        if self.scores[d] == 0.0 {
            self.matched.push(d as u32);
        }
        self.scores[d] += score;
    }

    /// The best score so far.
    fn best(&self) -> f32 {
        self.matched
            .iter()
            .map(|&d| self.scores[d as usize])
            .fold(0f32, f32::max)
    }
}
