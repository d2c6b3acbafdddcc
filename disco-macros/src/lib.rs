//! The `#[mcp_tool]` attribute of disco. Use it through `disco-runtime`, which re-exports it
//! together with everything the generated code needs.
//!
//! Pipeline: attribute -> model ([`ast`]) -> rules ([`check`]) -> tokens ([`expand`]).

use proc_macro::TokenStream;

mod ast;
mod attr;
mod check;
mod docs;
mod expand;

/// Turns a plain function into an MCP tool collected by the runtime's catalog.
///
/// See the `disco-runtime` documentation for the full syntax.
#[proc_macro_attribute]
pub fn mcp_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    let input2: proc_macro2::TokenStream = input.clone().into();
    let item = match syn::parse2::<syn::ItemFn>(input2.clone()) {
        Ok(item) => item,
        Err(err) => {
            let mut out = syn::Error::new(
                err.span(),
                "#[mcp_tool] goes on a free function (`fn` or `async fn`)",
            )
            .to_compile_error();
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
