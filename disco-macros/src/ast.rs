//! The model of one tool function: what the macro knows after parsing, borrowing the user's
//! tokens so that every error and every generated assertion points at the user's own code.

use syn::ext::IdentExt as _;
use syn::{FnArg, Ident, ItemFn, Pat, Type};

use crate::attr::{parse_param_attr, Errors, ParamAttr, ToolAttr};
use crate::docs::{self, Docs};

pub struct ToolFn {
    /// The user's function, with the `#[param]` attributes taken off its parameters.
    pub item: ItemFn,
    pub attr: ToolAttr,
    pub docs: Docs,
    pub is_async: bool,
    pub params: Vec<Param>,
}

pub struct Param {
    pub ident: Ident,
    pub ty: Type,
    pub kind: ParamKind,
    /// From `#[param(...)]` on the parameter itself, then `params(name(...))` merged in.
    pub attr: ParamAttr,
}

pub enum ParamKind {
    /// Part of the input schema, read from the call's arguments.
    Argument {
        /// `Option<T>`: optional, and its schema is `T`'s.
        inner_option: Option<Box<Type>>,
    },
    /// `State<T>`: application state registered on the server.
    State,
    /// `Context`: who calls, cancellation, progress, logging.
    Context,
}

impl Param {
    /// The JSON key: the Rust name without `r#` (`r#type` is the key `type`).
    pub fn name(&self) -> String {
        self.ident.unraw().to_string()
    }
    pub fn is_argument(&self) -> bool {
        matches!(self.kind, ParamKind::Argument { .. })
    }
}

/// Builds the model. Unsupported shapes are reported in `errors`; the model keeps whatever
/// parameters could be understood so the other rules can still be checked in the same compile.
pub fn parse(mut item: ItemFn, attr: ToolAttr, errors: &mut Errors) -> ToolFn {
    let sig = &item.sig;
    if !sig.generics.params.is_empty() {
        errors.push_spanned(
            &sig.generics,
            "a tool function cannot be generic: its parameter types must be known to build its \
             JSON Schema; write a non-generic wrapper function and annotate that",
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.push_spanned(
            unsafety,
            "a tool function cannot be `unsafe`: a model decides its arguments; make it safe and \
             uphold the invariants inside",
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.push_spanned(variadic, "a tool function cannot be variadic");
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        if contains_impl_trait(ty) {
            errors.push_spanned(
                ty,
                "a tool cannot return `impl Trait`: its output schema is built from the concrete \
                 return type; name the type (`String`, `Json<T>`, `Result<T, ToolError>`, ...)",
            );
        }
    }
    let is_async = sig.asyncness.is_some();

    let mut params = Vec::new();
    for input in item.sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(receiver) => errors.push_spanned(
                &*receiver,
                "a tool must be a free function, not a method: move it out of the `impl` block \
                 and take the shared value as a `State<T>` parameter instead of `self`",
            ),
            FnArg::Typed(pat_type) => {
                // Take `#[param(...)]` off, keeping every other attribute.
                let mut attr = ParamAttr::default();
                let mut kept = Vec::new();
                let param_name = match &*pat_type.pat {
                    Pat::Ident(pi) => pi.ident.unraw().to_string(),
                    _ => String::new(),
                };
                for a in pat_type.attrs.drain(..) {
                    if a.path().is_ident("param") {
                        match &a.meta {
                            syn::Meta::List(list) => {
                                let parsed = parse_param_attr(list.tokens.clone(), errors);
                                merge_param_attr(&mut attr, parsed, &param_name, errors);
                            }
                            other => errors.push_spanned(
                                other,
                                "expected `#[param(description = \"...\", alias = \"...\", default = ...)]`",
                            ),
                        }
                    } else {
                        kept.push(a);
                    }
                }
                pat_type.attrs = kept;

                let ident = match &*pat_type.pat {
                    Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                        pi.ident.clone()
                    }
                    other => {
                        errors.push_spanned(
                            other,
                            "a tool parameter must be a plain name, because the name is the JSON \
                             argument's key: bind it to a name (`point: Point`) and destructure \
                             it in the body",
                        );
                        continue;
                    }
                };
                let ty = (*pat_type.ty).clone();
                if contains_impl_trait(&ty) {
                    errors.push_spanned(
                        &ty,
                        "`impl Trait` cannot be a tool parameter type: the macro needs a concrete \
                         type to deserialize the argument and build its JSON Schema; name the \
                         type (`text: String` rather than `text: impl Into<String>`)",
                    );
                    continue;
                }
                let kind = classify(&ty);
                if matches!(kind, ParamKind::Argument { .. }) {
                    if let Some(borrowed) = find_borrow(&ty) {
                        errors.push_spanned(
                            borrowed,
                            format!(
                                "a tool parameter cannot borrow: its value is read from the call's \
                                 JSON arguments and owned by the call; {}",
                                owned_instead(borrowed)
                            ),
                        );
                        continue;
                    }
                }
                params.push(Param {
                    ident,
                    ty,
                    kind,
                    attr,
                });
            }
        }
    }
    let docs = docs::parse(&docs::doc_lines(&item.attrs));
    ToolFn {
        item,
        attr,
        docs,
        is_async,
        params,
    }
}

