//! The start-up rules across tools: every name and alias leads to exactly one tool, across
//! crates, providers and the search meta-tools; every pinned tool exists.

use std::collections::HashMap;
use std::sync::Arc;

use super::{CatalogProblem, CatalogTool, Exposure, NameClaim};
use crate::tool::built::MetaKind;

/// What breaks those rules, one line each, naming both sides of a conflict and where each was
/// declared.
pub(super) fn problems(
    tools: &[Arc<CatalogTool>],
    meta: &[Arc<CatalogTool<MetaKind>>],
    exposure: &Exposure,
) -> Vec<CatalogProblem> {
    let mut problems = Vec::new();
    // Every name and alias must lead to exactly one tool, across all crates and providers.
    let mut seen: HashMap<&str, (usize, bool)> = HashMap::new();
    for m in meta {
        seen.insert(m.name.as_str(), (usize::MAX, true));
    }
    for (i, tool) in tools.iter().enumerate() {
        let forms = std::iter::once((tool.name.as_str(), true))
            .chain(tool.aliases.iter().map(|a| (a.as_str(), false)));
        for (form, is_name) in forms {
            if let Some(&(j, other_is_name)) = seen.get(form) {
                let first = match tools.get(j) {
                    Some(t) => claim(t, other_is_name),
                    None => NameClaim::MetaTool,
                };
                problems.push(CatalogProblem::DuplicateName {
                    name: form.to_string(),
                    first,
                    second: claim(tool, is_name),
                });
            } else {
                seen.insert(form, (i, is_name));
            }
        }
    }
    if let Exposure::SearchFirst { pinned } = exposure {
        for p in pinned {
            if !tools.iter().any(|t| &t.name == p) {
                problems.push(CatalogProblem::PinnedMissing { name: p.clone() });
            }
        }
    }
    problems
}

/// `tool`'s claim on one of its forms: its name, or an alias.
fn claim(tool: &CatalogTool, is_name: bool) -> NameClaim {
    let (tool, origin) = (tool.name.clone(), tool.origin.clone());
    if is_name {
        NameClaim::Name { tool, origin }
    } else {
        NameClaim::Alias { tool, origin }
    }
}
