//! Every rule a tool must satisfy, one function per rule. Each rule reports into the shared
//! error list with the span of the mistake and goes on, so one compile shows every problem.

use std::collections::HashMap;

use proc_macro2::Span;

use crate::ast::{merge_param_attr, ParamKind, ToolFn};
use crate::attr::{DefaultValue, Errors, Spanned};

/// Runs every rule. `params(...)` from the tool attribute is merged into the parameters first,
/// so that the later rules see one description, alias list and default per parameter.
pub fn check(tool: &mut ToolFn, errors: &mut Errors) {
    merge_params_list(tool, errors);
    description_present(tool, errors);
    tool_name_valid(tool, errors);
    aliases_valid(tool, errors);
    keywords_valid(tool, errors);
    doc_arguments_exist(tool, errors);
    extractors_take_no_settings(tool, errors);
    param_aliases_valid(tool, errors);
    option_has_no_default(tool, errors);
    annotations_consistent(tool, errors);
    timeout_positive(tool, errors);
}

/// The name the tool is published under.
pub fn tool_name(tool: &ToolFn) -> Spanned<String> {
    match &tool.attr.name {
        Some(name) => name.clone(),
        None => Spanned {
            value: tool.item.sig.ident.to_string(),
            span: tool.item.sig.ident.span(),
        },
    }
}

fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score > 0.75)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

fn param_names(tool: &ToolFn) -> String {
    let names: Vec<String> = tool
        .params
        .iter()
        .filter(|p| p.is_argument())
        .map(|p| format!("`{}`", p.ident))
        .collect();
    if names.is_empty() {
        "it has no JSON parameters".to_string()
    } else {
        format!("its parameters are {}", names.join(", "))
    }
}

/// `params(name(...))` must name a parameter of the function.
fn merge_params_list(tool: &mut ToolFn, errors: &mut Errors) {
    let list = std::mem::take(&mut tool.attr.params);
    for (ident, settings) in list {
        let name = ident.to_string();
        match tool.params.iter().position(|p| p.ident == name) {
            Some(i) => merge_param_attr(&mut tool.params[i].attr, settings, ident.span(), errors),
            None => {
                let hint = closest(
                    &name,
                    tool.params
                        .iter()
                        .filter(|p| p.is_argument())
                        .map(|p| p.ident.to_string())
                        .collect::<Vec<_>>()
                        .iter()
                        .map(String::as_str),
                )
                .map(|c| format!("did you mean `{c}`? "))
                .unwrap_or_default();
                errors.push(
                    ident.span(),
                    format!(
                        "`params({name}(...))` names no parameter of this function; {hint}{}",
                        param_names(tool)
                    ),
                );
            }
        }
    }
}

/// Descriptions are the interface: a model chooses tools by them.
fn description_present(tool: &ToolFn, errors: &mut Errors) {
    let has_override = tool
        .attr
        .description
        .as_ref()
        .is_some_and(|d| !d.value.trim().is_empty());
    if let Some(d) = &tool.attr.description {
        if d.value.trim().is_empty() {
            errors.push(
                d.span,
                "`description` is empty: say what the tool does and when to use it",
            );
            return;
        }
    }
    if !has_override && tool.docs.description.trim().is_empty() {
        errors.push(
            tool.item.sig.ident.span(),
            format!(
                "tool `{}` has no description: a model chooses tools by their descriptions. Add a \
                 doc comment (`/// ...`) that says what it does, what it returns and when to use \
                 it, or `#[mcp_tool(description = \"...\")]`",
                tool.item.sig.ident
            ),
        );
    }
}

