//! What the catalog costs a model to read: estimated tokens of tools/list, and catalogs too
//! large to list whole.

use super::*;

pub(super) fn token_rules(catalog: &Catalog, options: &LintOptions, out: &mut Vec<Finding>) {
    // What an anonymous client receives, meta-tools included.
    let entries = catalog.list(&Caller::anonymous());
    let mut costs: Vec<(&str, usize)> = entries
        .iter()
        .map(|t| (&*t.name, estimated_tokens(t)))
        .collect();
    let total: usize = costs.iter().map(|c| c.1).sum();
    for &(name, cost) in &costs {
        if cost > options.max_tool_tokens {
            out.push(finding(
                Some(name),
                Severity::Warning,
                "tool-token-cost",
                format!(
                    "its tools/list entry costs about {cost} tokens (estimate: characters of its \
                     JSON / 4; threshold {}), paid on every request that lists tools",
                    options.max_tool_tokens
                ),
                "shorten the schema: fewer nested types, shorter field docs, enums instead of \
                 free-form objects; or split the tool"
                    .into(),
            ));
        }
    }
    costs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let heaviest = costs
        .iter()
        .take(3)
        .map(|(n, c)| format!("`{n}` {c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let count = costs.len();
    out.push(finding(
        None,
        Severity::Info,
        "token-cost",
        format!(
            "tools/list has {count} tool(s) costing about {total} tokens (estimate: characters \
             of each tool's JSON / 4); heaviest: {}",
            if heaviest.is_empty() {
                "none".into()
            } else {
                heaviest
            }
        ),
        "nothing to do; per-tool estimates are in the generated catalog docs".into(),
    ));
    if count > options.max_listed_tools || total > options.max_listed_tokens {
        out.push(finding(
            None,
            Severity::Warning,
            "catalog-too-large",
            format!(
                "{count} tools and about {total} tokens in tools/list (thresholds: {} tools, {} \
                 tokens). Tool selection accuracy degrades past 30-50 tools loaded at once, and \
                 50 tools can use 10-20K tokens (Anthropic, Agent SDK tool search docs); OpenAI's \
                 function-calling guide suggests fewer than 20 functions at a time",
                options.max_listed_tools, options.max_listed_tokens
            ),
            "expose the catalog search-first: list a few core tools plus the `tool_search` / \
             `execute_tool` meta-tools, and mark the rest `hidden`"
                .into(),
        ));
    }
}
