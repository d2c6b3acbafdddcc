//! Ranking for coverage: a request with several parts ("the stock price of Apple and any
//! recent news") should surface a tool for each part, not five tools for the part with the
//! strongest words. Greedy, as maximal marginal relevance is, but over the query's words rather
//! than over the tools' similarity: after a result, the words it matched count for less in the
//! results after it.

use std::collections::HashMap;

use super::{Hit, SearchIndex};

/// Candidates re-ranked per result asked for: a tool that answers another part of the request
/// is rarely far down the ranking, and the bound keeps the work per query small.
const POOL_PER_RESULT: usize = 4;
/// The fewest candidates re-ranked, for small `max_results`.
const POOL_MIN: usize = 12;

impl SearchIndex {
    /// `hits` (unordered, every matching tool) re-ranked for coverage: the best-scoring tool
    /// first, then each time the candidate whose matches add the most, a query word weighing
    /// `1 - coverage * answered`, `answered` being the best share of that word's strongest
    /// match (among the candidates) that a result before it reached. `parts[w]` lists what
    /// query word `w` added to each tool it reached. The scores returned are the re-ranked
    /// ones, so they never rise down the list.
    pub(super) fn covering(
        &self,
        mut hits: Vec<Hit>,
        parts: &[Vec<(u32, f32)>],
        max_results: usize,
        idf_one: f32,
    ) -> Vec<Hit> {
        let pool = max_results
            .saturating_mul(POOL_PER_RESULT)
            .max(POOL_MIN)
            .max(max_results);
        self.keep_best(&mut hits, pool);
        hits.sort_unstable_by(|a, b| self.best_first(a, b));
        let slot: HashMap<u32, usize> = hits
            .iter()
            .enumerate()
            .map(|(i, h)| (h.index as u32, i))
            .collect();
        // share[i][w]: what word w added to candidate i; the rest of its score (the name
        // bonus) is not a word's and is kept whole.
        let words = parts.len();
        let mut share = vec![0f32; hits.len() * words];
        for (w, part) in parts.iter().enumerate() {
            for &(d, s) in part {
                if let Some(&i) = slot.get(&d) {
                    share[i * words + w] = s / idf_one;
                }
            }
        }
        let mut strongest = vec![0f32; words];
        for i in 0..hits.len() {
            for w in 0..words {
                strongest[w] = strongest[w].max(share[i * words + w]);
            }
        }
        let rest: Vec<f32> = (0..hits.len())
            .map(|i| hits[i].score - share[i * words..(i + 1) * words].iter().sum::<f32>())
            .collect();
        let weight = self.ranking.coverage;
        let mut answered = vec![0f32; words];
        let mut taken = vec![false; hits.len()];
        let mut out = Vec::with_capacity(max_results.min(hits.len()));
        while out.len() < max_results {
            // The candidates are in best-first order, so a tie keeps that order.
            let mut pick: Option<(usize, f32)> = None;
            for i in (0..hits.len()).filter(|&i| !taken[i]) {
                let gain: f32 = (0..words)
                    .map(|w| share[i * words + w] * (1.0 - weight * answered[w]))
                    .sum::<f32>()
                    + rest[i];
                if pick.is_none_or(|(_, g)| gain > g) {
                    pick = Some((i, gain));
                }
            }
            let Some((i, gain)) = pick else { break };
            taken[i] = true;
            for w in 0..words {
                if strongest[w] > 0.0 {
                    answered[w] = answered[w].max(share[i * words + w] / strongest[w]);
                }
            }
            out.push(Hit {
                index: hits[i].index,
                score: gain,
            });
        }
        out
    }
}
