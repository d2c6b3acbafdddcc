//! Parsing of `#[mcp_tool(...)]` and of the per-parameter `#[param(...)]`.
//!
//! Parsing never stops at the first mistake: every problem becomes an error with its own span in
//! an [`Errors`] list, and parsing goes on with the next key, so one compile reports them all.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::{Expr, Ident, Lit, LitStr, Meta, Token};

/// Accumulated compile errors, reported together.
#[derive(Default)]
pub struct Errors(Vec<syn::Error>);

impl Errors {
    pub fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new(span, message));
    }
    /// An error that underlines every token of `tokens`, not only the first one (on stable
    /// Rust a span cannot be joined, but `compile_error!` spanned from the first token to the
    /// last still underlines the whole range).
    pub fn push_spanned(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new_spanned(tokens, message));
    }
    pub fn push_err(&mut self, err: syn::Error) {
        self.0.push(err);
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn to_compile_errors(&self) -> TokenStream {
        self.0.iter().map(syn::Error::to_compile_error).collect()
    }
}

/// A string given in the attribute, with the span to point at when it breaks a rule.
#[derive(Clone)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl From<&LitStr> for Spanned<String> {
    fn from(lit: &LitStr) -> Self {
        Spanned {
            value: lit.value(),
            span: lit.span(),
        }
    }
}

/// An annotation flag: `read_only` or `destructive = false`.
#[derive(Clone, Copy)]
pub struct Flag {
    pub value: bool,
    pub span: Span,
}

/// Everything `#[mcp_tool(...)]` can say about a tool.
#[derive(Default)]
pub struct ToolAttr {
    pub name: Option<Spanned<String>>,
    pub title: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub aliases: Vec<Spanned<String>>,
    pub keywords: Vec<Spanned<String>>,
    /// `group = "..."`: the group the tool is listed under (in the server's instructions, in
    /// `tool_search`'s description and in `_meta`).
    pub group: Option<Spanned<String>>,
    pub read_only: Option<Flag>,
    pub destructive: Option<Flag>,
    pub idempotent: Option<Flag>,
    pub open_world: Option<Flag>,
    pub hidden: Option<Flag>,
    pub full_schema: Option<Flag>,
    pub timeout_ms: Option<Spanned<u64>>,
    /// `params(name(...), ...)`: per-parameter settings given in the tool attribute.
    pub params: Vec<(Ident, ParamAttr)>,
}

/// Settings of one parameter, from `#[param(...)]` or from `params(name(...))`.
#[derive(Default, Clone)]
pub struct ParamAttr {
    pub description: Option<Spanned<String>>,
    pub aliases: Vec<Spanned<String>>,
    pub default: Option<DefaultValue>,
    /// `flatten`: the parameter is a struct whose fields are the tool's parameters.
    pub flatten: Option<Flag>,
}

impl ParamAttr {
    /// `flatten` or `flatten = true`.
    pub fn is_flattened(&self) -> bool {
        self.flatten.is_some_and(|f| f.value)
    }
}

/// A parameter's default value.
#[derive(Clone)]
pub enum DefaultValue {
    /// `default`: `Default::default()`.
    Trait(Span),
    /// `default = 5`, `default = "x"`, `default = true`: a JSON literal, deserialized into the
    /// parameter's type, so `"x"` works for a `String` and `5` for an `f64`.
    Literal(Lit),
    /// `default = some_expression()`: evaluated as the parameter's type.
    Expr(Box<Expr>),
}

impl DefaultValue {
    pub fn span(&self) -> Span {
        match self {
            DefaultValue::Trait(span) => *span,
            DefaultValue::Literal(lit) => lit.span(),
            DefaultValue::Expr(expr) => expr.span(),
        }
    }
}

pub const TOOL_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "aliases",
    "keywords",
    "group",
    "params",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "hidden",
    "full_schema",
    "timeout_ms",
];

pub const PARAM_KEYS: &[&str] = &["description", "alias", "aliases", "default", "flatten"];