/// `#[param(...)]` may be written more than once on the same parameter, and mixed with
/// `params(name(...))`; each setting may still be given only once.
pub fn merge_param_attr(into: &mut ParamAttr, from: ParamAttr, name: &str, errors: &mut Errors) {
    let mut once = |key: &str, span: Option<proc_macro2::Span>, given: bool| {
        let span = span?;
        if given {
            errors.push(
                span,
                format!("the `{key}` of parameter `{name}` is given more than once"),
            );
            None
        } else {
            Some(())
        }
    };
    let span = from.description.as_ref().map(|d| d.span);
    if once("description", span, into.description.is_some()).is_some() {
        into.description = from.description;
    }
    let span = from.default.as_ref().map(|d| d.span());
    if once("default", span, into.default.is_some()).is_some() {
        into.default = from.default;
    }
    let span = from.flatten.map(|f| f.span);
    if once("flatten", span, into.flatten.is_some()).is_some() {
        into.flatten = from.flatten;
    }
    into.aliases.extend(from.aliases);
}

/// A borrowed part of an argument type: a reference or an elided lifetime (`Cow<'_, str>`).
/// Arguments are deserialized from a JSON value the call owns, so they must be owned
/// (`DeserializeOwned`); without this rule the compiler's error is about higher-ranked
/// lifetimes and says nothing useful.
fn find_borrow(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Reference(_) => Some(ty),
        Type::Group(g) => find_borrow(&g.elem),
        Type::Paren(p) => find_borrow(&p.elem),
        Type::Slice(s) => find_borrow(&s.elem),
        Type::Array(a) => find_borrow(&a.elem),
        Type::Tuple(t) => t.elems.iter().find_map(find_borrow),
        Type::Path(p) => {
            let elided = p.path.segments.iter().any(|seg| match &seg.arguments {
                syn::PathArguments::AngleBracketed(args) => args
                    .args
                    .iter()
                    .any(|a| matches!(a, syn::GenericArgument::Lifetime(l) if l.ident != "static")),
                _ => false,
            });
            if elided {
                return Some(ty);
            }
            p.path.segments.iter().find_map(|seg| match &seg.arguments {
                syn::PathArguments::AngleBracketed(args) => {
                    args.args.iter().find_map(|a| match a {
                        syn::GenericArgument::Type(t) => find_borrow(t),
                        _ => None,
                    })
                }
                _ => None,
            })
        }
        _ => None,
    }
}

/// What to write instead of a borrowed type.
fn owned_instead(ty: &Type) -> String {
    if let Type::Reference(r) = ty {
        match &*r.elem {
            Type::Path(p) if p.path.is_ident("str") => {
                return "use `String` instead of `&str`".to_string()
            }
            Type::Slice(_) => return "use `Vec<T>` instead of `&[T]`".to_string(),
            Type::Path(p) if p.path.is_ident("Path") => {
                return "use `PathBuf` instead of `&Path`".to_string()
            }
            _ => return "take the value itself (`T` instead of `&T`)".to_string(),
        }
    }
    "use an owned type (`Cow<'static, str>` or `String` instead of `Cow<'_, str>`)".to_string()
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(tp) if tp.qself.is_none() => tp.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

/// Extractors are recognised by name (`State<T>`, `Context`, with any path prefix), the way
/// web frameworks' users expect; every other type is a JSON argument.
fn classify(ty: &Type) -> ParamKind {
    if let Some(seg) = last_segment(ty) {
        let name = seg.ident.to_string();
        if name == "State" && matches!(seg.arguments, syn::PathArguments::AngleBracketed(_)) {
            return ParamKind::State;
        }
        if name == "Context" && seg.arguments.is_empty() {
            return ParamKind::Context;
        }
        if name == "Option" {
            if let syn::PathArguments::AngleBracketed(args) = &seg.arguments {
                if let Some(syn::GenericArgument::Type(inner)) = args.args.first() {
                    return ParamKind::Argument {
                        inner_option: Some(Box::new(inner.clone())),
                    };
                }
            }
        }
    }
    ParamKind::Argument { inner_option: None }
}

fn contains_impl_trait(ty: &Type) -> bool {
    match ty {
        Type::ImplTrait(_) => true,
        Type::Reference(r) => contains_impl_trait(&r.elem),
        Type::Group(g) => contains_impl_trait(&g.elem),
        Type::Paren(p) => contains_impl_trait(&p.elem),
        Type::Slice(s) => contains_impl_trait(&s.elem),
        Type::Array(a) => contains_impl_trait(&a.elem),
        Type::Tuple(t) => t.elems.iter().any(contains_impl_trait),
        Type::Path(p) => p.path.segments.iter().any(|seg| match &seg.arguments {
            syn::PathArguments::AngleBracketed(args) => args.args.iter().any(|a| match a {
                syn::GenericArgument::Type(t) => contains_impl_trait(t),
                _ => false,
            }),
            _ => false,
        }),
        _ => false,
    }
}
