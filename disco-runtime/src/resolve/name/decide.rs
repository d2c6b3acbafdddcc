//! The guard of tier 4: whether the best candidate is applied, or only suggested (`MARGIN`,
//! `decide`).

use super::cost::UNIT;
use super::fuzzy::FuzzyCandidates;
use super::query::Query;
use super::{NameIndex, Resolution};

/// The smallest gap between the best candidate and the runner-up that counts as clear.
pub(super) const MARGIN: u32 = UNIT;

impl NameIndex {
    /// Applies the fuzzy tier's guards to a ranking: the best candidate must be good enough on
    /// its own, clearly better than every other visible tool (opposites included: a request
    /// halfway between `lock` and `unlock` is not clear), not opposed, and not destructive.
    pub(super) fn decide(&self, query: &Query, ranking: &FuzzyCandidates) -> Option<Resolution> {
        let ranked = &ranking.candidates;
        let best = ranked.first()?;
        if best.blocked || !best.correctable || self.destructive[best.tool] {
            return None;
        }
        if !ranking.complete && best.cost > UNIT {
            return None;
        }
        // "Clearly better": the runner-up differs by at least one more whole edit.
        if let Some(runner_up) = ranked.get(1) {
            if runner_up.cost < best.cost + MARGIN {
                return None;
            }
        }
        if self.opposed_tool(query, best.tool) {
            return None;
        }
        Some(Resolution::resolved(best.tool, best.rule))
    }
}