/// "unknown key `x`" with the closest valid key and the full list.
fn unknown_key(errors: &mut Errors, key: &syn::Path, what: &str, valid: &[&str]) {
    let name = path_name(key);
    let closest = valid
        .iter()
        .map(|k| (strsim::jaro_winkler(&name, k), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| format!("did you mean `{k}`? "))
        .unwrap_or_default();
    errors.push_spanned(
        key,
        format!(
            "unknown {what} key `{name}`; {closest}valid keys are: {}",
            valid.join(", ")
        ),
    );
}

fn path_name(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// `key, key = value, key(...)`, or nothing (after reporting why) when it does not parse.
fn metas(tokens: TokenStream, errors: &mut Errors) -> Punctuated<Meta, Token![,]> {
    Punctuated::<Meta, Token![,]>::parse_terminated
        .parse2(tokens)
        .unwrap_or_else(|err| {
            errors.push_err(err);
            Punctuated::new()
        })
}

pub fn parse_tool_attr(tokens: TokenStream, errors: &mut Errors) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let metas = metas(tokens, errors);
    for meta in metas {
        let key = path_name(meta.path());
        match key.as_str() {
            "name" => set_once(&mut attr.name, string_value(&meta, errors), &meta, errors),
            "title" => set_once(&mut attr.title, string_value(&meta, errors), &meta, errors),
            "description" => set_once(
                &mut attr.description,
                string_value(&meta, errors),
                &meta,
                errors,
            ),
            "aliases" => attr.aliases.extend(string_list(&meta, errors)),
            "keywords" => attr.keywords.extend(string_list(&meta, errors)),
            "group" => set_once(&mut attr.group, string_value(&meta, errors), &meta, errors),
            "read_only" => set_once(&mut attr.read_only, flag(&meta, errors), &meta, errors),
            "destructive" => set_once(&mut attr.destructive, flag(&meta, errors), &meta, errors),
            "idempotent" => set_once(&mut attr.idempotent, flag(&meta, errors), &meta, errors),
            "open_world" => set_once(&mut attr.open_world, flag(&meta, errors), &meta, errors),
            "hidden" => set_once(&mut attr.hidden, flag(&meta, errors), &meta, errors),
            "full_schema" => set_once(&mut attr.full_schema, flag(&meta, errors), &meta, errors),
            "timeout_ms" => {
                let value = int_value(&meta, errors);
                set_once(&mut attr.timeout_ms, value, &meta, errors)
            }
            "params" => parse_params_list(&meta, &mut attr.params, errors),
            _ => unknown_key(errors, meta.path(), "`#[mcp_tool]`", TOOL_KEYS),
        }
    }
    attr
}

/// Parses the tokens inside `#[param(...)]` (or `name(...)` within `params(...)`).
pub fn parse_param_attr(tokens: TokenStream, errors: &mut Errors) -> ParamAttr {
    let mut attr = ParamAttr::default();
    let metas = metas(tokens, errors);
    for meta in metas {
        let key = path_name(meta.path());
        match key.as_str() {
            "description" => set_once(
                &mut attr.description,
                string_value(&meta, errors),
                &meta,
                errors,
            ),
            "alias" => {
                if let Some(alias) = string_value(&meta, errors) {
                    attr.aliases.push(alias);
                }
            }
            "aliases" => attr.aliases.extend(string_list(&meta, errors)),
            "default" => {
                let value = match &meta {
                    Meta::Path(path) => Some(DefaultValue::Trait(path.span())),
                    Meta::NameValue(nv) => Some(match &nv.value {
                        Expr::Lit(lit) => DefaultValue::Literal(lit.lit.clone()),
                        other => DefaultValue::Expr(Box::new(other.clone())),
                    }),
                    Meta::List(list) => {
                        errors.push_spanned(
                            list,
                            "expected `default` (the type's `Default`) or `default = value`, \
                             e.g. `default = 5`",
                        );
                        None
                    }
                };
                set_once(&mut attr.default, value, &meta, errors);
            }
            "flatten" => set_once(&mut attr.flatten, flag(&meta, errors), &meta, errors),
            _ => unknown_key(errors, meta.path(), "parameter", PARAM_KEYS),
        }
    }
    attr
}

fn parse_params_list(meta: &Meta, out: &mut Vec<(Ident, ParamAttr)>, errors: &mut Errors) {
    let Meta::List(list) = meta else {
        errors.push_spanned(
            meta,
            "expected `params(name(alias = \"...\", description = \"...\", default = ...), ...)`",
        );
        return;
    };
    let inner = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(list.tokens.clone()) {
        Ok(inner) => inner,
        Err(err) => {
            errors.push_err(err);
            return;
        }
    };
    for item in inner {
        let Some(ident) = item.path().get_ident().cloned() else {
            errors.push_spanned(item.path(), "expected a parameter name");
            continue;
        };
        match item {
            Meta::List(param) => out.push((ident, parse_param_attr(param.tokens, errors))),
            other => errors.push_spanned(
                &other,
                format!(
                    "expected `{ident}(alias = \"...\", description = \"...\", default = ...)`: \
                     the settings of parameter `{ident}` go in parentheses after its name"
                ),
            ),
        }
    }
}

fn set_once<T>(slot: &mut Option<T>, value: Option<T>, meta: &Meta, errors: &mut Errors) {
    let Some(value) = value else { return };
    if slot.is_some() {
        errors.push_spanned(
            meta.path(),
            format!("`{}` is given more than once", path_name(meta.path())),
        );
    } else {
        *slot = Some(value);
    }
}

fn string_value(meta: &Meta, errors: &mut Errors) -> Option<Spanned<String>> {
    let key = path_name(meta.path());
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }) => Some(s.into()),
            other => {
                errors.push_spanned(
                    other,
                    format!("`{key}` takes a string literal: `{key} = \"...\"`"),
                );
                None
            }
        },
        _ => {
            errors.push_spanned(
                meta,
                format!("`{key}` takes a string literal: `{key} = \"...\"`"),
            );
            None
        }
    }
}

