//! Every rule a tool must satisfy, one function per rule. Each rule reports into the shared
//! error list with the span of the mistake and goes on, so one compile shows every problem.

use std::collections::HashMap;

use proc_macro2::Span;
use syn::ext::IdentExt as _;

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
    group_valid(tool, errors);
    doc_arguments_exist(tool, errors);
    extractors_take_no_settings(tool, errors);
    param_aliases_valid(tool, errors);
    flatten_valid(tool, errors);
    option_has_no_default(tool, errors);
    default_literal_fits(tool, errors);
    annotations_consistent(tool, errors);
    timeout_positive(tool, errors);
}

/// The name the tool is published under: `name = "..."`, else the function's name without
/// `r#` (`fn r#match` is the tool `match`).
pub fn tool_name(tool: &ToolFn) -> Spanned<String> {
    match &tool.attr.name {
        Some(name) => name.clone(),
        None => Spanned {
            value: tool.item.sig.ident.unraw().to_string(),
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
        .map(|p| format!("`{}`", p.name()))
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
        let name = ident.unraw().to_string();
        match tool.params.iter().position(|p| p.name() == name) {
            Some(i) => merge_param_attr(&mut tool.params[i].attr, settings, &name, errors),
            None => {
                let names: Vec<String> = tool
                    .params
                    .iter()
                    .filter(|p| p.is_argument())
                    .map(|p| p.name())
                    .collect();
                let hint = closest(&name, names.iter().map(String::as_str))
                    .map(|c| format!("did you mean `{c}`? "))
                    .unwrap_or_default();
                errors.push(
                    ident.span(),
                    format!(
                        "`params({name}(...))`: the function has no parameter `{name}`; {hint}({})",
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

fn name_char_ok(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// MCP tool names (and, in disco, every alias): 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
/// Clients reject other names, and models copy them back character for character. `what`
/// names the thing in the message ("tool name", "alias").
fn name_rule(what: &str, value: &str) -> Option<String> {
    const RULE: &str = "MCP names are 1 to 128 characters of `A-Z a-z 0-9 _ - .`";
    if value.is_empty() {
        return Some(format!("the {what} is empty; {RULE}"));
    }
    let len = value.chars().count();
    if len > 128 {
        let start: String = value.chars().take(24).collect();
        return Some(format!(
            "the {what} `{start}...` is {len} characters long; {RULE}"
        ));
    }
    let mut bad: Vec<String> = Vec::new();
    for c in value.chars().filter(|c| !name_char_ok(*c)) {
        let shown = format!("{c:?}");
        if !bad.contains(&shown) {
            bad.push(shown);
        }
    }
    if bad.is_empty() {
        return None;
    }
    // A suggestion only when the fix is obvious: ASCII separators become `_`.
    let suggestion = if value.is_ascii() {
        let mut fixed = String::new();
        for c in value.chars() {
            let c = if name_char_ok(c) { c } else { '_' };
            if !(c == '_' && fixed.ends_with('_')) {
                fixed.push(c);
            }
        }
        let fixed = fixed.trim_matches('_');
        if fixed.is_empty() {
            String::new()
        } else {
            format!(", e.g. `{fixed}`")
        }
    } else {
        String::new()
    };
    Some(format!(
        "the {what} `{value}` contains {}; {RULE}{suggestion}",
        bad.join(", ")
    ))
}

fn tool_name_valid(tool: &ToolFn, errors: &mut Errors) {
    match &tool.attr.name {
        Some(name) => {
            if let Some(problem) = name_rule("tool name", &name.value) {
                errors.push(name.span, problem);
            }
        }
        // The function's name is the tool's name: a Rust identifier may be longer than 128
        // characters or hold non-ASCII letters, and neither is a valid MCP name.
        None => {
            let name = tool_name(tool);
            if let Some(problem) = name_rule("tool name", &name.value) {
                errors.push(
                    name.span,
                    format!(
                        "{problem}; the tool is named after the function, so rename it or set \
                         `#[mcp_tool(name = \"...\")]`"
                    ),
                );
            }
        }
    }
}

fn aliases_valid(tool: &ToolFn, errors: &mut Errors) {
    let name = tool_name(tool).value;
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for alias in &tool.attr.aliases {
        if let Some(problem) = name_rule("alias", &alias.value) {
            errors.push(alias.span, problem);
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

/// The longest group name, in characters: a group is a heading of the server's instructions,
/// which clients cut at 4 KiB, and of `tool_search`'s description.
const GROUP_MAX_CHARS: usize = 64;

/// A group name is a word a model reads in a list and copies into a query: 1 to 64 characters
/// of `A-Z a-z 0-9 _ - .`, beginning and ending with a letter or a digit. The same rule is
/// applied to providers' groups when a catalog is built (`disco_runtime::catalog::group_problem`).
fn group_valid(tool: &ToolFn, errors: &mut Errors) {
    let Some(group) = &tool.attr.group else {
        return;
    };
    const RULE: &str = "a group is 1 to 64 characters of `A-Z a-z 0-9 _ - .`, beginning and \
                        ending with a letter or a digit";
    let value = group.value.as_str();
    if value.trim().is_empty() {
        errors.push(
            group.span,
            format!(
                "`group` is empty: name the group the tool belongs to (`group = \"notes\"`), or \
                 leave the key out to group the tool by its module; {RULE}"
            ),
        );
        return;
    }
    let len = value.chars().count();
    if len > GROUP_MAX_CHARS {
        let start: String = value.chars().take(24).collect();
        errors.push(
            group.span,
            format!("the group `{start}...` is {len} characters long; {RULE}"),
        );
        return;
    }
    let mut bad: Vec<String> = Vec::new();
    for c in value.chars().filter(|c| !name_char_ok(*c)) {
        let shown = format!("{c:?}");
        if !bad.contains(&shown) {
            bad.push(shown);
        }
    }
    let fixed = {
        let mut fixed = String::new();
        for c in value.chars() {
            let c = if c.is_ascii_alphanumeric() || matches!(c, '-' | '.') {
                c
            } else {
                '_'
            };
            if !(c == '_' && fixed.ends_with('_')) {
                fixed.push(c);
            }
        }
        fixed
            .trim_matches(|c: char| !c.is_ascii_alphanumeric())
            .to_string()
    };
    let suggestion = if fixed.is_empty() || !value.is_ascii() {
        String::new()
    } else {
        format!(", e.g. `{fixed}`")
    };
    if !bad.is_empty() {
        errors.push(
            group.span,
            format!(
                "the group `{value}` contains {}; {RULE}{suggestion}",
                bad.join(", ")
            ),
        );
    } else if !value.starts_with(|c: char| c.is_ascii_alphanumeric())
        || !value.ends_with(|c: char| c.is_ascii_alphanumeric())
    {
        errors.push(
            group.span,
            format!("the group `{value}` begins or ends with a separator; {RULE}{suggestion}"),
        );
    }
}

/// A `# Arguments` entry for a parameter that does not exist is stale documentation that a
/// model would read as a promise.
fn doc_arguments_exist(tool: &ToolFn, errors: &mut Errors) {
    for doc in &tool.docs.params {
        let param = tool.params.iter().find(|p| p.name() == doc.name);
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
            None => {
                // A field of a flattened struct is a parameter the macro cannot see.
                let flattened = tool
                    .params
                    .iter()
                    .find(|p| p.is_argument() && p.attr.is_flattened())
                    .map(|p| {
                        format!(
                            "; if `{}` is a field of the flattened `{}`, describe it with a doc \
                             comment on the field",
                            doc.name,
                            p.name()
                        )
                    })
                    .unwrap_or_default();
                errors.push(
                    doc.span.0,
                    format!(
                        "`# Arguments` documents `{}`, but the function has no such parameter; \
                         {}{flattened}",
                        doc.name,
                        param_names(tool)
                    ),
                )
            }
        }
    }
}

/// Extractors are filled by the server, never sent by a model, so settings on them are a
/// mistake (probably meant for another parameter). The error points at the first setting,
/// wherever it was written (`#[param(...)]` or `params(...)`).
fn extractors_take_no_settings(tool: &ToolFn, errors: &mut Errors) {
    for p in &tool.params {
        if p.is_argument() {
            continue;
        }
        let first_setting = p
            .attr
            .description
            .as_ref()
            .map(|d| d.span)
            .into_iter()
            .chain(p.attr.aliases.iter().map(|a| a.span))
            .chain(p.attr.default.as_ref().map(DefaultValue::span))
            .chain(p.attr.flatten.map(|f| f.span))
            .next();
        if let Some(span) = first_setting {
            let what = match p.kind {
                ParamKind::State => "`State<T>`",
                _ => "`Context`",
            };
            errors.push(
                span,
                format!(
                    "`{}` is a {what} extractor filled by the server, not a JSON parameter: it \
                     takes no description, alias, default or flatten",
                    p.name()
                ),
            );
        }
    }
}

/// Parameter aliases rename keys a model sent: each alias must lead to exactly one parameter.
fn param_aliases_valid(tool: &ToolFn, errors: &mut Errors) {
    let mut owner: HashMap<String, String> = HashMap::new();
    for p in tool.params.iter().filter(|p| p.is_argument()) {
        owner.insert(p.name(), p.name());
    }
    for p in tool.params.iter().filter(|p| p.is_argument()) {
        let name = p.name();
        for alias in &p.attr.aliases {
            if let Some(problem) = name_rule("parameter alias", &alias.value) {
                errors.push(alias.span, problem);
                continue;
            }
            match owner.get(&alias.value) {
                Some(other) if *other == name && alias.value == name => errors.push(
                    alias.span,
                    format!(
                        "alias `{}` is the parameter's own name; remove it",
                        alias.value
                    ),
                ),
                Some(other) if *other == name => errors.push(
                    alias.span,
                    format!(
                        "alias `{}` of parameter `{name}` is given more than once",
                        alias.value
                    ),
                ),
                Some(other) if *other == alias.value => errors.push(
                    alias.span,
                    format!(
                        "alias `{}` of parameter `{name}` is the name of parameter `{other}`: a \
                         model sending `{other}` would be ambiguous",
                        alias.value
                    ),
                ),
                Some(other) => errors.push(
                    alias.span,
                    format!(
                        "alias `{}` of parameter `{name}` is already an alias of parameter \
                         `{other}`: a model sending it would be ambiguous",
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

/// A flattened parameter is a struct whose fields are the tool's parameters (serde's
/// `#[serde(flatten)]`): its own name is never a key, so the settings of a key make no sense on
/// it, and only one struct's fields can be the top level. Whether a field has the name of
/// another parameter depends on the struct, which the macro cannot see: the catalog checks
/// that when it is built.
fn flatten_valid(tool: &ToolFn, errors: &mut Errors) {
    let mut first: Option<String> = None;
    for p in tool.params.iter().filter(|p| p.is_argument()) {
        let Some(flag) = p.attr.flatten.filter(|f| f.value) else {
            continue;
        };
        let name = p.name();
        let its_fields = "its fields are the tool's parameters and its own name is never a key";
        if let Some(alias) = p.attr.aliases.first() {
            errors.push(
                alias.span,
                format!("`{name}` is flattened, so it takes no alias: {its_fields}"),
            );
        }
        if let Some(default) = &p.attr.default {
            errors.push(
                default.span(),
                format!(
                    "`{name}` is flattened, so it takes no default: {its_fields}; let the fields \
                     that may be left out be `Option`s or `#[serde(default)]`"
                ),
            );
        }
        if let Some(d) = &p.attr.description {
            errors.push(
                d.span,
                format!(
                    "`{name}` is flattened, so it takes no description: its fields are the \
                     tool's parameters, each described by the doc comment on it in the struct"
                ),
            );
        }
        if let Some(doc) = tool.docs.params.iter().find(|d| d.name == name) {
            errors.push(
                doc.span.0,
                format!(
                    "`# Arguments` documents `{name}`, which is flattened: its fields are the \
                     tool's parameters, each described by the doc comment on it in the struct; \
                     remove that line"
                ),
            );
        }
        if let ParamKind::Argument {
            inner_option: Some(_),
        } = &p.kind
        {
            errors.push_spanned(
                &p.ty,
                format!(
                    "`{name}` is flattened, so it cannot be an `Option`: make the struct's fields \
                     optional instead (`Option` fields, or `#[serde(default)]`)"
                ),
            );
        } else if let Some(kind) = not_a_struct(&p.ty) {
            errors.push_spanned(
                &p.ty,
                format!(
                    "`{name}` cannot be flattened: it is {kind}, and only a struct with named \
                     fields can be (its fields become the tool's parameters)"
                ),
            );
        }
        match &first {
            Some(other) => errors.push(
                flag.span,
                format!(
                    "`{other}` is flattened already, and only one parameter can be: the fields \
                     of one struct are the tool's top level; remove `flatten` and send `{name}` \
                     nested under its name"
                ),
            ),
            None => first = Some(name),
        }
    }
}

/// What a type that is certainly not a struct is (`a number`, `a list`), from its tokens.
fn not_a_struct(ty: &syn::Type) -> Option<&'static str> {
    match ty {
        syn::Type::Tuple(_) => return Some("a tuple"),
        syn::Type::Array(_) | syn::Type::Slice(_) => return Some("a list"),
        syn::Type::Paren(p) => return not_a_struct(&p.elem),
        syn::Type::Group(g) => return not_a_struct(&g.elem),
        _ => {}
    }
    if let Some(primitive) = primitive(ty) {
        return Some(match primitive.as_str() {
            "bool" => "a boolean",
            "String" => "a string",
            _ => "a number",
        });
    }
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?.ident.to_string();
    match last.as_str() {
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => Some("a list"),
        "HashMap" | "BTreeMap" => Some("a map"),
        _ => None,
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
                    p.name()
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
                    "a default literal is read as JSON, so it must be a string, a number or a \
                     boolean; write any other value as an expression of the parameter's type",
                );
            }
        }
    }
}

/// The primitive a parameter's type names, when the macro can tell it from the tokens alone
/// (`u32`, `f64`, `bool`, `String`, or `std::string::String`). `None` for every other type: a
/// literal default of an enum or a newtype is judged by serde when the catalog is built.
fn primitive(ty: &syn::Type) -> Option<String> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| {
            if s.arguments.is_empty() {
                s.ident.to_string()
            } else {
                String::new()
            }
        })
        .collect();
    let joined = segments.join("::");
    let name = match joined.as_str() {
        "String" | "std::string::String" | "alloc::string::String" => "String",
        other => other,
    };
    const KNOWN: &[&str] = &[
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64", "bool", "String",
    ];
    KNOWN.contains(&name).then(|| name.to_string())
}

/// Whether an integer literal's digits fit the integer type `ty` (the literal is never
/// negative: `-5` is an expression, checked by the compiler as one).
fn int_fits(lit: &syn::LitInt, ty: &str) -> Result<(), String> {
    fn fits<T: std::str::FromStr>(lit: &syn::LitInt) -> bool
    where
        T::Err: std::fmt::Display,
    {
        lit.base10_parse::<T>().is_ok()
    }
    let ok = match ty {
        "u8" => fits::<u8>(lit),
        "u16" => fits::<u16>(lit),
        "u32" => fits::<u32>(lit),
        "u64" => fits::<u64>(lit),
        "u128" => fits::<u128>(lit),
        "usize" => fits::<u64>(lit),
        "i8" => fits::<i8>(lit),
        "i16" => fits::<i16>(lit),
        "i32" => fits::<i32>(lit),
        "i64" => fits::<i64>(lit),
        "i128" => fits::<i128>(lit),
        "isize" => fits::<i64>(lit),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` is out of range for `{ty}`",
            lit.base10_digits()
        ))
    }
}

/// A literal default of a type the macro can read (`default = "five"` on a `u32`) must fit it,
/// so the mistake is a compile error at the literal rather than a server that refuses to
/// start.
fn default_literal_fits(tool: &ToolFn, errors: &mut Errors) {
    for p in &tool.params {
        let (ParamKind::Argument { inner_option: None }, Some(DefaultValue::Literal(lit))) =
            (&p.kind, &p.attr.default)
        else {
            continue;
        };
        let Some(ty) = primitive(&p.ty) else {
            continue;
        };
        let (what, example) = match ty.as_str() {
            "bool" => ("a boolean", "`default = true`"),
            "String" => ("a string", "`default = \"text\"`"),
            "f32" | "f64" => ("a number", "`default = 0.5`"),
            _ => ("an integer", "`default = 5`"),
        };
        let given = match lit {
            syn::Lit::Str(_) => "a string",
            syn::Lit::Int(_) => "an integer",
            syn::Lit::Float(_) => "a number with a fraction",
            syn::Lit::Bool(_) => "a boolean",
            _ => continue, // not a JSON literal: `option_has_no_default` reports it
        };
        let name = p.name();
        let wrong_kind = || {
            format!(
                "`{name}` is `{ty}`, so its default must be {what} (e.g. {example}), not {given}"
            )
        };
        let problem = match (ty.as_str(), lit) {
            ("bool", syn::Lit::Bool(_)) | ("String", syn::Lit::Str(_)) => None,
            ("f32" | "f64", syn::Lit::Float(_) | syn::Lit::Int(_)) => None,
            ("bool" | "String" | "f32" | "f64", _) => Some(wrong_kind()),
            (_, syn::Lit::Int(int)) => int_fits(int, &ty)
                .err()
                .map(|e| format!("the default of `{name}`: {e}")),
            _ => Some(wrong_kind()),
        };
        if let Some(problem) = problem {
            errors.push(lit.span(), problem);
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