/// MCP tool names: 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
fn name_rule(value: &str) -> Option<String> {
    if value.is_empty() {
        return Some("is empty".to_string());
    }
    if value.len() > 128 {
        return Some(format!("is {} characters long (at most 128)", value.len()));
    }
    let bad: Vec<String> = value
        .chars()
        .filter(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .map(|c| format!("{c:?}"))
        .collect();
    if bad.is_empty() {
        None
    } else {
        Some(format!(
            "contains {}; use only letters, digits, `_`, `-` and `.`",
            bad.join(", ")
        ))
    }
}

fn tool_name_valid(tool: &ToolFn, errors: &mut Errors) {
    if let Some(name) = &tool.attr.name {
        if let Some(problem) = name_rule(&name.value) {
            errors.push(name.span, format!("tool name `{}` {problem}", name.value));
        }
    }
}

fn aliases_valid(tool: &ToolFn, errors: &mut Errors) {
    let name = tool_name(tool).value;
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for alias in &tool.attr.aliases {
        if let Some(problem) = name_rule(&alias.value) {
            errors.push(alias.span, format!("alias `{}` {problem}", alias.value));
        } else if alias.value == name {
            errors.push(
                alias.span,
                format!("alias `{}` is the tool's own name; remove it", alias.value),
            );
        } else if seen.insert(&alias.value, alias.span).is_some() {
            errors.push(
                alias.span,
                format!("alias `{}` is given more than once", alias.value),
            );
        }
    }
}

fn keywords_valid(tool: &ToolFn, errors: &mut Errors) {
    let mut seen: HashMap<String, ()> = HashMap::new();
    for keyword in &tool.attr.keywords {
        if keyword.value.trim().is_empty() {
            errors.push(keyword.span, "a keyword cannot be empty");
        } else if seen
            .insert(keyword.value.trim().to_lowercase(), ())
            .is_some()
        {
            errors.push(
                keyword.span,
                format!("keyword `{}` is given more than once", keyword.value),
            );
        }
    }
}

/// A `# Arguments` entry for a parameter that does not exist is stale documentation that a
/// model would read as a promise.
fn doc_arguments_exist(tool: &ToolFn, errors: &mut Errors) {
    for doc in &tool.docs.params {
        let param = tool.params.iter().find(|p| p.ident == doc.name.as_str());
        match param {
            Some(p) if p.is_argument() => {}
            Some(_) => errors.push(
                doc.span.0,
                format!(
                    "`# Arguments` documents `{}`, which is an extractor, not a JSON parameter; \
                     remove that line",
                    doc.name
                ),
            ),
            None => errors.push(
                doc.span.0,
                format!(
                    "`# Arguments` documents `{}`, but the function has no such parameter; {}",
                    doc.name,
                    param_names(tool)
                ),
            ),
        }
    }
}

fn extractors_take_no_settings(tool: &ToolFn, errors: &mut Errors) {
    for p in &tool.params {
        if p.is_argument() {
            continue;
        }
        let has_settings =
            p.attr.description.is_some() || p.attr.default.is_some() || !p.attr.aliases.is_empty();
        if has_settings {
            let what = match p.kind {
                ParamKind::State => "`State<T>`",
                _ => "`Context`",
            };
            errors.push(
                p.attr_span.unwrap_or(p.ident.span()),
                format!(
                    "`{}` is a {what} extractor, not a JSON parameter: it takes no description, \
                     alias or default",
                    p.ident
                ),
            );
        }
    }
}

/// Parameter aliases rename keys a model sent: each alias must lead to exactly one parameter.
fn param_aliases_valid(tool: &ToolFn, errors: &mut Errors) {
    let mut owner: HashMap<String, String> = HashMap::new();
    for p in tool.params.iter().filter(|p| p.is_argument()) {
        owner.insert(p.ident.to_string(), p.ident.to_string());
    }
    for p in tool.params.iter().filter(|p| p.is_argument()) {
        let name = p.ident.to_string();
        for alias in &p.attr.aliases {
            if let Some(problem) = name_rule(&alias.value) {
                errors.push(
                    alias.span,
                    format!("parameter alias `{}` {problem}", alias.value),
                );
                continue;
            }
            match owner.get(&alias.value) {
                Some(other) if *other == name && alias.value == name => errors.push(
                    alias.span,
                    format!("alias `{}` is the parameter's own name; remove it", alias.value),
                ),
                Some(other) if *other == name => errors.push(
                    alias.span,
                    format!("alias `{}` is given more than once", alias.value),
                ),
                Some(other) if *other == alias.value => errors.push(
                    alias.span,
                    format!(
                        "alias `{}` of parameter `{name}` is the name of another parameter",
                        alias.value
                    ),
                ),
                Some(other) => errors.push(
                    alias.span,
                    format!(
                        "alias `{}` of parameter `{name}` is already an alias of parameter `{other}`",
                        alias.value
                    ),
                ),
                None => {
                    owner.insert(alias.value.clone(), name.clone());
                }
            }
        }
    }
}

fn option_has_no_default(tool: &ToolFn, errors: &mut Errors) {
    for p in &tool.params {
        if let (
            ParamKind::Argument {
                inner_option: Some(_),
            },
            Some(default),
        ) = (&p.kind, &p.attr.default)
        {
            errors.push(
                default.span(),
                format!(
                    "`{}` is an `Option`, which is already optional (absent = `None`); to give it \
                     a default value, declare it as the inner type with `default = ...`",
                    p.ident
                ),
            );
        }
        if let (ParamKind::Argument { .. }, Some(DefaultValue::Literal(lit))) =
            (&p.kind, &p.attr.default)
        {
            if !matches!(
                lit,
                syn::Lit::Str(_) | syn::Lit::Int(_) | syn::Lit::Float(_) | syn::Lit::Bool(_)
            ) {
                errors.push(
                    lit.span(),
                    "a default literal must be a string, a number or a boolean",
                );
            }
        }
    }
}

/// MCP annotations that contradict each other mislead every client that reads them.
fn annotations_consistent(tool: &ToolFn, errors: &mut Errors) {
    let a = &tool.attr;
    if let (Some(ro), Some(d)) = (a.read_only, a.destructive) {
        if ro.value && d.value {
            errors.push(
                d.span,
                "a tool cannot be both `read_only` and `destructive`: a read-only tool changes \
                 nothing, so it destroys nothing",
            );
        }
    }
}

fn timeout_positive(tool: &ToolFn, errors: &mut Errors) {
    if let Some(t) = &tool.attr.timeout_ms {
        if t.value == 0 {
            errors.push(t.span, "`timeout_ms` must be at least 1");
        }
    }
}
