//! The `#[mcp_tool]` attribute of disco. Use it through `disco-runtime`, which re-exports it
//! together with everything the generated code needs; the reference is on [`macro@mcp_tool`].
//!
//! Pipeline: attribute -> model (`ast`) -> rules (`check`) -> tokens (`expand`).

use proc_macro::TokenStream;

mod ast;
mod attr;
mod check;
mod docs;
mod expand;

#[doc = include_str!("mcp_tool.md")]
#[proc_macro_attribute]
pub fn mcp_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    let input2: proc_macro2::TokenStream = input.clone().into();
    let item = match syn::parse2::<syn::ItemFn>(input2.clone()) {
        Ok(item) => item,
        Err(err) => {
            let mut out = not_a_function(input2.clone(), err).to_compile_error();
            out.extend(input2);
            return out.into();
        }
    };
    let mut errors = attr::Errors::default();
    let tool_attr = attr::parse_tool_attr(args.into(), &mut errors);
    let mut tool = ast::parse(item, tool_attr, &mut errors);
    check::check(&mut tool, &mut errors);
    if !errors.is_empty() {
        // The function stays as the user wrote it (without our `#[param]` attributes, which
        // would otherwise be unknown attributes), so the rest of the crate still type-checks
        // and only our errors are shown.
        let mut out = errors.to_compile_errors();
        let item = &tool.item;
        out.extend(quote::quote!(#item));
        return out.into();
    }
    expand::expand(&tool).into()
}

/// The error for `#[mcp_tool]` on an item that is not a function, naming what it is.
fn not_a_function(input: proc_macro2::TokenStream, err: syn::Error) -> syn::Error {
    use quote::ToTokens;
    fn pair(a: &impl ToTokens, b: &impl ToTokens) -> proc_macro2::TokenStream {
        let mut tokens = a.to_token_stream();
        b.to_tokens(&mut tokens);
        tokens
    }
    let (what, head) = match syn::parse2::<syn::Item>(input) {
        Ok(syn::Item::Struct(i)) => ("a struct", pair(&i.struct_token, &i.ident)),
        Ok(syn::Item::Enum(i)) => ("an enum", pair(&i.enum_token, &i.ident)),
        Ok(syn::Item::Impl(i)) => ("an `impl` block", i.impl_token.to_token_stream()),
        Ok(syn::Item::Mod(i)) => ("a module", pair(&i.mod_token, &i.ident)),
        Ok(syn::Item::Trait(i)) => ("a trait", pair(&i.trait_token, &i.ident)),
        Ok(syn::Item::Const(i)) => ("a constant", pair(&i.const_token, &i.ident)),
        Ok(syn::Item::Static(i)) => ("a static", pair(&i.static_token, &i.ident)),
        _ => {
            return syn::Error::new(
                err.span(),
                "`#[mcp_tool]` goes on a function (`fn` or `async fn`)",
            )
        }
    };
    syn::Error::new_spanned(
        head,
        format!(
            "`#[mcp_tool]` goes on a function (`fn` or `async fn`), not on {what}: a tool is a \
             function whose parameters are the tool's arguments"
        ),
    )
}
