//! Aliases learned from traffic (`crate::learn`), opted into with
//! [`Catalog::set_learned_aliases`]: a tier of its own after the spelling-equivalent tier and
//! before the fuzzy one. A learned alias is used only when the name is otherwise unknown or
//! only fuzzily matched: it never shadows a tool's name, a declared alias, a spelling
//! equivalent or a namespace prefix. It reaches only a read-only tool the caller can see;
//! when two visible tools hold the same learned alias, neither is chosen. A tool held for
//! approval is out of the catalog, so an alias to it stays inert until it is approved.

use std::collections::HashMap;
use std::sync::Arc;

use super::{Catalog, View};
use crate::resolve::name::{Outcome, Resolution, Rule};

/// Learned name -> the tools it was learned for.
pub(crate) type LearnedAliases = HashMap<String, Vec<String>>;

impl Catalog {
    /// Sets the aliases learned from traffic, `(name, tool)` each (see
    /// [`crate::learn::learned_aliases`]); only those to a read-only tool are kept. Replaces
    /// the previous set; catalogs rebuilt from this one keep it.
    pub fn set_learned_aliases(&self, aliases: Vec<(String, String)>) {
        let mut map = LearnedAliases::new();
        for (name, tool) in aliases {
            let read_only = self
                .get(&tool)
                .is_some_and(|t| t.annotations.read_only == Some(true));
            if read_only {
                let tools = map.entry(name).or_default();
                if !tools.contains(&tool) {
                    tools.push(tool);
                }
            }
        }
        *crate::util::write(&self.config.learned_aliases) = Arc::new(map);
    }
}

impl View<'_> {
    /// The learned-alias tier over the ladder's outcome: only an unknown name or a fuzzy
    /// match gives way to it.
    pub(super) fn learned_alias(&self, requested: &str, resolution: Resolution) -> Resolution {
        let taken = match resolution.outcome {
            Outcome::Unknown => false,
            Outcome::Resolved { rule, .. } => !rule.is_fuzzy(),
        };
        if taken {
            return resolution;
        }
        let here = self.catalog();
        let learned = crate::util::read(&here.config.learned_aliases).clone();
        let Some(tools) = learned.get(requested) else {
            return resolution;
        };
        let mut seen = tools.iter().filter_map(|name| {
            let &i = here.lookup.get(name.as_str())?;
            let tool = &here.tools[i];
            (tool.annotations.read_only == Some(true) && self.can_see(tool)).then_some(i)
        });
        match (seen.next(), seen.next()) {
            (Some(index), None) => Resolution {
                outcome: Outcome::Resolved {
                    index,
                    rule: Rule::LearnedAlias,
                },
                suggestions: Vec::new(),
            },
            _ => resolution,
        }
    }
}
