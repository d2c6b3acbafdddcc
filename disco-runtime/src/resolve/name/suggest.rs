//! Did you mean: the suggestions that come with an unknown name, at most `MAX_SUGGESTIONS`,
//! visible and never the opposite of the request.

use super::cost::UNIT;
use super::equivalent::Equivalence;
use super::query::Query;
use super::{NameIndex, Policy, Resolution, MAX_NAME_LEN};
use crate::text::similar;
use crate::text::words::char_len;

/// At most this many suggestions: enough for a model to pick from, short enough to read.
pub(super) const MAX_SUGGESTIONS: usize = 3;

/// Candidates costing more than this are not even worth suggesting.
pub(super) const SUGGEST_MAX_COST: u32 = 4 * UNIT;

/// Catalogs up to this size get a last-resort similarity scan for suggestions.
const SMALL_CATALOG: usize = 512;

impl NameIndex {
    pub(super) fn unknown_with_suggestions(
        &self,
        requested: &str,
        visible: &dyn Fn(usize) -> bool,
        policy: Policy,
    ) -> Resolution {
        if requested.len() > MAX_NAME_LEN {
            return Resolution::unknown(Vec::new());
        }
        let query = Query::new(requested);
        let mut suggestions = Vec::new();
        if policy != Policy::Off {
            match self.equivalent(&query, requested, visible) {
                Equivalence::One(tool, _) => suggestions.push(tool),
                Equivalence::Ambiguous(tools) => suggestions.extend(truncate(tools)),
                Equivalence::None => {}
            }
        }
        for candidate in self
            .fuzzy(&query, visible)
            .candidates
            .iter()
            .filter(|c| !c.blocked)
        {
            if candidate.cost > SUGGEST_MAX_COST || suggestions.len() == MAX_SUGGESTIONS {
                break;
            }
            if self.opposed_tool(&query, candidate.tool) {
                continue;
            }
            if !suggestions.contains(&candidate.tool) {
                suggestions.push(candidate.tool);
            }
        }
        self.fill_suggestions(&query, visible, &mut suggestions);
        Resolution::unknown(suggestions)
    }

    /// Last resort for small catalogs: names that look alike as strings.
    pub(super) fn fill_suggestions(
        &self,
        query: &Query,
        visible: &dyn Fn(usize) -> bool,
        suggestions: &mut Vec<usize>,
    ) {
        if suggestions.len() >= MAX_SUGGESTIONS
            || self.forms.len() > SMALL_CATALOG
            || char_len(&query.compact) < 3
        {
            return;
        }
        let mut scored: Vec<(u32, usize)> = Vec::new();
        for form in &self.forms {
            if suggestions.contains(&form.tool) || !visible(form.tool) {
                continue;
            }
            // The cheap string measure first: the opposites check is only worth running on
            // the few names that look alike.
            // Every spelling of the tool, not only the one that looks alike: a tool whose
            // name is the opposite of the request is not suggested through an alias.
            let similarity = similar::jaro_winkler(&query.compact, &form.compact);
            if similarity >= 0.8 && !self.opposed_tool(query, form.tool) {
                scored.push(((1000.0 * (1.0 - similarity)) as u32, form.tool));
            }
        }
        scored.sort_unstable();
        for (_, tool) in scored {
            if suggestions.len() == MAX_SUGGESTIONS {
                break;
            }
            if !suggestions.contains(&tool) {
                suggestions.push(tool);
            }
        }
    }
}

pub(super) fn truncate(mut tools: Vec<usize>) -> Vec<usize> {
    tools.truncate(MAX_SUGGESTIONS);
    tools
}