fn int_value(meta: &Meta, errors: &mut Errors) -> Option<Spanned<u64>> {
    let key = path_name(meta.path());
    if let Meta::NameValue(nv) = meta {
        if let Expr::Lit(syn::ExprLit {
            lit: Lit::Int(i), ..
        }) = &nv.value
        {
            match i.base10_parse::<u64>() {
                Ok(value) => {
                    return Some(Spanned {
                        value,
                        span: i.span(),
                    })
                }
                Err(err) => {
                    errors.push_err(err);
                    return None;
                }
            }
        }
    }
    errors.push_spanned(
        meta,
        format!("`{key}` takes a whole number: `{key} = 30000`"),
    );
    None
}

fn string_list(meta: &Meta, errors: &mut Errors) -> Vec<Spanned<String>> {
    let key = path_name(meta.path());
    let Meta::List(list) = meta else {
        errors.push_spanned(
            meta,
            format!("`{key}` takes a list of string literals: `{key}(\"...\", \"...\")`"),
        );
        return Vec::new();
    };
    match Punctuated::<LitStr, Token![,]>::parse_terminated.parse2(list.tokens.clone()) {
        Ok(items) => items.iter().map(Spanned::from).collect(),
        Err(err) => {
            errors.push(
                err.span(),
                format!("`{key}` takes a list of string literals: `{key}(\"...\", \"...\")`"),
            );
            Vec::new()
        }
    }
}

fn flag(meta: &Meta, errors: &mut Errors) -> Option<Flag> {
    match meta {
        Meta::Path(path) => Some(Flag {
            value: true,
            span: path.span(),
        }),
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(syn::ExprLit {
                lit: Lit::Bool(b), ..
            }) => Some(Flag {
                value: b.value,
                span: nv.path.span(),
            }),
            other => {
                let key = path_name(meta.path());
                errors.push_spanned(
                    other,
                    format!(
                        "`{key}` is a flag: write `{key}`, or `{key} = true` / `{key} = false`"
                    ),
                );
                None
            }
        },
        Meta::List(list) => {
            let key = path_name(meta.path());
            errors.push_spanned(
                list,
                format!("`{key}` is a flag: write `{key}`, or `{key} = true` / `{key} = false`"),
            );
            None
        }
    }
}
