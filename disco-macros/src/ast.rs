//! The model of one tool function: what the macro knows after parsing, borrowing the user's
//! tokens so that every error and every generated assertion points at the user's own code.

use proc_macro2::Span;
use syn::spanned::Spanned;
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
    /// From `#[param(...)]` on the parameter itself.
    pub attr: ParamAttr,
    /// Where `#[param(...)]` was written, if it was.
    pub attr_span: Option<Span>,
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
    pub fn is_argument(&self) -> bool {
        matches!(self.kind, ParamKind::Argument { .. })
    }
}

/// Builds the model. Unsupported shapes are reported in `errors`; the model keeps whatever
/// parameters could be understood so the other rules can still be checked in the same compile.
pub fn parse(mut item: ItemFn, attr: ToolAttr, errors: &mut Errors) -> ToolFn {
    let sig = &item.sig;
    if !sig.generics.params.is_empty() {
        errors.push(
            sig.generics.span(),
            "a tool function cannot be generic: its parameter types must be known to build its \
             JSON Schema; write a non-generic wrapper function and annotate that",
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.push(
            unsafety.span(),
            "a tool function cannot be `unsafe`: a model decides its arguments; make it safe and \
             uphold the invariants inside",
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(variadic.span(), "a tool function cannot be variadic");
    }
    let is_async = sig.asyncness.is_some();

    let mut params = Vec::new();
    for input in item.sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(receiver) => errors.push(
                receiver.span(),
                "a tool must be a free function, not a method: move it out of the `impl` block \
                 and take the shared value as a `State<T>` parameter instead of `self`",
            ),
            FnArg::Typed(pat_type) => {
                // Take `#[param(...)]` off, keeping every other attribute.
                let mut attr = ParamAttr::default();
                let mut attr_span = None;
                let mut kept = Vec::new();
                for a in pat_type.attrs.drain(..) {
                    if a.path().is_ident("param") {
                        attr_span = Some(a.span());
                        match &a.meta {
                            syn::Meta::List(list) => {
                                let parsed = parse_param_attr(list.tokens.clone(), errors);
                                merge_param_attr(&mut attr, parsed, a.span(), errors);
                            }
                            _ => errors.push(
                                a.span(),
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
                        errors.push(
                            other.span(),
                            "a tool parameter must be a plain name, because the name is the JSON \
                             argument's key: bind it to a name (`point: Point`) and destructure \
                             it in the body",
                        );
                        continue;
                    }
                };
                let ty = (*pat_type.ty).clone();
                if contains_impl_trait(&ty) {
                    errors.push(
                        ty.span(),
                        "`impl Trait` cannot be a tool parameter type: the macro needs a concrete \
                         type to deserialize the argument and build its JSON Schema",
                    );
                    continue;
                }
                let kind = classify(&ty);
                params.push(Param {
                    ident,
                    ty,
                    kind,
                    attr,
                    attr_span,
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

/// `#[param(...)]` may be written more than once on the same parameter.
pub fn merge_param_attr(into: &mut ParamAttr, from: ParamAttr, span: Span, errors: &mut Errors) {
    if let Some(d) = from.description {
        if into.description.is_some() {
            errors.push(
                d.span,
                "the parameter's `description` is given more than once",
            );
        } else {
            into.description = Some(d);
        }
    }
    if let Some(d) = from.default {
        if into.default.is_some() {
            errors.push(span, "the parameter's `default` is given more than once");
        } else {
            into.default = Some(d);
        }
    }
    into.aliases.extend(from.aliases);
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
