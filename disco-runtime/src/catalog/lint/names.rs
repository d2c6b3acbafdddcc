//! Names and aliases across the catalog: equivalent, shadowing, redundant and confusable
//! spellings, and near-duplicate descriptions.

use super::words::*;
use super::*;

pub(super) fn spellings(tool: &CatalogTool) -> impl Iterator<Item = &str> {
    std::iter::once(tool.name.as_str()).chain(tool.aliases.iter().map(String::as_str))
}

pub(super) fn name_rules(tools: &[&CatalogTool], options: &LintOptions, out: &mut Vec<Finding>) {
    for tool in tools {
        redundant_aliases(tool, out);
    }
    for (i, a) in tools.iter().enumerate() {
        for (j, b) in tools.iter().enumerate() {
            if i == j {
                continue;
            }
            // Ordered pairs: each alias once.
            shadowing_aliases(a, b, out);
            if j < i {
                continue;
            }
            // Unordered pairs from here on.
            if let Some(f) = equivalent_names(a, b) {
                out.push(f);
            } else if let Some(f) = confusable_names(a, b, options) {
                out.push(f);
            }
        }
    }
}

/// Aliases that the spelling-equivalent tier already covers.
fn redundant_aliases(tool: &CatalogTool, out: &mut Vec<Finding>) {
    let own = normalised(&tool.name);
    for alias in &tool.aliases {
        if normalised(alias) == own {
            out.push(finding(
                Some(&tool.name),
                Severity::Info,
                "alias-redundant",
                format!(
                    "alias `{alias}` differs from the name only in case, separators, \
                     plurals or word order, which name resolution accepts anyway"
                ),
                format!("remove the alias `{alias}` (harmless, but it adds nothing)"),
            ));
        }
    }
}

/// The aliases of `a` that are a spelling of `b`.
fn shadowing_aliases(a: &CatalogTool, b: &CatalogTool, out: &mut Vec<Finding>) {
    for alias in &a.aliases {
        let n = normalised(alias);
        if let Some(other) = spellings(b).find(|s| normalised(s) == n) {
            let what = if other == b.name {
                format!("the name of `{}`", b.name)
            } else {
                format!("`{other}`, an alias of `{}`", b.name)
            };
            out.push(finding(
                Some(&a.name),
                Severity::Error,
                "alias-shadows",
                format!(
                    "alias `{alias}` is a spelling of {what} (equal after normalising \
                     case, separators, plurals and word order): a call spelled like \
                     `{other}` could reach either tool"
                ),
                format!("remove or rename the alias `{alias}`"),
            ));
        }
    }
}

/// Two names that name resolution reads as one spelling.
fn equivalent_names(a: &CatalogTool, b: &CatalogTool) -> Option<Finding> {
    if normalised(&a.name) != normalised(&b.name) {
        return None;
    }
    Some(finding(
        Some(&a.name),
        Severity::Error,
        "names-equivalent",
        format!(
            "`{}` and `{}` differ only in case, separators, plurals or word order: \
             name resolution treats these as one spelling",
            a.name, b.name
        ),
        format!(
            "rename one of them so the names say how `{}` and `{}` differ",
            a.name, b.name
        ),
    ))
}

/// Two tools with spellings close enough for a slip on one to land on the other.
fn confusable_names(a: &CatalogTool, b: &CatalogTool, options: &LintOptions) -> Option<Finding> {
    let (sa, sb, why) = confusable(a, b, options)?;
    let guard = if a.is_destructive() || b.is_destructive() {
        " (fuzzy correction never picks a destructive tool, but both will appear \
         in \"did you mean\" suggestions)"
    } else {
        ""
    };
    Some(finding(
        Some(&a.name),
        Severity::Warning,
        "names-confusable",
        format!(
            "`{sa}` and `{sb}` (tool `{}`) {why}: a model's slip on one can land on \
             the other, and a fuzzy match cannot tell them apart{guard}",
            b.name
        ),
        format!(
            "make the names differ in a whole word (`{}` vs `{}` should say what \
             distinguishes them), or drop the alias that is close",
            a.name, b.name
        ),
    ))
}

/// The closest pair of spellings of two tools, when close enough to confuse.
pub(super) fn confusable<'a>(
    a: &'a CatalogTool,
    b: &'a CatalogTool,
    options: &LintOptions,
) -> Option<(&'a str, &'a str, String)> {
    let mut best: Option<(f64, &str, &str, String)> = None;
    for sa in spellings(a) {
        for sb in spellings(b) {
            if normalised(sa) == normalised(sb) {
                // Reported as `alias-shadows`.
                continue;
            }
            let (ca, cb) = (compact(sa), compact(sb));
            let distance = strsim::damerau_levenshtein(&ca, &cb);
            let sim = strsim::normalized_damerau_levenshtein(&ca, &cb);
            if distance <= options.name_max_edits
                && sim >= options.name_similarity
                && best.as_ref().is_none_or(|b| sim > b.0)
            {
                let why = format!("are {distance} edit(s) apart ({:.0}% alike)", sim * 100.0);
                best = Some((sim, sa, sb, why));
            }
        }
    }
    best.map(|(_, sa, sb, why)| (sa, sb, why))
}

pub(super) fn similar_descriptions(
    tools: &[&CatalogTool],
    texts: &[Text],
    options: &LintOptions,
    out: &mut Vec<Finding>,
) {
    for i in 0..tools.len() {
        for j in i + 1..tools.len() {
            let sim = texts[i].resemblance(&texts[j]);
            if sim >= options.description_similarity {
                out.push(finding(
                    Some(&tools[i].name),
                    Severity::Warning,
                    "descriptions-similar",
                    format!(
                        "its description and `{}`'s are near-duplicates (Jaccard similarity \
                         {sim:.2} of their word pairs, threshold {:.2}): a model cannot tell the \
                         two tools apart",
                        tools[j].name, options.description_similarity
                    ),
                    format!(
                        "rewrite both to say what each does that the other does not, and when \
                         to pick `{}` rather than `{}`",
                        tools[i].name, tools[j].name
                    ),
                ));
            }
        }
    }
}
