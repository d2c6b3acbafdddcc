//! The start-up rules across tools: every name and alias leads to exactly one tool, across
//! crates, providers and the search meta-tools; every pinned tool exists.

use std::collections::HashMap;
use std::sync::Arc;

use super::{CatalogTool, Exposure};

/// What breaks those rules, one line each, naming both sides of a conflict and where each was
/// declared.
pub(super) fn problems(
    tools: &[Arc<CatalogTool>],
    meta: &[Arc<CatalogTool>],
    exposure: &Exposure,
) -> Vec<String> {
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
                let other = match tools.get(j) {
                    Some(t) => format!(
                        "{} of tool `{}` at {}",
                        if other_is_name {
                            "the name"
                        } else {
                            "an alias"
                        },
                        t.name,
                        t.origin
                    ),
                    None => "the name of a search meta-tool".to_string(),
                };
                problems.push(format!(
                    "`{form}` is {other} and {} of tool `{}` at {}",
                    if is_name { "the name" } else { "an alias" },
                    tool.name,
                    tool.origin
                ));
            } else {
                seen.insert(form, (i, is_name));
            }
        }
    }
    if let Exposure::SearchFirst { pinned } = exposure {
        for p in pinned {
            if !tools.iter().any(|t| &t.name == p) {
                problems.push(format!("pinned tool `{p}` is not in the catalog"));
            }
        }
    }
    problems
}
