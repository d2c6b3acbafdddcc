//! The only file that quotes tokens. Generated code reaches the runtime through absolute paths
//! into `::disco_runtime::__private_v<version>` ([`runtime`]), so it compiles in any crate that
//! depends on `disco-runtime` alone, whatever that crate imports.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Param, ParamKind, ToolFn};
use crate::attr::{DefaultValue, Flag};
use crate::check::tool_name;

/// The runtime's private module for this version of the macros: `__private_v0_1_0` for 0.1.0.
/// The module is named after the version because the code generated here and the items it
/// names change together: a crate that ends up with macros and a runtime of two versions (a
/// direct dependency on `disco-macros` beside `disco-runtime`'s exact one) fails to compile
/// at the first tool, naming the missing module, instead of compiling against items that
/// changed meaning.
fn runtime() -> TokenStream {
    let version = env!("CARGO_PKG_VERSION").replace(['.', '-', '+'], "_");
    let module = format_ident!("__private_v{}", version);
    quote!(::disco_runtime::#module)
}

pub fn expand(tool: &ToolFn) -> TokenStream {
    let rt = runtime();
    let item = &tool.item;
    let fn_ident = &item.sig.ident;
    let name = tool_name(tool).value;
    let title = opt_str(tool.attr.title.as_ref().map(|t| t.value.as_str()));
    let description = match &tool.attr.description {
        Some(d) => d.value.trim().to_string(),
        None => tool.docs.description.clone(),
    };
    let aliases: Vec<&str> = tool.attr.aliases.iter().map(|a| a.value.as_str()).collect();
    let keywords: Vec<&str> = tool.attr.keywords.iter().map(|k| k.value.trim()).collect();
    let group = opt_str(tool.attr.group.as_ref().map(|g| g.value.as_str()));
    let read_only = opt_flag(tool.attr.read_only);
    let destructive = opt_flag(tool.attr.destructive);
    let idempotent = opt_flag(tool.attr.idempotent);
    let open_world = opt_flag(tool.attr.open_world);
    let hidden = tool.attr.hidden.is_some_and(|f| f.value);
    let full_schema = tool.attr.full_schema.is_some_and(|f| f.value);
    let timeout_ms = match &tool.attr.timeout_ms {
        Some(t) => {
            let v = t.value;
            quote!(::core::option::Option::Some(#v))
        }
        None => quote!(::core::option::Option::None),
    };

    let param_specs: Vec<TokenStream> = tool
        .params
        .iter()
        .filter(|p| p.is_argument())
        .map(|p| param_spec(tool, p))
        .collect();

    let assertions: Vec<TokenStream> = tool
        .params
        .iter()
        .map(|p| {
            let ty = &p.ty;
            match p.kind {
                ParamKind::Argument { .. } => quote_spanned! {ty.span()=>
                    #rt::assert_argument::<#ty>();
                },
                _ => quote_spanned! {ty.span()=>
                    #rt::assert_extractor::<#ty>();
                },
            }
        })
        .collect();

    let output_ty = match &item.sig.output {
        syn::ReturnType::Default => quote!(()),
        syn::ReturnType::Type(_, ty) => quote!(#ty),
    };
    let output_span = match &item.sig.output {
        syn::ReturnType::Default => item.sig.ident.span(),
        syn::ReturnType::Type(_, ty) => ty.span(),
    };
    // `Json<T>` (alone or as a `Result`'s value) gets an assertion of its own at `T`, as a
    // parameter does; the rest of the return type is then asserted with `Json<()>` in its
    // place, so a `T` without `Serialize` is one error that names it, not rustc's list of every
    // `Serialize` type.
    let output_assert = match &item.sig.output {
        syn::ReturnType::Type(_, ty) => match json_payload(ty) {
            Some((payload, rest)) => quote!(#payload #rest),
            None => quote_spanned! {output_span=>
                #rt::assert_output::<#output_ty>();
            },
        },
        syn::ReturnType::Default => quote_spanned! {output_span=>
            #rt::assert_output::<#output_ty>();
        },
    };
    // Past the assertions above, every trait is reached through a probe (see `__private_v<version>` in disco-runtime), so
    // a type that lacks one is reported once, where the assertion points.
    let output_probe = quote!((&&#rt::Probe::<#output_ty>::new()));
    let defaults: Vec<TokenStream> = tool
        .params
        .iter()
        .filter_map(|p| default_fn(p, &rt))
        .collect();

    // Reading the arguments: every problem is collected, so one reply names them all.
    // A flattened parameter is read last, from the keys the others leave.
    let takes: Vec<TokenStream> = tool
        .params
        .iter()
        .filter(|p| !p.attr.is_flattened())
        .chain(tool.params.iter().filter(|p| p.attr.is_flattened()))
        .map(|p| take_param(p, &rt))
        .collect();
    let idents: Vec<&syn::Ident> = tool.params.iter().map(|p| &p.ident).collect();
    let call = if tool.is_async {
        quote! {
            ::std::boxed::Box::pin(async move {
                #output_probe.__disco_into_result(#fn_ident(#(#idents),*).await)
            })
        }
    } else {
        quote!(#output_probe.__disco_into_result(#fn_ident(#(#idents),*)))
    };
    let early_return = if tool.is_async {
        quote!(::std::boxed::Box::pin(::core::future::ready(
            __errors.into_result()
        )))
    } else {
        quote!(__errors.into_result())
    };
    let (handler_sig, handler_variant) = if tool.is_async {
        (
            quote!(fn __handler(mut __inv: #rt::Invocation) -> #rt::BoxFuture),
            quote!(#rt::Handler::Async(__handler)),
        )
    } else {
        (
            quote!(fn __handler(mut __inv: #rt::Invocation) -> #rt::CallToolResult),
            quote!(#rt::Handler::Sync(__handler)),
        )
    };
    let unpack = if idents.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            let (#(::core::option::Option::Some(#idents),)*) = (#(#idents,)*) else {
                return #early_return;
            };
        }
    };
    let handler = quote! {
        #[allow(unused_mut, unused_variables)]
        #handler_sig {
            #[allow(unused_imports)]
            use #rt::{
                ArgumentFallback as _, ExtractorFallback as _, OutputFallback as _,
                ViaArgument as _, ViaExtractor as _, ViaOutput as _,
            };
            let mut __errors = #rt::ArgErrors::new();
            #(#takes)*
            #unpack
            #call
        }
    };

    // The `State<T>` types the server must hold, checked when it starts.
    let state_probes: Vec<TokenStream> = tool
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::State))
        .map(|p| {
            let ty = &p.ty;
            quote! {
                if let ::core::option::Option::Some(__t) =
                    (&&#rt::Probe::<#ty>::new()).__disco_missing_state(__state)
                {
                    __missing.push(__t);
                }
            }
        })
        .collect();

    let line = quote_spanned!(fn_ident.span()=> ::core::line!());
    quote! {
        #item

        #[doc(hidden)]
        #[allow(non_upper_case_globals, non_snake_case, clippy::all)]
        const _: () = {
            #[allow(dead_code, unreachable_code)]
            fn __assertions() {
                #(#assertions)*
                #output_assert
            }

            #(#defaults)*

            #handler

            #rt::inventory::submit! {
                #rt::ToolRegistration(&#rt::ToolSpec {
                    name: #name,
                    title: #title,
                    description: #description,
                    aliases: &[#(#aliases),*],
                    keywords: &[#(#keywords),*],
                    group: #group,
                    annotations: #rt::Annotations {
                        read_only: #read_only,
                        destructive: #destructive,
                        idempotent: #idempotent,
                        open_world: #open_world,
                    },
                    hidden: #hidden,
                    full_schema: #full_schema,
                    timeout_ms: #timeout_ms,
                    params: &[#(#param_specs),*],
                    output_schema: {
                        fn __output_schema(
                            gen: &mut #rt::SchemaGenerator,
                        ) -> ::core::option::Option<#rt::Schema> {
                            #[allow(unused_imports)]
                            use #rt::{OutputFallback as _, ViaOutput as _};
                            #output_probe.__disco_output_schema(gen)
                        }
                        __output_schema
                    },
                    missing_state: {
                        #[allow(unused_mut, unused_variables)]
                        fn __missing_state(
                            __state: &#rt::StateMap,
                        ) -> ::std::vec::Vec<&'static str> {
                            #[allow(unused_imports)]
                            use #rt::{ExtractorFallback as _, ViaExtractor as _};
                            let mut __missing = ::std::vec::Vec::new();
                            #(#state_probes)*
                            __missing
                        }
                        __missing_state
                    },
                    handler: #handler_variant,
                    origin: #rt::Origin {
                        module: ::core::module_path!(),
                        file: ::core::file!(),
                        line: #line,
                        function: ::core::stringify!(#fn_ident),
                        package: #rt::Package {
                            name: ::core::env!("CARGO_PKG_NAME"),
                            version: ::core::env!("CARGO_PKG_VERSION"),
                        },
                    },
                })
            }
        };
    }
}

/// For a return type `Json<T>` or `Result<Json<T>, E>` (by the last path segment's name): the
/// assertion of `T`, spanned at it, and the return type asserted with `Json<()>` for `Json<T>`
/// (spanned at the return type), as tokens.
fn json_payload(ty: &syn::Type) -> Option<(TokenStream, TokenStream)> {
    fn json_arg(ty: &syn::Type) -> Option<&syn::Type> {
        let syn::Type::Path(p) = ty else { return None };
        let last = p.path.segments.last()?;
        if last.ident != "Json" {
            return None;
        }
        let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
            return None;
        };
        match args.args.first()? {
            syn::GenericArgument::Type(t) if args.args.len() == 1 => Some(t),
            _ => None,
        }
    }
    fn replaced(ty: &syn::Type) -> syn::Type {
        let mut ty = ty.clone();
        if let syn::Type::Path(p) = &mut ty {
            if let Some(last) = p.path.segments.last_mut() {
                if let syn::PathArguments::AngleBracketed(args) = &mut last.arguments {
                    if let Some(syn::GenericArgument::Type(t)) = args.args.first_mut() {
                        *t = syn::parse_quote!(());
                    }
                }
            }
        }
        ty
    }
    let rt = runtime();
    let assert_payload = |t: &syn::Type| {
        quote_spanned! {t.span()=> #rt::assert_json_output::<#t>(); }
    };
    if let Some(t) = json_arg(ty) {
        let rest = replaced(ty);
        return Some((
            assert_payload(t),
            quote_spanned! {ty.span()=> #rt::assert_output::<#rest>(); },
        ));
    }
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let Some(syn::GenericArgument::Type(ok)) = args.args.first() else {
        return None;
    };
    let t = json_arg(ok)?;
    let mut rest = ty.clone();
    if let syn::Type::Path(p) = &mut rest {
        if let Some(last) = p.path.segments.last_mut() {
            if let syn::PathArguments::AngleBracketed(args) = &mut last.arguments {
                if let Some(syn::GenericArgument::Type(ok)) = args.args.first_mut() {
                    *ok = replaced(ok);
                }
            }
        }
    }
    Some((
        assert_payload(t),
        quote_spanned! {ty.span()=> #rt::assert_output::<#rest>(); },
    ))
}

fn opt_str(value: Option<&str>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

fn opt_flag(flag: Option<Flag>) -> TokenStream {
    match flag {
        Some(f) => {
            let v = f.value;
            quote!(::core::option::Option::Some(#v))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// The static description of one JSON parameter.
fn param_spec(tool: &ToolFn, p: &Param) -> TokenStream {
    let rt = runtime();
    let name = p.name();
    let aliases: Vec<&str> = p.attr.aliases.iter().map(|a| a.value.as_str()).collect();
    let description = p
        .attr
        .description
        .as_ref()
        .map(|d| d.value.trim().to_string())
        .or_else(|| {
            tool.docs
                .params
                .iter()
                .find(|d| d.name == name && !d.text.is_empty())
                .map(|d| d.text.clone())
        });
    let description = opt_str(description.as_deref());
    let ParamKind::Argument { inner_option } = &p.kind else {
        return TokenStream::new();
    };
    let ty = &p.ty;
    let schema_ty: &syn::Type = inner_option.as_deref().unwrap_or(ty);
    let required = inner_option.is_none() && p.attr.default.is_none();
    let schema = quote! {{
        fn __schema(gen: &mut #rt::SchemaGenerator) -> #rt::Schema {
            #[allow(unused_imports)]
            use #rt::{SchemaFallback as _, ViaSchema as _};
            (&&#rt::Probe::<#schema_ty>::new()).__disco_schema(gen)
        }
        __schema
    }};
    let default = match &p.attr.default {
        None => quote!(::core::option::Option::None),
        Some(_) => {
            let f = default_fn_ident(p);
            quote! {
                ::core::option::Option::Some({
                    fn __default() -> ::core::result::Result<
                        ::core::option::Option<#rt::serde_json::Value>,
                        ::std::string::String,
                    > {
                        #[allow(unused_imports)]
                        use #rt::{DefaultViaSerialize as _, DefaultWithoutSerialize as _};
                        let __value: #ty = #f()?;
                        ::core::result::Result::Ok((&&#rt::DefaultProbe(__value)).default_json())
                    }
                    __default
                })
            }
        }
    };
    let flatten = p.attr.is_flattened();
    quote! {
        #rt::ParamSpec {
            name: #name,
            aliases: &[#(#aliases),*],
            description: #description,
            required: #required,
            schema: #schema,
            default: #default,
            flatten: #flatten,
        }
    }
}

fn default_fn_ident(p: &Param) -> syn::Ident {
    format_ident!("__default_{}", p.ident)
}

/// `fn __default_<param>() -> Result<T, String>`: a parameter's default value, computed in one
/// place for both the handler and the schema's `default`, so that a default that does not fit
/// the type is reported once.
fn default_fn(p: &Param, rt: &TokenStream) -> Option<TokenStream> {
    let ty = &p.ty;
    let value = match p.attr.default.as_ref()? {
        DefaultValue::Trait(span) => quote_spanned! {*span=>
            ::core::result::Result::<#ty, ::std::string::String>::Ok(
                <#ty as ::core::default::Default>::default()
            )
        },
        DefaultValue::Literal(lit) => quote_spanned! {lit.span()=>
            (&&#rt::Probe::<#ty>::new()).__disco_from_json(#rt::serde_json::json!(#lit))
        },
        // Bound to a typed `let` so a value of the wrong type is reported as "expected `u32`,
        // found `String`" at the expression, pointing back at the parameter's type.
        DefaultValue::Expr(expr) => quote_spanned! {expr.span()=>
            {
                let __value: #ty = #expr;
                ::core::result::Result::<#ty, ::std::string::String>::Ok(__value)
            }
        },
    };
    let f = default_fn_ident(p);
    Some(quote! {
        fn #f() -> ::core::result::Result<#ty, ::std::string::String> {
            #[allow(unused_imports)]
            use #rt::{ArgumentFallback as _, ViaArgument as _};
            #value
        }
    })
}

/// `let name: Option<T> = ...;` reading one parameter from the invocation.
fn take_param(p: &Param, rt: &TokenStream) -> TokenStream {
    let ident = &p.ident;
    let ty = &p.ty;
    let probe = quote!((&&#rt::Probe::<#ty>::new()));
    match (&p.kind, &p.attr.default) {
        (ParamKind::Argument { .. }, _) if p.attr.is_flattened() => {
            let name = p.name();
            quote! {
                let #ident: ::core::option::Option<#ty> =
                    #probe.__disco_take_flat(&mut __errors, &mut __inv, #name);
            }
        }
        (ParamKind::Argument { .. }, None) => {
            let name = p.name();
            quote! {
                let #ident: ::core::option::Option<#ty> =
                    #probe.__disco_take(&mut __errors, &mut __inv, #name);
            }
        }
        (ParamKind::Argument { .. }, Some(_)) => {
            let name = p.name();
            let f = default_fn_ident(p);
            quote! {
                let #ident: ::core::option::Option<#ty> =
                    #probe.__disco_take_or(&mut __errors, &mut __inv, #name, #f);
            }
        }
        _ => quote! {
            let #ident: ::core::option::Option<#ty> = #probe.__disco_extract(&mut __errors, &__inv);
        },
    }
}
